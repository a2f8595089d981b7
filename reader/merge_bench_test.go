package reader_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/arrowutil"
	"github.com/lakesoul-go/lakesoul/layout"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/reader"
	"github.com/lakesoul-go/lakesoul/writer"
)

// BenchmarkMergeCCF merges one bucket shaped like `lakesoul bench ccf
// --scale 0.1`'s (one of its four): 250 k base rows and 500 k upserted rows
// (half updates, half new keys) of uuid-like text keys and seven more
// columns, the upserts split into 10 files of 50 k rows or 100 of 5 k — the
// two read goals of issue 4 — in key order (compaction) and unordered
// (queries).
const ccfBase, ccfUpserts = 250_000, 500_000

func BenchmarkMergeCCF(b *testing.B) {
	for _, c := range []struct {
		files     int
		unordered bool
	}{{10, false}, {100, false}, {10, true}, {100, true}} {
		b.Run(fmt.Sprintf("upserts=%d/unordered=%v", c.files, c.unordered), func(b *testing.B) {
			scan := ccfBucket(b, ccfBase, ccfUpserts, c.files)
			scan.Unordered = c.unordered
			scan.Mem = arrowutil.NewPoolAllocator() // as the engine's scans do
			units, err := scan.Units()
			if err != nil || len(units) != 1 {
				b.Fatalf("units %v, %v", units, err)
			}
			cpu0 := cpuTime()
			b.ResetTimer()
			for range b.N {
				it, err := scan.Open(context.Background(), units[0])
				if err != nil {
					b.Fatal(err)
				}
				rows := 0
				for {
					// As direct scans read: winners selected, not copied.
					batch, err := reader.NextSelected(context.Background(), it)
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					rows += batch.Len()
					batch.Release()
				}
				it.Close()
				if rows < ccfBase {
					b.Fatalf("%d rows", rows)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(ccfBase+ccfUpserts)), "ns/input-row")
			// CPU time is steadier than wall time on a shared machine.
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N*(ccfBase+ccfUpserts)), "cpu-ns/input-row")
		})
	}
}

// cpuTime is the process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ccfBucket writes base rows, then upserts rows split into files files, into
// a one-bucket table and returns the scan of it.
func ccfBucket(b *testing.B, base, upserts, files int) *reader.Scan {
	b.Helper()
	fields := []arrow.Field{{Name: "uuid", Type: arrow.BinaryTypes.String}}
	for _, c := range []string{"ip", "hostname", "requests", "name", "city", "job", "phonenum"} {
		t := arrow.DataType(arrow.BinaryTypes.String)
		if c == "requests" {
			t = arrow.PrimitiveTypes.Int64
		}
		fields = append(fields, arrow.Field{Name: c, Type: t, Nullable: true})
	}
	tbl := &catalog.Table{ID: "table_bench", Namespace: "s", Name: "t", Path: objstore.LocalURI(filepath.Join(b.TempDir(), "t")),
		Schema: arrow.NewSchema(fields, nil), PKCols: []string{"uuid"}, HashBucketNum: 1}
	w := &writer.Writer{Store: objstore.Local{}, Table: tbl, Intent: layout.RandomNames{}}
	rng := rand.New(rand.NewPCG(1, 2))
	var pf catalog.PartitionFiles
	next := 0
	write := func(n int, update bool) {
		rb := array.NewRecordBuilder(memory.DefaultAllocator, tbl.Schema)
		defer rb.Release()
		for range n {
			k := next
			if update && rng.IntN(2) == 0 {
				k = rng.IntN(next)
			} else {
				next++
			}
			rb.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", uint32(k*2654435761), k%65536, k%4096, k%65521, k))
			for c := 1; c < 8; c++ {
				if c == 3 {
					rb.Field(c).(*array.Int64Builder).Append(int64(rng.IntN(1000)))
					continue
				}
				rb.Field(c).(*array.StringBuilder).Append(fmt.Sprintf("value-%d-%d", c, rng.IntN(1_000_000)))
			}
		}
		rec := rb.NewRecordBatch()
		defer rec.Release()
		parts, err := w.Write(context.Background(), rec)
		if err != nil {
			b.Fatal(err)
		}
		for _, p := range parts {
			pf.Desc = p.Desc
			for _, op := range p.Ops {
				pf.Files = append(pf.Files, catalog.DataFile{Path: op.Path, Size: op.Size, ExistCols: op.ExistCols})
			}
		}
	}
	write(base, false)
	for range files {
		write(upserts/files, true)
	}
	return &reader.Scan{Store: objstore.Local{}, Table: tbl, Partitions: []catalog.PartitionFiles{pf}}
}
