package catalog

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// The compaction queue and the lifecycle task's catalog calls
// (sqlfuncs/060_compaction.sql, 050_maintenance.sql, 090_write_intents.sql).
// They are the workers' and closed to workspace users: callers use the
// owner's handle (As("")).

// CompactionJob is a claimed compaction job.
type CompactionJob struct {
	TableID, Desc string
	// Token is the claim; it holds the job until released, finished by the
	// job's commit (CommitCompaction) or taken over once its lease ran out.
	Token    uuid.UUID
	Attempts int
	Reason   string
	// Outputs are the output prefixes earlier (dead) attempts recorded.
	Outputs []string
}

// ClaimCompactionJob claims the next ready job for worker under a lease;
// ok is false when there is none.
func (c *Catalog) ClaimCompactionJob(ctx context.Context, worker string, lease time.Duration) (j CompactionJob, ok bool, err error) {
	var attempts int32
	err = c.run(ctx, func(q querier) error {
		return q.QueryRow(ctx,
			"SELECT table_id, partition_desc, claim_token, attempts, reason, outputs FROM lakesoul.compaction_claim($1, $2)",
			worker, lease.Milliseconds()).Scan(&j.TableID, &j.Desc, &j.Token, &attempts, &j.Reason, &j.Outputs)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return CompactionJob{}, false, nil
	}
	if err != nil {
		return CompactionJob{}, false, err
	}
	j.Attempts = int(attempts)
	return j, true, nil
}

// ClaimCompactionPartition claims partition desc of a table for an
// on-demand compaction (reason "manual"); ok is false while another claim
// holds it.
func (c *Catalog) ClaimCompactionPartition(ctx context.Context, tableID, desc, worker string, lease time.Duration) (j CompactionJob, ok bool, err error) {
	j = CompactionJob{TableID: tableID, Desc: desc, Reason: "manual"}
	err = c.run(ctx, func(q querier) error {
		return q.QueryRow(ctx, "SELECT claim_token, outputs FROM lakesoul.compaction_claim_partition($1, $2, $3, $4)",
			tableID, desc, worker, lease.Milliseconds()).Scan(&j.Token, &j.Outputs)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return j, false, nil
	}
	return j, err == nil, err
}

// RenewCompactionClaim extends a claim's lease; false when it was lost.
func (c *Catalog) RenewCompactionClaim(ctx context.Context, token uuid.UUID, lease time.Duration) (bool, error) {
	var ok bool
	err := c.run(ctx, func(q querier) error {
		return q.QueryRow(ctx, "SELECT lakesoul.compaction_renew($1, $2)", token, lease.Milliseconds()).Scan(&ok)
	})
	return ok, err
}

// ReleaseCompactionClaim gives a claim back: done (jobErr "") or failed
// with jobErr, to be retried after retry. drop makes a failed on-demand job
// not linger as a retry unless it left outputs to clean up.
func (c *Catalog) ReleaseCompactionClaim(ctx context.Context, token uuid.UUID, jobErr string, retry time.Duration, drop bool) error {
	var msg any
	if jobErr != "" {
		msg = jobErr
	}
	return c.run(ctx, func(q querier) error {
		_, err := q.Exec(ctx, "SELECT lakesoul.compaction_release($1, $2, $3, $4)", token, msg, retry.Milliseconds(), drop)
		return err
	})
}

// RecordCompactionOutput notes prefix (if not "") in the claimed job's row
// before anything is written there, and forgets the prefixes of dead
// attempts the caller deleted; false when the claim was lost.
func (c *Catalog) RecordCompactionOutput(ctx context.Context, token uuid.UUID, prefix string, forget []string) (bool, error) {
	var add any
	if prefix != "" {
		add = prefix
	}
	var ok bool
	err := c.run(ctx, func(q querier) error {
		return q.QueryRow(ctx, "SELECT lakesoul.compaction_record_output($1, $2, $3)", token, add, forget).Scan(&ok)
	})
	return ok, err
}

// ClaimMaintenanceTask claims periodic task for worker if its interval has
// passed since it last ran (one worker of all servers runs it), holding it
// for at most hold.
func (c *Catalog) ClaimMaintenanceTask(ctx context.Context, task, worker string, interval, hold time.Duration) (bool, error) {
	var ok bool
	err := c.run(ctx, func(q querier) error {
		return q.QueryRow(ctx, "SELECT lakesoul.compaction_task_claim($1, $2, $3, $4)",
			task, worker, interval.Milliseconds(), hold.Milliseconds()).Scan(&ok)
	})
	return ok, err
}

// MaintenanceTaskDone records that worker finished task.
func (c *Catalog) MaintenanceTaskDone(ctx context.Context, task, worker string) error {
	return c.run(ctx, func(q querier) error {
		_, err := q.Exec(ctx, "SELECT lakesoul.compaction_task_done($1, $2)", task, worker)
		return err
	})
}

// ExpireWriteIntents ends the write intents whose writers stopped renewing
// them: their files become ordinary orphans.
func (c *Catalog) ExpireWriteIntents(ctx context.Context) error {
	return c.run(ctx, func(q querier) error {
		_, err := q.Exec(ctx, "SELECT lakesoul.write_intents_expire()")
		return err
	})
}

// TTLDeadline is the commit timestamp (ms) before which a TTL of days has
// run out, by the catalog's clock.
func (c *Catalog) TTLDeadline(ctx context.Context, days float64) (int64, error) {
	var ms int64
	err := c.run(ctx, func(q querier) error {
		return q.QueryRow(ctx, "SELECT lakesoul.ttl_deadline_ms($1)", days).Scan(&ms)
	})
	return ms, err
}

// ExpirePartition applies partition.ttl to one partition (deadline from
// TTLDeadline) and returns the files it made unreferenced.
func (c *Catalog) ExpirePartition(ctx context.Context, tableID, desc string, deadline int64) ([]string, error) {
	return c.queryTexts(ctx, "SELECT lakesoul.expire_partition($1, $2, $3)", tableID, desc, deadline)
}

// ExpireRedundant applies compaction.ttl to one partition (deadline from
// TTLDeadline) and returns the files it made unreferenced.
func (c *Catalog) ExpireRedundant(ctx context.Context, tableID, desc string, deadline int64) ([]string, error) {
	return c.queryTexts(ctx, "SELECT lakesoul.expire_redundant($1, $2, $3)", tableID, desc, deadline)
}

// DiscardedFile is a discard row lakesoul.collect_discarded took: a file
// its row says a compaction of the table replaced.
type DiscardedFile struct {
	TableID, Path string
}

// CollectDiscarded takes the discard rows older than cutoff (ms) whose
// files no kept version reads, of the tables tableIDs (nil: every table),
// and returns them. A row proves nothing by itself (anyone may write one):
// the caller checks each file before deleting it.
func (c *Catalog) CollectDiscarded(ctx context.Context, cutoff int64, tableIDs []string) ([]DiscardedFile, error) {
	var out []DiscardedFile
	err := c.read(ctx, func(rows pgx.Rows) error {
		var d DiscardedFile
		_, err := pgx.ForEachRow(rows, []any{&d.TableID, &d.Path}, func() error {
			out = append(out, d)
			return nil
		})
		return err
	}, "SELECT table_id, file_path FROM lakesoul.collect_discarded($1, $2)", cutoff, tableIDs)
	return out, err
}
