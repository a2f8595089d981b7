package catalog

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// ColumnIndex is a column index of a lake table (migration 16,
// lakesoul.column_index): the columns whose data files carry bloom filters
// (Table.IndexedCols gathers them). Unique is set only for an index on
// exactly the primary key.
type ColumnIndex struct {
	Name, TableID string
	Columns       []string
	Unique        bool
}

// CreateColumnIndex records an index; 42P07 when the table has one of that
// name.
func (c *Catalog) CreateColumnIndex(ctx context.Context, ix ColumnIndex) error {
	err := c.run(ctx, func(q querier) error {
		_, err := q.Exec(ctx, `INSERT INTO lakesoul.column_index (index_name, table_id, columns, is_unique)
			VALUES ($1, $2, $3, $4)`, ix.Name, ix.TableID, ix.Columns, ix.Unique)
		return err
	})
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == sqlerr.UniqueViolation {
		return sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", ix.Name)
	}
	return err
}

// DropColumnIndex removes an index of the tables in tableIDs by name;
// found is false when none of them has it. Data files keep their filters:
// readers of a table without the index no longer consult them.
func (c *Catalog) DropColumnIndex(ctx context.Context, tableIDs []string, name string) (found bool, err error) {
	err = c.run(ctx, func(q querier) error {
		tag, err := q.Exec(ctx, `DELETE FROM lakesoul.column_index WHERE index_name = $1 AND table_id = ANY($2)`, name, tableIDs)
		found = err == nil && tag.RowsAffected() > 0
		return err
	})
	return found, err
}

// IndexNamed finds the index called name, of either kind (column or
// vector), among the indexes of the tables in tableIDs; vector tells which
// kind it is. found is false when none of them has one.
func (c *Catalog) IndexNamed(ctx context.Context, tableIDs []string, name string) (tableID string, vector, found bool, err error) {
	err = c.run(ctx, func(q querier) error {
		err := q.QueryRow(ctx, `SELECT table_id, false FROM lakesoul.column_index WHERE index_name = $1 AND table_id = ANY($2)
			UNION ALL
			SELECT table_id, true FROM lakesoul.vector_index WHERE index_name = $1 AND table_id = ANY($2)
			LIMIT 1`, name, tableIDs).Scan(&tableID, &vector)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		found = err == nil
		return err
	})
	return tableID, vector, found, err
}
