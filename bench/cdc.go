package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/cdc"
	"github.com/lakesoul-go/lakesoul/compaction"
	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/pgcluster"
	"github.com/lakesoul-go/lakesoul/reader"
)

func init() { Register("cdc", runCDC) }

// runCDC measures whole-database CDC from PostgreSQL into the lake next to
// PostgreSQL's own logical replication of the same publication into a
// second PostgreSQL, in the same run:
//
//   - copy: a source table of 1 M rows (× scale) taken by each subscription's
//     initial copy (one after the other, --copies times each): rows/s until
//     the copy is visible (lakesoul: the copy's commit; PostgreSQL: the table
//     sync reaching state ready);
//   - apply: then, both subscriptions streaming, a steady load of updates,
//     inserts and deletes at --rate row changes per second for --duration;
//     each transaction also stamps a probe row with the source's clock, and
//     each system is polled for it (every 10 ms): visibility lag p50/p99 is,
//     for every transaction, the time from its stamp to the first read that
//     shows it or a later one (lake: a snapshot read of the lake table;
//     PostgreSQL: a read of the subscriber's table);
//     apply rows/s is the changes over the time until the system shows the
//     last stamp. One row per rate in --rates.
//
// Every PostgreSQL has its default (durable) settings, wal_level = logical
// on the source, wal_retrieve_retry_interval = 50ms on the subscriber (its
// launcher otherwise waits 5 s before each repeated copy's workers start). The lake side is the cdc package in this process with a
// compaction worker, as `lakesoul serve` runs it; commit_interval is
// --commit-interval. Checksums (count, sum of v) of source, subscriber and
// lake are compared at the end of each phase.
func runCDC(ctx context.Context, o Options) error {
	fs := flag.NewFlagSet("cdc", flag.ContinueOnError)
	rowsFlag := fs.Int("rows", 0, "rows of the source table (default 1 M × scale)")
	ratesFlag := fs.String("rates", "2000,8000", "comma-separated rates of the steady load (row changes per second)")
	duration := fs.Duration("duration", 60*time.Second, "duration of each steady load")
	interval := fs.Duration("commit-interval", 200*time.Millisecond, "the lake subscription's commit_interval")
	copies := fs.Int("copies", 3, "initial copies per system (the row reports the median, runs_s each run)")
	copyProfile := fs.String("copy-cpuprofile", "", "write a CPU profile of the lake's initial copies alone to this file")
	if err := fs.Parse(o.Args); err != nil {
		return err
	}
	n := *rowsFlag
	if n <= 0 {
		n = max(1000, int(1_000_000*o.Scale))
	}
	var rates []int
	for _, s := range splitList(*ratesFlag) {
		var r int
		if _, err := fmt.Sscan(s, &r); err != nil || r < 10 {
			return fmt.Errorf("cdc: bad --rates %q", *ratesFlag)
		}
		rates = append(rates, r)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	open := func(name string, settings map[string]string) (*pgcluster.Cluster, error) {
		return pgcluster.Open(ctx, pgcluster.Options{DataDir: filepath.Join(o.Dir, name), ListenTCP: true, Settings: settings, Logger: quiet})
	}
	src, err := open("cdc-source", map[string]string{"wal_level": "logical", "max_replication_slots": "10", "max_wal_senders": "10"})
	if err != nil {
		return err
	}
	defer src.Stop(context.WithoutCancel(ctx))
	// The launcher waits wal_retrieve_retry_interval (5 s) between worker
	// starts: repeated copies would measure that wait, not the copy.
	sub, err := open("cdc-subscriber", map[string]string{"wal_retrieve_retry_interval": "50ms"})
	if err != nil {
		return err
	}
	defer sub.Stop(context.WithoutCancel(ctx))
	for _, c := range []*pgcluster.Cluster{src, sub} {
		if err := c.CreateDatabase(ctx, "app"); err != nil {
			return err
		}
	}
	srcDSN := fmt.Sprintf("host=127.0.0.1 port=%d dbname=app user=%s sslmode=disable", src.Port(), src.SuperUser())
	subDSN := fmt.Sprintf("host=127.0.0.1 port=%d dbname=app user=%s sslmode=disable", sub.Port(), sub.SuperUser())
	bc, err := openBenchCatalog(ctx, o, "cdc", 16)
	if err != nil {
		return err
	}
	defer bc.close()
	wh := filepath.Join(o.Dir, "cdc-warehouse")
	logger := quiet
	if os.Getenv("LAKESOUL_BENCH_DEBUG") != "" {
		logger = slog.New(slog.NewTextHandler(o.Log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	env := &cdc.Env{Catalog: bc.cat, Store: objstore.Local{}, Warehouse: objstore.LocalURI(wh), Logger: logger}

	srcConn, err := pgx.Connect(ctx, srcDSN)
	if err != nil {
		return err
	}
	defer srcConn.Close(context.WithoutCancel(ctx))
	subConn, err := pgx.Connect(ctx, subDSN)
	if err != nil {
		return err
	}
	defer subConn.Close(context.WithoutCancel(ctx))
	schema := []string{
		"CREATE TABLE t (id bigint PRIMARY KEY, k text NOT NULL, v bigint NOT NULL, ts timestamptz NOT NULL, pad text)",
		"CREATE TABLE probe (id int PRIMARY KEY, stamp timestamptz NOT NULL)",
	}
	for _, q := range schema {
		for _, c := range []*pgx.Conn{srcConn, subConn} {
			if _, err := c.Exec(ctx, q); err != nil {
				return fmt.Errorf("cdc: %s: %w", q, err)
			}
		}
	}
	fmt.Fprintf(o.Log, "cdc: loading %d source rows\n", n)
	for _, q := range []string{
		fmt.Sprintf(`INSERT INTO t SELECT g, 'key-' || g, g, now(), repeat(md5(g::text), 2) FROM generate_series(1, %d) g`, n),
		"INSERT INTO probe VALUES (1, clock_timestamp())",
		"CREATE PUBLICATION bench FOR TABLE t, probe",
		"CHECKPOINT",
	} {
		if _, err := srcConn.Exec(ctx, q); err != nil {
			return fmt.Errorf("cdc: %s: %w", q, err)
		}
	}

	// Copy: PostgreSQL's table sync, then the lake's initial copy, --copies
	// times each (alternating, so both see the same machine); the last
	// subscriptions stay for the steady load.
	svc := cdc.Start(ctx, env, 2)
	defer svc.Close()
	comp, err := compaction.Start(ctx, compaction.Config{Catalog: bc.cat, Store: env.Store, Workers: 1, LifecycleInterval: -1,
		Options: compaction.Options{Logger: quiet, Warehouse: env.Warehouse}})
	if err != nil {
		return err
	}
	defer comp.Close()
	var pgRuns, lakeRuns []float64
	for i := 0; i < *copies; i++ {
		name := fmt.Sprintf("bench%d", i)
		if i > 0 {
			prev := fmt.Sprintf("bench%d", i-1)
			// New subscriber tables: PostgreSQL throttles table syncs of a
			// relation that synced moments ago (wal_retrieve_retry_interval).
			for _, q := range append([]string{"DROP SUBSCRIPTION " + prev, "DROP TABLE t, probe"}, schema...) {
				if _, err := subConn.Exec(ctx, q); err != nil {
					return err
				}
			}
			if err := cdc.Drop(ctx, env, prev, false); err != nil {
				return err
			}
		}
		fmt.Fprintf(o.Log, "cdc: copy %d: PostgreSQL subscription\n", i+1)
		start := time.Now()
		if _, err := subConn.Exec(ctx, "CREATE SUBSCRIPTION "+name+" CONNECTION '"+srcDSN+"' PUBLICATION bench"); err != nil {
			return err
		}
		for {
			var pending int
			if err := subConn.QueryRow(ctx, "SELECT count(*) FROM pg_subscription_rel WHERE srsubstate <> 'r'").Scan(&pending); err != nil {
				return err
			}
			if pending == 0 {
				break
			}
			if err := sleep(ctx, 10*time.Millisecond); err != nil {
				return err
			}
		}
		pgRuns = append(pgRuns, time.Since(start).Seconds())
		fmt.Fprintf(o.Log, "cdc: copy %d: lake subscription\n", i+1)
		stopProfile, err := startCPUProfile(*copyProfile)
		if err != nil {
			return err
		}
		start = time.Now()
		cpu0 := cpuSeconds()
		if err := cdc.Create(ctx, env, cdc.CreateSpec{Name: name, Connection: srcDSN, Publications: []string{"bench"},
			Options: map[string]string{"target_schema": "bench", "commit_interval": fmt.Sprint(interval.Milliseconds())}}); err != nil {
			return err
		}
		for {
			s, err := bc.cat.SubscriptionByName(ctx, name)
			if err != nil {
				return err
			}
			if s.Position != "" {
				break
			}
			if err := sleep(ctx, 10*time.Millisecond); err != nil {
				return err
			}
		}
		lakeRuns = append(lakeRuns, time.Since(start).Seconds())
		stopProfile()
		fmt.Fprintf(o.Log, "cdc: copy %d: lake %.2fs, this process's CPU %.2fs\n", i+1, lakeRuns[i], cpuSeconds()-cpu0)
	}
	sums, err := cdcChecksums(ctx, srcConn, subConn, env)
	if err != nil {
		return err
	}
	pgMedian, lakeMedian := percentile(pgRuns, 0.5), percentile(lakeRuns, 0.5)
	o.Out.Emit(Row{Bench: "cdc", Phase: "copy", System: "postgres", Rows: int64(n), Seconds: pgMedian,
		Extra: map[string]any{"runs_s": pgRuns, "checksum": sums["postgres"], "source_checksum": sums["source"]}})
	o.Out.Emit(Row{Bench: "cdc", Phase: "copy", System: "lakesoul", Rows: int64(n), Seconds: lakeMedian,
		Extra: map[string]any{"runs_s": lakeRuns, "checksum": sums["lakesoul"], "source_checksum": sums["source"],
			"speedup_vs_postgres": round(pgMedian / lakeMedian)}})

	next := int64(n)
	for _, rate := range rates {
		fmt.Fprintf(o.Log, "cdc: steady load at %d changes/s for %v\n", rate, *duration)
		res, err := cdcLoad(ctx, srcConn, subConn, env, rate, *duration, &next)
		if err != nil {
			return err
		}
		sums, err := cdcChecksums(ctx, srcConn, subConn, env)
		if err != nil {
			return err
		}
		for _, sys := range []string{"postgres", "lakesoul"} {
			r := res[sys]
			o.Out.Emit(Row{Bench: "cdc", Phase: "apply", System: sys, Rows: res["source"].changes, Seconds: r.caughtUp.Seconds(),
				Extra: map[string]any{"rate": rate, "achieved_rate": round(float64(res["source"].changes) / res["source"].caughtUp.Seconds()),
					"lag_p50_ms": round(percentile(r.lags, 0.5)), "lag_p99_ms": round(percentile(r.lags, 0.99)),
					"lag_max_ms": round(percentile(r.lags, 1)), "lag_samples": len(r.lags),
					"checksum": sums[sys], "source_checksum": sums["source"]}})
		}
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

type cdcResult struct {
	changes  int64
	caughtUp time.Duration // from the load's start to the last stamp being visible
	lags     []float64     // ms
}

// cdcLoad runs the steady load and observes both systems' probe.
func cdcLoad(ctx context.Context, srcConn, subConn *pgx.Conn, env *cdc.Env, rate int, d time.Duration, next *int64) (map[string]*cdcResult, error) {
	const ticks = 10 // transactions per second
	perTxn := max(1, rate/ticks)
	rng := rand.New(rand.NewSource(int64(rate)))
	out := map[string]*cdcResult{"source": {}, "postgres": {}, "lakesoul": {}}
	lctx, stopObservers := context.WithCancel(ctx)
	defer stopObservers()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var final time.Time // the last stamp, once written
	// stamps are the probe stamps the load wrote, in order: when a system
	// shows stamp S, every stamp up to S became visible then (a lake commit
	// makes a batch of transactions visible at once).
	var stamps []time.Time
	start := time.Now()
	observe := func(sys string, read func(context.Context) (time.Time, error)) {
		defer wg.Done()
		var last time.Time
		seen := 0 // stamps accounted for
		for lctx.Err() == nil {
			stamp, err := read(lctx)
			now := time.Now()
			if err == nil && stamp.After(last) && !stamp.Before(start) {
				last = stamp
				mu.Lock()
				for seen < len(stamps) && !stamps[seen].After(stamp) {
					out[sys].lags = append(out[sys].lags, float64(now.Sub(stamps[seen]).Microseconds())/1000)
					seen++
				}
				if !final.IsZero() && !stamp.Before(final) {
					out[sys].caughtUp = now.Sub(start)
					mu.Unlock()
					return
				}
				mu.Unlock()
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	obsConn, err := pgx.Connect(ctx, subConn.Config().ConnString())
	if err != nil {
		return nil, err
	}
	defer obsConn.Close(context.WithoutCancel(ctx))
	wg.Add(2)
	safego.Go(func() {
		observe("postgres", func(ctx context.Context) (time.Time, error) {
			var t time.Time
			err := obsConn.QueryRow(ctx, "SELECT stamp FROM probe WHERE id = 1").Scan(&t)
			return t, err
		})
	})
	safego.Go(func() {
		observe("lakesoul", func(ctx context.Context) (time.Time, error) { return lakeProbe(ctx, env) })
	})

	tick := time.NewTicker(time.Second / ticks)
	defer tick.Stop()
	deadline := start.Add(d)
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
		// 60% updates, 20% inserts, 20% deletes of existing keys.
		nu, ni := perTxn*6/10, perTxn*2/10
		nd := perTxn - nu - ni
		ids := func(k int) []int64 {
			xs := make([]int64, k)
			for i := range xs {
				xs[i] = 1 + rng.Int63n(*next)
			}
			return xs
		}
		ins := make([]int64, ni)
		for i := range ins {
			*next++
			ins[i] = *next
		}
		var changes int64
		err := pgx.BeginFunc(ctx, srcConn, func(tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, "UPDATE t SET v = v + 1, ts = clock_timestamp() WHERE id = ANY($1)", ids(nu))
			if err != nil {
				return err
			}
			changes += tag.RowsAffected()
			tag, err = tx.Exec(ctx, "INSERT INTO t SELECT g, 'key-' || g, g, clock_timestamp(), repeat(md5(g::text), 2) FROM unnest($1::bigint[]) g", ins)
			if err != nil {
				return err
			}
			changes += tag.RowsAffected()
			tag, err = tx.Exec(ctx, "DELETE FROM t WHERE id = ANY($1)", ids(nd))
			if err != nil {
				return err
			}
			changes += tag.RowsAffected()
			var stamp time.Time
			if err := tx.QueryRow(ctx, "UPDATE probe SET stamp = clock_timestamp() WHERE id = 1 RETURNING stamp").Scan(&stamp); err != nil {
				return err
			}
			mu.Lock()
			stamps = append(stamps, stamp)
			mu.Unlock()
			return nil
		})
		if err != nil {
			return nil, err
		}
		out["source"].changes += changes
	}
	var stamp time.Time
	if err := srcConn.QueryRow(ctx, "UPDATE probe SET stamp = clock_timestamp() WHERE id = 1 RETURNING stamp").Scan(&stamp); err != nil {
		return nil, err
	}
	mu.Lock()
	final = stamp
	stamps = append(stamps, stamp)
	out["source"].caughtUp = time.Since(start)
	mu.Unlock()
	done := make(chan struct{})
	safego.Go(func() { wg.Wait(); close(done) })
	select {
	case <-done:
	case <-time.After(10 * time.Minute):
		stopObservers()
		<-done
		return nil, errors.New("cdc: a subscriber did not catch up within 10 minutes of the load's end")
	}
	return out, nil
}

// lakeProbe reads the lake's probe stamp (a snapshot read, as a query
// would).
func lakeProbe(ctx context.Context, env *cdc.Env) (time.Time, error) {
	var stamp time.Time
	err := scanLake(ctx, env, "probe", func(b arrow.RecordBatch) {
		col := b.Column(b.Schema().FieldIndices("stamp")[0]).(*array.Timestamp)
		for i := 0; i < col.Len(); i++ {
			stamp = col.Value(i).ToTime(arrow.Microsecond)
		}
	})
	return stamp, err
}

// cdcChecksums are count and sum(v) of table t on the source, the
// subscriber and the lake, once all three agree or after a minute.
func cdcChecksums(ctx context.Context, srcConn, subConn *pgx.Conn, env *cdc.Env) (map[string]string, error) {
	q := "SELECT count(*)::text || ':' || coalesce(sum(v), 0)::text FROM t"
	var want string
	if err := srcConn.QueryRow(ctx, q).Scan(&want); err != nil {
		return nil, err
	}
	out := map[string]string{"source": want}
	deadline := time.Now().Add(time.Minute)
	for {
		var pg string
		if err := subConn.QueryRow(ctx, q).Scan(&pg); err != nil {
			return nil, err
		}
		var count, sum int64
		err := scanLake(ctx, env, "t", func(b arrow.RecordBatch) {
			col := b.Column(b.Schema().FieldIndices("v")[0]).(*array.Int64)
			count += int64(col.Len())
			for _, v := range col.Int64Values() {
				sum += v
			}
		})
		if err != nil {
			return nil, err
		}
		out["postgres"], out["lakesoul"] = pg, fmt.Sprintf("%d:%d", count, sum)
		if (pg == want && out["lakesoul"] == want) || time.Now().After(deadline) {
			return out, nil
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

// scanLake reads lake table bench.<name> as a snapshot query does.
func scanLake(ctx context.Context, env *cdc.Env, name string, fn func(arrow.RecordBatch)) error {
	t, err := env.Catalog.TableByName(ctx, "bench", name)
	if err != nil {
		return err
	}
	parts, err := env.Catalog.LiveFiles(ctx, t.ID, nil)
	if err != nil {
		return err
	}
	scan := &reader.Scan{Store: env.Store, Table: t, Partitions: parts, Unordered: true}
	units, err := scan.Units()
	if err != nil {
		return err
	}
	for _, u := range units {
		it, err := scan.Open(ctx, u)
		if err != nil {
			return err
		}
		for {
			b, err := it.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				it.Close()
				return err
			}
			fn(b)
			b.Release()
		}
		it.Close()
	}
	return nil
}

// cpuSeconds is this process's user and system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}
