package catalog

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lakesoul-go/lakesoul/metrics"
)

// A held transaction is one catalog transaction kept open across many calls:
// a SQL transaction block that changed the catalog (CREATE/DROP/ALTER inside
// BEGIN … COMMIT) holds one until it ends, so its DDL and its commits become
// visible together at COMMIT, or not at all.
//
// Hold returns a handle pinned to the transaction: every call of the handle
// (and of handles copied from it, except As, which always returns a handle on
// the pool) runs in it, each inside its own savepoint, so a call that fails
// leaves the transaction usable and undoes only itself. Commits through a
// pinned handle are not retried after a connection failure: the transaction
// died with its connection, so nothing was committed; the outcome of the
// whole transaction is HeldTx.Commit's. A pinned handle must be used by one
// goroutine at a time.

// HeldTx is a held catalog transaction.
type HeldTx struct {
	conn *pgxpool.Conn
	tx   pgx.Tx
	// committed are the versions the transaction's commits created,
	// announced when it commits (commitnotify.go).
	committed []committedVersion
	// refs are the commits the transaction made, named by Commit's error
	// when its outcome is unknown.
	refs []CommitRef
	cat  *Catalog
}

// Hold begins a held transaction as the handle's role and returns a handle
// pinned to it.
func (c *Catalog) Hold(ctx context.Context) (*Catalog, *HeldTx, error) {
	var conn *pgxpool.Conn
	var tx pgx.Tx
	err := onFreshConn(ctx, c.pool, func() (err error) {
		if conn, err = c.pool.Acquire(ctx); err != nil {
			return err
		}
		if tx, err = conn.Begin(ctx); err != nil {
			conn.Release()
		}
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	if c.role != "" {
		if _, err := tx.Exec(ctx, "SELECT set_config('role', $1, true)", c.role); err != nil {
			_ = tx.Rollback(context.WithoutCancel(ctx))
			conn.Release()
			return nil, nil, fmt.Errorf("switch to role %s: %w", c.role, err)
		}
	}
	h := *c
	h.pinned = tx
	h.held = &HeldTx{conn: conn, tx: tx, cat: c}
	return &h, h.held, nil
}

// Commit commits the held transaction. nil means committed; an error
// wrapping ErrCommitOutcomeUnknown (08007, OutcomeUnknown, naming the
// transaction's commits) means the connection failed during COMMIT (it may
// have committed); any other error means nothing was committed. (A failure
// pgx calls safe to retry is still unknown here: TestCommitOutcomeUnknownIs08007
// saw one after the COMMIT had reached the catalog and committed.)
func (h *HeldTx) Commit(ctx context.Context) error {
	defer h.conn.Release()
	err := h.tx.Commit(ctx)
	if err == nil {
		if len(h.committed) > 0 {
			metrics.Commit(metrics.Committed)
			if h.cat.notifier != nil {
				h.cat.notifier.enqueue(h.cat, h.committed)
			}
		}
		return nil
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && !transient(err) {
		return err // a definite answer: rolled back
	}
	if errors.Is(err, pgx.ErrTxClosed) {
		return err
	}
	return OutcomeUnknown(h.refs, err)
}

// Rollback rolls the held transaction back (best effort: a broken
// connection has rolled it back already).
func (h *HeldTx) Rollback(ctx context.Context) {
	_ = h.tx.Rollback(context.WithoutCancel(ctx))
	h.conn.Release()
}

// inSavepoint runs fn inside a savepoint of the pinned transaction.
func (c *Catalog) inSavepoint(ctx context.Context, fn func(pgx.Tx) error) error {
	sp, err := c.pinned.Begin(ctx)
	if err != nil {
		return err
	}
	if err := fn(sp); err != nil {
		_ = sp.Rollback(context.WithoutCancel(ctx))
		return err
	}
	return sp.Commit(ctx)
}

// Savepoint sets savepoint n of the held transaction (a SQL SAVEPOINT of the
// block holding it); RollbackTo and Release act on it as PostgreSQL's
// ROLLBACK TO SAVEPOINT and RELEASE SAVEPOINT do.
func (h *HeldTx) Savepoint(ctx context.Context, n int) error {
	_, err := h.tx.Exec(ctx, fmt.Sprintf("SAVEPOINT lakesoul_sp_%d", n))
	return err
}

// RollbackTo undoes what the held transaction did since savepoint n.
func (h *HeldTx) RollbackTo(ctx context.Context, n int) error {
	_, err := h.tx.Exec(ctx, fmt.Sprintf("ROLLBACK TO SAVEPOINT lakesoul_sp_%d", n))
	return err
}

// Release forgets savepoint n (and those set after it).
func (h *HeldTx) Release(ctx context.Context, n int) error {
	_, err := h.tx.Exec(ctx, fmt.Sprintf("RELEASE SAVEPOINT lakesoul_sp_%d", n))
	return err
}

// Pinned reports whether the handle's calls run in a held transaction.
func (c *Catalog) Pinned() bool { return c.pinned != nil }
