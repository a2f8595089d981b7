package catalog

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Time travel, history and pruning. Every method here calls a function of
// sqlfuncs/040_timetravel.sql; the rules (strict "<" on timestamps, the
// incremental-read rules, replay of file ops) live there, not here.
//
// A table argument named table may be a table_id or a name ("ns.t", or "t"
// found in namespace "default"). A partition argument of "" means "every
// partition".

// Version is one version of one range partition (a partition_info row).
type Version struct {
	Desc        string
	Version     int
	CommitOp    string
	CommittedAt time.Time
}

// nullable turns "" into SQL NULL.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// History lists every version of every partition of a table, oldest first.
func (c *Catalog) History(ctx context.Context, table string) ([]Version, error) {
	var out []Version
	err := c.run(ctx, func(q querier) error {
		rows, err := q.Query(ctx, `SELECT "partition", version, commit_op, committed_at FROM lakesoul.history($1)`, table)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Version, error) {
			var v Version
			var ver int32
			err := r.Scan(&v.Desc, &ver, &v.CommitOp, &v.CommittedAt)
			v.Version = int(ver)
			return v, err
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("history of %s: %w", table, err)
	}
	return out, nil
}

// SnapshotAt resolves the files a read at time at sees: per partition (or
// only partition) the highest version committed strictly before at.
// Partitions without such a version are absent. A moment at or before the
// table's creation is an error (22023).
func (c *Catalog) SnapshotAt(ctx context.Context, table string, at time.Time, partition string) ([]PartitionFiles, error) {
	return c.queryFiles(ctx, "snapshot of "+table,
		`SELECT partition_desc, partition_version, path, size, coalesce(file_exist_cols, '')
		   FROM lakesoul.snapshot_files($1, $2::timestamptz, $3)`, table, at, nullable(partition))
}

// SnapshotAtVersion resolves version version of partition, or of every
// partition that has such a version when partition is "". A version no
// partition has is an error (22023); an unknown partition is 42704.
func (c *Catalog) SnapshotAtVersion(ctx context.Context, table string, version int, partition string) ([]PartitionFiles, error) {
	return c.queryFiles(ctx, "snapshot of "+table,
		`SELECT partition_desc, partition_version, path, size, coalesce(file_exist_cols, '')
		   FROM lakesoul.snapshot_files($1, version => $2::int, "partition" => $3)`, table, version, nullable(partition))
}

// Changes resolves the files of the commits each partition received in
// [from, to) (to zero: no upper bound), LakeSoul's incremental read: a
// partition with no version before from contributes its whole snapshot at to;
// one that saw an update or delete in the interval contributes nothing;
// compactions contribute only the writes they absorbed. PartitionFiles.Version
// is the last version inside the interval.
func (c *Catalog) Changes(ctx context.Context, table string, from, to time.Time, partition string) ([]PartitionFiles, error) {
	var until any
	if !to.IsZero() {
		until = to
	}
	return c.queryFiles(ctx, "changes of "+table,
		`SELECT partition_desc, partition_version, path, size, coalesce(file_exist_cols, '')
		   FROM lakesoul.change_files($1, $2::timestamptz, $3::timestamptz, $4)`, table, from, until, nullable(partition))
}

// LiveFilesMatching is LiveFiles restricted to the partitions whose desc
// contains every term ("col=value", formatted as in partition_desc): partition
// pruning for equalities on a subset of the range columns, answered by an
// index. With every range column bound, LiveFiles with the exact desc is
// cheaper still.
func (c *Catalog) LiveFilesMatching(ctx context.Context, tableID string, terms []string) ([]PartitionFiles, error) {
	if len(terms) == 0 {
		return c.LiveFiles(ctx, tableID, nil)
	}
	return c.queryFiles(ctx, "snapshot of "+tableID,
		`SELECT partition_desc, partition_version, path, size, coalesce(file_exist_cols, '')
		   FROM lakesoul.live_files_matching($1, $2)`, tableID, terms)
}

func (c *Catalog) queryFiles(ctx context.Context, what, sql string, args ...any) ([]PartitionFiles, error) {
	var out []PartitionFiles
	err := c.read(ctx, func(rows pgx.Rows) error {
		var err error
		out, err = collectPartitionFiles(rows)
		return err
	}, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// ReadPartitionFiles collects the text-format rows of (partition_desc text,
// version int, path text, size bigint, file_exist_cols text) that rr returns,
// grouped by partition as the query orders them.
func ReadPartitionFiles(rr *pgconn.ResultReader) ([]PartitionFiles, error) {
	var out []PartitionFiles
	for rr.NextRow() {
		v := rr.Values()
		if len(v) != 5 {
			rr.Close()
			return nil, fmt.Errorf("partition files: %d columns, want 5", len(v))
		}
		version, err := strconv.Atoi(string(v[1]))
		if err != nil {
			rr.Close()
			return nil, fmt.Errorf("partition files: version %q", v[1])
		}
		var size *int64
		if v[3] != nil {
			n, err := strconv.ParseInt(string(v[3]), 10, 64)
			if err != nil {
				rr.Close()
				return nil, fmt.Errorf("partition files: size %q", v[3])
			}
			size = &n
		}
		var path *string
		if v[2] != nil {
			p := string(v[2])
			path = &p
		}
		out = appendPartitionFile(out, string(v[0]), version, path, size, string(v[4]))
	}
	if _, err := rr.Close(); err != nil {
		return nil, err
	}
	return out, nil
}
