package catalog

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5/pgconn"
)

// Read-modify-write support: what a writer that computed its rows from a
// snapshot needs to commit them only if the rows it read are unchanged.
// The catalog answers "which versions landed since, and what did they add"
// (PartitionChanges) and refuses a commit whose partition moved since the
// version the writer checked (PartitionCommit.ExpectVersion); whether the
// landed files touch the writer's rows is the engine's question (it reads
// their keys). Row locks (LockRows, PartitionCommit.LockKeys) make writers
// of the same rows wait for each other instead of failing.

// partitionMovedCode is the SQLSTATE lakesoul.commit raises when a
// partition's latest version is not the commit's expect_version. It never
// reaches a client: the engine checks what landed and commits again.
const partitionMovedCode = "LK001"

// PartitionMovedError says that a commit with ExpectVersion found its
// partition at another version: nothing was committed.
type PartitionMovedError struct {
	TableID, Desc string
	err           error
}

func (e *PartitionMovedError) Error() string {
	return fmt.Sprintf("partition %s of table %s moved since it was read: %v", e.Desc, e.TableID, e.err)
}
func (e *PartitionMovedError) Unwrap() error { return e.err }

// AsPartitionMoved reports whether err is a commit refused because a
// partition moved (see PartitionCommit.ExpectVersion).
func AsPartitionMoved(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == partitionMovedCode
}

// VersionChange is one version of a partition and the data files its commit
// added (none for a DeleteCommit).
type VersionChange struct {
	Version int
	Op      string
	Added   []DataFile
}

// PartitionChanges lists the versions of a partition after from, up to and
// including to, with the files each version's commit added, oldest first
// (lakesoul.partition_changes).
func (c *Catalog) PartitionChanges(ctx context.Context, tableID, desc string, from, to int) ([]VersionChange, error) {
	var out []VersionChange
	err := c.run(ctx, func(q querier) error {
		out = out[:0]
		rows, err := q.Query(ctx, "SELECT version, commit_op, path, size, file_exist_cols FROM lakesoul.partition_changes($1, $2, $3, $4)",
			tableID, desc, from, to)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				v          int32
				op         string
				path, cols *string
				size       *int64
			)
			if err := rows.Scan(&v, &op, &path, &size, &cols); err != nil {
				return err
			}
			if len(out) == 0 || out[len(out)-1].Version != int(v) {
				out = append(out, VersionChange{Version: int(v), Op: op})
			}
			if path != nil {
				f := DataFile{Path: *path}
				if size != nil {
					f.Size = *size
				}
				if cols != nil {
					f.ExistCols = splitNonEmpty(*cols)
				}
				last := &out[len(out)-1]
				last.Added = append(last.Added, f)
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("changes of partition %s of %s: %w", desc, tableID, err)
	}
	return out, nil
}

// PartitionVersions returns the latest version of each partition of descs
// (-1 for one without versions).
func (c *Catalog) PartitionVersions(ctx context.Context, tableID string, descs []string) (map[string]int, error) {
	out := make(map[string]int, len(descs))
	err := c.run(ctx, func(q querier) error {
		rows, err := q.Query(ctx, "SELECT partition_desc, version FROM lakesoul.partition_versions($1, $2)", tableID, descs)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var d string
			var v int32
			if err := rows.Scan(&d, &v); err != nil {
				return err
			}
			out[d] = int(v)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("versions of %s: %w", tableID, err)
	}
	return out, nil
}

// RowLockWait is how LockRows treats a row another transaction holds.
type RowLockWait string

const (
	// RowLockBlock waits for it.
	RowLockBlock RowLockWait = "wait"
	// RowLockNoWait fails with 55P03 (FOR UPDATE NOWAIT).
	RowLockNoWait RowLockWait = "nowait"
	// RowLockSkip leaves it out (FOR UPDATE SKIP LOCKED).
	RowLockSkip RowLockWait = "skip"
)

// LockRows locks rows of a partition (key hashes; nil: every row of it) in
// the held transaction the handle is pinned to (Hold), until that
// transaction ends; it returns the keys locked (all of them unless wait is
// RowLockSkip). A lock that cannot be
// had fails only this call (it runs in its own savepoint).
func (c *Catalog) LockRows(ctx context.Context, tableID, desc string, keys []int64, exclusive bool, wait RowLockWait) ([]int64, error) {
	if c.pinned == nil {
		return nil, errors.New("catalog: row locks need a held transaction")
	}
	var got []int64
	err := c.run(ctx, func(q querier) error {
		return q.QueryRow(ctx, "SELECT lakesoul.lock_rows($1, $2, $3, $4, $5)", tableID, desc, keys, exclusive, string(wait)).Scan(&got)
	})
	return got, err
}

// TableVersions returns the latest version of every partition of a table.
func (c *Catalog) TableVersions(ctx context.Context, tableID string) (map[string]int, error) {
	out := map[string]int{}
	err := c.run(ctx, func(q querier) error {
		rows, err := q.Query(ctx, "SELECT partition_desc, max(version) FROM public.partition_info WHERE table_id = $1 GROUP BY 1", tableID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var d string
			var v int32
			if err := rows.Scan(&d, &v); err != nil {
				return err
			}
			out[d] = int(v)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("versions of %s: %w", tableID, err)
	}
	return out, nil
}

// LockPartitions takes the commit protocol's locks of partitions descs of a
// table (in the order commits take them) in the held transaction the handle
// is pinned to, until it ends: no other commit to them lands meanwhile.
func (c *Catalog) LockPartitions(ctx context.Context, tableID string, descs []string) error {
	if c.pinned == nil {
		return errors.New("catalog: partition locks need a held transaction")
	}
	sorted := slices.Sorted(slices.Values(descs))
	return c.run(ctx, func(q querier) error {
		_, err := q.Exec(ctx, "SELECT lakesoul.xact_lock(hashtextextended($1 || chr(31) || d, 0)) FROM unnest($2::text[]) WITH ORDINALITY AS u(d, n) ORDER BY n",
			tableID, sorted)
		return err
	})
}
