package bench

import (
	"context"
	"flag"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/google/uuid"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/safego"
)

func init() { Register("commits", runCommits) }

// runCommits measures the commit protocol (lakesoul.commit, one round trip
// per commit) with 1, 8 and 32 concurrent writers, each committing one
// MergeCommit of one file at a time, on distinct partitions (one per writer)
// and all on the same partition. Per configuration it reports commits/s and
// the latency distribution (p50/p99/max) seen by the writers.
//
// Phase rmw (commits_rmw.go) runs read-modify-write clients over pgwire
// against lakesoul serve and PostgreSQL.
//
// Flags: --phases commit,rmw, --commits N (per configuration, default 4000
// × scale), --writers 1,8,32 (writers, and rmw clients), --rmw-seconds S
// (per rmw configuration and system, default 10 × scale, at least 3).
func runCommits(ctx context.Context, o Options) error {
	fs := flag.NewFlagSet("commits", flag.ContinueOnError)
	total := fs.Int("commits", 0, "commits per configuration (default 4000 × scale, at least 100)")
	writersFlag := fs.String("writers", "1,8,32", "comma-separated writer (and rmw client) counts")
	phases := fs.String("phases", "commit,rmw", "comma-separated phases: commit (the commit protocol alone), rmw (read-modify-write statements next to PostgreSQL)")
	rmwSeconds := fs.Float64("rmw-seconds", 0, "seconds per rmw configuration and system (default 10 × scale, at least 3)")
	if err := fs.Parse(o.Args); err != nil {
		return err
	}
	run := map[string]bool{}
	for _, p := range splitList(*phases) {
		if p != "commit" && p != "rmw" {
			return fmt.Errorf("commits: unknown phase %q", p)
		}
		run[p] = true
	}
	n := *total
	if n <= 0 {
		n = max(100, int(4000*o.Scale))
	}
	var writerCounts []int
	for _, w := range splitList(*writersFlag) {
		var x int
		if _, err := fmt.Sscan(w, &x); err != nil || x < 1 {
			return fmt.Errorf("commits: bad --writers %q", *writersFlag)
		}
		writerCounts = append(writerCounts, x)
	}
	if run["commit"] {
		if err := runCommitProtocol(ctx, o, writerCounts, n); err != nil {
			return err
		}
	}
	if run["rmw"] {
		secs := *rmwSeconds
		if secs <= 0 {
			secs = max(3, 10*o.Scale)
		}
		return runCommitsRMW(ctx, o, writerCounts, secs)
	}
	return nil
}

// runCommitProtocol is the commit phase: n commits per configuration.
func runCommitProtocol(ctx context.Context, o Options, writerCounts []int, n int) error {
	bc, err := openBenchCatalog(ctx, o, "commits", slices.Max(writerCounts)+2)
	if err != nil {
		return err
	}
	defer bc.close()

	for _, same := range []bool{false, true} {
		for _, writers := range writerCounts {
			tbl := &catalog.Table{ID: "table_" + uuid.NewString(), Namespace: catalog.DefaultNamespace,
				Name: fmt.Sprintf("bench_commits_%s", uuid.NewString()[:8]), Path: "file:///bench/commits/" + uuid.NewString(),
				Schema: arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64},
					{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true}, {Name: "p", Type: arrow.BinaryTypes.String, Nullable: true}}, nil),
				RangeCols: []string{"p"}, PKCols: []string{"id"}, HashBucketNum: 4}
			if err := bc.cat.CreateTable(ctx, tbl); err != nil {
				return err
			}
			mode := "distinct"
			if same {
				mode = "same"
			}
			fmt.Fprintf(o.Log, "commits: %d writers, %s partitions, %d commits\n", writers, mode, n)
			lat, errs, took, err := commitLoad(ctx, bc.cat, tbl, writers, n, same)
			if err != nil {
				return err
			}
			o.Out.Emit(Row{Bench: "commits", Phase: "commit", System: "lakesoul", Rows: int64(len(lat)), Seconds: took.Seconds(),
				Extra: bc.extra(map[string]any{
					"writers": writers, "partitions": mode, "errors": errs,
					"commits_per_s": round(float64(len(lat)) / took.Seconds()),
					"p50_ms":        round(percentile(lat, 0.50)), "p99_ms": round(percentile(lat, 0.99)),
					"max_ms": round(percentile(lat, 1)), "mean_ms": round(mean(lat)),
				})})
			if _, err := bc.cat.DropTable(ctx, tbl.Namespace, tbl.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

// commitLoad runs n commits spread over writers goroutines and returns the
// latency of each successful commit in ms.
func commitLoad(ctx context.Context, cat *catalog.Catalog, tbl *catalog.Table, writers, n int, same bool) ([]float64, int, time.Duration, error) {
	var mu sync.Mutex
	var lat []float64
	errs := 0
	var firstErr error
	var g safego.Group
	start := time.Now()
	for w := range writers {
		count := n / writers
		if w < n%writers {
			count++
		}
		desc := fmt.Sprintf("p=%d", w)
		if same {
			desc = "p=0"
		}
		fail := func(err error) {
			mu.Lock()
			errs++
			if firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
		}
		g.Start(func() {
			local := make([]float64, 0, count)
			for range count {
				// A writer registers its intent before it writes files;
				// the commit (timed) consumes it.
				intent, err := cat.BeginWrite(ctx)
				if err != nil {
					fail(err)
					return
				}
				pc := catalog.PartitionCommit{Desc: desc, CommitID: uuid.New(), Ops: []catalog.FileOp{{
					Path: tbl.Path + "/" + desc + "/" + intent.FileName(0), Op: "add", Size: 1 << 20,
					ExistCols: []string{"id", "v"}}}}
				t0 := time.Now()
				_, err = cat.Commit(ctx, intent, tbl.ID, catalog.MergeCommit, []catalog.PartitionCommit{pc})
				d := time.Since(t0)
				intent.Release(ctx)
				if err != nil {
					fail(err)
					if ctx.Err() != nil {
						return
					}
					continue
				}
				local = append(local, float64(d.Microseconds())/1000)
			}
			mu.Lock()
			lat = append(lat, local...)
			mu.Unlock()
		})
	}
	g.Wait()
	took := time.Since(start)
	if ctx.Err() != nil {
		return nil, 0, 0, ctx.Err()
	}
	if errs > 0 && len(lat) == 0 {
		return nil, 0, 0, fmt.Errorf("commits: every commit failed: %w", firstErr)
	}
	return lat, errs, took, nil
}

// percentile returns the p-quantile (nearest rank) of xs.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t / float64(len(xs))
}

// round keeps three decimals.
func round(x float64) float64 { return math.Round(x*1000) / 1000 }

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
