package catalog

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
)

// Views of lake namespaces (migration 14, sqlfuncs/120_views.sql), as the
// handle's role: row-level security decides which it sees and changes.

// View is a stored view: PostgreSQL query text and its result columns.
type View struct {
	Namespace, Name, Definition string
	Columns                     []string
}

// CreateView stores a view; replace allows an existing view of that name
// to be replaced (42P07 otherwise, and for a table of that name).
func (c *Catalog) CreateView(ctx context.Context, v View, types []uint32, typmods []int32, replace bool) error {
	return c.run(ctx, func(q querier) error {
		_, err := q.Exec(ctx, "SELECT lakesoul.create_view($1, $2, $3, $4, $5, $6, $7)",
			v.Namespace, v.Name, v.Definition, v.Columns, types, typmods, replace)
		return err
	})
}

// DropView drops a view; false when the role sees none of that name.
func (c *Catalog) DropView(ctx context.Context, namespace, name string) (bool, error) {
	var ok bool
	err := c.run(ctx, func(q querier) error {
		return q.QueryRow(ctx, "SELECT lakesoul.drop_view($1, $2)", namespace, name).Scan(&ok)
	})
	return ok, err
}

// ViewByName returns a view the role sees (nil when there is none).
func (c *Catalog) ViewByName(ctx context.Context, namespace, name string) (*View, error) {
	v := &View{}
	err := c.run(ctx, func(q querier) error {
		return q.QueryRow(ctx, `SELECT namespace, name, definition, columns FROM lakesoul.view
			WHERE namespace = lakesoul.seq_namespace($1) AND name = $2`, namespace, name).
			Scan(&v.Namespace, &v.Name, &v.Definition, &v.Columns)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return v, err
}
