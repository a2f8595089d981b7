package catalog

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Catalog access runs as the PostgreSQL role of the session that asks, so the
// catalog's row-level security decides what a user sees and may change. The
// pool connects as the catalog owner; a context carrying another role makes
// every statement run in a transaction under SET LOCAL ROLE.

type roleKey struct{}

// WithRole returns a context under which catalog calls run as role ("" or the
// pool's own role: no switch).
func WithRole(ctx context.Context, role string) context.Context {
	return context.WithValue(ctx, roleKey{}, role)
}

func roleOf(ctx context.Context) string {
	r, _ := ctx.Value(roleKey{}).(string)
	return r
}

// querier is what catalog methods run statements through.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// db returns the pool, or a role-switching wrapper when ctx names a role.
func (c *Catalog) db(ctx context.Context) querier {
	if r := roleOf(ctx); r != "" && r != c.owner {
		return roleQuerier{pool: c.pool, role: r}
	}
	return c.pool
}

// roleQuerier runs each statement in its own transaction as role.
type roleQuerier struct {
	pool *pgxpool.Pool
	role string
}

func (q roleQuerier) begin(ctx context.Context) (pgx.Tx, error) {
	tx, err := q.pool.Begin(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, "SELECT set_config('role', $1, true)", q.role); err != nil {
		tx.Rollback(ctx)
		return nil, err
	}
	return tx, nil
}

func (q roleQuerier) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	tx, err := q.begin(ctx)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := tx.Exec(ctx, sql, args...)
	if err != nil {
		tx.Rollback(ctx)
		return tag, err
	}
	return tag, tx.Commit(ctx)
}

func (q roleQuerier) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	tx, err := q.begin(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := tx.Query(ctx, sql, args...)
	if err != nil {
		tx.Rollback(ctx)
		return nil, err
	}
	return &txRows{Rows: rows, tx: tx, ctx: ctx}, nil
}

func (q roleQuerier) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	rows, err := q.Query(ctx, sql, args...)
	return &txRow{rows: rows, err: err}
}

// txRows commits its transaction when the rows are closed.
type txRows struct {
	pgx.Rows
	tx     pgx.Tx
	ctx    context.Context
	closed bool
}

func (r *txRows) Close() {
	if r.closed {
		return
	}
	r.closed = true
	r.Rows.Close()
	if r.Rows.Err() != nil {
		r.tx.Rollback(context.WithoutCancel(r.ctx))
		return
	}
	r.tx.Commit(context.WithoutCancel(r.ctx))
}

func (r *txRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.Close()
	return false
}

// txRow is QueryRow over txRows.
type txRow struct {
	rows pgx.Rows
	err  error
}

func (r *txRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	r.rows.Close()
	return r.rows.Err()
}

// CreateNamespaceIn creates a namespace in a workspace (domain). The catalog's
// row-level security lets only members of <domain>_admins (and the admin)
// create it.
func (c *Catalog) CreateNamespaceIn(ctx context.Context, name, domain string) error {
	_, err := c.db(ctx).Exec(ctx, "SELECT lakesoul.create_namespace($1, $2)", name, domain)
	return err
}

// DefaultWorkspace is the workspace new namespaces of the calling role go to
// when the session names none: its only workspace, else public.
func (c *Catalog) DefaultWorkspace(ctx context.Context) (string, error) {
	var ws string
	err := c.db(ctx).QueryRow(ctx, "SELECT lakesoul.default_workspace()").Scan(&ws)
	return ws, err
}
