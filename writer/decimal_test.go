package writer

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/lakesoul-go/lakesoul/layout"
	"github.com/lakesoul-go/lakesoul/objstore"
)

// TestDecimalsAsIntegers: a DECIMAL of up to 9 digits is stored as INT32,
// up to 18 as INT64, wider ones as FIXED_LEN_BYTE_ARRAY, each with its
// DECIMAL logical type, and every value (negative, zero, the largest)
// reads back as written.
func TestDecimalsAsIntegers(t *testing.T) {
	cols := []struct {
		prec int32
		phys parquet.Type
		vals []int64
	}{
		{9, parquet.Types.Int32, []int64{-999_999_999, -1, 0, 1, 999_999_999}},
		{18, parquet.Types.Int64, []int64{-999_999_999_999_999_999, -5, 0, 7, 999_999_999_999_999_999}},
		{38, parquet.Types.FixedLenByteArray, []int64{-1 << 62, -3, 0, 3, 1 << 62}},
	}
	fields := []arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}}
	for _, c := range cols {
		fields = append(fields, arrow.Field{Name: "d" + fmt.Sprint(c.prec), Type: &arrow.Decimal128Type{Precision: c.prec, Scale: 2}, Nullable: true})
	}
	tbl := testTable(t, fields, []string{"k"}, 1)
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	for r := range 5 {
		b.Field(0).(*array.Int64Builder).Append(int64(r))
		for i, c := range cols {
			b.Field(i + 1).(*array.Decimal128Builder).Append(decimal128.FromI64(c.vals[r]))
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	w := &Writer{Store: objstore.Local{}, Table: tbl, Intent: layout.RandomNames{}}
	parts, err := w.Write(context.Background(), rec)
	if err != nil {
		t.Fatal(err)
	}
	uri := parts[0].Ops[0].Path
	p, err := objstore.LocalPath(uri)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := file.OpenParquetFile(p, false)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cols {
		col := pf.MetaData().Schema.Column(i + 1)
		if col.PhysicalType() != c.phys || col.LogicalType().String() == "" {
			t.Errorf("DECIMAL(%d,2) stored as %s (%s), want %s", c.prec, col.PhysicalType(), col.LogicalType(), c.phys)
		}
	}
	pf.Close()
	got, _ := readFile(t, uri)
	defer got.Release()
	for i, c := range cols {
		a := got.Column(i + 1).(*array.Decimal128)
		for r, v := range c.vals {
			if a.Value(r) != decimal128.FromI64(v) {
				t.Errorf("DECIMAL(%d,2) row %d: %s, want %d", c.prec, r, a.ValueStr(r), v)
			}
		}
	}
}
