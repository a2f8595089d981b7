package catalog

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// User sessions on the catalog.
//
// SQL a user wrote (pg_catalog queries, lakesoul.* views, argument
// expressions) never runs on the owner's pool. It runs on a connection whose
// *login* role is the user, authenticated by PostgreSQL itself with what the
// user proved to pgwire (Credential): whatever that SQL does — switch roles
// with set_config, call functions that run SQL strings, read files — it can
// reach no more than the user's own rights, because PostgreSQL checks every
// role switch and privilege against that login. The owner login runs only
// statements the server wrote, with user values as bind parameters.
//
// Connections are pooled per role and credential, at most SetUserPoolSize (default 4) per
// pool, so a user cannot exhaust the owner's pool or another user's; each is
// reset (DISCARD ALL) before it is handed out again.

// Credential proves a user's identity to the catalog PostgreSQL. The zero
// value logs in without a secret, which only a trust rule in pg_hba.conf
// accepts (the private cluster's socket, test clusters).
type Credential struct {
	Password                       string
	SCRAMClientKey, SCRAMServerKey []byte
}

// DefaultUserPoolSize bounds the catalog connections of one role unless
// SetUserPoolSize says otherwise.
const DefaultUserPoolSize = 4

// userPoolIdle is how long an unused user pool lives.
const userPoolIdle = 5 * time.Minute

type userPoolKey struct {
	role string
	cred [sha256.Size]byte
}

type userPool struct {
	pool     *pgxpool.Pool
	lastUsed time.Time
}

// userPools holds the pools of user logins.
type userPools struct {
	base *pgxpool.Config
	size atomic.Int32 // connections per pool
	// maxMessage bounds a message the catalog sends a user connection (0:
	// pgx's default, PostgreSQL's 1 GB).
	maxMessage atomic.Int64

	mu        sync.Mutex
	pools     map[userPoolKey]*userPool
	lastSweep time.Time
}

func newUserPools(base *pgxpool.Config) *userPools {
	u := &userPools{base: base, pools: make(map[userPoolKey]*userPool)}
	u.size.Store(DefaultUserPoolSize)
	return u
}

// SetUserPoolSize sets how many catalog connections one role's sessions may
// hold at once (pools made from now on).
func (c *Catalog) SetUserPoolSize(n int) {
	c.users.size.Store(int32(max(n, 1)))
}

// SetUserMessageLimit bounds the messages — result rows — the catalog may
// send a user connection (connections made from now on): a larger one
// fails the statement with 54000 before the server holds it, and the
// connection is closed (its backend, whose memory PostgreSQL bounds, ends
// with it). 0 means PostgreSQL's own limit, 1 GB.
func (c *Catalog) SetUserMessageLimit(n int) {
	c.users.maxMessage.Store(int64(max(n, 0)))
}

func init() { sqlerr.RegisterMapper(mapMessageTooLarge) }

// mapMessageTooLarge gives pgx's refusal of a message beyond
// SetUserMessageLimit the SQLSTATE pgwire gives a result row beyond its
// limit (54000).
func mapMessageTooLarge(err error) *sqlerr.Error {
	var e *pgproto3.ExceededMaxBodyLenErr
	if !errors.As(err, &e) {
		return nil
	}
	return &sqlerr.Error{Code: sqlerr.ProgramLimitExceeded, Err: err,
		Message: fmt.Sprintf("result row of %d bytes exceeds the maximum row size of %d bytes", e.ActualBodyLen, e.MaxExpectedBodyLen),
		Hint:    "Select fewer or smaller values per row, or raise the server's --max-row-size."}
}

// AcquireAs returns a catalog connection logged in as role with cred. The
// caller must Release it; it is reset before anyone else gets it.
func (c *Catalog) AcquireAs(ctx context.Context, role string, cred Credential) (*pgxpool.Conn, error) {
	p, err := c.users.pool(role, cred)
	if err != nil {
		return nil, err
	}
	// pgxpool pings a connection idle for over a second before handing it
	// out, so a user pool survives a catalog restart without a stale
	// connection in all but that second.
	conn, err := p.Acquire(ctx)
	if err != nil {
		return nil, userLoginError(role, err)
	}
	return conn, nil
}

func (u *userPools) pool(role string, cred Credential) (*pgxpool.Pool, error) {
	key := userPoolKey{role: role, cred: credFingerprint(role, cred)}
	now := time.Now()
	u.mu.Lock()
	defer u.mu.Unlock()
	if now.Sub(u.lastSweep) > time.Minute {
		u.lastSweep = now
		for k, p := range u.pools {
			if now.Sub(p.lastUsed) > userPoolIdle && p.pool.Stat().AcquiredConns() == 0 {
				safego.Go(p.pool.Close)
				delete(u.pools, k)
			}
		}
	}
	if p, ok := u.pools[key]; ok {
		p.lastUsed = now
		return p.pool, nil
	}
	cfg, err := u.config(role, cred)
	if err != nil {
		return nil, err
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("catalog pool for %q: %w", role, err)
	}
	u.pools[key] = &userPool{pool: pool, lastUsed: now}
	return pool, nil
}

func (u *userPools) closeAll() {
	u.mu.Lock()
	defer u.mu.Unlock()
	for k, p := range u.pools {
		p.pool.Close()
		delete(u.pools, k)
	}
}

// config derives a user pool's configuration from the owner's: same
// server, database and TLS settings; the user's name and secret, never the
// owner's password.
func (u *userPools) config(role string, cred Credential) (*pgxpool.Config, error) {
	cfg := u.base.Copy()
	cc := cfg.ConnConfig
	cc.User = role
	cc.Password = cred.Password
	cc.Fallbacks = nil // they would carry the owner's password
	cc.BuildContextWatcherHandler = cancelRequestHandler
	if cred.Password == "" && cred.SCRAMClientKey != nil {
		if len(cred.SCRAMClientKey) != sha256.Size || len(cred.SCRAMServerKey) != sha256.Size {
			return nil, errors.New("catalog: malformed SCRAM keys")
		}
		cc.Password = pgwire.SCRAMKeyPlaceholderPassword
		ck, sk := cred.SCRAMClientKey, cred.SCRAMServerKey
		next := cc.AfterNetConnect
		cc.AfterNetConnect = func(ctx context.Context, cfg *pgconn.Config, conn net.Conn) (net.Conn, error) {
			if next != nil {
				var err error
				if conn, err = next(ctx, cfg, conn); err != nil {
					return nil, err
				}
			}
			return pgwire.SCRAMKeyConn(conn, ck, sk), nil
		}
	}
	cc.RuntimeParams = cloneParams(cc.RuntimeParams)
	cc.RuntimeParams["application_name"] = "lakesoul user session"
	cfg.MaxConns = u.size.Load()
	cfg.MinConns = 0
	cfg.MaxConnIdleTime = time.Minute
	maxMessage := int(u.maxMessage.Load())
	cfg.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
		if maxMessage > 0 {
			conn.PgConn().Frontend().SetMaxBodyLen(maxMessage)
		}
		return afterConnect(ctx, conn)
	}
	cfg.AfterRelease = resetUserConn
	return cfg, nil
}

// resetUserConn returns a released connection to a clean session: settings a
// statement changed with set_config(…, false), prepared statements, cursors,
// LISTENs, temporary tables and session advisory locks are gone. A
// connection that cannot be reset is closed.
func resetUserConn(conn *pgx.Conn) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if conn.PgConn().TxStatus() != 'I' {
		return false
	}
	if _, err := conn.Exec(ctx, "DISCARD ALL"); err != nil {
		return false
	}
	// DISCARD ALL dropped the statements pgx cached; clear its cache too.
	return conn.DeallocateAll(ctx) == nil
}

func cloneParams(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

func credFingerprint(role string, cred Credential) [sha256.Size]byte {
	h := sha256.New()
	for _, b := range [][]byte{[]byte(role), []byte(cred.Password), cred.SCRAMClientKey, cred.SCRAMServerKey} {
		h.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(b))))
		h.Write(b)
	}
	var out [sha256.Size]byte
	h.Sum(out[:0])
	return out
}

// userLoginError keeps the catalog's address and internals out of what a
// client sees: PostgreSQL's own SQLSTATE (28P01, 28000, 53300, …) is
// kept, the message names only the role.
func userLoginError(role string, err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return &pgconn.PgError{Severity: "FATAL", Code: pe.Code,
			Message: fmt.Sprintf("the catalog refused a session for role %q: %s", role, pe.Message)}
	}
	return fmt.Errorf("catalog session for role %q: %w", role, err)
}

// cancelRequestHandler makes a cancelled context send PostgreSQL a cancel
// request at once (the statement stops on the server), and closes the
// connection if the server has not answered shortly after.
func cancelRequestHandler(pc *pgconn.PgConn) ctxwatch.Handler {
	return &pgconn.CancelRequestContextWatcherHandler{Conn: pc, CancelRequestDelay: 0, DeadlineDelay: 2 * time.Second}
}
