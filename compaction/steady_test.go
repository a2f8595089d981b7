package compaction_test

import (
	"context"
	"fmt"
	"io/fs"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/compaction"
	"github.com/lakesoul-go/lakesoul/metrics"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// TestCompactionUnderSteadyUpserts (issue 37, item 3): a partition that
// receives an upsert every few milliseconds is compacted again and again —
// each compaction rewrites the version it read and the upserts after it stay
// on top — and never gives up reading it. The catalog is made slow between
// a compaction's reads (the partition's state takes 30 ms, as a long history
// would), so an upsert lands between them at every try: the reads must come
// from one snapshot. Reads afterwards equal every upsert applied in commit
// order.
func TestCompactionUnderSteadyUpserts(t *testing.T) {
	e := newEnv(t)
	tbl := e.table("steady", cols, true, 2, nil)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, e.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE OR REPLACE FUNCTION lakesoul.compaction_partition_state(p_table_id text, p_desc text)
RETURNS TABLE (version int, commit_op text, commits int)
LANGUAGE sql STABLE
SET search_path = pg_catalog, public AS $$
    SELECT p.version, p.commit_op, cardinality(p.snapshot)
      FROM public.partition_info p CROSS JOIN pg_sleep(0.03)
     WHERE p.table_id = p_table_id AND p.partition_desc = p_desc
     ORDER BY p.version DESC LIMIT 1
$$`); err != nil {
		t.Fatal(err)
	}

	model := map[int]string{}
	var names []string
	for _, f := range tbl.Schema.Fields() {
		names = append(names, f.Name)
	}
	upsert := func(i int) error {
		rows := [][]any{{i % 50, fmt.Sprintf("u%d", i), i, "a"}}
		if _, err := e.tryWrite(tbl, catalog.MergeCommit, names, rows...); err != nil {
			return err
		}
		model[i%50] = fmt.Sprintf("id=%d v=u%d n=%d d=a", i%50, i, i)
		return nil
	}
	for i := 0; i < 50; i++ {
		if err := upsert(i); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var writeErr error
	upserts := 0
	wg.Add(1)
	go func() { // one upsert every few milliseconds, in order
		defer wg.Done()
		for i := 50; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(3 * time.Millisecond):
			}
			if err := upsert(i); err != nil {
				writeErr = err
				return
			}
			upserts++
		}
	}()
	compacted := 0
	for range 5 {
		res, err := compaction.CompactPartition(ctx, e.cat, e.store, tbl, "d=a", compaction.Options{})
		if err != nil {
			close(stop)
			wg.Wait()
			t.Fatalf("compaction under steady upserts: %v", err)
		}
		if res.Status == compaction.Compacted {
			compacted++
		}
	}
	close(stop)
	wg.Wait()
	if writeErr != nil {
		t.Fatal(writeErr)
	}
	if compacted < 3 {
		t.Errorf("%d of 5 compactions landed", compacted)
	}
	var want []string
	for _, r := range model {
		want = append(want, r)
	}
	sort.Strings(want)
	expectSame(t, "rows vs every upsert", e.read(tbl), want)
	t.Logf("%d compactions landed among %d upserts", compacted, upserts)
}

// diskFull is a store whose new objects fail with ENOSPC while full is set.
type diskFull struct {
	objstore.Store
	full atomic.Bool
}

func (d *diskFull) Create(ctx context.Context, path string) (objstore.Writer, error) {
	if d.full.Load() {
		return nil, &fs.PathError{Op: "open", Path: path, Err: syscall.ENOSPC}
	}
	return d.Store.Create(ctx, path)
}

// A compaction job that fails for a full disk is classified as 53100,
// counted in lakesoul_compaction_failures_total, kept queued, and compacts
// once there is room again.
func TestCompactionFailureClassifiedAndRetried(t *testing.T) {
	e := newEnv(t)
	tbl := e.table("full", cols, false, 1, nil)
	for i := range 12 { // past the trigger's threshold: a job is queued
		e.upsert(tbl, []any{i, "x", i, "a"})
	}
	waitFor(t, "a queued job", 30*time.Second, func() bool {
		return e.count(`SELECT count(*) FROM lakesoul.compaction_job`) > 0
	})
	store := &diskFull{Store: e.store}
	store.full.Store(true)
	before := metrics.CompactionFailures(sqlerr.DiskFull)
	svc, err := compaction.Start(context.Background(), compaction.Config{Catalog: e.cat, Store: store, Workers: 1,
		Poll: 100 * time.Millisecond, LifecycleInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	waitFor(t, "a 53100 failure counted", time.Minute, func() bool {
		return metrics.CompactionFailures(sqlerr.DiskFull) > before
	})
	if n := e.count(`SELECT count(*) FROM lakesoul.compaction_job`); n == 0 {
		t.Fatal("the failed job left the queue")
	}
	store.full.Store(false)
	waitFor(t, "the retried job to compact", time.Minute, func() bool {
		return e.count(`SELECT count(*) FROM public.partition_info WHERE table_id = $1 AND commit_op = 'CompactionCommit'`, tbl.ID) > 0
	})
}
