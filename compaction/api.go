package compaction

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/faults"
	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/objstore"
)

// CompactPartition compacts one partition of table now (CALL
// lakesoul.compact). It claims the partition's job in the catalog first, so
// it never runs at the same time as a worker (or another call) on the same
// partition: while another claim holds it, it waits. A partition that is
// already one CompactionCommit is skipped (unless it is in leveled mode,
// where the levels decide).
func CompactPartition(ctx context.Context, cat *catalog.Catalog, store objstore.Store, table *catalog.Table, desc string, opt Options) (Result, error) {
	c := newCompactor(cat, store, opt)
	j, err := c.claimPartition(ctx, table.ID, desc)
	if err != nil {
		return Result{Partition: desc}, err
	}
	return c.runClaimed(ctx, table, j, true)
}

// runClaimed runs a claimed job: it renews the lease while working, deletes
// what dead attempts left, compacts, and gives the claim back unless the
// commit finished the job. manual jobs that fail are not retried by workers
// (unless they left files to clean up).
func (c *compactor) runClaimed(ctx context.Context, table *catalog.Table, j job, manual bool) (Result, error) {
	jctx, stop := c.heartbeat(ctx, j.Token)
	defer stop()
	forget := c.cleanOutputs(jctx, table, j.Outputs)
	var res Result
	// A panic fails the compaction like an error: the claim is released
	// below (with the backoff of a failure) instead of being held until
	// its lease runs out.
	err := safego.Call(func() (err error) {
		faults.Point("compaction.job", table.QualifiedName())
		res, err = c.compactPartition(jctx, table, j.Desc, &j.Token, forget, false)
		return err
	})
	switch {
	case errors.Is(err, ErrClaimLost):
		return res, err
	case err != nil:
		if jctx.Err() != nil && ctx.Err() == nil {
			// The heartbeat found the claim lost.
			return res, fmt.Errorf("%w: %w", ErrClaimLost, err)
		}
		retry := backoff(j.Attempts)
		if ctx.Err() != nil {
			retry = 0 // stopped, not failed: another worker may take it now
		}
		if rerr := c.release(ctx, j.Token, err, retry, manual); rerr != nil {
			c.opt.Logger.Warn("compaction: could not release a failed job; its lease will expire", "table", j.TableID,
				"partition", j.Desc, "err", rerr)
		}
		return res, err
	case res.Status != Compacted:
		if rerr := c.release(ctx, j.Token, nil, 0, manual); rerr != nil {
			return res, rerr
		}
	}
	return res, nil
}

// backoff is the wait before retrying a job that failed attempts times.
func backoff(attempts int) time.Duration {
	d := 5 * time.Second
	for i := 1; i < attempts && d < time.Hour; i++ {
		d *= 2
	}
	return min(d, time.Hour)
}

// heartbeat renews the claim every Lease/3 until stop; the returned context
// is cancelled when the claim is lost (or ctx ends).
func (c *compactor) heartbeat(ctx context.Context, token uuid.UUID) (context.Context, func()) {
	hctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	safego.Go(func() {
		defer close(done)
		// Without renewals the claim is as good as lost.
		defer safego.RecoverTo(func(error) { cancel() })
		tick := time.NewTicker(max(c.opt.Lease/3, 10*time.Millisecond))
		defer tick.Stop()
		for {
			select {
			case <-hctx.Done():
				return
			case <-tick.C:
			}
			ok, err := c.renew(hctx, token)
			if err != nil {
				if hctx.Err() == nil {
					c.opt.Logger.Warn("compaction: lease renewal failed", "err", err)
				}
				continue
			}
			if !ok {
				cancel()
				return
			}
		}
	})
	return hctx, func() { cancel(); <-done }
}

// Rebucket rewrites every partition of table with newBucketNum hash buckets
// (LakeSoul's newBucketNum) and sets the table's hashBucketNum, in one
// commit: either every partition is rewritten from its latest version and the
// property changes, or nothing does (a concurrent commit makes it retry, up
// to three times). Writers that hashed rows with the old bucket count before
// the change and commit after it would mix bucketings: re-bucket a table
// while nobody writes it.
func Rebucket(ctx context.Context, cat *catalog.Catalog, store objstore.Store, table *catalog.Table, newBucketNum int, opt Options) ([]Result, error) {
	if !table.HasPK() {
		return nil, errors.New("compaction: re-bucketing needs a primary-key table")
	}
	if newBucketNum < 1 {
		return nil, fmt.Errorf("compaction: new bucket number must be positive, got %d", newBucketNum)
	}
	c := newCompactor(cat, store, opt)
	var lastErr error
	for range 3 {
		res, err := c.rebucketOnce(ctx, table, newBucketNum)
		var pe *pgconn.PgError
		if err == nil || !errors.As(err, &pe) || pe.Code != "40001" {
			return res, err
		}
		lastErr = err
	}
	return nil, lastErr
}

func (c *compactor) rebucketOnce(ctx context.Context, t *catalog.Table, n int) (results []Result, err error) {
	if err := c.checkTable(t); err != nil {
		return nil, err
	}
	parts, err := c.cat.LiveFiles(ctx, t.ID, nil)
	if err != nil {
		return nil, err
	}
	mode := modeOf(t)
	dir := objstore.Join(t.Path, fmt.Sprintf("compact_%d", time.Now().UnixMilli()))
	if mode == ModeLeveled {
		dir = levelDir(t, 1)
	}
	intent, err := c.cat.BeginWrite(ctx) // as in compactPartition
	if err != nil {
		return nil, err
	}
	var (
		commits  []catalog.PartitionCommit
		written  []string
		discards = map[string][]string{}
	)
	defer func() {
		if err != nil && !errors.Is(err, catalog.ErrCommitOutcomeUnknown) {
			c.deleteFiles(ctx, written)
		}
		intent.Release(ctx)
	}()
	for _, pf := range parts {
		start := time.Now()
		ops, rows, err := c.rewrite(ctx, intent, t, pf.Desc, pf.Files, dir, n, mode == ModeFull)
		if err != nil {
			return nil, err
		}
		written = append(written, opsPaths(ops)...)
		rv := pf.Version
		commits = append(commits, catalog.PartitionCommit{Desc: pf.Desc, CommitID: uuid.New(), Ops: ops, ReadVersion: &rv})
		r := Result{Partition: pf.Desc, Status: Compacted, ReadVersion: pf.Version, Version: -1, Mode: mode,
			FilesIn: len(pf.Files), FilesOut: len(ops), Written: len(ops), Discarded: len(pf.Files), Rows: rows}
		for _, f := range pf.Files {
			r.BytesIn += f.Size
			discards[pf.Desc] = append(discards[pf.Desc], f.Path)
		}
		for _, o := range ops {
			r.BytesOut += o.Size
		}
		r.BytesWritten = r.BytesOut
		r.Elapsed = time.Since(start)
		results = append(results, r)
	}
	if c.opt.beforeCommit != nil {
		for _, pf := range parts {
			c.opt.beforeCommit(ctx, pf.Desc, pf.Version)
		}
	}
	versions, err := c.commit(ctx, nil, intent, t.ID, commits, discards, n)
	if err != nil {
		return nil, err
	}
	for i := range results {
		if v, ok := versions[results[i].Partition]; ok {
			results[i].Version = v
		}
	}
	t.HashBucketNum = n
	t.Properties[catalog.HashBucketNumProperty] = fmt.Sprint(n)
	return results, nil
}
