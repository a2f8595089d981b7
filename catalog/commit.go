package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Commit operations, as LakeSoul names them in data_commit_info.commit_op.
const (
	AppendCommit     = "AppendCommit"
	MergeCommit      = "MergeCommit"
	CompactionCommit = "CompactionCommit"
	UpdateCommit     = "UpdateCommit"
	DeleteCommit     = "DeleteCommit"
)

// FileOp is one add/del operation of a commit.
type FileOp struct {
	Path string
	// Op is "add" or "del".
	Op   string
	Size int64
	// ExistCols are the physical columns present in the file.
	ExistCols []string
}

// PartitionCommit is what one commit does to one range partition.
type PartitionCommit struct {
	Desc     string
	CommitID uuid.UUID
	Ops      []FileOp
	// ReadVersion is the partition version the writer based its work on, or
	// nil. Required for CompactionCommit; enables conflict checks otherwise.
	ReadVersion *int
	// BucketNum is the hash bucket count the writer used (0 = not stated);
	// the commit fails with 40001 if the table was re-bucketed since.
	BucketNum int
	// ExpectVersion, when set, is the partition version a read-modify-write
	// writer checked its rows against (-1: the partition had none): the
	// commit fails with a *PartitionMovedError unless it is still the latest.
	ExpectVersion *int
	// LockKeys are row-lock ids (key hashes) the commit locks exclusively,
	// before any partition lock, while it commits (sqlfuncs/007_row_locks.sql):
	// it waits for transactions holding those rows.
	LockKeys []int64
	// LockRows locks every row of the partition so (a rewrite of a table
	// without a key).
	LockRows bool
}

type jsonFileOp struct {
	Path          string `json:"path"`
	FileOp        string `json:"file_op"`
	Size          int64  `json:"size"`
	FileExistCols string `json:"file_exist_cols"`
}

type jsonPartition struct {
	PartitionDesc string       `json:"partition_desc"`
	CommitID      string       `json:"commit_id"`
	FileOps       []jsonFileOp `json:"file_ops"`
	ReadVersion   *int         `json:"read_version,omitempty"`
	BucketNum     int          `json:"bucket_num,omitempty"`
	ExpectVersion *int         `json:"expect_version,omitempty"`
	LockKeys      []int64      `json:"lock_keys,omitempty"`
	LockRows      bool         `json:"lock_rows,omitempty"`
}

// partitionJSON is p as lakesoul.commit takes it.
func partitionJSON(p PartitionCommit) jsonPartition {
	ops := make([]jsonFileOp, len(p.Ops))
	for j, o := range p.Ops {
		ops[j] = jsonFileOp{Path: o.Path, FileOp: o.Op, Size: o.Size, FileExistCols: strings.Join(o.ExistCols, ",")}
	}
	return jsonPartition{PartitionDesc: p.Desc, CommitID: p.CommitID.String(), FileOps: ops, ReadVersion: p.ReadVersion,
		BucketNum: p.BucketNum, ExpectVersion: p.ExpectVersion, LockKeys: p.LockKeys, LockRows: p.LockRows}
}

// Commit commits file operations on one or more partitions atomically via
// lakesoul.commit and returns the version each partition got (a partition
// missing from the map was dropped from a compaction, see LakeSoul §2.4).
//
// intent is the write intent the added files were written under (nil only
// for commits that add no file, or files no collector deletes): the commit
// consumes it, or fails with 55000 if it expired (its files may be gone).
//
// When the connection fails after the call was sent (catalog restart, network
// error, the caller's ctx ending mid-call), Commit re-sends the same commit —
// lakesoul.commit is idempotent per commit id — until it learns the outcome,
// so a nil error means committed exactly once and any other error means not
// committed, except errors wrapping ErrCommitOutcomeUnknown (see retry.go).
func (c *Catalog) Commit(ctx context.Context, intent *WriteIntent, tableID, op string, parts []PartitionCommit) (map[string]int, error) {
	payload := make([]jsonPartition, len(parts))
	for i, p := range parts {
		payload[i] = partitionJSON(p)
	}
	b, err := json.Marshal(payload)
	if err != nil {
		return nil, err
	}
	intentID, intentToken := intentArgs(intent)
	var notify []string
	out, err := c.retryCommit(ctx, refsOf([]TableCommit{{TableID: tableID, Parts: parts}}), func(ctx context.Context) (map[string]int, error) {
		out := make(map[string]int, len(parts))
		notify = notify[:0]
		err := c.run(ctx, func(q querier) error {
			rows, err := q.Query(ctx, "SELECT partition_desc, version, compaction_notify FROM lakesoul.commit($1, $2, $3::jsonb, true, $4, $5)",
				tableID, op, string(b), intentID, intentToken)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var payload *string
				if err := scanVersionRow(rows, out, &payload); err != nil {
					return &definiteError{err}
				}
				if payload != nil {
					notify = append(notify, *payload)
				}
			}
			return rows.Err()
		})
		if err != nil {
			return nil, fmt.Errorf("commit %s to %s: %w", op, tableID, err)
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	intent.Consumed()
	c.NotifyCommitted(tableID, out)
	if len(notify) > 0 && c.pinned == nil {
		// (In a held transaction the versions are not visible yet: the
		// partition's next commit notifies instead.)
		c.notifyCompaction(ctx, notify)
	}
	return out, nil
}

// scanVersionRow scans a (partition_desc, version, more…) row of a commit
// into out; a NULL version (a partition whose compaction was dropped) adds
// nothing.
func scanVersionRow(rows pgx.Rows, out map[string]int, more ...any) error {
	var desc string
	var v *int32
	if err := rows.Scan(append([]any{&desc, &v}, more...)...); err != nil {
		return err
	}
	if v != nil {
		out[desc] = int(*v)
	}
	return nil
}

// notifyCompaction sends the compaction notifications a commit deferred
// (lakesoul.commit with defer_notify), after the commit. They are hints: if
// this fails, the partition's next commit notifies again (the trigger fires
// on every commit past the threshold until a compaction lands).
func (c *Catalog) notifyCompaction(ctx context.Context, payloads []string) {
	_, _ = c.pool.Exec(context.WithoutCancel(ctx), "SELECT lakesoul.notify_compaction($1)", payloads)
}

// DataFile is a live data file of a partition version.
type DataFile struct {
	Path      string
	Size      int64
	ExistCols []string
}

// PartitionFiles is the resolved file list of one partition version, in read
// order (commit order, then file-op order).
type PartitionFiles struct {
	Desc    string
	Version int
	Files   []DataFile
}

// LiveFiles resolves the latest version of each partition of a table (all
// partitions when descs is nil) into its live files. A partition whose
// latest version has no live file (its rows all deleted) is in the answer
// too, with that version and no files: a statement that read it empty is
// checked for changes from that version on (engine/rmw.go).
func (c *Catalog) LiveFiles(ctx context.Context, tableID string, descs []string) ([]PartitionFiles, error) {
	parts, err := c.queryFiles(ctx, "snapshot of "+tableID, `
		WITH f AS (SELECT * FROM lakesoul.live_files($1, $2))
		SELECT partition_desc, version, path, size, coalesce(file_exist_cols, '') FROM f
		UNION ALL
		SELECT r.partition_desc, l.version, NULL, NULL, ''
		  FROM lakesoul.partition_registry r
		 CROSS JOIN LATERAL (SELECT p.version FROM public.partition_info p
		                      WHERE p.table_id = r.table_id AND p.partition_desc = r.partition_desc
		                      ORDER BY p.version DESC LIMIT 1) l
		 WHERE r.table_id = $1 AND ($2::text[] IS NULL OR r.partition_desc = ANY ($2::text[]))
		   AND NOT EXISTS (SELECT FROM f WHERE f.partition_desc = r.partition_desc)`,
		tableID, descs)
	if err != nil {
		return nil, err
	}
	// Empty partitions come last; every reader takes partitions in desc order.
	slices.SortStableFunc(parts, func(a, b PartitionFiles) int { return strings.Compare(a.Desc, b.Desc) })
	return parts, nil
}

func collectPartitionFiles(rows pgx.Rows) ([]PartitionFiles, error) {
	defer rows.Close()
	var out []PartitionFiles
	for rows.Next() {
		var (
			desc, cols string
			path       *string
			version    int32
			size       *int64
		)
		if err := rows.Scan(&desc, &version, &path, &size, &cols); err != nil {
			return nil, err
		}
		out = appendPartitionFile(out, desc, int(version), path, size, cols)
	}
	return out, rows.Err()
}

// appendPartitionFile adds one (partition_desc, version, path, size,
// file_exist_cols) row to out, whose rows come grouped by partition; a row
// without a path is a partition without live files.
func appendPartitionFile(out []PartitionFiles, desc string, version int, path *string, size *int64, cols string) []PartitionFiles {
	if len(out) == 0 || out[len(out)-1].Desc != desc {
		out = append(out, PartitionFiles{Desc: desc, Version: version})
	}
	if path == nil {
		return out
	}
	f := DataFile{Path: *path, ExistCols: splitNonEmpty(cols)}
	if size != nil {
		f.Size = *size
	}
	last := &out[len(out)-1]
	last.Files = append(last.Files, f)
	return out
}
