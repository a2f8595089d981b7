package catalog

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Catalog reads of the server's housekeeping: the lifecycle task, the
// compaction service, the Flight SQL front door and the benchmarks. They
// run as the handle's role; the housekeeping callers use the owner's handle
// (As("")), since what they read is closed to workspace users.

// PartitionDescs lists the descs of the partitions of a table that have a
// version, sorted.
func (c *Catalog) PartitionDescs(ctx context.Context, tableID string) ([]string, error) {
	return c.queryTexts(ctx, "SELECT DISTINCT partition_desc FROM public.partition_info WHERE table_id = $1 ORDER BY 1", tableID)
}

// PartitionDescsMatching lists the descs of a table's partitions whose
// desc matches the web-search query (PostgreSQL's websearch_to_tsquery on
// the english text search configuration), sorted.
func (c *Catalog) PartitionDescsMatching(ctx context.Context, tableID, query string) ([]string, error) {
	return c.queryTexts(ctx, `SELECT DISTINCT ON (partition_desc) partition_desc FROM public.partition_info
		WHERE table_id = $1 AND to_tsvector('english', partition_desc) @@ websearch_to_tsquery('english', $2)
		ORDER BY partition_desc, version DESC`, tableID, query)
}

// KnownFiles is what the catalog knows of a table's files at one moment.
type KnownFiles struct {
	// Paths are every file path the table's commits and discard rows name
	// (lakesoul.table_known_paths).
	Paths []string
	// JobOutputs are the output prefixes of the table's claimed compaction
	// attempts.
	JobOutputs []string
	// Intents are the open write intents (any table's): id → the paths
	// their writers claimed.
	Intents map[string][]string
}

// KnownFiles reads the table's KnownFiles in one snapshot.
func (c *Catalog) KnownFiles(ctx context.Context, tableID string) (KnownFiles, error) {
	var k KnownFiles
	err := c.InSnapshot(ctx, func(snap *Catalog) error {
		k = KnownFiles{Intents: map[string][]string{}}
		var err error
		if k.Paths, err = snap.queryTexts(ctx, "SELECT lakesoul.table_known_paths($1)", tableID); err != nil {
			return err
		}
		if k.JobOutputs, err = snap.queryTexts(ctx, "SELECT unnest(outputs) FROM lakesoul.compaction_job WHERE table_id = $1", tableID); err != nil {
			return err
		}
		return snap.read(ctx, func(rows pgx.Rows) error {
			var id string
			var paths []string
			_, err := pgx.ForEachRow(rows, []any{&id, &paths}, func() error {
				k.Intents[id] = append([]string(nil), paths...)
				return nil
			})
			return err
		}, "SELECT id, paths FROM lakesoul.write_intents_live()")
	})
	return k, err
}

// CheckCompactionQueue reports an error when the catalog has no compaction
// job queue (its migrations were not applied).
func (c *Catalog) CheckCompactionQueue(ctx context.Context) error {
	return c.run(ctx, func(q querier) error {
		_, err := q.Exec(ctx, "SELECT 1 FROM lakesoul.compaction_job LIMIT 0")
		return err
	})
}

// CompactionJobs is how many compaction jobs are queued or running.
func (c *Catalog) CompactionJobs(ctx context.Context) (int64, error) {
	var n int64
	err := c.run(ctx, func(q querier) error {
		return q.QueryRow(ctx, "SELECT count(*) FROM lakesoul.compaction_job").Scan(&n)
	})
	return n, err
}

// FlightTicketKey is the key Flight SQL tickets are signed with, the same
// for every server on the catalog.
func (c *Catalog) FlightTicketKey(ctx context.Context) ([]byte, error) {
	var key []byte
	err := c.run(ctx, func(q querier) error {
		return q.QueryRow(ctx, "SELECT key FROM lakesoul.flight_ticket_key WHERE id = 1").Scan(&key)
	})
	if err != nil {
		return nil, fmt.Errorf("flight ticket key: %w", err)
	}
	return key, nil
}

// queryTexts runs a query of one text column and returns its values.
func (c *Catalog) queryTexts(ctx context.Context, sql string, args ...any) ([]string, error) {
	var out []string
	err := c.read(ctx, func(rows pgx.Rows) error {
		var err error
		out, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	}, sql, args...)
	return out, err
}
