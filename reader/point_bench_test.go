package reader_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"

	"github.com/lakesoul-go/lakesoul/internal/arrowutil"
	"github.com/lakesoul-go/lakesoul/reader"
	"github.com/lakesoul-go/lakesoul/writer"
)

// BenchmarkPointLookup looks up single keys (present ones) in a bucket
// shaped like ccfBucket's (a base file and 10 upsert files), through the
// metadata and chunk caches as the engine's keyed reads do: one
// sub-benchmark per codec the files are written with (the writer's,
// writer.DataCodec, and zstd, its earlier one).
func BenchmarkPointLookup(b *testing.B) {
	def := writer.DataCodec
	defer func() { writer.DataCodec = def }()
	for _, codec := range []compress.Compression{def, compress.Codecs.Zstd} {
		writer.DataCodec = codec
		base := ccfBucket(b, 250_000, 500_000, 10)
		writer.DataCodec = def
		b.Run(strings.ToLower(codec.String()), func(b *testing.B) { pointLookups(b, base) })
	}
}

func pointLookups(b *testing.B, base *reader.Scan) {
	meta, chunks := reader.NewMetaCache(1<<30), reader.NewChunkCache(256<<20)
	mem := arrowutil.NewPoolAllocator()
	key := func(k int) string {
		return fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", uint32(k*2654435761), k%65536, k%4096, k%65521, k)
	}
	i := 0
	cpu0 := cpuTime()
	for b.Loop() {
		k := (i * 7919) % 250_000
		i++
		scan := &reader.Scan{Store: base.Store, Table: base.Table, Partitions: base.Partitions, Mem: mem, Unordered: true, OnlyNeeded: true,
			Meta: meta, Chunks: chunks, Keys: &reader.KeyFilter{Conds: []reader.Cond{{Column: "uuid", In: true, Values: []any{key(k)}}}}}
		units, err := scan.ParallelUnits(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		rows := 0
		for _, u := range units {
			it, err := scan.Open(context.Background(), u)
			if err != nil {
				b.Fatal(err)
			}
			for {
				batch, err := it.Next(context.Background())
				if err == io.EOF {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
				rows += int(batch.NumRows())
				batch.Release()
			}
			it.Close()
		}
		if rows != 1 {
			b.Fatalf("key %d: %d rows", k, rows)
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}
