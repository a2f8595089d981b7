package catalog

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Advisory locks of client sessions.
//
// PostgreSQL's advisory locks (pg_advisory_lock and its family) are held by
// a backend: a session lock until the backend unlocks it or ends, a
// transaction lock until its transaction ends. A client session of this
// server is no catalog backend — its catalog statements run on pooled
// connections that are reset when released — so each session that takes an
// advisory lock gets a catalog connection of its own, an AdvisoryLocks, that
// lives as long as it holds some lock: PostgreSQL itself then counts the
// locks, queues the waiters, detects deadlocks between sessions (of every
// server on the catalog) and releases everything when the connection ends.
//
// Invariant: the locks live in a database other than the catalog's
// (AdvisoryDatabase), so no key a client chooses can be one of the commit
// protocol's locks (sqlfuncs/, lakesoul.xact_lock and partition_lock take
// advisory locks in the catalog database), whatever its value. The
// connection logs in as the catalog owner and runs only the statements
// below, with the client's keys as bind parameters.

// AdvisoryDatabase is the database of the catalog's cluster that holds
// client sessions' advisory locks.
const AdvisoryDatabase = "postgres"

// advisoryCloseTimeout bounds the goodbye of a lock connection.
const advisoryCloseTimeout = 5 * time.Second

// AdvisoryLocks is one client session's advisory-lock connection. Its
// methods are not safe for concurrent use (a session runs one statement at a
// time).
type AdvisoryLocks struct {
	cat  *Catalog
	conn *pgx.Conn
	// inTx: conn has a transaction open for the client's transaction
	// block's locks; savepoints are the block's savepoints mirrored in it,
	// by the client session's savepoint numbers, oldest first.
	inTx       bool
	savepoints []int
	// applied are the lock_timeout and statement_timeout last set on conn.
	applied [2]string
	// locksLost: the connection broke or was closed after an error while it
	// may have held locks; the next Call tells the client (08006) instead
	// of carrying on as if they were held.
	locksLost bool
	// notices are the warnings PostgreSQL sent since the last Notices call.
	mu      sync.Mutex
	notices []*pgconn.Notice
}

// AdvisoryLocks returns a session's advisory-lock holder; it connects at the
// first lock.
func (c *Catalog) AdvisoryLocks() *AdvisoryLocks { return &AdvisoryLocks{cat: c} }

// connect dials the lock connection.
func (a *AdvisoryLocks) connect(ctx context.Context) error {
	if a.conn != nil {
		return nil
	}
	cfg := a.cat.pool.Config().ConnConfig.Copy()
	if cfg.Database == AdvisoryDatabase {
		return sqlerr.Unsupported("advisory locks with a catalog in database \""+AdvisoryDatabase+"\"",
			"keep the catalog in a database of its own: advisory locks of client sessions are held in database \""+AdvisoryDatabase+"\"")
	}
	cfg.Database = AdvisoryDatabase
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		a.mu.Lock()
		a.notices = append(a.notices, n)
		a.mu.Unlock()
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("connect for advisory locks: %w", err)
	}
	a.conn, a.applied = conn, [2]string{}
	return nil
}

// Notices returns and forgets the notices PostgreSQL sent (an unlock of a
// lock not held warns).
func (a *AdvisoryLocks) Notices() []*pgconn.Notice {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := a.notices
	a.notices = nil
	return n
}

// AdvisoryCall is one call of an advisory-lock function: its PostgreSQL
// name (pg_advisory_lock, pg_try_advisory_xact_lock_shared, …) and its
// keys, one bigint or two integers (none for pg_advisory_unlock_all).
type AdvisoryCall struct {
	Func string
	Keys []int64
}

// Call runs call on the session's lock connection with the session's
// lock_timeout and statement_timeout (PostgreSQL's notation, "" for none)
// and returns its result: nil for a void function, else a bool. A
// transaction-level lock is taken in the block's transaction when inBlock,
// else it ends with the call, as in a statement of its own; savepoints are
// the block's open savepoints' numbers, oldest first, mirrored before the
// lock so that ROLLBACK TO one releases what was taken after it.
func (a *AdvisoryLocks) Call(ctx context.Context, call AdvisoryCall, inBlock bool, savepoints []int, lockTimeout, statementTimeout string) (any, error) {
	if a.locksLost {
		a.locksLost = false
		return nil, errLocksLost(errors.New("the connection ended at the end of an earlier statement or block"))
	}
	if err := a.connect(ctx); err != nil {
		return nil, err
	}
	if want := [2]string{lockTimeout, statementTimeout}; want != a.applied {
		if _, err := a.conn.Exec(ctx, "SELECT set_config('lock_timeout', $1, false), set_config('statement_timeout', $2, false)",
			orZero(lockTimeout), orZero(statementTimeout)); err != nil {
			return nil, a.lost(err)
		}
		a.applied = want
	}
	if inBlock && isXactLock(call.Func) {
		if err := a.mirror(ctx, savepoints); err != nil {
			return nil, err
		}
	}
	marks := ""
	args := make([]any, len(call.Keys))
	for i, k := range call.Keys {
		if i > 0 {
			marks += ", "
		}
		if len(call.Keys) == 2 {
			marks += "$" + strconv.Itoa(i+1) + "::int4"
		} else {
			marks += "$" + strconv.Itoa(i+1) + "::int8"
		}
		args[i] = k
	}
	var out any
	var ok pgtypeBool
	err := a.conn.QueryRow(ctx, "SELECT pg_catalog."+call.Func+"("+marks+")::text", args...).Scan(&ok)
	if err != nil {
		return nil, a.lost(err)
	}
	if ok.valid {
		out = ok.v == "true"
	}
	return out, nil
}

// pgtypeBool scans the text of a bool or void result.
type pgtypeBool struct {
	v     string
	valid bool
}

func (b *pgtypeBool) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		b.valid = false
	case string:
		// void's text is empty; a bool's is "true" or "false".
		b.v, b.valid = v, v != ""
	default:
		return fmt.Errorf("advisory lock result of type %T", src)
	}
	return nil
}

func orZero(v string) string {
	if v == "" {
		return "0"
	}
	return v
}

// isXactLock reports whether fn takes a transaction-level lock.
func isXactLock(fn string) bool {
	switch fn {
	case "pg_advisory_xact_lock", "pg_advisory_xact_lock_shared", "pg_try_advisory_xact_lock", "pg_try_advisory_xact_lock_shared":
		return true
	}
	return false
}

// mirror opens the block's transaction on the lock connection and creates
// the savepoints of the block it does not have yet.
func (a *AdvisoryLocks) mirror(ctx context.Context, savepoints []int) error {
	if !a.inTx {
		if _, err := a.conn.Exec(ctx, "BEGIN"); err != nil {
			return a.lost(err)
		}
		a.inTx, a.savepoints = true, nil
	}
	for _, sp := range savepoints {
		if len(a.savepoints) > 0 && sp <= a.savepoints[len(a.savepoints)-1] {
			continue
		}
		if _, err := a.conn.Exec(ctx, "SAVEPOINT s"+strconv.Itoa(sp)); err != nil {
			return a.lost(err)
		}
		a.savepoints = append(a.savepoints, sp)
	}
	return nil
}

// RollbackTo follows the client block's ROLLBACK TO SAVEPOINT of the
// savepoint numbered sp: transaction locks taken after it are released.
func (a *AdvisoryLocks) RollbackTo(ctx context.Context, sp int) error {
	i := a.mirrored(sp)
	if i < 0 {
		return nil // no lock was taken since
	}
	a.savepoints = a.savepoints[:i+1]
	_, err := a.conn.Exec(ctx, "ROLLBACK TO SAVEPOINT s"+strconv.Itoa(sp))
	return a.lost(err)
}

// Release follows the client block's RELEASE SAVEPOINT of the savepoint
// numbered sp.
func (a *AdvisoryLocks) Release(ctx context.Context, sp int) error {
	i := a.mirrored(sp)
	if i < 0 {
		return nil
	}
	a.savepoints = a.savepoints[:i]
	_, err := a.conn.Exec(ctx, "RELEASE SAVEPOINT s"+strconv.Itoa(sp))
	return a.lost(err)
}

func (a *AdvisoryLocks) mirrored(sp int) int {
	if !a.inTx || a.conn == nil {
		return -1
	}
	for i, s := range a.savepoints {
		if s == sp {
			return i
		}
	}
	return -1
}

// EndBlock ends the client block's transaction on the lock connection:
// its transaction locks are released (commit or rollback alike). The
// connection is closed when it then holds no lock.
func (a *AdvisoryLocks) EndBlock(ctx context.Context) {
	if a.conn == nil || !a.inTx {
		return
	}
	a.inTx, a.savepoints = false, nil
	if _, err := a.conn.Exec(ctx, "ROLLBACK"); err != nil {
		a.Close()
		a.locksLost = true // session locks may have gone with it
		return
	}
	a.closeIfIdle(ctx)
}

// AfterCall closes the connection when it holds no lock and no block
// transaction is open on it, so that a session that unlocked everything
// holds no catalog connection.
func (a *AdvisoryLocks) AfterCall(ctx context.Context) {
	if a.conn != nil && !a.inTx {
		a.closeIfIdle(ctx)
	}
}

func (a *AdvisoryLocks) closeIfIdle(ctx context.Context) {
	var held bool
	err := a.conn.QueryRow(ctx, "SELECT EXISTS (SELECT FROM pg_catalog.pg_locks WHERE locktype = 'advisory' AND pid = pg_catalog.pg_backend_pid())").Scan(&held)
	if err != nil || !held {
		a.Close()
		a.locksLost = err != nil // a lock it held went with it
	}
}

// lost classifies an error of the lock connection. A connection that broke
// took the session's locks with it: it is closed, and the error (08006, as
// sqlerr maps a lost catalog) tells the client so.
func (a *AdvisoryLocks) lost(err error) error {
	if err == nil {
		return nil
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return err // lock_timeout, statement_timeout, deadlock, …
	}
	a.Close()
	return errLocksLost(err)
}

// errLocksLost is the error of a lock connection that broke: its locks are
// gone (08006, as sqlerr maps a lost catalog).
func errLocksLost(err error) error {
	return &sqlerr.Error{Code: sqlerr.ConnectionFailure, Message: "lost the catalog connection holding this session's advisory locks",
		Detail: err.Error()}
}

// Close ends the lock connection; PostgreSQL releases its locks.
func (a *AdvisoryLocks) Close() {
	if a.conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), advisoryCloseTimeout)
	defer cancel()
	_ = a.conn.Close(ctx)
	a.conn, a.inTx, a.savepoints = nil, false, nil
}
