package reader

import (
	"context"
	"errors"
	"io"
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

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/objstore"
)

// Files of this server's earlier layout store DECIMALs as big-endian
// FIXED_LEN_BYTE_ARRAYs: row filters on such a column prune their row
// groups by statistics as on integer-stored ones — negative values, NULLs,
// intervals, points, nothing — and return exactly the matching rows; the
// same file from another writer is read whole, the same rows passing.
func TestFixedLenDecimalStatsPrune(t *testing.T) {
	dec := &arrow.Decimal128Type{Precision: 15, Scale: 2}
	sch := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "d", Type: dec, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	const n = 1000
	unscaled := func(i int) int64 { return int64(i-500) * 7 } // ascending: row groups of disjoint ranges
	for i := range n {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if i%13 == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.Decimal128Builder).Append(decimal128.FromI64(unscaled(i)))
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	for _, writer := range []string{"lakesoul-go", "another-writer"} {
		dir := t.TempDir()
		path := filepath.Join(dir, "part-0.parquet")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		fw, err := pqarrow.NewFileWriter(sch, f, parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd),
			parquet.WithMaxRowGroupLength(100), parquet.WithDataPageSize(256), parquet.WithPageIndexEnabled(true),
			parquet.WithCreatedBy(writer), parquet.WithStoreDecimalAsInteger(false)), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
		if err != nil {
			t.Fatal(err)
		}
		if err := fw.Write(rec); err != nil {
			t.Fatal(err)
		}
		if err := fw.Close(); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		tbl := &catalog.Table{ID: "t", Namespace: "s", Name: "t", Path: objstore.LocalURI(dir), Schema: sch}
		parts := []catalog.PartitionFiles{{Desc: "-5", Files: []catalog.DataFile{{Path: objstore.LocalURI(path), Size: fi.Size()}}}}
		var skipped int64
		for _, c := range []Cond{
			{Column: "d", Lower: int64(-1000), LowerInclusive: true, Upper: int64(1000)},
			{Column: "d", Upper: int64(-3000)},
			{Column: "d", Lower: int64(3000), LowerInclusive: true},
			{Column: "d", In: true, Values: []any{int64(-700), int64(7), int64(2100)}},
			{Column: "d", Lower: int64(100000)},
		} {
			st := &ScanStats{}
			s := &Scan{Store: objstore.Local{}, Table: tbl, Partitions: parts, Stats: st, Meta: NewMetaCache(1 << 20),
				Rows: &RowFilter{Conds: []Cond{c}}}
			m, err := compileRowFilter(tbl, s.Rows)
			if err != nil {
				t.Fatal(err)
			}
			var want []int64
			for i := range n {
				if i%13 != 0 && m.preds[0].match(keyValue{i: unscaled(i)}) {
					want = append(want, int64(i))
				}
			}
			got := readIDs(t, s)
			if len(got) != len(want) {
				t.Fatalf("%s, %s: %d rows, want %d", writer, s.Rows, len(got), len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("%s, %s: row %d is id %d, want %d", writer, s.Rows, i, got[i], want[i])
				}
			}
			skipped += st.RowGroupsSkippedStats.Load()
		}
		if ours := writer == "lakesoul-go"; ours != (skipped > 0) {
			t.Errorf("%s: %d row groups skipped by statistics", writer, skipped)
		}
	}
}

// readIDs reads every unit of s and returns column id of the rows.
func readIDs(t *testing.T, s *Scan) []int64 {
	t.Helper()
	units, err := s.Units()
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, u := range units {
		it, err := s.Open(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		for {
			b, err := it.Next(context.Background())
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, b.Column(0).(*array.Int64).Int64Values()...)
			b.Release()
		}
		it.Close()
	}
	return out
}

// bigEndianInt64 reads big-endian two's complement values of 1 to 16
// bytes that fit an int64, and refuses the others.
func TestBigEndianInt64(t *testing.T) {
	for _, c := range []struct {
		b    []byte
		want int64
		ok   bool
	}{
		{[]byte{0x64}, 100, true},
		{[]byte{0x9c}, -100, true},
		{[]byte{0xff, 0x9c}, -100, true},
		{[]byte{0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x64}, 100, true},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x9c}, -100, true},
		{[]byte{0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 1<<63 - 1, true},
		{[]byte{0x80, 0, 0, 0, 0, 0, 0, 0}, -1 << 63, true},
		{[]byte{0x00, 0x80, 0, 0, 0, 0, 0, 0, 0}, 0, false},                      // 2^63
		{[]byte{0xff, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 0, false}, // -2^63 - 1
		{[]byte{0x01, 0, 0, 0, 0, 0, 0, 0, 0}, 0, false},
		{nil, 0, false},
		{make([]byte, 17), 0, false},
	} {
		got, ok := bigEndianInt64(c.b)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("% x: %d, %v; want %d, %v", c.b, got, ok, c.want, c.ok)
		}
	}
}
