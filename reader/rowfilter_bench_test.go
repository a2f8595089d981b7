package reader_test

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/arrowutil"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/reader"
)

// BenchmarkLateMaterialisation reads a lineitem-like file (this server's
// layout) as an append table through row filters of TPC-H's shapes — Q14's
// month of ship dates (about 1 % of rows pass), Q6's year, discount band
// and quantity (about 2 %), Q12's year of receipt dates and two ship modes
// (about 4 %), Q1's ship dates (nearly all) — with late materialisation
// ("late": the other columns decoded at passing rows only) and without
// ("all"), interleaved in one run. cpu-ns/op is the process's CPU time
// per read (user and system), which a loaded machine disturbs less than
// the wall time.
func BenchmarkLateMaterialisation(b *testing.B) {
	rec := lineitemRecord(lineitemRows)
	defer rec.Release()
	dir := b.TempDir()
	path := filepath.Join(dir, "part-0.parquet")
	size := writeLayout(b, path, rec, layoutVariant{codec: compress.Codecs.Zstd, level: 1, decimalInt: true})
	tbl := &catalog.Table{ID: "t", Namespace: "s", Name: "lineitem", Path: objstore.LocalURI(dir), Schema: rec.Schema()}
	parts := []catalog.PartitionFiles{{Desc: "-5", Files: []catalog.DataFile{{Path: objstore.LocalURI(path), Size: size}}}}
	col := func(name string) int { return rec.Schema().FieldIndices(name)[0] }
	for _, q := range []struct {
		name  string
		cols  []string
		conds []reader.Cond
	}{
		{"q14", []string{"l_partkey", "l_extendedprice", "l_discount", "l_shipdate"},
			[]reader.Cond{{Column: "l_shipdate", Lower: int64(9374), LowerInclusive: true, Upper: int64(9404)}}},
		{"q6", []string{"l_extendedprice", "l_discount", "l_quantity", "l_shipdate"},
			[]reader.Cond{{Column: "l_shipdate", Lower: int64(8766), LowerInclusive: true, Upper: int64(9131)},
				{Column: "l_discount", Lower: int64(5), LowerInclusive: true, Upper: int64(7), UpperInclusive: true},
				{Column: "l_quantity", Upper: int64(2400)}}},
		{"q12", []string{"l_orderkey", "l_shipmode", "l_commitdate", "l_receiptdate", "l_shipdate"},
			[]reader.Cond{{Column: "l_receiptdate", Lower: int64(8766), LowerInclusive: true, Upper: int64(9131)},
				{Column: "l_shipmode", In: true, Values: []any{"MAIL", "SHIP"}}}},
		{"q1", []string{"l_returnflag", "l_linestatus", "l_quantity", "l_extendedprice", "l_discount", "l_tax", "l_shipdate"},
			[]reader.Cond{{Column: "l_shipdate", Upper: int64(10471), UpperInclusive: true}}},
	} {
		needed := make([]bool, rec.Schema().NumFields())
		for _, c := range q.cols {
			needed[col(c)] = true
		}
		for _, mode := range []string{"late", "all"} {
			b.Run(q.name+"/"+mode, func(b *testing.B) {
				var rows int64
				start := cpuTime()
				for b.Loop() {
					s := &reader.Scan{Store: objstore.Local{}, Table: tbl, Partitions: parts, Mem: arrowutil.NewPoolAllocator(),
						Needed: needed, OnlyNeeded: true, Unordered: true, Rows: &reader.RowFilter{Conds: q.conds}}
					if mode == "all" {
						reader.DecodeAll(s)
					}
					rows = scanCount(b, s)
				}
				b.ReportMetric(float64((cpuTime()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
				b.ReportMetric(float64(rows), "rows")
			})
		}
	}
}

// scanCount reads every unit of s and returns the rows it passed.
func scanCount(b *testing.B, s *reader.Scan) int64 {
	units, err := s.Units()
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	for _, u := range units {
		it, err := s.Open(context.Background(), u)
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
			n += batch.NumRows()
			batch.Release()
		}
		it.Close()
	}
	return n
}
