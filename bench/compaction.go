package bench

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/uuid"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/compaction"
	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/reader"
	"github.com/lakesoul-go/lakesoul/writer"
)

func init() { Register("compaction", runCompactionBench) }

// runCompactionBench measures what compaction buys and costs, on the CCF
// data (bench ccf's generator; rows written with the writer library and
// committed as MergeCommits, no pgwire):
//
//   - phase "read", state before/after: a full merge-on-read of the table
//     (every column materialised, checksum checked against the generator)
//     before and after one full compaction (phase "compact");
//   - phase "upsert-stream", per compaction mode (full, leveled): a steady
//     stream of small upsert commits with the compaction service running
//     (one worker, woken by the catalog's notifications), reporting the bytes
//     the upserts wrote, the bytes compactions wrote, their ratio
//     (write_amplification = (upsert + compaction bytes) / upsert bytes) and
//     the final read.
//
// Flags: --upserts N (upsert batches before the read, default 10),
// --stream N (commits of the stream, default 60), --stream-rows N (rows per
// stream commit, default 20000 × scale), --stream-interval D (pause between
// stream commits, default 50ms), --modes full,leveled, --phases read,stream.
func runCompactionBench(ctx context.Context, o Options) error {
	fs := flag.NewFlagSet("compaction", flag.ContinueOnError)
	upserts := fs.Int("upserts", 10, "upsert batches before the read")
	stream := fs.Int("stream", 60, "upsert commits in the steady stream")
	streamRows := fs.Int("stream-rows", 0, "rows per stream commit (default 20000 × scale)")
	modes := fs.String("modes", "full,leveled", "compaction modes of the stream phase")
	interval := fs.Duration("stream-interval", 50*time.Millisecond, "pause between stream commits")
	phases := fs.String("phases", "read,stream", "phases to run: read (before/after one compaction), stream")
	if err := fs.Parse(o.Args); err != nil {
		return err
	}
	w := newCCFWorkload(o.Scale, *upserts)
	if w.batch < 2 {
		return fmt.Errorf("compaction: scale %v is too small", o.Scale)
	}
	bc, err := openBenchCatalog(ctx, o, "compaction", 16)
	if err != nil {
		return err
	}
	defer bc.close()
	store := objstore.Local{}
	wh := filepath.Join(o.Dir, "compaction-wh")

	if strings.Contains(*phases, "read") {
		if err := benchReadPhase(ctx, o, bc, store, wh, w); err != nil {
			return err
		}
	}
	if !strings.Contains(*phases, "stream") {
		return nil
	}
	// Write amplification under a steady upsert stream.
	rows := *streamRows
	if rows <= 0 {
		rows = max(200, int(20000*o.Scale))
	}
	sw := ccfWorkload{base: w.base, batch: rows, upserts: *stream}
	for _, mode := range strings.Split(*modes, ",") {
		mode = strings.TrimSpace(mode)
		if mode == "" {
			continue
		}
		if err := benchStream(ctx, o, bc, store, wh, sw, mode, *interval); err != nil {
			return err
		}
	}
	return nil
}

// benchReadPhase times a MOR read before and after one full compaction.
func benchReadPhase(ctx context.Context, o Options, bc *benchCatalog, store objstore.Store, wh string, w ccfWorkload) error {
	tbl, err := ccfTable(ctx, bc.cat, wh, "mor", map[string]string{compaction.PropAuto: "false"})
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Log, "compaction: %d base rows + %d × %d upserts\n", w.base, w.upserts, w.batch)
	start := time.Now()
	var bytes int64
	for b := 0; b <= w.upserts; b++ {
		n, err := ccfCommitBatch(ctx, bc.cat, store, tbl, w, b)
		if err != nil {
			return err
		}
		bytes += n
	}
	o.Out.Emit(Row{Bench: "compaction", Phase: "ingest", System: "lakesoul", Rows: w.totalRows(),
		Seconds: time.Since(start).Seconds(), Extra: bc.extra(map[string]any{"commits": w.upserts + 1, "bytes": bytes})})
	want, keys := w.expectedChecksum()
	if err := benchRead(ctx, o, bc, store, tbl, "before", want, keys); err != nil {
		return err
	}
	start = time.Now()
	res, err := compaction.CompactPartition(ctx, bc.cat, store, tbl, "-5", compaction.Options{})
	if err != nil {
		return err
	}
	o.Out.Emit(Row{Bench: "compaction", Phase: "compact", System: "lakesoul", Rows: res.Rows, Seconds: time.Since(start).Seconds(),
		Extra: bc.extra(map[string]any{"mode": res.Mode, "files_in": res.FilesIn, "files_out": res.FilesOut,
			"bytes_in": res.BytesIn, "bytes_out": res.BytesOut})})
	return benchRead(ctx, o, bc, store, tbl, "after", want, keys)
}

// benchStream runs the upsert stream with the compaction service on.
func benchStream(ctx context.Context, o Options, bc *benchCatalog, store objstore.Store, wh string, w ccfWorkload, mode string, interval time.Duration) error {
	tbl, err := ccfTable(ctx, bc.cat, wh, "stream_"+mode, map[string]string{compaction.PropMode: mode})
	if err != nil {
		return err
	}
	if _, err := ccfCommitBatch(ctx, bc.cat, store, tbl, w, 0); err != nil {
		return err
	}
	svc, err := compaction.Start(ctx, compaction.Config{Catalog: bc.cat, Store: store, Workers: 1,
		Poll: 200 * time.Millisecond, LifecycleInterval: -1})
	if err != nil {
		return err
	}
	defer svc.Close()
	fmt.Fprintf(o.Log, "compaction: %s stream of %d × %d upserts\n", mode, w.upserts, w.batch)
	start := time.Now()
	var user int64
	for b := 1; b <= w.upserts; b++ {
		n, err := ccfCommitBatch(ctx, bc.cat, store, tbl, w, b)
		if err != nil {
			return err
		}
		user += n
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
	streamSecs := time.Since(start).Seconds()
	// Let the queue drain.
	for {
		n, err := bc.cat.CompactionJobs(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	drained := time.Since(start).Seconds()
	st := svc.Stats()
	want, keys := w.expectedChecksum()
	rstart := time.Now()
	n, sum, files, err := morRead(ctx, bc.cat, store, tbl)
	if err != nil {
		return err
	}
	readSecs := time.Since(rstart).Seconds()
	o.Out.Emit(Row{Bench: "compaction", Phase: "upsert-stream", System: "lakesoul", Rows: int64(w.upserts) * int64(w.batch),
		Seconds: streamSecs, Extra: bc.extra(map[string]any{
			"mode": mode, "commits": w.upserts, "interval_ms": interval.Milliseconds(), "rows_per_commit": w.batch, "compactions": st.Compacted,
			"upsert_bytes": user, "compaction_bytes": st.BytesWritten,
			"write_amplification": round(float64(user+st.BytesWritten) / float64(max(user, 1))),
			"drained_seconds":     round(drained), "files_after": files,
			"read_rows": n, "read_seconds": round(readSecs), "checksum_ok": sum == want && n == int64(keys)})})
	if sum != want || n != int64(keys) {
		return fmt.Errorf("compaction: %s stream read %d rows (checksum %x), want %d (%x)", mode, n, sum, keys, want)
	}
	return nil
}

// benchRead times a full MOR read and checks it against the generator.
func benchRead(ctx context.Context, o Options, bc *benchCatalog, store objstore.Store, tbl *catalog.Table, state string, want uint64, keys int) error {
	start := time.Now()
	n, sum, files, err := morRead(ctx, bc.cat, store, tbl)
	if err != nil {
		return err
	}
	o.Out.Emit(Row{Bench: "compaction", Phase: "read", System: "lakesoul", Rows: n, Seconds: time.Since(start).Seconds(),
		Extra: bc.extra(map[string]any{"state": state, "files": files, "checksum_ok": sum == want && n == int64(keys)})})
	if sum != want || n != int64(keys) {
		return fmt.Errorf("compaction: read %s compaction: %d rows (checksum %x), want %d (%x)", state, n, sum, keys, want)
	}
	return nil
}

func ccfTable(ctx context.Context, cat *catalog.Catalog, wh, name string, props map[string]string) (*catalog.Table, error) {
	fields := []arrow.Field{{Name: "uuid", Type: arrow.BinaryTypes.String}}
	for _, c := range ccfColumns[1:] {
		dt := arrow.DataType(arrow.BinaryTypes.String)
		if c == "requests" {
			dt = arrow.PrimitiveTypes.Int64
		}
		fields = append(fields, arrow.Field{Name: c, Type: dt, Nullable: true})
	}
	name = "bench_" + name + "_" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	tbl := &catalog.Table{ID: "table_" + uuid.NewString(), Namespace: catalog.DefaultNamespace, Name: name,
		Path: objstore.LocalURI(filepath.Join(wh, name)), Schema: arrow.NewSchema(fields, nil),
		PKCols: []string{"uuid"}, HashBucketNum: 4, Properties: props}
	if err := cat.CreateTable(ctx, tbl); err != nil {
		return nil, err
	}
	return cat.TableByName(ctx, tbl.Namespace, tbl.Name)
}

// ccfCommitBatch writes batch b of w as one MergeCommit and returns the bytes
// written.
func ccfCommitBatch(ctx context.Context, cat *catalog.Catalog, store objstore.Store, tbl *catalog.Table, w ccfWorkload, b int) (int64, error) {
	rb := array.NewRecordBuilder(memory.DefaultAllocator, tbl.Schema)
	defer rb.Release()
	w.batchKeys(b, func(k int) {
		r := ccfMakeRow(k, b)
		rb.Field(0).(*array.StringBuilder).Append(r.uuid)
		rb.Field(1).(*array.StringBuilder).Append(r.ip)
		rb.Field(2).(*array.StringBuilder).Append(r.hostname)
		rb.Field(3).(*array.Int64Builder).Append(r.requests)
		rb.Field(4).(*array.StringBuilder).Append(r.name)
		rb.Field(5).(*array.StringBuilder).Append(r.city)
		rb.Field(6).(*array.StringBuilder).Append(r.job)
		rb.Field(7).(*array.StringBuilder).Append(r.phonenum)
	})
	rec := rb.NewRecordBatch()
	defer rec.Release()
	intent, err := cat.BeginWrite(ctx)
	if err != nil {
		return 0, err
	}
	defer intent.Release(ctx) // after the commit consumed it: a no-op
	wr := &writer.Writer{Store: store, Table: tbl, Intent: intent}
	parts, err := wr.Write(ctx, rec)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, p := range parts {
		for _, op := range p.Ops {
			n += op.Size
		}
	}
	_, err = cat.Commit(ctx, intent, tbl.ID, catalog.MergeCommit, parts)
	return n, err
}

// morRead reads the whole table merge-on-read, units in parallel, every
// column materialised, and returns rows, the CCF checksum and the file count.
func morRead(ctx context.Context, cat *catalog.Catalog, store objstore.Store, tbl *catalog.Table) (int64, uint64, int, error) {
	parts, err := cat.LiveFiles(ctx, tbl.ID, nil)
	if err != nil {
		return 0, 0, 0, err
	}
	files := 0
	for _, p := range parts {
		files += len(p.Files)
	}
	scan := &reader.Scan{Store: store, Table: tbl, Partitions: parts, Mem: memory.DefaultAllocator, BatchRows: reader.DefaultBatchRows}
	units, err := scan.Units()
	if err != nil {
		return 0, 0, 0, err
	}
	var (
		rows, sum atomic.Uint64
		g         safego.Group
		mu        sync.Mutex
		firstErr  error
		next      atomic.Int64
	)
	for range min(len(units), runtime.GOMAXPROCS(0)) {
		g.Start(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(units) {
					return
				}
				n, s, err := readUnit(ctx, scan, units[i])
				if err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					return
				}
				rows.Add(n)
				sum.Add(s)
			}
		})
	}
	g.Wait()
	return int64(rows.Load()), sum.Load(), files, firstErr
}

func readUnit(ctx context.Context, scan *reader.Scan, u reader.Unit) (uint64, uint64, error) {
	it, err := scan.Open(ctx, u)
	if err != nil {
		return 0, 0, err
	}
	defer it.Close()
	var rows, sum uint64
	fields := make([]string, 8)
	for {
		b, err := it.Next(ctx)
		if err == io.EOF {
			return rows, sum, nil
		}
		if err != nil {
			return 0, 0, err
		}
		cols := make([]arrow.Array, 8)
		for i := range cols {
			cols[i] = b.Column(i)
		}
		for r := 0; r < int(b.NumRows()); r++ {
			for i, c := range cols {
				if i == 3 {
					fields[i] = strconv.FormatInt(c.(*array.Int64).Value(r), 10)
				} else {
					fields[i] = c.(*array.String).Value(r)
				}
			}
			sum += rowChecksum(fields...)
		}
		rows += uint64(b.NumRows())
		b.Release()
	}
}
