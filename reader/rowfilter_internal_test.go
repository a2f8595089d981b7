package reader

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakesoul-go/lakesoul/catalog"
)

// The row filter's column-wise evaluation keeps exactly the rows whose
// value satisfies the condition (keyPred.match; NULLs never): for every
// column type conditions take, random conditions of every shape — points,
// open and closed bounds, exclusions, empty ranges, the int64 extremes —
// over random values with NULLs and extremes, from a selection of rows.
func TestRowFilterMatchesConds(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	types := []arrow.DataType{arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32,
		arrow.PrimitiveTypes.Int64, arrow.FixedWidthTypes.Date32, arrow.FixedWidthTypes.Timestamp_us,
		&arrow.Decimal128Type{Precision: 18, Scale: 2}, &arrow.Decimal128Type{Precision: 9, Scale: 0}, arrow.BinaryTypes.String}
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 600
	for _, dt := range types {
		kind := condKindOf(dt)
		if kind == 0 {
			t.Fatalf("%s: conditions do not take it", dt)
		}
		lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
		switch dt.ID() {
		case arrow.INT8:
			lo, hi = math.MinInt8, math.MaxInt8
		case arrow.INT16:
			lo, hi = math.MinInt16, math.MaxInt16
		case arrow.INT32, arrow.DATE32:
			lo, hi = math.MinInt32, math.MaxInt32
		case arrow.DECIMAL128:
			hi = 999999999
			if dt.(*arrow.Decimal128Type).Precision == 18 {
				hi = 999999999999999999
			}
			lo = -hi
		}
		ints := func() int64 { // small values meet each other; extremes sometimes
			switch rng.IntN(10) {
			case 0:
				return lo
			case 1:
				return hi
			}
			return int64(rng.IntN(21)) - 10
		}
		strs := func() string { return string(rune('a' + rng.IntN(8))) }
		b := array.NewBuilder(mem, dt)
		for range n {
			if rng.IntN(7) == 0 {
				b.AppendNull()
				continue
			}
			v := ints()
			switch bb := b.(type) {
			case *array.Int8Builder:
				bb.Append(int8(v))
			case *array.Int16Builder:
				bb.Append(int16(v))
			case *array.Int32Builder:
				bb.Append(int32(v))
			case *array.Int64Builder:
				bb.Append(v)
			case *array.Date32Builder:
				bb.Append(arrow.Date32(v))
			case *array.TimestampBuilder:
				bb.Append(arrow.Timestamp(v))
			case *array.Decimal128Builder:
				bb.Append(decimal128.FromI64(v))
			case *array.StringBuilder:
				bb.Append(strs())
			}
		}
		col := b.NewArray()
		b.Release()
		tbl := &catalog.Table{ID: "t", Namespace: "s", Name: "t", Schema: arrow.NewSchema([]arrow.Field{{Name: "c", Type: dt, Nullable: true}}, nil)}
		rec := array.NewRecordBatch(tbl.Schema, []arrow.Array{col}, n)
		col.Release()
		for range 400 {
			val := func() any {
				if kind == kindStr {
					return strs()
				}
				switch rng.IntN(8) {
				case 0:
					return int64(math.MinInt64)
				case 1:
					return int64(math.MaxInt64)
				}
				return ints()
			}
			c := Cond{Column: "c", In: rng.IntN(3) == 0}
			if c.In {
				for range rng.IntN(4) {
					c.Values = append(c.Values, val())
				}
			} else {
				if rng.IntN(4) > 0 {
					c.Lower, c.LowerInclusive = val(), rng.IntN(2) == 0
				}
				if rng.IntN(4) > 0 {
					c.Upper, c.UpperInclusive = val(), rng.IntN(2) == 0
				}
			}
			for range rng.IntN(2) * rng.IntN(3) {
				c.Exclude = append(c.Exclude, val())
			}
			m, err := compileRowFilter(tbl, &RowFilter{Conds: []Cond{c}})
			if err != nil {
				t.Fatal(err)
			}
			var rows []int
			for r := range n {
				if rng.IntN(4) > 0 {
					rows = append(rows, r)
				}
			}
			var want []int
			for _, r := range rows {
				if col.IsValid(r) && m.preds[0].match(valueAt(col, r)) {
					want = append(want, r)
				}
			}
			got := m.keep(rec, slices.Clone(rows))
			if !slices.Equal(got, want) && (len(got) != 0 || len(want) != 0) {
				t.Fatalf("%s %+v: kept %v, want %v", dt, c, got, want)
			}
		}
		rec.Release()
	}
}

// Gathering the passing rows of a batch copies no column of NULLs only
// (columns the consumer does not read): they come back as slices of the
// batch's own, whatever their type, with the rows' count.
func TestTakeRowsSlicesNullColumns(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	types := []arrow.DataType{arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64, arrow.FixedWidthTypes.Date32,
		&arrow.Decimal128Type{Precision: 15, Scale: 2}, arrow.FixedWidthTypes.Boolean, arrow.BinaryTypes.Binary}
	var fields []arrow.Field
	var cols []arrow.Array
	for i, dt := range types {
		fields = append(fields, arrow.Field{Name: string(rune('a' + i)), Type: dt, Nullable: true})
		cols = append(cols, array.MakeArrayOfNull(mem, dt, 1000))
	}
	ib := array.NewInt64Builder(mem)
	for i := range 1000 {
		ib.Append(int64(i))
	}
	fields = append(fields, arrow.Field{Name: "v", Type: arrow.PrimitiveTypes.Int64})
	cols = append(cols, ib.NewArray())
	ib.Release()
	b := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, 1000)
	for _, c := range cols {
		c.Release()
	}
	defer b.Release()
	out, err := takeRows(&Scan{Mem: mem}, b, []int{3, 500, 999})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	if out.NumRows() != 3 || out.Column(len(types)).(*array.Int64).Value(1) != 500 {
		t.Fatalf("taken: %v", out)
	}
	for i := range types {
		got, in := out.Column(i), b.Column(i)
		if got.Len() != 3 || got.NullN() != 3 {
			t.Errorf("%s: %d rows, %d NULLs", types[i], got.Len(), got.NullN())
		}
		for k, buf := range got.Data().Buffers() {
			if buf != nil && buf != in.Data().Buffers()[k] {
				t.Errorf("%s: buffer %d was copied", types[i], k)
			}
		}
	}
}

// BenchmarkRowFilter evaluates TPC-H-like row filters on 8192-row
// batches: a date interval and a text IN list of two modes out of seven.
func BenchmarkRowFilter(b *testing.B) {
	modes := []string{"AIR", "AIR REG", "MAIL", "SHIP", "RAIL", "TRUCK", "FOB"}
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	db := array.NewDate32Builder(memory.DefaultAllocator)
	for i := range 8192 {
		sb.Append(modes[(i*7919)%len(modes)])
		db.Append(arrow.Date32(8000 + (i*104729)%2500))
	}
	sch := arrow.NewSchema([]arrow.Field{{Name: "mode", Type: arrow.BinaryTypes.String}, {Name: "d", Type: arrow.FixedWidthTypes.Date32}}, nil)
	cols := []arrow.Array{sb.NewArray(), db.NewArray()}
	rec := array.NewRecordBatch(sch, cols, 8192)
	defer rec.Release()
	tbl := &catalog.Table{ID: "t", Namespace: "s", Name: "t", Schema: sch}
	for name, c := range map[string]Cond{
		"text-in": {Column: "mode", In: true, Values: []any{"MAIL", "SHIP"}},
		"date":    {Column: "d", Lower: int64(8766), LowerInclusive: true, Upper: int64(9131)},
	} {
		m, err := compileRowFilter(tbl, &RowFilter{Conds: []Cond{c}})
		if err != nil {
			b.Fatal(err)
		}
		rows := make([]int, 8192)
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				for i := range rows {
					rows[i] = i
				}
				m.keep(rec, rows)
			}
		})
	}
}
