package reader_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/arrowutil"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/reader"
)

// lineitemRows is the size of BenchmarkFileLayout's table.
const lineitemRows = 600_000

// lineitemRecord is a lineitem-like batch (TPC-H's columns and value
// shapes: keys, DECIMAL(15,2) amounts, dates, low-cardinality flags and
// modes, free-text comments).
func lineitemRecord(n int) arrow.RecordBatch {
	dec := &arrow.Decimal128Type{Precision: 15, Scale: 2}
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "l_orderkey", Type: arrow.PrimitiveTypes.Int64}, {Name: "l_partkey", Type: arrow.PrimitiveTypes.Int64},
		{Name: "l_suppkey", Type: arrow.PrimitiveTypes.Int64}, {Name: "l_linenumber", Type: arrow.PrimitiveTypes.Int32},
		{Name: "l_quantity", Type: dec}, {Name: "l_extendedprice", Type: dec}, {Name: "l_discount", Type: dec}, {Name: "l_tax", Type: dec},
		{Name: "l_returnflag", Type: arrow.BinaryTypes.String}, {Name: "l_linestatus", Type: arrow.BinaryTypes.String},
		{Name: "l_shipdate", Type: arrow.FixedWidthTypes.Date32}, {Name: "l_commitdate", Type: arrow.FixedWidthTypes.Date32},
		{Name: "l_receiptdate", Type: arrow.FixedWidthTypes.Date32},
		{Name: "l_shipinstruct", Type: arrow.BinaryTypes.String}, {Name: "l_shipmode", Type: arrow.BinaryTypes.String},
		{Name: "l_comment", Type: arrow.BinaryTypes.String},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"furiously", "carefully", "regular", "final", "ironic", "pending", "deposits", "accounts", "packages", "requests", "quickly", "bold", "slyly", "express", "blithely"}
	instr := []string{"DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN"}
	modes := []string{"REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"}
	for i := range n {
		b.Field(0).(*array.Int64Builder).Append(int64(i/4 + 1))
		b.Field(1).(*array.Int64Builder).Append(rng.Int64N(200_000) + 1)
		b.Field(2).(*array.Int64Builder).Append(rng.Int64N(10_000) + 1)
		b.Field(3).(*array.Int32Builder).Append(int32(i%4 + 1))
		q := rng.Int64N(50) + 1
		b.Field(4).(*array.Decimal128Builder).Append(decimal128.FromI64(q * 100))
		b.Field(5).(*array.Decimal128Builder).Append(decimal128.FromI64(q * (90_000 + rng.Int64N(10_000_000))))
		b.Field(6).(*array.Decimal128Builder).Append(decimal128.FromI64(rng.Int64N(11)))
		b.Field(7).(*array.Decimal128Builder).Append(decimal128.FromI64(rng.Int64N(9)))
		b.Field(8).(*array.StringBuilder).Append([]string{"A", "N", "R"}[rng.IntN(3)])
		b.Field(9).(*array.StringBuilder).Append([]string{"F", "O"}[rng.IntN(2)])
		ship := arrow.Date32(8036 + rng.IntN(2500))
		b.Field(10).(*array.Date32Builder).Append(ship)
		b.Field(11).(*array.Date32Builder).Append(ship + arrow.Date32(rng.IntN(60)))
		b.Field(12).(*array.Date32Builder).Append(ship + arrow.Date32(1+rng.IntN(30)))
		b.Field(13).(*array.StringBuilder).Append(instr[rng.IntN(len(instr))])
		b.Field(14).(*array.StringBuilder).Append(modes[rng.IntN(len(modes))])
		c := words[rng.IntN(len(words))]
		for range 2 + rng.IntN(3) {
			c += " " + words[rng.IntN(len(words))]
		}
		b.Field(15).(*array.StringBuilder).Append(c)
	}
	return b.NewRecordBatch()
}

// layoutVariant is a way of writing the data file: the writer's settings
// (writer/parquet.go) with one or more changed.
type layoutVariant struct {
	name       string
	codec      compress.Compression
	level      int
	dict       bool // dictionary for the low-cardinality text columns
	decimalInt bool // DECIMAL(≤18) as INT32/INT64
}

var lowCardinality = []string{"l_returnflag", "l_linestatus", "l_shipinstruct", "l_shipmode"}

func writeLayout(tb testing.TB, path string, rec arrow.RecordBatch, v layoutVariant) int64 {
	opts := []parquet.WriterProperty{
		parquet.WithCompression(v.codec), parquet.WithDictionaryDefault(false),
		parquet.WithMaxRowGroupLength(128 * 1024), parquet.WithDataPageSize(32 << 10), parquet.WithBatchSize(512),
		parquet.WithPageIndexEnabled(true), parquet.WithCreatedBy("lakesoul-go"), parquet.WithStoreDecimalAsInteger(v.decimalInt),
	}
	if v.level != 0 {
		opts = append(opts, parquet.WithCompressionLevel(v.level))
	}
	if v.dict {
		for _, c := range lowCardinality {
			opts = append(opts, parquet.WithDictionaryFor(c, true))
		}
	}
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	fw, err := pqarrow.NewFileWriter(rec.Schema(), f, parquet.NewWriterProperties(opts...), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		tb.Fatal(err)
	}
	if err := fw.WriteBuffered(rec); err != nil {
		tb.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		tb.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		tb.Fatal(err)
	}
	return st.Size()
}

// BenchmarkFileLayout measures how fast the data file of a lineitem-like
// table is read, by this server's reader (every column into Arrow
// batches, one unit per row group as queries read append tables, on one
// goroutine) and by DuckDB (an aggregate over every column of
// read_parquet), for each way of writing it (PLAIN, DECIMAL as 16-byte
// FIXED_LEN_BYTE_ARRAY unless -decint): zstd level 1, Snappy, LZ4_RAW (the
// writer's layout is lz4raw-decint), no compression, dictionaries on the low-cardinality text columns, DECIMAL as
// INT64, and combinations — next to DuckDB reading a file DuckDB wrote of
// the same rows (its defaults: Snappy, dictionaries, DECIMAL as INT64).
// Reported: ns per row for each reader and the file's size.
func BenchmarkFileLayout(b *testing.B) {
	dir := b.TempDir()
	rec := lineitemRecord(lineitemRows)
	defer rec.Release()
	variants := []layoutVariant{
		{name: "zstd1", codec: compress.Codecs.Zstd, level: 1},
		{name: "snappy", codec: compress.Codecs.Snappy},
		{name: "lz4raw", codec: compress.Codecs.Lz4Raw},
		{name: "uncompressed", codec: compress.Codecs.Uncompressed},
		{name: "zstd1-dict", codec: compress.Codecs.Zstd, level: 1, dict: true},
		{name: "zstd1-decint", codec: compress.Codecs.Zstd, level: 1, decimalInt: true},
		{name: "zstd1-dict-decint", codec: compress.Codecs.Zstd, level: 1, dict: true, decimalInt: true},
		{name: "snappy-decint", codec: compress.Codecs.Snappy, decimalInt: true},
		{name: "snappy-dict-decint", codec: compress.Codecs.Snappy, dict: true, decimalInt: true},
		{name: "lz4raw-decint", codec: compress.Codecs.Lz4Raw, decimalInt: true},
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("SET threads = 1"); err != nil {
		b.Fatal(err)
	}
	duckQuery := func(path string) string {
		return fmt.Sprintf(`SELECT sum(l_orderkey), sum(l_partkey), sum(l_suppkey), sum(l_linenumber), sum(l_quantity), sum(l_extendedprice),
			sum(l_discount), sum(l_tax), max(l_returnflag), max(l_linestatus), max(l_shipdate), max(l_commitdate), max(l_receiptdate),
			max(l_shipinstruct), max(l_shipmode), max(l_comment) FROM read_parquet('%s')`, path)
	}
	duck := func(b *testing.B, path string) {
		cpu0 := cpuTime()
		for b.Loop() {
			var cells [16]any
			ptrs := make([]any, len(cells))
			for i := range cells {
				ptrs[i] = &cells[i]
			}
			if err := db.QueryRow(duckQuery(path)).Scan(ptrs...); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*lineitemRows), "ns/row")
		b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N*lineitemRows), "cpu-ns/row")
	}
	for _, v := range variants {
		tableDir := filepath.Join(dir, v.name)
		if err := os.MkdirAll(tableDir, 0o755); err != nil {
			b.Fatal(err)
		}
		path := filepath.Join(tableDir, "part-0.parquet")
		size := writeLayout(b, path, rec, v)
		tbl := &catalog.Table{ID: "table_layout", Namespace: "s", Name: v.name, Path: objstore.LocalURI(tableDir), Schema: rec.Schema()}
		scan := &reader.Scan{Store: objstore.Local{}, Table: tbl, Unordered: true, Mem: arrowutil.NewPoolAllocator(), Meta: reader.NewMetaCache(1 << 30),
			Partitions: []catalog.PartitionFiles{{Desc: "-5", Files: []catalog.DataFile{{Path: objstore.LocalURI(path), Size: size}}}}}
		b.Run("reader/"+v.name, func(b *testing.B) {
			units, err := scan.ParallelUnits(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			cpu0 := cpuTime()
			for b.Loop() {
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
				if rows != lineitemRows {
					b.Fatalf("%d rows", rows)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*lineitemRows), "ns/row")
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N*lineitemRows), "cpu-ns/row")
			b.ReportMetric(float64(size)/(1<<20), "MiB")
		})
		b.Run("duckdb/"+v.name, func(b *testing.B) { duck(b, path) })
	}
	// DuckDB's own file of the same rows.
	own := filepath.Join(dir, "duckdb-own.parquet")
	if _, err := db.Exec(fmt.Sprintf("COPY (SELECT * FROM read_parquet('%s')) TO '%s' (FORMAT parquet)",
		filepath.Join(dir, variants[0].name, "part-0.parquet"), own)); err != nil {
		b.Fatal(err)
	}
	b.Run("duckdb/duckdb-own", func(b *testing.B) {
		duck(b, own)
		if st, err := os.Stat(own); err == nil {
			b.ReportMetric(float64(st.Size())/(1<<20), "MiB")
		}
	})
}
