package catalog

import (
	"context"

	"github.com/lakesoul-go/lakesoul/layout"
)

// Renames (sqlfuncs/160_rename.sql), as the handle's role. Each is one
// catalog transaction; files are never moved: a table keeps its path, whose
// directory is recorded (Table.Dir), and a renamed column keeps its former
// names in its metadata (schema.MetaFormerNames) so old files still read.

// RenameTable renames table id within its namespace (42P07 when a table or
// view of the new name exists, 42P01 when the role sees no such table).
func (c *Catalog) RenameTable(ctx context.Context, id, newName string) error {
	return c.run(ctx, func(q querier) error {
		_, err := q.Exec(ctx, "SELECT lakesoul.rename_table($1, $2)", id, newName)
		return err
	})
}

// RenameColumn stores t, whose column oldName is now newName (schema,
// properties and key columns already renamed by the caller), and renames the
// column in t's indexes.
func (c *Catalog) RenameColumn(ctx context.Context, t *Table, oldName, newName string) error {
	schemaJSON, propsJSON, err := tableDefinitionJSON(t)
	if err != nil {
		return err
	}
	partitions := layout.FormatPartitions(t.RangeCols, t.PKCols)
	return c.run(ctx, func(q querier) error {
		_, err := q.Exec(ctx, "SELECT lakesoul.rename_column($1, $2, $3, $4, $5::jsonb, $6)",
			t.ID, oldName, newName, schemaJSON, propsJSON, partitions)
		return err
	})
}

// RenameView renames a view (42P01 when the role sees none, 42P07 when a
// table or view of the new name exists).
func (c *Catalog) RenameView(ctx context.Context, namespace, oldName, newName string) error {
	return c.run(ctx, func(q querier) error {
		_, err := q.Exec(ctx, "SELECT lakesoul.rename_view($1, $2, $3)", namespace, oldName, newName)
		return err
	})
}

// SetViewDefinition replaces a view's query text; false when the role sees
// no such view.
func (c *Catalog) SetViewDefinition(ctx context.Context, namespace, name, definition string) (bool, error) {
	var ok bool
	err := c.run(ctx, func(q querier) error {
		return q.QueryRow(ctx, "SELECT lakesoul.set_view_definition($1, $2, $3)", namespace, name, definition).Scan(&ok)
	})
	return ok, err
}

// Views lists the views the role sees, by namespace and name.
func (c *Catalog) Views(ctx context.Context) ([]View, error) {
	var out []View
	err := c.run(ctx, func(q querier) error {
		out = nil
		rows, err := q.Query(ctx, `SELECT namespace, name, definition, columns FROM lakesoul.view ORDER BY namespace, name`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var v View
			if err := rows.Scan(&v.Namespace, &v.Name, &v.Definition, &v.Columns); err != nil {
				return err
			}
			out = append(out, v)
		}
		return rows.Err()
	})
	return out, err
}

// RenameNamespace renames namespace oldName to newName with every object in
// it (lakesoul.rename_namespace): 3F000 when the role sees no such
// namespace, 42P06 when newName is taken, 42501 when the role may not
// change the namespace's objects. Stored definitions naming the namespace
// are the caller's to rewrite, in the same transaction.
func (c *Catalog) RenameNamespace(ctx context.Context, oldName, newName string) error {
	return c.run(ctx, func(q querier) error {
		_, err := q.Exec(ctx, "SELECT lakesoul.rename_namespace($1, $2)", oldName, newName)
		return err
	})
}
