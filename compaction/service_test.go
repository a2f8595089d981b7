package compaction_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/compaction"
)

func startService(t *testing.T, e *env, workers int, opt compaction.Options) *compaction.Service {
	t.Helper()
	svc, err := compaction.Start(context.Background(), compaction.Config{Catalog: e.cat, Store: e.store, Workers: workers,
		Poll: 100 * time.Millisecond, LifecycleInterval: -1, Options: opt})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	return svc
}

func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Two services (two workers each) on one catalog share the queue: every due
// partition is compacted exactly once, none twice, and no compaction is
// dropped for racing another.
func TestTwoServicesNeverCompactTwice(t *testing.T) {
	e := newEnv(t)
	tbl := e.table("shared", cols, true, 2, nil)
	const parts = 8
	for v := 0; v <= 10; v++ {
		var rows [][]any
		for p := 0; p < parts; p++ {
			rows = append(rows, []any{v, fmt.Sprint(v), v, fmt.Sprintf("p%d", p)}, []any{100 + v, "k", v, fmt.Sprintf("p%d", p)})
		}
		e.upsert(tbl, rows...)
	}
	if n := e.count(`SELECT count(*) FROM lakesoul.compaction_job`); n != parts {
		t.Fatalf("%d jobs queued, want %d", n, parts)
	}
	before := e.read(tbl)
	var mu sync.Mutex
	runs := map[string][]string{}
	hook := func(name string) compaction.Options {
		var o compaction.Options
		o.WorkerID = name
		compaction.SetBeforeCommit(&o, func(ctx context.Context, desc string, rv int) {
			mu.Lock()
			runs[desc] = append(runs[desc], fmt.Sprintf("%s@%d", name, rv))
			mu.Unlock()
			time.Sleep(20 * time.Millisecond) // widen the window for a double claim
		})
		return o
	}
	a := startService(t, e, 2, hook("a"))
	b := startService(t, e, 2, hook("b"))
	a.Wake()
	b.Wake()
	waitFor(t, "the queue to drain", 2*time.Minute, func() bool {
		return e.count(`SELECT count(*) FROM lakesoul.compaction_job`) == 0
	})
	mu.Lock()
	defer mu.Unlock()
	if len(runs) != parts {
		t.Fatalf("compacted partitions: %v", runs)
	}
	for d, r := range runs {
		if len(r) != 1 {
			t.Fatalf("partition %s compacted %d times: %v", d, len(r), r)
		}
	}
	if n := e.count(`SELECT count(*) FROM public.partition_info WHERE table_id = $1 AND commit_op = 'CompactionCommit'`, tbl.ID); n != parts {
		t.Fatalf("%d compaction versions", n)
	}
	if n := e.count(`SELECT count(*) FROM public.data_commit_info WHERE table_id = $1 AND NOT committed`, tbl.ID); n != 0 {
		t.Fatalf("%d dropped compactions", n)
	}
	sa, sb := a.Stats(), b.Stats()
	if sa.Compacted+sb.Compacted != parts || sa.Compacted == 0 || sb.Compacted == 0 {
		t.Logf("stats a=%+v b=%+v", sa, sb)
	}
	expectSame(t, "reads", e.read(tbl), before)
}

// A compaction racing a stream of upserts loses nothing: after the stream
// and the compactions, reads equal the model of every upsert applied in
// commit order.
func TestCompactionRacingUpserts(t *testing.T) {
	e := newEnv(t)
	tbl := e.table("race", cols, true, 4, nil)
	model := map[string]string{} // "d/id" → row
	var mu sync.Mutex
	apply := func(rows [][]any) {
		for _, r := range rows {
			model[fmt.Sprintf("%v/%v", r[3], r[0])] = fmt.Sprintf("id=%v v=%v n=%v d=%v", r[0], r[1], r[2], r[3])
		}
	}
	// Seed.
	var seed [][]any
	for k := 0; k < 200; k++ {
		seed = append(seed, []any{k, "seed", k, []string{"a", "b"}[k%2]})
	}
	e.upsert(tbl, seed...)
	apply(seed)

	svc := startService(t, e, 2, compaction.Options{TargetFileRows: 64})
	ctx, cancel := context.WithCancel(context.Background())
	var manual atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // on-demand compactions on top of the service's
		defer wg.Done()
		for ctx.Err() == nil {
			for _, d := range []string{"d=a", "d=b"} {
				if _, err := compaction.CompactPartition(ctx, e.cat, e.store, tbl, d, compaction.Options{TargetFileRows: 50}); err == nil {
					manual.Add(1)
				} else if ctx.Err() == nil {
					t.Errorf("compact: %v", err)
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 80; i++ {
		var rows [][]any
		for j := 0; j < 1+rng.IntN(20); j++ {
			k := rng.IntN(300)
			rows = append(rows, []any{k, fmt.Sprintf("u%d", i), i, []string{"a", "b"}[k%2]})
		}
		// Serialise commits with the model update so the model's order is
		// the commit order.
		mu.Lock()
		e.upsert(tbl, rows...)
		apply(rows)
		mu.Unlock()
	}
	cancel()
	wg.Wait()
	svc.Wake()
	waitFor(t, "the queue to drain", 2*time.Minute, func() bool {
		return e.count(`SELECT count(*) FROM lakesoul.compaction_job`) == 0
	})
	var want []string
	for _, r := range model {
		want = append(want, r)
	}
	sort.Strings(want)
	expectSame(t, "rows vs model", e.read(tbl), want)
	n := e.count(`SELECT count(*) FROM public.partition_info WHERE table_id = $1 AND commit_op = 'CompactionCommit'`, tbl.ID)
	if n < 2 {
		t.Fatalf("only %d compactions landed", n)
	}
	t.Logf("%d compactions landed (%d on demand, service %+v)", n, manual.Load(), svc.Stats())
}

// helperEnv names the environment variables of the killed-worker helper.
const (
	helperDSN    = "LAKESOUL_COMPACTION_HELPER_DSN"
	helperTable  = "LAKESOUL_COMPACTION_HELPER_TABLE"
	helperMarker = "LAKESOUL_COMPACTION_HELPER_MARKER"
)

// TestHelperDyingWorker is not a test: TestKilledWorkerJobIsRetried runs the
// test binary with it as a worker process that claims the queued job,
// writes its compacted files, announces it and hangs until killed.
func TestHelperDyingWorker(t *testing.T) {
	dsn := os.Getenv(helperDSN)
	if dsn == "" {
		t.Skip("helper process only")
	}
	ctx := context.Background()
	cat, err := catalog.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	opt := compaction.Options{WorkerID: "doomed", Lease: 1500 * time.Millisecond}
	compaction.SetBeforeCommit(&opt, func(ctx context.Context, desc string, rv int) {
		_ = os.WriteFile(os.Getenv(helperMarker), []byte(desc), 0o644)
		select {} // hang until killed
	})
	svc, err := compaction.Start(ctx, compaction.Config{Catalog: cat, Store: localStore(), Workers: 1,
		Poll: 50 * time.Millisecond, LifecycleInterval: -1, Options: opt})
	if err != nil {
		t.Fatal(err)
	}
	svc.Wake()
	select {}
}

// A worker process killed (SIGKILL) after writing its compacted files and
// before committing: nothing of its attempt is visible, the job is taken over
// once its lease ran out, the dead attempt's files are deleted, and the
// partition is compacted exactly once.
func TestKilledWorkerJobIsRetried(t *testing.T) {
	e := newEnv(t)
	tbl := e.table("killed", cols, false, 2, nil)
	for v := 0; v <= 10; v++ {
		e.upsert(tbl, []any{v % 3, fmt.Sprint(v), v, nil}, []any{v + 10, "x", v, nil})
	}
	before := e.read(tbl)
	marker := filepath.Join(t.TempDir(), "written")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperDyingWorker$", "-test.v")
	cmd.Env = append(os.Environ(), helperDSN+"="+e.dsn, helperTable+"="+tbl.ID, helperMarker+"="+marker)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() }()
	waitFor(t, "the helper to write its files", 2*time.Minute, func() bool {
		_, err := os.Stat(marker)
		return err == nil
	})
	dead := compactOutputs(t, e, tbl)
	if len(dead) == 0 {
		t.Fatal("the helper wrote nothing")
	}
	var outputs []string
	if err := e.cat.Pool().QueryRow(context.Background(),
		`SELECT outputs FROM lakesoul.compaction_job WHERE table_id = $1 AND claimed_by = 'doomed'`, tbl.ID).Scan(&outputs); err != nil || len(outputs) != 1 {
		t.Fatalf("job row of the helper: %v %v", outputs, err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_, _ = cmd.Process.Wait()
	// Nothing of the dead attempt is visible.
	expectSame(t, "reads after the kill", e.read(tbl), before)
	if n := e.count(`SELECT count(*) FROM public.partition_info WHERE table_id = $1 AND commit_op = 'CompactionCommit'`, tbl.ID); n != 0 {
		t.Fatal("the dead attempt committed")
	}
	var runs atomic.Int64
	opt := compaction.Options{WorkerID: "survivor"}
	compaction.SetBeforeCommit(&opt, func(ctx context.Context, desc string, rv int) { runs.Add(1) })
	svc := startService(t, e, 1, opt)
	svc.Wake()
	waitFor(t, "the job to be taken over and finished", 2*time.Minute, func() bool {
		return e.count(`SELECT count(*) FROM lakesoul.compaction_job`) == 0
	})
	if runs.Load() != 1 {
		t.Fatalf("%d compaction runs after the kill", runs.Load())
	}
	for _, p := range dead {
		if exists(t, p) {
			t.Fatalf("the dead attempt's file %s is still there", p)
		}
	}
	if n := e.count(`SELECT count(*) FROM public.partition_info WHERE table_id = $1 AND commit_op = 'CompactionCommit'`, tbl.ID); n != 1 {
		t.Fatalf("%d compaction versions", n)
	}
	for _, f := range e.files(tbl, "-5").Files {
		if !strings.Contains(f.Path, "/compact_") {
			t.Fatalf("live file %s is not compacted", f.Path)
		}
	}
	expectSame(t, "reads after the retry", e.read(tbl), before)
}

// A partition due by version count whose leveled compaction has nothing to
// merge (its commits spread over buckets, none reaching the level-0 limit) is
// skipped once per queueing, not re-queued in a loop; automatic compaction
// off (compaction.auto = false) leaves a table alone.
func TestSkippedJobsDoNotSpin(t *testing.T) {
	e := newEnv(t)
	lev := e.table("lev", cols, false, 4, map[string]string{compaction.PropMode: compaction.ModeLeveled})
	off := e.table("off", cols, false, 1, map[string]string{compaction.PropAuto: "false"})
	for v := 0; v <= 10; v++ {
		e.upsert(lev, []any{v, "x", v, nil}) // one key: one bucket per commit
		e.upsert(off, []any{v, "x", v, nil})
	}
	if n := e.count(`SELECT count(*) FROM lakesoul.compaction_job`); n != 2 {
		t.Fatalf("%d jobs", n)
	}
	svc := startService(t, e, 1, compaction.Options{})
	svc.Wake()
	waitFor(t, "the queue to drain", 2*time.Minute, func() bool {
		return e.count(`SELECT count(*) FROM lakesoul.compaction_job`) == 0
	})
	time.Sleep(300 * time.Millisecond)
	if st := svc.Stats(); st.Claimed != 2 || st.Compacted != 0 {
		t.Fatalf("stats %+v", st)
	}
	if n := e.count(`SELECT count(*) FROM public.partition_info WHERE commit_op = 'CompactionCommit'`); n != 0 {
		t.Fatalf("%d compactions", n)
	}
}
