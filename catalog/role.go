package catalog

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Catalog access runs as a role: the catalog owner (the pool's login) for the
// server's own work, a session's role for a user's, so that the catalog's
// row-level security decides what the user sees and may change.
//
// The role belongs to the handle (As), not to a context: a session takes its
// handle once, when it starts, and every catalog call it makes runs as its
// role. (It used to be a context value that each entry point had to add; the
// one that did not — COPY FROM — committed as the owner.)
//
// Every statement goes through run (or Tx), which returns the outcome of the
// whole catalog transaction: the statements' error, or else COMMIT's. No
// result escapes a transaction before it committed, so a failed COMMIT (a
// deferred constraint, a lost connection) always reaches the caller.

// As returns a handle to the same catalog whose calls run as role; "" or the
// owner's name gives the owner's handle.
func (c *Catalog) As(role string) *Catalog {
	h := *c
	h.pinned = nil // a role's handle is on the pool, never a held transaction
	h.role = role
	if role == c.owner {
		h.role = ""
	}
	return &h
}

// Role is the role the handle's calls run as.
func (c *Catalog) Role() string {
	if c.role == "" {
		return c.owner
	}
	return c.role
}

// querier is what run hands its function: the pool (each statement its own
// transaction, committed before its result is complete) or a transaction.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// run runs fn's statements as the handle's role and returns their outcome:
// fn's error, or, when fn succeeded, the error of committing what it did.
// fn must read every row it queries before it returns (rows still open make
// the commit fail, never succeed).
//
// The owner's statements run on the pool, each in its own implicit
// transaction, whose commit (deferred constraints included) is part of the
// statement's result; fn runs one statement. Other roles' run in a
// transaction under SET LOCAL ROLE (Tx).
func (c *Catalog) run(ctx context.Context, fn func(q querier) error) error {
	if c.snap != nil {
		return fn(c.snap)
	}
	if c.pinned != nil {
		return c.inSavepoint(ctx, func(tx pgx.Tx) error { return fn(tx) })
	}
	if c.role == "" {
		return onFreshConn(ctx, c.pool, func() error { return fn(c.pool) })
	}
	return c.Tx(ctx, func(tx pgx.Tx) error { return fn(tx) })
}

// Tx runs fn in one catalog transaction as the handle's role and commits it.
// The error is fn's (the transaction was rolled back) or COMMIT's; nil means
// committed. A COMMIT whose connection broke returns the connection error:
// the outcome is then unknown (callers that must know re-ask, see retry.go).
func (c *Catalog) Tx(ctx context.Context, fn func(pgx.Tx) error) error {
	if c.snap != nil {
		return fn(c.snap) // a read inside InSnapshot: it commits at the end
	}
	if c.pinned != nil {
		return c.inSavepoint(ctx, fn) // held.go: committed with the held transaction
	}
	var tx pgx.Tx
	err := onFreshConn(ctx, c.pool, func() (err error) {
		tx, err = c.pool.Begin(ctx)
		return err
	})
	if err != nil {
		return err
	}
	if c.role != "" {
		if _, err := tx.Exec(ctx, "SELECT set_config('role', $1, true)", c.role); err != nil {
			_ = tx.Rollback(context.WithoutCancel(ctx))
			return fmt.Errorf("switch to role %s: %w", c.role, err)
		}
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return err
	}
	return tx.Commit(ctx)
}

// CreateNamespaceIn creates a namespace in a workspace (domain). The catalog's
// row-level security lets only members of <domain>_admins (and the admin)
// create it.
func (c *Catalog) CreateNamespaceIn(ctx context.Context, name, domain string) error {
	return c.run(ctx, func(q querier) error {
		_, err := q.Exec(ctx, "SELECT lakesoul.create_namespace($1, $2)", name, domain)
		return err
	})
}

// DefaultWorkspace is the workspace new namespaces of the calling role go to
// when the session names none: its only workspace, else public.
func (c *Catalog) DefaultWorkspace(ctx context.Context) (string, error) {
	var ws string
	err := c.run(ctx, func(q querier) error {
		return q.QueryRow(ctx, "SELECT lakesoul.default_workspace()").Scan(&ws)
	})
	return ws, err
}

// LoginVerifier is the stored SCRAM-SHA-256 verifier of role, a catalog
// role that may log in now (rolcanlogin, rolvaliduntil); found is false for
// any other role and for one whose password is not a SCRAM verifier.
// pg_authid is the superuser's: this reads it on the owner's pool whatever
// the handle's role.
func (c *Catalog) LoginVerifier(ctx context.Context, role string) (verifier string, found bool, err error) {
	var v *string
	err = c.pool.QueryRow(ctx,
		`SELECT rolpassword FROM pg_catalog.pg_authid
		  WHERE rolname = $1 AND rolcanlogin AND (rolvaliduntil IS NULL OR rolvaliduntil > now())`, role).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && (v == nil || !strings.HasPrefix(*v, "SCRAM-SHA-256$"))) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("look up role %q: %w", role, err)
	}
	return *v, true, nil
}

// RoleFacts reports whether role is a superuser of the catalog and its
// CONNECTION LIMIT (-1: none; an unknown role is neither).
func (c *Catalog) RoleFacts(ctx context.Context, role string) (super bool, connLimit int, err error) {
	err = c.pool.QueryRow(ctx, "SELECT rolsuper, rolconnlimit FROM pg_catalog.pg_roles WHERE rolname = $1", role).Scan(&super, &connLimit)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, -1, nil
	}
	if err != nil {
		return false, -1, fmt.Errorf("look up role %q: %w", role, err)
	}
	return super, connLimit, nil
}
