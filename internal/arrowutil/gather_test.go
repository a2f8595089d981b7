package arrowutil

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Gather agrees with appending the same values to a builder, for every type
// the merge outputs, with NULL refs, NULL values and sliced sources.
func TestGatherMatchesBuilder(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	types := []arrow.DataType{
		arrow.BinaryTypes.String, arrow.BinaryTypes.Binary, arrow.FixedWidthTypes.Boolean,
		arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
		arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64, arrow.FixedWidthTypes.Date32,
		&arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, &arrow.Decimal128Type{Precision: 12, Scale: 3},
	}
	for _, dt := range types {
		t.Run(dt.String(), func(t *testing.T) {
			a := sampleArray(t, mem, dt, 0)
			defer a.Release()
			full := sampleArray(t, mem, dt, 3)
			defer full.Release()
			b := array.NewSlice(full, 3, int64(full.Len())) // same values at an offset
			defer b.Release()
			for _, withNulls := range []bool{false, true} {
				var refs []Ref
				for i := a.Len() - 1; i >= 0; i-- {
					if !withNulls && a.IsNull(i) {
						continue
					}
					refs = append(refs, Ref{Arr: a, Row: i}, Ref{Arr: b, Row: (i * 7) % b.Len()})
					if withNulls && i%3 == 0 {
						refs = append(refs, Ref{})
					}
				}
				got, err := Gather(mem, dt, refs)
				if err != nil {
					t.Fatal(err)
				}
				want, err := gatherWithBuilder(mem, dt, refs)
				if err != nil {
					t.Fatal(err)
				}
				if !array.Equal(got, want) {
					t.Errorf("nulls=%v:\n got %v\nwant %v", withNulls, got, want)
				}
				if got.NullN() != want.NullN() {
					t.Errorf("nulls=%v: NullN %d, want %d", withNulls, got.NullN(), want.NullN())
				}
				got.Release()
				want.Release()
			}
		})
	}
}

// sampleArray builds 10 values of dt (every fourth NULL), after skip leading
// filler values.
func sampleArray(t *testing.T, mem memory.Allocator, dt arrow.DataType, skip int) arrow.Array {
	t.Helper()
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	for i := -skip; i < 10; i++ {
		if i >= 0 && i%4 == 1 {
			b.AppendNull()
			continue
		}
		v := i * 37
		switch bb := b.(type) {
		case *array.StringBuilder:
			bb.Append(fmt.Sprintf("s%0*d", i%5+1, v))
		case *array.BinaryBuilder:
			bb.Append([]byte(fmt.Sprintf("b%d", v)))
		case *array.BooleanBuilder:
			bb.Append(v%2 == 0)
		case *array.Int8Builder:
			bb.Append(int8(v))
		case *array.Int16Builder:
			bb.Append(int16(v))
		case *array.Int32Builder:
			bb.Append(int32(v))
		case *array.Int64Builder:
			bb.Append(int64(v) << 20)
		case *array.Float32Builder:
			bb.Append(float32(v) / 3)
		case *array.Float64Builder:
			bb.Append(float64(v) / 7)
		case *array.Date32Builder:
			bb.Append(arrow.Date32(v))
		case *array.TimestampBuilder:
			bb.Append(arrow.Timestamp(int64(v) * 1e9))
		case *array.Decimal128Builder:
			bb.Append(decimal128.FromI64(int64(v) * 1001))
		default:
			t.Fatalf("no sample values for %s", dt)
		}
	}
	return b.NewArray()
}

// GatherPicks agrees with Gather of the same values, for every type the
// merge outputs and a list type (the fallback), with and without NULL
// values, from whole and sliced arrays.
func TestGatherPicksMatchesGather(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	types := []arrow.DataType{
		arrow.BinaryTypes.String, arrow.BinaryTypes.Binary, arrow.FixedWidthTypes.Boolean,
		arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
		arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64, arrow.FixedWidthTypes.Date32,
		&arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, &arrow.Decimal128Type{Precision: 12, Scale: 3},
	}
	for _, dt := range types {
		t.Run(dt.String(), func(t *testing.T) {
			a := sampleArray(t, mem, dt, 0)
			defer a.Release()
			full := sampleArray(t, mem, dt, 3)
			defer full.Release()
			b := array.NewSlice(full, 3, int64(full.Len()))
			defer b.Release()
			for _, withNulls := range []bool{false, true} {
				arrs := []arrow.Array{a, b}
				var picks []Pick
				var refs []Ref
				for i := a.Len() - 1; i >= 0; i-- {
					if !withNulls && a.IsNull(i) {
						continue
					}
					j := (i * 7) % b.Len()
					if !withNulls && b.IsNull(j) {
						continue
					}
					picks = append(picks, Pick{Arr: 0, Row: int32(i)}, Pick{Arr: 1, Row: int32(j)})
					refs = append(refs, Ref{Arr: a, Row: i}, Ref{Arr: b, Row: j})
				}
				got, err := GatherPicks(mem, dt, arrs, picks)
				if err != nil {
					t.Fatal(err)
				}
				want, err := Gather(mem, dt, refs)
				if err != nil {
					t.Fatal(err)
				}
				if !array.Equal(got, want) || got.NullN() != want.NullN() {
					t.Errorf("nulls=%v:\n got %v (%d nulls)\nwant %v (%d nulls)", withNulls, got, got.NullN(), want, want.NullN())
				}
				got.Release()
				want.Release()
			}
		})
	}
}
