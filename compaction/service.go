package compaction

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/metrics"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// NotifyChannel is LakeSoul's compaction channel (§1.10). The service only
// uses it to wake up: the work list is the job table, which a trigger fills.
const NotifyChannel = "lakesoul_compaction_notify"

// Config configures a Service.
type Config struct {
	Catalog *catalog.Catalog
	// Store reads and writes the tables' files.
	Store objstore.Store
	// Workers is the number of concurrent compactions (at least 1).
	Workers int
	// Poll is how often idle workers look at the queue without a
	// notification (default 10 s, as LakeSoul's service): retries after a
	// backoff and leases that ran out are found this way.
	Poll time.Duration
	// LifecycleInterval is how often (across all services sharing the
	// catalog) the lifecycle task runs: TTLs, discarded files, orphans
	// (default 1 h; negative: never).
	LifecycleInterval time.Duration
	// Lifecycle tunes that task.
	Lifecycle LifecycleOptions
	// Options tune each compaction (WorkerID, Lease, file size, logger).
	Options Options
	// AfterCompaction, when set, runs in the worker after a compaction of
	// a table's partition committed: vector indexes rebuild the segments
	// of the rewritten buckets there (vector.Builder.Rebuild).
	AfterCompaction func(ctx context.Context, tableID, desc string) error
}

// Service is a pool of compaction workers on one catalog. Any number of
// services (in `lakesoul serve` or `lakesoul compactor` processes) may share
// a catalog: jobs are claimed in PostgreSQL, so no partition is compacted by
// two of them at once, and a job whose worker died is taken over once its
// lease runs out.
type Service struct {
	cfg    Config
	c      *compactor
	cancel context.CancelFunc
	wg     sync.WaitGroup
	wake   chan struct{}

	mu    sync.Mutex
	stats Stats
}

// Stats count what a service did.
type Stats struct {
	Claimed, Compacted, Skipped, Dropped, Failed int
	BytesRead, BytesWritten                      int64
}

// Start starts the workers, the notification listener and the lifecycle
// task. Close stops them.
func Start(ctx context.Context, cfg Config) (*Service, error) {
	if cfg.Catalog == nil || cfg.Store == nil {
		return nil, errors.New("compaction: Catalog and Store are required")
	}
	if cfg.Workers < 1 {
		cfg.Workers = 1
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 10 * time.Second
	}
	if cfg.LifecycleInterval == 0 {
		cfg.LifecycleInterval = time.Hour
	}
	s := &Service{cfg: cfg, c: newCompactor(cfg.Catalog, cfg.Store, cfg.Options), wake: make(chan struct{}, cfg.Workers)}
	s.cfg.Options = s.c.opt
	// Check that the catalog has the queue (migrations applied).
	if err := cfg.Catalog.As("").CheckCompactionQueue(ctx); err != nil {
		return nil, fmt.Errorf("compaction: catalog has no job queue (apply migrations): %w", err)
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel = cancel
	s.wg.Add(1)
	safego.Go(func() { s.listen(runCtx) })
	for i := range cfg.Workers {
		s.wg.Add(1)
		safego.Go(func() { s.worker(runCtx, i) })
	}
	if cfg.LifecycleInterval > 0 {
		s.wg.Add(1)
		safego.Go(func() { s.lifecycle(runCtx) })
	}
	s.c.opt.Logger.Info("compaction workers started", "workers", cfg.Workers, "worker_id", s.c.opt.WorkerID)
	return s, nil
}

// Close stops the service and waits for it. A compaction in progress is
// abandoned: its claim is released for another worker and its files deleted.
func (s *Service) Close() {
	s.cancel()
	s.wg.Wait()
}

// Wake makes idle workers look at the queue now.
func (s *Service) Wake() {
	for range s.cfg.Workers {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// Stats returns the counters so far.
func (s *Service) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// listen LISTENs on the compaction channel on a connection of its own and
// wakes the workers on every notification, reconnecting after failures.
func (s *Service) listen(ctx context.Context) {
	defer s.wg.Done()
	log := s.c.opt.Logger
	wait := time.Second
	for ctx.Err() == nil {
		// A panic is a failure like another: reconnect.
		err := safego.Call(func() error { return s.listenOnce(ctx) })
		if ctx.Err() != nil {
			return
		}
		log.Warn("compaction: notification listener failed; reconnecting", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, 30*time.Second)
	}
}

func (s *Service) listenOnce(ctx context.Context) error {
	cfg := s.cfg.Catalog.Pool().Config().ConnConfig.Copy()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+NotifyChannel); err != nil {
		return err
	}
	s.Wake() // catch up with what was queued while not listening
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return err
		}
		s.Wake()
	}
}

// worker claims and runs jobs until ctx ends.
func (s *Service) worker(ctx context.Context, n int) {
	defer s.wg.Done()
	log := s.c.opt.Logger
	for ctx.Err() == nil {
		j, ok, err := s.c.claim(ctx)
		if err != nil {
			if ctx.Err() == nil {
				log.Warn("compaction: claiming a job failed", "err", err)
			}
			s.idle(ctx)
			continue
		}
		if !ok {
			s.idle(ctx)
			continue
		}
		s.count(func(st *Stats) { st.Claimed++ })
		// A panic fails this job alone (runClaimed releases the claim of
		// a compaction that panicked; elsewhere the lease runs out) and the
		// worker goes on.
		if err := safego.Call(func() error { s.run(ctx, j); return nil }); err != nil {
			s.count(func(st *Stats) { st.Failed++ })
			log.Error("compaction job panicked", "table", j.TableID, "partition", j.Desc, "err", err)
		}
	}
}

// idle waits for a wake-up or the poll interval.
func (s *Service) idle(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-s.wake:
	case <-time.After(s.cfg.Poll):
	}
}

func (s *Service) count(f func(*Stats)) {
	s.mu.Lock()
	f(&s.stats)
	s.mu.Unlock()
}

// run executes one claimed job.
func (s *Service) run(ctx context.Context, j job) {
	log := s.c.opt.Logger.With("table", j.TableID, "partition", j.Desc, "attempt", j.Attempts)
	t, err := s.cfg.Catalog.NamedTableByID(ctx, j.TableID)
	if err != nil || (j.Reason != "manual" && !autoEnabled(t)) {
		if err != nil && sqlerr.Code(err) != sqlerr.UndefinedTable {
			log.Warn("compaction: cannot load the table", "err", err)
			_ = s.c.release(ctx, j.Token, err, backoff(j.Attempts), false)
			return
		}
		// Dropped table, or automatic compaction off: nothing to do.
		s.c.cleanOutputs(ctx, t, j.Outputs)
		_ = s.c.release(ctx, j.Token, nil, 0, false)
		return
	}
	start := time.Now()
	res, err := s.c.runClaimed(ctx, t, j, false)
	defer func() { metrics.CompactionJob(jobOutcome(res, err), time.Since(start)) }()
	switch {
	case err != nil:
		s.count(func(st *Stats) { st.Failed++ })
		if ctx.Err() != nil {
			log.Info("compaction: stopped mid-job; the job is retried", "err", err)
		} else {
			// Classified as a client would see it (disk full 53100, catalog
			// lost 08006, …), counted, and retried after a backoff.
			code := sqlerr.Code(err)
			metrics.CompactionFailure(code)
			log.Warn("compaction failed; the job is retried after a backoff", "sqlstate", code, "err", err)
		}
	case res.Status == Compacted:
		s.count(func(st *Stats) {
			st.Compacted++
			st.BytesRead += res.BytesIn
			st.BytesWritten += res.BytesWritten
		})
		log.Info("compacted", "mode", res.Mode, "read_version", res.ReadVersion, "version", res.Version,
			"files_in", res.FilesIn, "files_out", res.FilesOut, "bytes_written", res.BytesWritten, "elapsed", res.Elapsed)
		if s.cfg.AfterCompaction != nil {
			if err := s.cfg.AfterCompaction(ctx, j.TableID, j.Desc); err != nil && ctx.Err() == nil {
				log.Warn("compaction: follow-up after the commit failed", "err", err)
			}
		}
	case res.Status == Dropped:
		s.count(func(st *Stats) { st.Dropped++ })
		log.Info("compaction dropped: the partition was updated or compacted meanwhile", "read_version", res.ReadVersion)
	default:
		s.count(func(st *Stats) { st.Skipped++ })
	}
}

// jobOutcome names a job's result for the metrics.
func jobOutcome(res Result, err error) string {
	switch {
	case err != nil:
		return "failed"
	case res.Status == Compacted:
		return "compacted"
	case res.Status == Dropped:
		return "dropped"
	}
	return "skipped"
}

// lifecycle runs the lifecycle task whenever this service wins its claim.
func (s *Service) lifecycle(ctx context.Context) {
	defer s.wg.Done()
	log := s.c.opt.Logger
	check := min(s.cfg.LifecycleInterval, time.Minute)
	for {
		ok, err := s.c.claimTask(ctx, lifecycleTask, s.cfg.LifecycleInterval)
		if err != nil && ctx.Err() == nil {
			log.Warn("compaction: lifecycle claim failed", "err", err)
		}
		if ok {
			var rep LifecycleReport
			// A panic fails this run of the task like an error.
			err := safego.Call(func() (err error) {
				rep, err = runLifecycle(ctx, s.c, s.cfg.Lifecycle)
				return err
			})
			if err != nil && ctx.Err() == nil {
				log.Warn("compaction: lifecycle task failed", "err", err)
			} else if rep.Deleted() > 0 {
				log.Info("lifecycle", "expired_partitions", rep.ExpiredPartitions, "expired_files", rep.ExpiredFiles,
					"redundant_files", rep.RedundantFiles, "discarded_files", rep.DiscardedFiles, "orphans", rep.Orphans)
			}
			s.c.taskDone(ctx, lifecycleTask)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(check):
		}
	}
}
