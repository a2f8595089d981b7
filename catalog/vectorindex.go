package catalog

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// VectorIndex is a vector index of a lake table (migration 15,
// lakesoul.vector_index): its column, metric ("l2", "cosine", "ip") and
// options (lists).
type VectorIndex struct {
	Name, TableID, Column, Method, Metric string
	Lists                                 int
}

// VectorSegment is the built index of one partition × bucket: the index
// file and the data files whose rows it holds.
type VectorSegment struct {
	Desc      string
	Bucket    int
	Path      string
	DataFiles []string
	Rows      int64
}

type vectorIndexOptions struct {
	Lists int `json:"lists"`
}

// CreateVectorIndex records an index; 42P07 when the table has one of that
// name.
func (c *Catalog) CreateVectorIndex(ctx context.Context, ix VectorIndex) error {
	opts, err := json.Marshal(vectorIndexOptions{Lists: ix.Lists})
	if err != nil {
		return err
	}
	err = c.run(ctx, func(q querier) error {
		_, err := q.Exec(ctx, `INSERT INTO lakesoul.vector_index (index_name, table_id, column_name, method, metric, options)
			VALUES ($1, $2, $3, $4, $5, $6)`, ix.Name, ix.TableID, ix.Column, ix.Method, ix.Metric, string(opts))
		return err
	})
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == sqlerr.UniqueViolation {
		return sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", ix.Name)
	}
	return err
}

// VectorIndexes lists a table's vector indexes (all tables' when tableID is "").
func (c *Catalog) VectorIndexes(ctx context.Context, tableID string) ([]VectorIndex, error) {
	var out []VectorIndex
	err := c.run(ctx, func(q querier) error {
		rows, err := q.Query(ctx, `SELECT index_name, table_id, column_name, method, metric, options::text
			FROM lakesoul.vector_index WHERE $1 = '' OR table_id = $1 ORDER BY table_id, index_name`, tableID)
		if err != nil {
			return err
		}
		out = out[:0]
		for rows.Next() {
			var ix VectorIndex
			var opts string
			if err := rows.Scan(&ix.Name, &ix.TableID, &ix.Column, &ix.Method, &ix.Metric, &opts); err != nil {
				rows.Close()
				return err
			}
			var o vectorIndexOptions
			if err := json.Unmarshal([]byte(opts), &o); err != nil {
				rows.Close()
				return err
			}
			ix.Lists = o.Lists
			out = append(out, ix)
		}
		return rows.Err()
	})
	return out, err
}

// DropVectorIndex removes an index of the tables in tableIDs by name and
// returns its table and its segments' files (for the caller to delete);
// found is false when none of them has it.
func (c *Catalog) DropVectorIndex(ctx context.Context, tableIDs []string, name string) (tableID string, paths []string, found bool, err error) {
	err = c.Tx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT s.path FROM lakesoul.vector_index_segment s
			WHERE s.index_name = $1 AND s.table_id = ANY($2) FOR UPDATE`, name, tableIDs)
		if err != nil {
			return err
		}
		paths, err = pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		// The segments go with the index (ON DELETE CASCADE).
		err = tx.QueryRow(ctx, `DELETE FROM lakesoul.vector_index WHERE index_name = $1 AND table_id = ANY($2)
			RETURNING table_id`, name, tableIDs).Scan(&tableID)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		found = err == nil
		return err
	})
	return tableID, paths, found, err
}

// VectorSegments lists an index's built segments.
func (c *Catalog) VectorSegments(ctx context.Context, tableID, index string) ([]VectorSegment, error) {
	var out []VectorSegment
	err := c.run(ctx, func(q querier) error {
		rows, err := q.Query(ctx, `SELECT partition_desc, bucket, path, data_files, rows FROM lakesoul.vector_index_segment
			WHERE table_id = $1 AND index_name = $2 ORDER BY partition_desc, bucket`, tableID, index)
		if err != nil {
			return err
		}
		out = out[:0]
		for rows.Next() {
			var s VectorSegment
			var bucket int32
			if err := rows.Scan(&s.Desc, &bucket, &s.Path, &s.DataFiles, &s.Rows); err != nil {
				rows.Close()
				return err
			}
			s.Bucket = int(bucket)
			out = append(out, s)
		}
		return rows.Err()
	})
	return out, err
}

// PutVectorSegment records a built segment in place of the one before it,
// whose file it returns ("" if none). ok is false when the index was
// dropped meanwhile (nothing recorded).
func (c *Catalog) PutVectorSegment(ctx context.Context, tableID, index string, s VectorSegment) (old string, ok bool, err error) {
	err = c.Tx(ctx, func(tx pgx.Tx) error {
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM lakesoul.vector_index WHERE table_id = $1 AND index_name = $2 FOR KEY SHARE)`,
			tableID, index).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			return nil
		}
		ok = true
		err := tx.QueryRow(ctx, `SELECT path FROM lakesoul.vector_index_segment
			WHERE table_id = $1 AND index_name = $2 AND partition_desc = $3 AND bucket = $4 FOR UPDATE`,
			tableID, index, s.Desc, s.Bucket).Scan(&old)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO lakesoul.vector_index_segment (table_id, index_name, partition_desc, bucket, path, data_files, rows)
			VALUES ($1, $2, $3, $4, $5, $6, $7)
			ON CONFLICT (table_id, index_name, partition_desc, bucket) DO UPDATE
			SET path = EXCLUDED.path, data_files = EXCLUDED.data_files, rows = EXCLUDED.rows, built_at = now()`,
			tableID, index, s.Desc, s.Bucket, s.Path, s.DataFiles, s.Rows)
		return err
	})
	return old, ok, err
}
