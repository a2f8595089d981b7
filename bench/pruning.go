package bench

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/google/uuid"

	"github.com/lakesoul-go/lakesoul/catalog"
)

func init() { Register("pruning", runPruning) }

// runPruning measures partition pruning in the catalog for a table with 100 k
// range partitions (× scale): 1 000 days × 100 regions, range columns (d, r),
// two versions per partition, four bucket files per commit. Each phase is the
// catalog work a query's planning does to find its files:
//
//   - exact: every range column bound (d = … AND r = …): the partition's
//     latest version by partition_info's primary key, then its files;
//   - subset_terms: only d bound (100 partitions): candidates from the GIN
//     index on lakesoul.partition_registry, then latest versions and files,
//     one call (lakesoul.live_files_matching, what the engine uses);
//   - subset_tsvector: the same question answered LakeSoul's way (§5.6): the
//     full-text GIN index on partition_info, exact filtering in the client,
//     then the files of the matches;
//   - full_listing: no predicate, every partition (what pruning avoids).
//
// Flags: --iterations N (per phase, default 200).
func runPruning(ctx context.Context, o Options) error {
	fs := flag.NewFlagSet("pruning", flag.ContinueOnError)
	iters := fs.Int("iterations", 200, "measurements per phase")
	if err := fs.Parse(o.Args); err != nil {
		return err
	}
	nparts := max(1000, int(100_000*o.Scale))
	regions := 100
	days := nparts / regions
	nparts = days * regions

	bc, err := openBenchCatalog(ctx, o, "pruning", 4)
	if err != nil {
		return err
	}
	defer bc.close()
	tbl := &catalog.Table{ID: "table_" + uuid.NewString(), Namespace: catalog.DefaultNamespace,
		Name: "bench_pruning_" + uuid.NewString()[:8], Path: "file:///bench/pruning/" + uuid.NewString(),
		Schema: arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64},
			{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true},
			{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
			{Name: "r", Type: arrow.BinaryTypes.String, Nullable: true}}, nil),
		RangeCols: []string{"d", "r"}, PKCols: []string{"id"}, HashBucketNum: 4}
	if err := bc.cat.CreateTable(ctx, tbl); err != nil {
		return err
	}
	defer bc.cat.DropTable(context.WithoutCancel(ctx), tbl.Namespace, tbl.Name) //nolint:errcheck // best effort

	fmt.Fprintf(o.Log, "pruning: loading %d partitions × 2 versions\n", nparts)
	start := time.Now()
	if err := loadPartitions(ctx, bc, tbl, days, regions); err != nil {
		return err
	}
	o.Out.Emit(Row{Bench: "pruning", Phase: "load", System: "lakesoul", Rows: int64(nparts), Seconds: time.Since(start).Seconds(),
		Extra: bc.extra(map[string]any{"partitions": nparts, "versions_per_partition": 2, "files_per_commit": 4})})

	day := func(i int) string {
		return time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i).Format("2006-01-02")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	phase := func(name string, n int, f func() (int, error)) error {
		var lat []float64
		rows := 0
		var total time.Duration
		for range n {
			t0 := time.Now()
			k, err := f()
			d := time.Since(t0)
			if err != nil {
				return fmt.Errorf("pruning %s: %w", name, err)
			}
			total += d
			rows += k
			lat = append(lat, float64(d.Microseconds())/1000)
		}
		o.Out.Emit(Row{Bench: "pruning", Phase: name, System: "lakesoul", Rows: int64(rows), Seconds: total.Seconds(),
			Extra: bc.extra(map[string]any{"partitions": nparts, "iterations": n,
				"partitions_per_query": rows / n, "p50_ms": round(percentile(lat, 0.5)), "p99_ms": round(percentile(lat, 0.99)),
				"mean_ms": round(mean(lat))})})
		return nil
	}
	countParts := func(parts []catalog.PartitionFiles) int { return len(parts) }

	if err := phase("exact", *iters, func() (int, error) {
		desc := fmt.Sprintf("d=%s,r=r%03d", day(rng.IntN(days)), rng.IntN(regions))
		parts, err := bc.cat.LiveFiles(ctx, tbl.ID, []string{desc})
		if err == nil && len(parts) != 1 {
			err = fmt.Errorf("exact %s: %d partitions", desc, len(parts))
		}
		return countParts(parts), err
	}); err != nil {
		return err
	}
	if err := phase("subset_terms", *iters, func() (int, error) {
		parts, err := bc.cat.LiveFilesMatching(ctx, tbl.ID, []string{"d=" + day(rng.IntN(days))})
		if err == nil && len(parts) != regions {
			err = fmt.Errorf("subset: %d partitions", len(parts))
		}
		return countParts(parts), err
	}); err != nil {
		return err
	}
	if err := phase("subset_tsvector", *iters, func() (int, error) {
		term := "d=" + day(rng.IntN(days))
		matching, err := bc.cat.PartitionDescsMatching(ctx, tbl.ID, term)
		if err != nil {
			return 0, err
		}
		var descs []string
		for _, d := range matching {
			if strings.HasPrefix(d, term+",") {
				descs = append(descs, d)
			}
		}
		parts, err := bc.cat.LiveFiles(ctx, tbl.ID, descs)
		if err == nil && len(parts) != regions {
			err = fmt.Errorf("tsvector subset: %d partitions", len(parts))
		}
		return countParts(parts), err
	}); err != nil {
		return err
	}
	return phase("full_listing", max(1, min(*iters, 3)), func() (int, error) {
		parts, err := bc.cat.LiveFiles(ctx, tbl.ID, nil)
		return countParts(parts), err
	})
}

// loadPartitions writes days × regions partitions straight into the catalog
// tables, as lakesoul.commit would have left them: version 0 = [c0], version
// 1 = [c0, c1], each commit adding one file per bucket. Triggers fire as for
// any insert (compaction notify check, partition registry).
func loadPartitions(ctx context.Context, bc *benchCatalog, tbl *catalog.Table, days, regions int) error {
	const batchDays = 50
	for d0 := 0; d0 < days; d0 += batchDays {
		d1 := min(days, d0+batchDays)
		parts := `SELECT 'd=' || to_char(date '2020-01-01' + i, 'YYYY-MM-DD') || ',r=r' || lpad(r::text, 3, '0') AS d
			FROM generate_series($2::int, $3::int - 1) i, generate_series(0, $4::int - 1) r`
		if _, err := bc.cat.Pool().Exec(ctx, `WITH parts AS (`+parts+`)
			INSERT INTO public.data_commit_info (table_id, partition_desc, commit_id, file_ops, commit_op, committed, timestamp, domain)
			SELECT $1, p.d, md5($1 || p.d || v)::uuid,
			       ARRAY(SELECT ROW($5 || '/' || replace(p.d, ',', '/') || '/part-' || left(md5(p.d || v), 16) || '_' || lpad(b::text, 4, '0') || '.parquet',
			                        'add', 1048576, 'id,v')::public.data_file_op FROM generate_series(0, 3) b ORDER BY b),
			       'MergeCommit', true, 0, 'public'
			  FROM parts p, generate_series(0, 1) v`, tbl.ID, d0, d1, regions, tbl.Path); err != nil {
			return fmt.Errorf("load commits: %w", err)
		}
		if _, err := bc.cat.Pool().Exec(ctx, `WITH parts AS (`+parts+`)
			INSERT INTO public.partition_info (table_id, partition_desc, version, commit_op, timestamp, snapshot, expression, domain)
			SELECT $1, p.d, v, 'MergeCommit', 1000 + v,
			       ARRAY(SELECT md5($1 || p.d || w)::uuid FROM generate_series(0, v) w ORDER BY w), '', 'public'
			  FROM parts p, generate_series(0, 1) v ORDER BY v`, tbl.ID, d0, d1, regions); err != nil {
			return fmt.Errorf("load versions: %w", err)
		}
	}
	_, err := bc.cat.Pool().Exec(ctx, "ANALYZE public.partition_info; ANALYZE public.data_commit_info; ANALYZE lakesoul.partition_registry")
	return err
}
