package catalog

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
)

// PartitionHead is a partition's latest version and a digest of that
// version's snapshot. A partition's live files are a function of its head:
// versions are immutable, and a partition dropped and written again has new
// commit ids, so two equal heads have the same files.
type PartitionHead struct {
	Desc    string
	Version int
	Digest  string
}

// Key is the text lakesoul.live_files_cached compares known heads by.
func (h PartitionHead) Key() string {
	return h.Desc + "\x1f" + strconv.Itoa(h.Version) + "\x1f" + h.Digest
}

// LiveFilesCached returns the heads of a table's partitions — descs when
// given, else those whose desc holds every "k=v" term, else all — and the
// live files of the heads not among known (PartitionHead.Key values), from
// one consistent snapshot in one round trip. A caller that cached the files
// of the other heads has the table's current snapshot.
func (c *Catalog) LiveFilesCached(ctx context.Context, tableID string, descs, terms, known []string) ([]PartitionHead, []PartitionFiles, error) {
	var heads []PartitionHead
	var files []PartitionFiles
	err := c.read(ctx, func(rows pgx.Rows) error {
		heads, files = nil, nil
		byDesc := map[string]int{}
		for rows.Next() {
			var (
				desc         string
				version      int32
				digest, path *string
				size         *int64
				cols         *string
			)
			if err := rows.Scan(&desc, &version, &digest, &path, &size, &cols); err != nil {
				return err
			}
			if path == nil {
				heads = append(heads, PartitionHead{Desc: desc, Version: int(version), Digest: deref(digest)})
				continue
			}
			i, ok := byDesc[desc]
			if !ok {
				i = len(files)
				byDesc[desc] = i
				files = append(files, PartitionFiles{Desc: desc, Version: int(version)})
			}
			f := DataFile{Path: *path, ExistCols: splitNonEmpty(deref(cols))}
			if size != nil {
				f.Size = *size
			}
			files[i].Files = append(files[i].Files, f)
		}
		return rows.Err()
	}, "SELECT partition_desc, version, digest, path, size, file_exist_cols FROM lakesoul.live_files_cached($1, $2, $3, $4)",
		tableID, descs, terms, known)
	if err != nil {
		return nil, nil, fmt.Errorf("snapshot of %s: %w", tableID, err)
	}
	return heads, files, nil
}

// ReadsLatestAs is the role the handle's reads run as, and whether they
// see the catalog's latest committed state as any new statement of that
// role would — false on a handle pinned to a held transaction or to a
// snapshot (InSnapshot). Handles with the same role that read the latest
// state get the same answers from the same query.
func (c *Catalog) ReadsLatestAs() (role string, latest bool) {
	return c.role, c.snap == nil && c.pinned == nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// read runs one read-only statement as the handle's role in one round
// trip and hands its rows to scan: on the pool for the owner; for other
// roles the role switch and the statement go in one pipeline, one implicit
// transaction (set_config(…, true) lasts until its end), instead of
// BEGIN, SET, the statement and COMMIT one after another (Tx). The result
// is the statement's outcome including its transaction's end.
func (c *Catalog) read(ctx context.Context, scan func(pgx.Rows) error, sql string, args ...any) error {
	if c.snap != nil || c.pinned != nil || c.role == "" {
		return c.run(ctx, func(q querier) error {
			rows, err := q.Query(ctx, sql, args...)
			if err != nil {
				return err
			}
			err = scan(rows)
			rows.Close()
			if err == nil {
				err = rows.Err()
			}
			return err
		})
	}
	b := &pgx.Batch{}
	b.Queue("SELECT set_config('role', $1, true)", c.role)
	b.Queue(sql, args...)
	br := c.pool.SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		br.Close()
		return fmt.Errorf("switch to role %s: %w", c.role, err)
	}
	rows, err := br.Query()
	if err == nil {
		err = scan(rows)
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return err
}
