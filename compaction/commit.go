package compaction

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lakesoul-go/lakesoul/catalog"
)

// ErrClaimLost is returned when a compaction's claim was taken over (its
// lease ran out) before it could commit; nothing was committed.
var ErrClaimLost = errors.New("compaction: the job's claim was lost")

// commit commits a compaction through the catalog's commit path
// (catalog.CommitCompaction: its retry, error classification and metrics)
// and returns the version of each partition that committed. A claim lost
// before the commit is ErrClaimLost.
func (c *compactor) commit(ctx context.Context, token *uuid.UUID, intent *catalog.WriteIntent, tableID string, parts []catalog.PartitionCommit,
	discards map[string][]string, bucketNum int) (map[string]int, error) {
	out, err := c.cat.CommitCompaction(ctx, token, intent, tableID, parts, discards, bucketNum)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == catalog.CompactionClaimLostCode {
		return nil, fmt.Errorf("%w: %s", ErrClaimLost, pe.Message)
	}
	return out, err
}

// recordOutput notes prefix (if any) in the job row before anything is
// written there, and forgets the prefixes of dead attempts the caller
// deleted. Without a token (no queue) it does nothing.
func (c *compactor) recordOutput(ctx context.Context, token *uuid.UUID, prefix string, forget []string) error {
	if token == nil {
		return nil
	}
	var add any
	if prefix != "" {
		add = prefix
	}
	var ok bool
	if err := c.cat.Pool().QueryRow(ctx, "SELECT lakesoul.compaction_record_output($1, $2, $3)", *token, add, forget).Scan(&ok); err != nil {
		return err
	}
	if !ok {
		return ErrClaimLost
	}
	return nil
}

// job is a claimed compaction job.
type job struct {
	tableID, desc string
	token         uuid.UUID
	attempts      int
	reason        string
	outputs       []string
}

// claim takes the next ready job; ok is false when there is none.
func (c *compactor) claim(ctx context.Context) (j job, ok bool, err error) {
	var attempts int32
	err = c.cat.Pool().QueryRow(ctx,
		"SELECT table_id, partition_desc, claim_token, attempts, reason, outputs FROM lakesoul.compaction_claim($1, $2)",
		c.opt.WorkerID, c.opt.Lease.Milliseconds()).Scan(&j.tableID, &j.desc, &j.token, &attempts, &j.reason, &j.outputs)
	if err != nil {
		if isNoRows(err) {
			return j, false, nil
		}
		return j, false, err
	}
	j.attempts = int(attempts)
	return j, true, nil
}

// claimPartition claims one partition's job for an on-demand compaction,
// waiting while another claim holds it.
func (c *compactor) claimPartition(ctx context.Context, tableID, desc string) (job, error) {
	wait := 50 * time.Millisecond
	for {
		j := job{tableID: tableID, desc: desc, reason: "manual"}
		err := c.cat.Pool().QueryRow(ctx,
			"SELECT claim_token, outputs FROM lakesoul.compaction_claim_partition($1, $2, $3, $4)",
			tableID, desc, c.opt.WorkerID, c.opt.Lease.Milliseconds()).Scan(&j.token, &j.outputs)
		if err == nil {
			return j, nil
		}
		if !isNoRows(err) {
			return j, err
		}
		select {
		case <-ctx.Done():
			return j, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second)
	}
}

// renew extends the claim; false when it was lost.
func (c *compactor) renew(ctx context.Context, token uuid.UUID) (bool, error) {
	var ok bool
	err := c.cat.Pool().QueryRow(ctx, "SELECT lakesoul.compaction_renew($1, $2)", token, c.opt.Lease.Milliseconds()).Scan(&ok)
	return ok, err
}

// release gives a claim back: done (jobErr nil) or to be retried after
// retry. drop makes a failed on-demand job not linger as a retry unless it
// left outputs to clean up.
func (c *compactor) release(ctx context.Context, token uuid.UUID, jobErr error, retry time.Duration, drop bool) error {
	var msg any
	if jobErr != nil {
		msg = jobErr.Error()
	}
	_, err := c.cat.Pool().Exec(context.WithoutCancel(ctx), "SELECT lakesoul.compaction_release($1, $2, $3, $4)",
		token, msg, retry.Milliseconds(), drop)
	return err
}

// cleanOutputs deletes the output prefixes of earlier (dead) attempts on
// table t and returns those it deleted. Only prefixes inside t's directory
// are deleted (the store refuses others); with t nil (the table is gone,
// and DROP removed its directory) nothing is.
func (c *compactor) cleanOutputs(ctx context.Context, t *catalog.Table, prefixes []string) []string {
	if t == nil || c.checkTable(t) != nil {
		return nil
	}
	var done []string
	for _, p := range prefixes {
		if err := c.store.DeletePrefix(context.WithoutCancel(ctx), t.Path, p); err != nil {
			c.opt.Logger.Warn("compaction: could not delete a dead attempt's output", "prefix", p, "err", err)
			continue
		}
		done = append(done, p)
	}
	return done
}

func isNoRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }
