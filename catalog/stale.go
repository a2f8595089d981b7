package catalog

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Connections left over from before a catalog restart.
//
// When the catalog PostgreSQL restarts, every idle connection of a pool is
// dead, and pgxpool hands one out without noticing (it pings only
// connections idle for a while). The first statement on it fails before
// anything reached the server — pgconn.SafeToRetry — so nothing happened and
// the statement can be sent again: the pool is emptied (its other idle
// connections are as dead) and the work runs once more on a fresh
// connection. Failures after a request may have arrived are left to the
// caller (commits learn their outcome through retry.go).

// staleConn reports whether err is a connection that was already dead when
// the work started: a connection-level failure before anything was sent.
func staleConn(err error) bool {
	if err == nil || !pgconn.SafeToRetry(err) {
		return false
	}
	var pe *pgconn.PgError
	return !errors.As(err, &pe) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// onFreshConn runs fn; if it failed on a stale connection of pool, the pool
// is reset and fn runs once more.
func onFreshConn(ctx context.Context, pool *pgxpool.Pool, fn func() error) error {
	err := fn()
	if staleConn(err) && ctx.Err() == nil {
		pool.Reset()
		err = fn()
	}
	return err
}

// OnFreshConn is onFreshConn over the owner's pool, for callers that run
// their own transactions on Pool().
func (c *Catalog) OnFreshConn(ctx context.Context, fn func() error) error {
	return onFreshConn(ctx, c.pool, fn)
}
