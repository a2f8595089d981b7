package catalog

import "context"

// BuiltinTypeExists reports whether PostgreSQL has a built-in type (one in
// pg_catalog) of that name: the catalog cluster is PostgreSQL, so its
// built-in types are those of the PostgreSQL face. The engine asks it of a
// type name it neither serves nor finds as an enum, to tell a type lake
// tables do not have (0A000) from one that does not exist (42704).
func (c *Catalog) BuiltinTypeExists(ctx context.Context, name string) (bool, error) {
	var ok bool
	err := c.run(ctx, func(q querier) error {
		return q.QueryRow(ctx, `SELECT to_regtype(format('pg_catalog.%I', $1::text)) IS NOT NULL`, name).Scan(&ok)
	})
	return ok, err
}
