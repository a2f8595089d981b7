package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lakesoul-go/lakesoul/server"
)

func init() { Register("tpch", runTPCH) }

// tpchSystemNames are the systems `bench tpch` knows, in their default
// order (the order each query runs them in).
var tpchSystemNames = []string{"lakesoul-keyed", "lakesoul-append", "duckdb-parquet", "duckdb", "postgres"}

// tpchBaseline is the system the geometric means are divided by.
const tpchBaseline = "duckdb-parquet"

// runTPCH generates TPC-H data (tpch_data.go), loads it into every system of
// --systems, then runs the 22 queries interleaved — per query each system
// in turn, --runs times, the median reported — so every system meets the
// same machine load. Each answer is compared with DuckDB's (its own tables;
// the first system when duckdb is not run): numbers rounded to 2 decimals,
// rows sorted where the query's ORDER BY leaves ties. A differing answer or
// a failed query is a row with "mismatch" or "error", the remaining queries
// still run, and the bench fails at the end.
//
// A lake system's query row lists as types_differ the result columns whose
// type differs from PostgreSQL's answer (information, not a failure: the
// values are compared as rounded text).
//
// peak_rss_mb of a query row is this process's peak RSS while that system
// ran it: the lake server runs in this process, and so do the DuckDB peers,
// which is why their databases are opened for each query and closed after;
// PostgreSQL is a process of its own. The geomean row carries a system's
// largest.
func runTPCH(ctx context.Context, o Options) error {
	fs := flag.NewFlagSet("tpch", flag.ContinueOnError)
	systemsFlag := fs.String("systems", strings.Join(tpchSystemNames, ","), "systems to load and query: "+strings.Join(tpchSystemNames, ", "))
	runs := fs.Int("runs", 3, "runs of each query on each system (the row reports the median, runs_s every run)")
	timeout := fs.Duration("timeout", 30*time.Minute, "limit of one run of one query")
	dataFlag := fs.String("data", "", "directory of the generated tables, kept and reused by later runs at the same scale (default: under the scratch directory)")
	explainDir := fs.String("explain", "", "write each lake system's EXPLAIN ANALYZE of each query, after its timed runs, to DIR/<query>-<system>.txt")
	queriesFlag := fs.String("queries", "", "comma-separated queries to run (q01 … q22; default all)")
	if err := fs.Parse(o.Args); err != nil {
		return err
	}
	if *runs < 1 {
		return fmt.Errorf("tpch: --runs must be at least 1")
	}
	scale, err := parseTPCHScale(o.Scale)
	if err != nil {
		return err
	}
	var names []string
	for _, s := range strings.Split(*systemsFlag, ",") {
		s = strings.TrimSpace(s)
		base, codec, coded := strings.Cut(s, ":")
		if coded {
			if !strings.HasPrefix(base, "lakesoul-") {
				return fmt.Errorf("tpch: %q: only lake systems take a codec", s)
			}
			if _, err := parseCodecs(codec); err != nil {
				return err
			}
			s = base + ":" + strings.ToUpper(codec)
		}
		if !slices.Contains(tpchSystemNames, base) {
			return fmt.Errorf("tpch: unknown system %q (known: %s)", s, strings.Join(tpchSystemNames, ", "))
		}
		if !slices.Contains(names, s) {
			names = append(names, s)
		}
	}
	queries := tpchQueries(scale)
	if *queriesFlag != "" {
		want := strings.Split(*queriesFlag, ",")
		queries = slices.DeleteFunc(queries, func(q tpchQuery) bool { return !slices.Contains(want, q.name) })
		if len(queries) != len(want) {
			return fmt.Errorf("tpch: --queries %q names queries that do not exist (q01 … q22)", *queriesFlag)
		}
	}

	if *dataFlag == "" {
		*dataFlag = filepath.Join(o.Dir, "tpch-data")
	}
	start := time.Now()
	counts, reused, err := tpchData(ctx, *dataFlag, scale)
	if err != nil {
		return err
	}
	var total int64
	for _, n := range counts {
		total += n
	}
	o.Out.Emit(Row{Bench: "tpch", Phase: "generate", System: "dbgen", Rows: total, Seconds: time.Since(start).Seconds(),
		Extra: map[string]any{"scale": scale.Float(), "tables": counts, "reused": reused}})
	fmt.Fprintf(o.Log, "tpch: scale %v, %d rows (lineitem %d)\n", scale.Float(), total, counts["lineitem"])
	dataDir := *dataFlag

	var srv *server.Server
	if slices.ContainsFunc(names, func(s string) bool { return strings.HasPrefix(s, "lakesoul-") || s == "postgres" }) {
		srv, err = server.Start(ctx, server.Config{
			DataDir: filepath.Join(o.Dir, "lakesoul"), Listen: "127.0.0.1:0", AdminPassword: "bench",
			CatalogURL: o.CatalogURL, Announce: io.Discard,
			Logger: slog.New(slog.NewTextHandler(o.Log, &slog.HandlerOptions{Level: slog.LevelWarn})),
		})
		if err != nil {
			return err
		}
		defer srv.Close(context.WithoutCancel(ctx))
	}

	var failures []string
	var systems []tpchSystem
	for _, name := range names {
		s := newTPCHSystem(name, srv, o.Dir)
		defer s.close()
		fmt.Fprintf(o.Log, "tpch: loading %s\n", name)
		resetPeakRSS()
		ld, err := s.load(ctx, dataDir, counts)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			failures = append(failures, name+" load: "+err.Error())
			o.Out.Emit(Row{Bench: "tpch", Phase: "load", System: name, Extra: map[string]any{"error": err.Error()}})
			continue
		}
		o.Out.Emit(Row{Bench: "tpch", Phase: "load", System: name, Rows: total, Seconds: ld.seconds,
			PeakRSSMB: peakRSSSinceReset(), Extra: map[string]any{"size_mb": float64(ld.bytes) / (1 << 20), "tables_s": ld.tables}})
		systems = append(systems, s)
	}

	reference := "duckdb"
	if !slices.Contains(names, reference) {
		reference = names[0]
	}
	times := map[string][]float64{}
	peaks := map[string]float64{}
	for _, q := range queries {
		fmt.Fprintf(o.Log, "tpch: %s\n", q.name)
		answers := map[string]tpchAnswer{}
		rows := map[string]Row{}
		for _, s := range systems {
			r, answer, err := runTPCHQuery(ctx, s, q, *runs, *timeout)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err != nil {
				failures = append(failures, fmt.Sprintf("%s %s: %v", q.name, s.name(), err))
				r.Extra["error"] = err.Error()
			} else {
				answers[s.name()] = answer
				times[s.name()] = append(times[s.name()], r.Seconds)
			}
			peaks[s.name()] = max(peaks[s.name()], r.PeakRSSMB)
			rows[s.name()] = r
			if e, ok := s.(tpchExplainer); ok && *explainDir != "" && err == nil {
				if err := writeTPCHExplain(ctx, e, *explainDir, q); err != nil {
					r.Extra["explain_error"] = err.Error()
				}
			}
		}
		ref, haveRef := answers[reference]
		for _, s := range systems {
			r := rows[s.name()]
			if answer, ok := answers[s.name()]; ok && s.name() != "postgres" {
				if d := typesDiffer(answers["postgres"].types, answer.types); d != "" {
					r.Extra["types_differ"] = d
				}
			}
			if answer, ok := answers[s.name()]; ok && haveRef {
				ok, diff := sameTPCHAnswer(ref.lines, answer.lines, q.ordered)
				r.Extra["answer_ok"] = ok
				if !ok {
					r.Extra["mismatch"] = fmt.Sprintf("differs from %s's answer: %s", reference, diff)
					failures = append(failures, fmt.Sprintf("%s %s: %s", q.name, s.name(), r.Extra["mismatch"]))
				}
			}
			o.Out.Emit(r)
		}
	}

	base := geomean(times[tpchBaseline])
	for _, s := range systems {
		t := times[s.name()]
		extra := map[string]any{"queries": len(t), "failed": len(queries) - len(t)}
		if g := geomean(t); g > 0 && base > 0 && len(t) == len(times[tpchBaseline]) {
			extra["ratio_to_"+tpchBaseline] = g / base
		}
		o.Out.Emit(Row{Bench: "tpch", Phase: "geomean", System: s.name(), Rows: int64(len(t)), Seconds: geomean(t),
			PeakRSSMB: peaks[s.name()], Extra: extra})
	}
	if len(failures) > 0 {
		return fmt.Errorf("tpch: %d failures:\n  %s", len(failures), strings.Join(failures, "\n  "))
	}
	return nil
}

// runTPCHQuery runs q runs times on s and returns its row (the median time,
// every run's, the result's row count, this process's peak RSS meanwhile)
// and the last run's answer. Every run must give the same answer.
func runTPCHQuery(ctx context.Context, s tpchSystem, q tpchQuery, runs int, timeout time.Duration) (Row, tpchAnswer, error) {
	r := Row{Bench: "tpch", Phase: q.name, System: s.name(), Extra: map[string]any{}}
	resetPeakRSS()
	var times []float64
	var answer tpchAnswer
	err := func() error {
		if err := s.open(ctx); err != nil {
			return err
		}
		defer s.done()
		for i := range runs {
			qctx, cancel := context.WithTimeout(ctx, timeout)
			start := time.Now()
			a, err := s.query(qctx, q.sql)
			took := time.Since(start)
			cancel()
			if err != nil {
				if errors.Is(err, context.DeadlineExceeded) {
					return fmt.Errorf("run %d exceeded --timeout %v", i+1, timeout)
				}
				return err
			}
			if i > 0 && !slices.Equal(a.lines, answer.lines) {
				return fmt.Errorf("run %d's answer differs from run 1's", i+1)
			}
			answer = a
			times = append(times, took.Seconds())
		}
		return nil
	}()
	r.PeakRSSMB = peakRSSSinceReset()
	if err != nil {
		return r, answer, err
	}
	r.Rows, r.Seconds = int64(len(answer.lines)), medianOf(times)
	r.Extra["runs_s"] = times
	return r, answer, nil
}

// tpchExplainer is a system that explains its plans (the lake's).
type tpchExplainer interface {
	tpchSystem
	explain(ctx context.Context, q string) (string, error)
}

// writeTPCHExplain writes e's EXPLAIN ANALYZE of q to dir.
func writeTPCHExplain(ctx context.Context, e tpchExplainer, dir string, q tpchQuery) error {
	plan, err := e.explain(ctx, q.sql)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, q.name+"-"+e.name()+".txt"), []byte(q.sql+"\n\n"+plan), 0o644)
}

// geomean is the geometric mean of xs (0 for none).
func geomean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var sum float64
	for _, x := range xs {
		sum += math.Log(max(x, 1e-6))
	}
	return math.Exp(sum / float64(len(xs)))
}
