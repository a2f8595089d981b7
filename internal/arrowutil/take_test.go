package arrowutil

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// takeByBuilder is the reference Take: one Appender call per value.
func takeByBuilder(t *testing.T, mem memory.Allocator, src arrow.Array, rows []int) arrow.Array {
	t.Helper()
	b := array.NewBuilder(mem, src.DataType())
	defer b.Release()
	app, err := Appender(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		app(src, r)
	}
	return b.NewArray()
}

// takeType is a type with a way to append the i-th test value.
type takeType struct {
	dt  arrow.DataType
	app func(b array.Builder, i int)
}

// takeTypes are the types Take supports, each with a way to append the
// i-th test value.
var takeTypes = []takeType{
	{arrow.PrimitiveTypes.Int8, func(b array.Builder, i int) { b.(*array.Int8Builder).Append(int8(i)) }},
	{arrow.PrimitiveTypes.Int16, func(b array.Builder, i int) { b.(*array.Int16Builder).Append(int16(i * 7)) }},
	{arrow.PrimitiveTypes.Int32, func(b array.Builder, i int) { b.(*array.Int32Builder).Append(int32(i * 1001)) }},
	{arrow.PrimitiveTypes.Int64, func(b array.Builder, i int) { b.(*array.Int64Builder).Append(int64(i) << 40) }},
	{arrow.PrimitiveTypes.Uint8, func(b array.Builder, i int) { b.(*array.Uint8Builder).Append(uint8(i)) }},
	{arrow.PrimitiveTypes.Uint16, func(b array.Builder, i int) { b.(*array.Uint16Builder).Append(uint16(i * 3)) }},
	{arrow.PrimitiveTypes.Uint32, func(b array.Builder, i int) { b.(*array.Uint32Builder).Append(uint32(i * 100003)) }},
	{arrow.PrimitiveTypes.Uint64, func(b array.Builder, i int) { b.(*array.Uint64Builder).Append(uint64(i) << 50) }},
	{arrow.PrimitiveTypes.Float32, func(b array.Builder, i int) { b.(*array.Float32Builder).Append(float32(i) / 3) }},
	{arrow.PrimitiveTypes.Float64, func(b array.Builder, i int) { b.(*array.Float64Builder).Append(float64(i) / 7) }},
	{arrow.FixedWidthTypes.Boolean, func(b array.Builder, i int) { b.(*array.BooleanBuilder).Append(i%3 == 0) }},
	{arrow.BinaryTypes.String, func(b array.Builder, i int) {
		b.(*array.StringBuilder).Append(fmt.Sprintf("v%0*d", i%17, i)) // lengths vary, some empty-ish
	}},
	{arrow.BinaryTypes.Binary, func(b array.Builder, i int) {
		b.(*array.BinaryBuilder).Append(make([]byte, i%5)) // includes empty values
	}},
	{arrow.FixedWidthTypes.Date32, func(b array.Builder, i int) { b.(*array.Date32Builder).Append(arrow.Date32(i - 50)) }},
	{&arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, func(b array.Builder, i int) {
		b.(*array.TimestampBuilder).Append(arrow.Timestamp(int64(i) * 1e9))
	}},
	{&arrow.Decimal128Type{Precision: 38, Scale: 4}, func(b array.Builder, i int) {
		b.(*array.Decimal128Builder).Append(decimal128.New(int64(i), uint64(i)*0x9e3779b97f4a7c15))
	}},
	{arrow.ListOf(arrow.PrimitiveTypes.Int64), func(b array.Builder, i int) { // array columns: 0..3 elements, some NULL
		lb := b.(*array.ListBuilder)
		lb.Append(true)
		for j := range i % 4 {
			if j == 1 {
				lb.ValueBuilder().AppendNull()
			} else {
				lb.ValueBuilder().(*array.Int64Builder).Append(int64(i*10 + j))
			}
		}
	}},
	{arrow.ListOf(arrow.BinaryTypes.String), func(b array.Builder, i int) {
		lb := b.(*array.ListBuilder)
		lb.Append(true)
		for j := range i % 3 {
			lb.ValueBuilder().(*array.StringBuilder).Append(fmt.Sprint(i, "-", j))
		}
	}},
}

// TestTakeMatchesBuilder checks Take against the builder version for every
// supported type, with and without nulls, on whole and sliced arrays, with
// repeated, reversed and empty row lists; the allocator must end balanced.
func TestTakeMatchesBuilder(t *testing.T) {
	const n = 203 // not a multiple of 8: bitmaps end mid-byte
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tt := range takeTypes {
		for _, nullEvery := range []int{0, 3, 1} { // none, some, all null
			t.Run(fmt.Sprintf("%s/nullEvery=%d", tt.dt, nullEvery), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				b := array.NewBuilder(mem, tt.dt)
				for i := range n {
					if nullEvery > 0 && i%nullEvery == 0 {
						b.AppendNull()
					} else {
						tt.app(b, i)
					}
				}
				whole := b.NewArray()
				b.Release()
				defer whole.Release()
				sliced := array.NewSlice(whole, 13, 150)
				defer sliced.Release()
				for _, src := range []arrow.Array{whole, sliced} {
					perm := rng.Perm(src.Len())
					rowSets := map[string][]int{
						"perm":     perm,
						"repeated": append(append([]int{}, perm[:20]...), perm[:20]...),
						"reversed": reversed(src.Len()),
						"empty":    nil,
						"one":      {src.Len() - 1},
					}
					for name, rows := range rowSets {
						got, err := Take(mem, src, rows)
						if err != nil {
							t.Fatal(err)
						}
						want := takeByBuilder(t, mem, src, rows)
						if got.Len() != len(rows) || got.NullN() != want.NullN() || !array.Equal(got, want) {
							t.Errorf("offset %d, rows %s: got %v (nulls %d), want %v (nulls %d)",
								src.Data().Offset(), name, got, got.NullN(), want, want.NullN())
						}
						if v, ok := got.(interface{ ValidateFull() error }); ok {
							if err := v.ValidateFull(); err != nil {
								t.Errorf("offset %d, rows %s: invalid result: %v", src.Data().Offset(), name, err)
							}
						}
						// The same rows as int32, the writer's row type.
						rows32 := make([]int32, len(rows))
						for i, r := range rows {
							rows32[i] = int32(r)
						}
						got32, err := Take(mem, src, rows32)
						if err != nil {
							t.Fatal(err)
						}
						if !array.Equal(got32, want) {
							t.Errorf("offset %d, rows %s as int32: got %v, want %v", src.Data().Offset(), name, got32, want)
						}
						got32.Release()
						got.Release()
						want.Release()
					}
				}
			})
		}
	}
}

func reversed(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = n - 1 - i
	}
	return out
}

// TestTakeUnsupported refuses types it cannot gather, without leaking.
func TestTakeUnsupported(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := array.NewLargeStringBuilder(mem)
	b.Append("x")
	b.AppendNull()
	a := b.NewArray()
	b.Release()
	defer a.Release()
	if out, err := Take(mem, a, []int{1, 0}); err == nil {
		out.Release()
		t.Fatal("Take of large_utf8 succeeded")
	}
}

// BenchmarkTakeString gathers a string column in random order, as the
// writer does after sorting a bucket by key.
func BenchmarkTakeString(b *testing.B) {
	const n = 1 << 20
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	for i := range n {
		sb.Append(fmt.Sprintf("%08x-%04x-value", uint32(i)*2654435761, i%65536))
	}
	src := sb.NewArray()
	sb.Release()
	defer src.Release()
	rows := rand.New(rand.NewPCG(3, 4)).Perm(n)[:n/4]
	b.ResetTimer()
	for range b.N {
		out, err := Take(memory.DefaultAllocator, src, rows)
		if err != nil {
			b.Fatal(err)
		}
		out.Release()
	}
	b.ReportMetric(float64(len(rows)*b.N)/b.Elapsed().Seconds(), "values/s")
}
