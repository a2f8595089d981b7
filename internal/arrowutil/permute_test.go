package arrowutil

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestPermuteMatchesTake: Permute gives Take's array for every type Take
// supports and a list type (Take itself), with and without nulls, on whole
// and sliced arrays, for all rows or a subset in a random order.
func TestPermuteMatchesTake(t *testing.T) {
	const n = 203
	rng := rand.New(rand.NewPCG(7, 9))
	types := append(slices.Clone(takeTypes), takeType{dt: arrow.ListOf(arrow.PrimitiveTypes.Int32), app: func(b array.Builder, i int) {
		lb := b.(*array.ListBuilder)
		lb.Append(true)
		lb.ValueBuilder().(*array.Int32Builder).Append(int32(i))
	}})
	for _, tt := range types {
		for _, nullEvery := range []int{0, 3, 1} {
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
					for _, frac := range []int{1, 3} { // every row, about a third
						var asc []int32
						for r := range src.Len() {
							if frac == 1 || rng.IntN(frac) == 0 {
								asc = append(asc, int32(r))
							}
						}
						rows := slices.Clone(asc)
						rng.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
						p := NewPermutation(rows, asc, make([]int32, src.Len()))
						got, err := Permute(mem, src, p)
						if err != nil {
							t.Fatal(err)
						}
						want, err := Take(mem, src, rows)
						if err != nil {
							t.Fatal(err)
						}
						if got.Len() != want.Len() || got.NullN() != want.NullN() || !array.Equal(got, want) {
							t.Errorf("offset %d, 1/%d of the rows: got %v (nulls %d), want %v (nulls %d)",
								src.Data().Offset(), frac, got, got.NullN(), want, want.NullN())
						}
						got.Release()
						want.Release()
					}
				}
			})
		}
	}
}

// BenchmarkPermuteVsTake sorts a quarter of the rows of a batch of eight
// 36-byte text columns of 250 k rows (a writer's bucket of a 32 MiB COPY
// batch), column after column, by Take and by Permute.
func BenchmarkPermuteVsTake(b *testing.B) {
	const n, cols = 250_000, 8
	var arrs []arrow.Array
	keys := make([]string, n)
	for c := range cols {
		sb := array.NewStringBuilder(memory.DefaultAllocator)
		for i := range n {
			s := fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", uint32(i*(c+1))*2654435761, i%65536, i%3, i%7, i)
			if c == 0 {
				keys[i] = s
			}
			sb.Append(s)
		}
		arrs = append(arrs, sb.NewArray())
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var asc []int32
	for i := range n {
		if rng.IntN(4) == 0 {
			asc = append(asc, int32(i))
		}
	}
	rows := slices.Clone(asc)
	slices.SortFunc(rows, func(x, y int32) int {
		if keys[x] < keys[y] {
			return -1
		}
		return 1
	})
	b.Run("take", func(b *testing.B) {
		for b.Loop() {
			// As a run is written: 4096 rows at a time, every column.
			for start := 0; start < len(rows); start += 4096 {
				for _, a := range arrs {
					out, _ := Take(memory.DefaultAllocator, a, rows[start:min(start+4096, len(rows))])
					out.Release()
				}
			}
		}
	})
	b.Run("permute", func(b *testing.B) {
		pos := make([]int32, n)
		for b.Loop() {
			p := NewPermutation(rows, asc, pos)
			for _, a := range arrs {
				out, _ := Permute(memory.DefaultAllocator, a, p)
				out.Release()
			}
		}
	})
}
