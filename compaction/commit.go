package compaction

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
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
	ok, err := c.cat.As("").RecordCompactionOutput(ctx, *token, prefix, forget)
	if err != nil {
		return err
	}
	if !ok {
		return ErrClaimLost
	}
	return nil
}

// job is a claimed compaction job.
type job = catalog.CompactionJob

// claim takes the next ready job; ok is false when there is none.
func (c *compactor) claim(ctx context.Context) (job, bool, error) {
	return c.cat.As("").ClaimCompactionJob(ctx, c.opt.WorkerID, c.opt.Lease)
}

// claimPartition claims one partition's job for an on-demand compaction,
// waiting while another claim holds it.
func (c *compactor) claimPartition(ctx context.Context, tableID, desc string) (job, error) {
	wait := 50 * time.Millisecond
	for {
		j, ok, err := c.cat.As("").ClaimCompactionPartition(ctx, tableID, desc, c.opt.WorkerID, c.opt.Lease)
		if ok || err != nil {
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
	return c.cat.As("").RenewCompactionClaim(ctx, token, c.opt.Lease)
}

// release gives a claim back: done (jobErr nil) or to be retried after
// retry. drop makes a failed on-demand job not linger as a retry unless it
// left outputs to clean up.
func (c *compactor) release(ctx context.Context, token uuid.UUID, jobErr error, retry time.Duration, drop bool) error {
	var msg string
	if jobErr != nil {
		msg = jobErr.Error()
	}
	return c.cat.As("").ReleaseCompactionClaim(context.WithoutCancel(ctx), token, msg, retry, drop)
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
