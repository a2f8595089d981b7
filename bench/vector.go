package bench

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/coder/hnsw"
	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"
	pgxvec "github.com/pgvector/pgvector-go/pgx"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/server"
	"github.com/lakesoul-go/lakesoul/vector"
)

func init() { Register("vector", runVector) }

// runVector measures vector search on a lake table over pgwire: n × dims
// seeded clustered Gaussians (1 M × 128 at scale 1) COPYed into a PK table
// with 4 buckets, exact ground truth computed in memory, then
//
//   - ingest: COPY throughput (pgvector binary form, pgx CopyFrom);
//   - index_build: CREATE INDEX … USING ivfflat until every bucket's segment
//     is built; index_bytes is what the segments hold in memory (codes,
//     keys, centroids; the full vectors stay in the files, whose size is
//     segment_file_bytes), next to the raw vectors';
//   - search: recall@10 and queries/s (one client, binary parameters) for
//     each --probes value, after vectorWarmup untimed queries;
//   - exact: the same queries as an exact scan (l2_distance, which the
//     index does not serve);
//   - upsert: --upserts rows overwritten with new vectors (COPY), then the
//     searches again against the new ground truth, and every upserted
//     vector searched for itself (findable = the fraction found first);
//   - the peer: an in-memory HNSW graph (github.com/coder/hnsw) on the same
//     vectors, build time, recall@10 and queries/s.
//
// Flags: --dims 128, --queries 200, --lists (default n/1000, at least 16),
// --probes 1,4,16,32, --upserts 10000, --exact-queries 10, --hnsw-m 16,
// --hnsw-ef 64, --clusters
// (default n/1000, at least 10), --cpuprofile FILE (of the index searches).
func runVector(ctx context.Context, o Options) error {
	fs := flag.NewFlagSet("vector", flag.ContinueOnError)
	dims := fs.Int("dims", 128, "dimensions")
	nq := fs.Int("queries", 200, "queries per measurement")
	lists := fs.Int("lists", 0, "ivfflat lists (0: rows/1000, at least 16)")
	probesFlag := fs.String("probes", "1,4,16,32", "ivfflat.probes values")
	upserts := fs.Int("upserts", 10000, "rows upserted after the build")
	exactQ := fs.Int("exact-queries", 10, "queries of the exact scan")
	clusters := fs.Int("clusters", 0, "Gaussian clusters (0: rows/1000, at least 10)")
	hnswM := fs.Int("hnsw-m", 16, "HNSW peer: neighbors per node")
	hnswEf := fs.Int("hnsw-ef", 64, "HNSW peer: search breadth")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the index searches to this file")
	if err := fs.Parse(o.Args); err != nil {
		return err
	}
	n := max(1000, int(1_000_000*o.Scale))
	d := *dims
	if *lists == 0 {
		*lists = max(16, n/1000)
	}
	if *clusters == 0 {
		*clusters = max(10, n/1000)
	}
	var probes []int
	for _, p := range strings.Split(*probesFlag, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || v < 1 {
			return fmt.Errorf("--probes %q", *probesFlag)
		}
		probes = append(probes, v)
	}
	rng := rand.New(rand.NewPCG(17, 42))
	centers := gaussians(rng, *clusters, d, 3, nil)
	base := gaussians(rng, n, d, 1, centers)
	queries := gaussians(rng, *nq, d, 1, centers)
	extra := map[string]any{"dims": d, "lists": *lists, "clusters": *clusters, "buckets": 4}
	withExtra := func(m map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range extra {
			out[k] = v
		}
		for k, v := range m {
			out[k] = v
		}
		return out
	}

	srv, err := server.Start(ctx, server.Config{
		DataDir: filepath.Join(o.Dir, "lakesoul"), Listen: "127.0.0.1:0", AdminPassword: "bench",
		CatalogURL: o.CatalogURL, Announce: io.Discard,
		Logger: slog.New(slog.NewTextHandler(o.Log, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return err
	}
	defer srv.Close(context.WithoutCancel(ctx))
	c, err := connectBench(ctx, srv)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	if err := pgxvec.RegisterTypes(ctx, c); err != nil {
		return err
	}
	for _, q := range []string{"DROP TABLE IF EXISTS items",
		fmt.Sprintf("CREATE TABLE items (id bigint, emb vector(%d), PRIMARY KEY (id)) WITH (hash_bucket_num = 4)", d)} {
		if _, err := c.Exec(ctx, q); err != nil {
			return err
		}
	}

	fmt.Fprintf(o.Log, "vector: ingesting %d × %d\n", n, d)
	start := time.Now()
	if err := copyVectors(ctx, c, base, d, 0); err != nil {
		return err
	}
	o.Out.Emit(Row{Bench: "vector", Phase: "ingest", System: "lakesoul", Rows: int64(n), Seconds: time.Since(start).Seconds(), Extra: withExtra(nil)})

	truth := groundTruth(base, queries, d, 10)
	start = time.Now()
	if _, err := c.Exec(ctx, fmt.Sprintf("CREATE INDEX items_emb ON items USING ivfflat (emb vector_l2_ops) WITH (lists = %d)", *lists)); err != nil {
		return err
	}
	cat, err := catalog.Open(ctx, srv.CatalogURL())
	if err != nil {
		return err
	}
	defer cat.Close()
	var paths []string
	var indexBytes int64
	for len(paths) < 4 {
		time.Sleep(100 * time.Millisecond)
		if paths, err = segmentPaths(ctx, cat); err != nil {
			return err
		}
	}
	build := time.Since(start).Seconds()
	var fileBytes int64
	for _, p := range paths {
		fileBytes += fileSize(p)
		indexBytes += segmentMemory(p)
	}
	o.Out.Emit(Row{Bench: "vector", Phase: "index_build", System: "lakesoul", Rows: int64(n), Seconds: build,
		Extra: withExtra(map[string]any{"index_bytes": indexBytes, "segment_file_bytes": fileBytes, "raw_vector_bytes": int64(n) * int64(d) * 4,
			"index_to_raw": float64(indexBytes) / float64(int64(n)*int64(d)*4)})})

	search := func(phase string, p int, truth [][]int64, sqlText string, qs []float32) error {
		if _, err := c.Exec(ctx, fmt.Sprintf("SET ivfflat.probes = %d", p)); err != nil {
			return err
		}
		nq := len(qs) / d
		// Warm-up, not timed: the first search after a build or an upsert
		// loads the segments and the newer files' rows into memory.
		for i := range min(vectorWarmup, nq) {
			if _, err := nearestIDs(ctx, c, sqlText, qs[i*d:(i+1)*d]); err != nil {
				return err
			}
		}
		hits := 0
		start := time.Now()
		for i := range nq {
			ids, err := nearestIDs(ctx, c, sqlText, qs[i*d:(i+1)*d])
			if err != nil {
				return err
			}
			hits += overlap(ids, truth[i])
		}
		secs := time.Since(start).Seconds()
		o.Out.Emit(Row{Bench: "vector", Phase: phase, System: "lakesoul", Rows: int64(nq), Seconds: secs,
			Extra: withExtra(map[string]any{"probes": p, "recall_at_10": float64(hits) / float64(10*nq), "queries_per_s": float64(nq) / secs})})
		return nil
	}
	const indexed = "SELECT id FROM items ORDER BY emb <-> $1 LIMIT 10"
	stop, err := startCPUProfile(*cpuProfile)
	if err != nil {
		return err
	}
	for _, p := range probes {
		if err := search("search", p, truth, indexed, queries); err != nil {
			stop()
			return err
		}
	}
	stop()
	eq := min(*exactQ, *nq)
	if err := search("exact", 1, truth[:eq], "SELECT id FROM items ORDER BY l2_distance(emb, $1) LIMIT 10", queries[:eq*d]); err != nil {
		return err
	}

	// Upserts: overwrite the first rows with vectors near other centers.
	up := min(*upserts, n)
	moved := gaussians(rng, up, d, 1, centers)
	start = time.Now()
	if err := copyVectors(ctx, c, moved, d, 0); err != nil {
		return err
	}
	o.Out.Emit(Row{Bench: "vector", Phase: "upsert", System: "lakesoul", Rows: int64(up), Seconds: time.Since(start).Seconds(), Extra: withExtra(nil)})
	copy(base, moved)
	truth = groundTruth(base, queries, d, 10)
	for _, p := range probes {
		if err := search("search_after_upsert", p, truth, indexed, queries); err != nil {
			return err
		}
	}
	found := 0
	checks := min(up, 200)
	for i := range checks {
		j := i * up / checks
		ids, err := nearestIDs(ctx, c, "SELECT id FROM items ORDER BY emb <-> $1 LIMIT 1", moved[j*d:(j+1)*d])
		if err != nil {
			return err
		}
		if len(ids) == 1 && ids[0] == int64(j) {
			found++
		}
	}
	o.Out.Emit(Row{Bench: "vector", Phase: "upserted_findable", System: "lakesoul", Rows: int64(checks),
		Extra: withExtra(map[string]any{"findable": float64(found) / float64(checks)})})

	return hnswPeer(o, base, queries, truth, d, *hnswM, *hnswEf, withExtra)
}

// hnswPeer builds an in-memory HNSW graph (coder/hnsw, Euclidean) of the
// (upserted) vectors and searches it.
func hnswPeer(o Options, base, queries []float32, truth [][]int64, d, m, ef int, withExtra func(map[string]any) map[string]any) error {
	n := len(base) / d
	g := hnsw.NewGraph[int64]()
	g.Distance = hnsw.EuclideanDistance
	g.M, g.EfSearch = m, ef
	start := time.Now()
	for i := range n {
		g.Add(hnsw.MakeNode(int64(i), base[i*d:(i+1)*d]))
	}
	o.Out.Emit(Row{Bench: "vector", Phase: "index_build", System: "hnsw", Rows: int64(n), Seconds: time.Since(start).Seconds(),
		Extra: withExtra(map[string]any{"m": g.M, "ef_search": g.EfSearch})})
	hits := 0
	start = time.Now()
	nq := len(queries) / d
	for i := range nq {
		// coder/hnsw's layer-0 search keeps only k results (its EfSearch
		// sizes no result set), so asking for 10 gives recall ≈ 0.1 on
		// clustered data: search ef_search and keep the 10 nearest.
		q := queries[i*d : (i+1)*d]
		found := g.Search(q, max(10, ef))
		slices.SortFunc(found, func(a, b hnsw.Node[int64]) int {
			return cmp.Compare(vector.L2Squared(q, a.Value), vector.L2Squared(q, b.Value))
		})
		var ids []int64
		for _, nd := range found[:min(10, len(found))] {
			ids = append(ids, nd.Key)
		}
		hits += overlap(ids, truth[i])
	}
	secs := time.Since(start).Seconds()
	o.Out.Emit(Row{Bench: "vector", Phase: "search", System: "hnsw", Rows: int64(nq), Seconds: secs,
		Extra: withExtra(map[string]any{"recall_at_10": float64(hits) / float64(10*nq), "queries_per_s": float64(nq) / secs, "ef_search": g.EfSearch})})
	return nil
}

// vectorWarmup is the number of untimed queries before each measurement.
const vectorWarmup = 5

// gaussians returns n seeded vectors: around random centers (spread
// sigma) when centers is set, else standard normal × sigma.
func gaussians(rng *rand.Rand, n, d int, sigma float64, centers []float32) []float32 {
	out := make([]float32, n*d)
	nc := len(centers) / d
	for i := range n {
		var c []float32
		if nc > 0 {
			k := rng.IntN(nc)
			c = centers[k*d : (k+1)*d]
		}
		for j := range d {
			x := float32(rng.NormFloat64() * sigma)
			if c != nil {
				x += c[j]
			}
			out[i*d+j] = x
		}
	}
	return out
}

// groundTruth is the exact top k ids of each query (brute force, on every core).
func groundTruth(base, queries []float32, d, k int) [][]int64 {
	nq := len(queries) / d
	out := make([][]int64, nq)
	var g safego.Group
	next := make(chan int, nq) // filled first: a worker that panics leaves no sender waiting
	for i := range nq {
		next <- i
	}
	close(next)
	for range runtime.GOMAXPROCS(0) {
		g.Start(func() {
			for i := range next {
				top := vector.NewTopK(k)
				q := queries[i*d : (i+1)*d]
				for r := 0; r*d < len(base); r++ {
					top.Offer(strconv.Itoa(r), vector.L2Squared(q, base[r*d:(r+1)*d]))
				}
				for _, c := range top.Result() {
					id, _ := strconv.ParseInt(c.Key, 10, 64)
					out[i] = append(out[i], id)
				}
			}
		})
	}
	g.Wait()
	return out
}

func overlap(got, want []int64) int {
	n := 0
	for _, g := range got {
		if slices.Contains(want, g) {
			n++
		}
	}
	return n
}

// copyVectors COPYs rows (first+i, vecs[i]) in batches of 50 000.
func copyVectors(ctx context.Context, c *pgx.Conn, vecs []float32, d, first int) error {
	n := len(vecs) / d
	const batch = 50_000
	for lo := 0; lo < n; lo += batch {
		hi := min(n, lo+batch)
		rows := make([][]any, 0, hi-lo)
		for i := lo; i < hi; i++ {
			rows = append(rows, []any{int64(first + i), pgvector.NewVector(vecs[i*d : (i+1)*d])})
		}
		if _, err := c.CopyFrom(ctx, pgx.Identifier{"items"}, []string{"id", "emb"}, pgx.CopyFromRows(rows)); err != nil {
			return err
		}
	}
	return nil
}

func nearestIDs(ctx context.Context, c *pgx.Conn, q string, v []float32) ([]int64, error) {
	rows, err := c.Query(ctx, q, pgvector.NewVector(v))
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// segmentPaths are the files of the built segments of index items_emb.
func segmentPaths(ctx context.Context, cat *catalog.Catalog) ([]string, error) {
	t, err := cat.TableByName(ctx, catalog.DefaultNamespace, "items")
	if err != nil {
		return nil, err
	}
	segs, err := cat.VectorSegments(ctx, t.ID, "items_emb")
	if err != nil {
		return nil, err
	}
	paths := make([]string, len(segs))
	for i, s := range segs {
		paths[i] = s.Path
	}
	return paths, nil
}

// fileSize is the size of a file:// path (0 for other stores).
func fileSize(uri string) int64 {
	p, ok := strings.CutPrefix(uri, "file://")
	if !ok {
		return 0
	}
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return st.Size()
}

// segmentMemory is the in-memory part of the segment file at a file://
// path (0 for other stores).
func segmentMemory(uri string) int64 {
	p, ok := strings.CutPrefix(uri, "file://")
	if !ok {
		return 0
	}
	f, err := os.Open(p)
	if err != nil {
		return 0
	}
	defer f.Close()
	n, err := vector.MemoryBytesOf(f)
	if err != nil {
		return 0
	}
	return n
}
