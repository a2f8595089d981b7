package catalog

import (
	"context"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/lakesoul-go/lakesoul/migrations"
)

// OperationalStats is the state an operator watches that lives in the
// catalog (metrics read it at scrape time).
type OperationalStats struct {
	// CompactionQueued counts compaction jobs waiting to be claimed;
	// CompactionRunning those under a live claim.
	CompactionQueued, CompactionRunning int64
	// UncompactedVersions is, per table with any ("namespace.table"), the
	// versions its partitions got since their last compaction (or since
	// version 0), summed: what the compaction trigger counts.
	UncompactedVersions map[string]int64
	// Subscriptions are the CDC subscriptions as lakesoul.subscriptions
	// shows them to the owner.
	Subscriptions []SubscriptionLag
}

// SubscriptionLag is a CDC subscription's state and lag; a negative lag is
// unknown.
type SubscriptionLag struct {
	Name, State string
	LagBytes    int64
	LagSeconds  float64
}

// OperationalStats reads the compaction queue, the versions waiting for
// compaction and the subscriptions' lag, as the catalog owner.
func (c *Catalog) OperationalStats(ctx context.Context) (OperationalStats, error) {
	st := OperationalStats{UncompactedVersions: map[string]int64{}}
	err := c.pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE lease_until IS NULL OR lease_until < now()),
	                                    count(*) FILTER (WHERE lease_until >= now())
	                               FROM lakesoul.compaction_job`).Scan(&st.CompactionQueued, &st.CompactionRunning)
	if err != nil {
		return st, fmt.Errorf("compaction queue: %w", err)
	}
	rows, err := c.pool.Query(ctx, `
		SELECT t.table_namespace || '.' || t.table_name, sum(p.pending)::bigint
		  FROM (SELECT table_id,
		               max(version) - coalesce(max(version) FILTER (WHERE commit_op = 'CompactionCommit'), 0) AS pending
		          FROM public.partition_info GROUP BY table_id, partition_desc) p
		  JOIN public.table_info t USING (table_id)
		 WHERE p.pending > 0
		 GROUP BY 1`)
	if err != nil {
		return st, fmt.Errorf("uncompacted versions: %w", err)
	}
	for rows.Next() {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			rows.Close()
			return st, err
		}
		st.UncompactedVersions[name] = n
	}
	if err := rows.Err(); err != nil {
		return st, fmt.Errorf("uncompacted versions: %w", err)
	}
	rows, err = c.pool.Query(ctx, `SELECT name, state, coalesce(lag_bytes, -1), coalesce(lag_seconds, -1)
	                                 FROM lakesoul.subscriptions ORDER BY name`)
	if err != nil {
		return st, fmt.Errorf("subscriptions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var s SubscriptionLag
		if err := rows.Scan(&s.Name, &s.State, &s.LagBytes, &s.LagSeconds); err != nil {
			return st, err
		}
		st.Subscriptions = append(st.Subscriptions, s)
	}
	return st, rows.Err()
}

// Ready reports why the catalog cannot serve this binary (nil: it can): it
// does not answer, a migration failed half-way (dirty), or its schema is
// older than the binary's newest migration.
func (c *Catalog) Ready(ctx context.Context) error {
	var version int64
	var dirty bool
	err := c.pool.QueryRow(ctx, "SELECT version, dirty FROM public."+MigrationsTable+" LIMIT 1").Scan(&version, &dirty)
	if err != nil {
		return fmt.Errorf("catalog: %w", err)
	}
	want := LatestMigration()
	switch {
	case dirty:
		return fmt.Errorf("catalog migration %d failed half-way (dirty)", version)
	case uint(version) < want:
		return fmt.Errorf("catalog schema is at migration %d, this server needs %d (lakesoul migrate up)", version, want)
	}
	return nil
}

// LatestMigration is the number of the newest migration the binary holds.
func LatestMigration() uint {
	entries, _ := fs.ReadDir(migrations.FS, ".")
	var latest uint
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		if n, err := strconv.ParseUint(num, 10, 32); ok && err == nil {
			latest = max(latest, uint(n))
		}
	}
	return latest
}
