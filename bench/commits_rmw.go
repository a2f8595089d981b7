package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/metrics"
	"github.com/lakesoul-go/lakesoul/server"
)

// The rmw phase of `bench commits`: read-modify-write clients — each
// running `UPDATE t SET v = v + 1 WHERE id = $1` over pgwire, one statement
// at a time, autocommit — against lakesoul serve and against PostgreSQL
// (a heap table with the same key, on the same machine, in the same run).
// Keys are drawn at random from rmwKeys rows ("random") or are all one row
// ("one"). A row reports statements/s, p50/p99 latency, the statements
// lakesoul ran again because their row changed under them (READ
// COMMITTED's re-run, engine/rmw.go) and the errors; afterwards the table's
// sum must equal the number of statements that succeeded — no increment
// lost, on either system.

// rmwKeys is the number of rows the random mode draws from.
const rmwKeys = 1000

func runCommitsRMW(ctx context.Context, o Options, writerCounts []int, seconds float64) error {
	srv, err := server.Start(ctx, server.Config{
		DataDir: filepath.Join(o.Dir, "lakesoul-rmw"), Listen: "127.0.0.1:0", AdminPassword: "bench",
		CatalogURL: o.CatalogURL, Announce: io.Discard,
		Logger: slog.New(slog.NewTextHandler(o.Log, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return err
	}
	defer srv.Close(context.WithoutCancel(ctx))
	lakeURL := fmt.Sprintf("postgres://lakesoul:bench@%s/lakesoul?sslmode=disable", srv.Addr())
	pgURL, err := benchPostgresDB(ctx, srv.CatalogURL(), "bench_rmw_pg")
	if err != nil {
		return err
	}
	systems := []struct {
		name, url, create string
	}{
		{"lakesoul", lakeURL, "CREATE TABLE bench_rmw.t%d (id bigint PRIMARY KEY, v bigint) WITH (hash_bucket_num = 4)"},
		{"postgres", pgURL, "CREATE TABLE bench_rmw.t%d (id bigint PRIMARY KEY, v bigint)"},
	}
	for _, sys := range systems {
		c, err := pgx.Connect(ctx, sys.url)
		if err != nil {
			return err
		}
		_, err = c.Exec(ctx, "CREATE SCHEMA bench_rmw")
		c.Close(ctx)
		if err != nil {
			return fmt.Errorf("%s: %w", sys.name, err)
		}
	}
	table := 0
	for _, mode := range []string{"random", "one"} {
		for _, writers := range writerCounts {
			// The systems take turns per configuration, so a noisy
			// stretch of the machine does not fall on one of them alone.
			for _, sys := range systems {
				table++
				fmt.Fprintf(o.Log, "commits rmw: %s, %d clients, %s key(s), %.0f s\n", sys.name, writers, mode, seconds)
				r, err := rmwLoad(ctx, sys.url, fmt.Sprintf(sys.create, table), fmt.Sprintf("bench_rmw.t%d", table), writers, mode, seconds)
				if err != nil {
					return fmt.Errorf("rmw %s: %w", sys.name, err)
				}
				reruns := int64(0)
				if sys.name == "lakesoul" {
					reruns = r.reruns
				}
				o.Out.Emit(Row{Bench: "commits", Phase: "rmw", System: sys.name, Rows: int64(len(r.lat)), Seconds: r.took.Seconds(),
					Extra: map[string]any{
						"clients": writers, "keys": mode, "errors": r.errors,
						"statements_per_s": round(float64(len(r.lat)) / r.took.Seconds()),
						"reruns":           reruns, "reruns_per_s": round(float64(reruns) / r.took.Seconds()),
						"p50_ms": round(percentile(r.lat, 0.50)), "p99_ms": round(percentile(r.lat, 0.99)),
						"max_ms": round(percentile(r.lat, 1)), "lost_updates": r.lost,
					}})
				if r.lost != 0 {
					return fmt.Errorf("rmw %s: %d increments lost", sys.name, r.lost)
				}
			}
		}
	}
	return nil
}

// rmwResult is one rmw configuration's measurement.
type rmwResult struct {
	lat    []float64 // ms, successful statements
	errors int
	took   time.Duration
	reruns int64
	// lost is the successful increments the table's sum lacks.
	lost int64
}

// rmwLoad creates the table, then runs writers clients for seconds.
func rmwLoad(ctx context.Context, url, create, table string, writers int, mode string, seconds float64) (rmwResult, error) {
	var r rmwResult
	setup, err := pgx.Connect(ctx, url)
	if err != nil {
		return r, err
	}
	defer setup.Close(ctx)
	if _, err := setup.Exec(ctx, create); err != nil {
		return r, err
	}
	if _, err := setup.Exec(ctx, fmt.Sprintf("INSERT INTO %s SELECT g, 0 FROM generate_series(1, %d) g", table, rmwKeys)); err != nil {
		return r, err
	}
	conns := make([]*pgx.Conn, writers)
	for i := range conns {
		if conns[i], err = pgx.Connect(ctx, url); err != nil {
			return r, err
		}
		defer conns[i].Close(ctx)
	}
	update := fmt.Sprintf("UPDATE %s SET v = v + 1 WHERE id = $1", table)
	var mu sync.Mutex
	var g safego.Group
	before := metrics.RowConflictReruns()
	start := time.Now()
	deadline := start.Add(time.Duration(seconds * float64(time.Second)))
	for w, c := range conns {
		g.Start(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 42))
			var local []float64
			errs := 0
			for time.Now().Before(deadline) && ctx.Err() == nil {
				id := int64(1)
				if mode == "random" {
					id = int64(rng.IntN(rmwKeys)) + 1
				}
				t0 := time.Now()
				if _, err := c.Exec(ctx, update, id); err != nil {
					errs++
					continue
				}
				local = append(local, float64(time.Since(t0).Microseconds())/1000)
			}
			mu.Lock()
			r.lat = append(r.lat, local...)
			r.errors += errs
			mu.Unlock()
		})
	}
	g.Wait()
	r.took = time.Since(start)
	r.reruns = metrics.RowConflictReruns() - before
	if err := ctx.Err(); err != nil {
		return r, err
	}
	var sum int64
	if err := setup.QueryRow(ctx, fmt.Sprintf("SELECT sum(v)::bigint FROM %s", table)).Scan(&sum); err != nil {
		return r, err
	}
	r.lost = int64(len(r.lat)) - sum
	return r, nil
}
