package arrowutil

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestTakeConcatMatchesTakeAndConcatenate: for every type Take supports,
// with and without nulls, segments of whole and sliced arrays, all rows or
// chosen ones (none too), give what Take of each and array.Concatenate
// give; the allocator ends balanced.
func TestTakeConcatMatchesTakeAndConcatenate(t *testing.T) {
	const n = 203
	rng := rand.New(rand.NewPCG(3, 4))
	types := append(takeTypes, takeType{dt: arrow.ListOf(arrow.PrimitiveTypes.Int64), app: func(b array.Builder, i int) {
		lb := b.(*array.ListBuilder)
		lb.Append(true)
		lb.ValueBuilder().(*array.Int64Builder).Append(int64(i))
	}})
	for _, tt := range types {
		for _, nullEvery := range []int{0, 3, 1} {
			t.Run(fmt.Sprintf("%s/nullEvery=%d", tt.dt, nullEvery), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				var arrs []arrow.Array
				for k := range 3 {
					b := array.NewBuilder(mem, tt.dt)
					for i := range n {
						if nullEvery > 0 && (i+k)%nullEvery == 0 {
							b.AppendNull()
						} else {
							tt.app(b, i*(k+1))
						}
					}
					a := b.NewArray()
					b.Release()
					arrs = append(arrs, a)
				}
				sliced := array.NewSlice(arrs[1], 17, 160)
				arrs = append(arrs, sliced)
				defer func() {
					for _, a := range arrs {
						a.Release()
					}
				}()
				segs := []Segment{
					{Arr: arrs[0]},
					{Arr: sliced, Rows: rng.Perm(sliced.Len())[:50]},
					{Arr: arrs[2], Rows: []int{}},
					{Arr: sliced},
					{Arr: arrs[2], Rows: []int{202, 0, 5, 5}},
					// Runs of consecutive rows, as a merge selects them.
					{Arr: arrs[1], Rows: []int{3, 4, 5, 6, 10, 11, 40, 41, 42, 43, 44, 45, 46, 2, 3, 200, 201, 202}},
					{Arr: sliced, Rows: []int{0, 1, 2, 141, 142}},
				}
				got, err := TakeConcat(mem, tt.dt, segs)
				if err != nil {
					t.Fatal(err)
				}
				defer got.Release()
				var parts []arrow.Array
				for _, s := range segs {
					if s.Rows == nil {
						s.Arr.Retain()
						parts = append(parts, s.Arr)
						continue
					}
					p, err := Take(mem, s.Arr, s.Rows)
					if err != nil {
						t.Fatal(err)
					}
					parts = append(parts, p)
				}
				want, err := array.Concatenate(parts, mem)
				if err != nil {
					t.Fatal(err)
				}
				defer want.Release()
				for _, p := range parts {
					p.Release()
				}
				if got.Len() != want.Len() || got.NullN() != want.NullN() || !array.Equal(got, want) {
					t.Errorf("got %v (nulls %d), want %v (nulls %d)", got, got.NullN(), want, want.NullN())
				}
				if v, ok := got.(interface{ ValidateFull() error }); ok {
					if err := v.ValidateFull(); err != nil {
						t.Errorf("invalid result: %v", err)
					}
				}
			})
		}
	}
}

// BenchmarkTakeConcatRuns gathers what a merge of many files hands a
// Flight stream: batches of 1024 text values of 36 bytes, their winning
// rows in runs (here nine of every ten rows, runs of 9), into one batch.
func BenchmarkTakeConcatRuns(b *testing.B) {
	mem := memory.NewGoAllocator()
	var segs []Segment
	for range 64 {
		bld := array.NewStringBuilder(mem)
		for i := range 1024 {
			bld.Append(fmt.Sprintf("%036d", i))
		}
		a := bld.NewArray()
		var rows []int
		for i := range 1024 {
			if i%10 != 0 {
				rows = append(rows, i)
			}
		}
		segs = append(segs, Segment{Arr: a, Rows: rows})
	}
	b.ResetTimer()
	for range b.N {
		got, err := TakeConcat(mem, arrow.BinaryTypes.String, segs)
		if err != nil {
			b.Fatal(err)
		}
		got.Release()
	}
}
