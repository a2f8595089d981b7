package catalog

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Rollback, cleanup, drop partition and truncate: Go entry points of
// sqlfuncs/050_maintenance.sql. Table and partition arguments are as in
// timetravel.go. None of these deletes files itself: Cleanup returns the files
// that became unreferenced, for the caller to delete after it returned.

// Rollback makes version version the newest state of partition (or of every
// partition that has such a version) by committing a copy of it as a new
// version; nothing is deleted. It returns the new version of each partition.
func (c *Catalog) Rollback(ctx context.Context, table string, version int, partition string) (map[string]int, error) {
	return c.versionMap(ctx, "rollback of "+table,
		`SELECT partition_desc, new_version, lakesoul.resolve_table($1) FROM lakesoul.rollback($1, version => $2::int, "partition" => $3)`,
		table, version, nullable(partition))
}

// RollbackTo rolls every partition (or partition) back to what a snapshot at
// time at reads; partitions that had no version before at are left alone.
func (c *Catalog) RollbackTo(ctx context.Context, table string, at time.Time, partition string) (map[string]int, error) {
	return c.versionMap(ctx, "rollback of "+table,
		`SELECT partition_desc, new_version, lakesoul.resolve_table($1) FROM lakesoul.rollback($1, $2::timestamptz, $3)`,
		table, at, nullable(partition))
}

// Truncate commits an empty version (DeleteCommit) of every non-empty
// partition, atomically, and returns the new versions. History stays until
// Cleanup removes it.
func (c *Catalog) Truncate(ctx context.Context, table string) (map[string]int, error) {
	return c.versionMap(ctx, "truncate of "+table,
		`SELECT partition_desc, new_version, lakesoul.resolve_table($1) FROM lakesoul.truncate($1)`, table)
}

// DropPartition removes every version and commit row of a partition (its
// files stay, as in LakeSoul) and returns how many versions it had.
func (c *Catalog) DropPartition(ctx context.Context, table, partition string) (int, error) {
	var n int32
	if err := c.run(ctx, func(q querier) error {
		return q.QueryRow(ctx, `SELECT lakesoul.drop_partition($1, $2)`, table, partition).Scan(&n)
	}); err != nil {
		return 0, fmt.Errorf("drop partition %s of %s: %w", partition, table, err)
	}
	return int(n), nil
}

// CleanedFile is a data file that Cleanup made unreferenced.
type CleanedFile struct {
	Desc string
	Path string
}

// Cleanup removes the history up to olderThan (timestamps <= olderThan) of
// partition, refusing (55000) when a later version depends on it, or of every
// partition whose history can be removed. It returns the files no remaining
// version references; the caller deletes them (after Cleanup returned, so the
// catalog never points at a missing file).
func (c *Catalog) Cleanup(ctx context.Context, table string, olderThan time.Time, partition string) ([]CleanedFile, error) {
	var out []CleanedFile
	err := c.run(ctx, func(q querier) error {
		rows, err := q.Query(ctx, `SELECT partition_desc, path FROM lakesoul.cleanup($1, $2::timestamptz, $3)`,
			table, olderThan, nullable(partition))
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (CleanedFile, error) {
			var f CleanedFile
			return f, r.Scan(&f.Desc, &f.Path)
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("cleanup of %s: %w", table, err)
	}
	return out, nil
}

// versionMap runs a maintenance call whose rows are (partition, new
// version, table id) and announces the versions it committed
// (NotifyCommitted).
func (c *Catalog) versionMap(ctx context.Context, what, sql string, args ...any) (map[string]int, error) {
	out := map[string]int{}
	var tableID string
	err := c.run(ctx, func(q querier) error {
		clear(out)
		rows, err := q.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := scanVersionRow(rows, out, &tableID); err != nil {
				return err
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	c.NotifyCommitted(tableID, out) // once committed (a held transaction's at its COMMIT)
	return out, nil
}
