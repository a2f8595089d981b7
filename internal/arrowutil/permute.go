package arrowutil

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Permutation is a reordering of some rows of an array: Rows in their new
// order, Asc the same rows ascending, and Pos[r] the index in Rows of row r
// (defined for the rows of Asc; Pos may be shared by permutations of
// disjoint row sets).
type Permutation struct {
	Rows, Asc, Pos []int32
}

// NewPermutation is the permutation putting asc (ascending rows) into the
// order of rows, which holds the same rows; pos (of at least max(rows)+1
// entries) receives their positions.
func NewPermutation(rows, asc, pos []int32) Permutation {
	for i, r := range rows {
		pos[r] = int32(i)
	}
	return Permutation{Rows: rows, Asc: asc, Pos: pos}
}

// Permute is Take(mem, src, p.Rows) computed the other way round: Take
// reads src at random and writes in order, Permute reads src in order (the
// rows of p.Asc) and writes each value to its place. When src is larger
// than the caches — a writer's batch of many columns, of which one bucket's
// rows are sorted — Take misses the cache on nearly every value, while
// Permute streams through src and writes into an output a fraction of its
// size. The result is the same as Take's.
func Permute(mem memory.Allocator, src arrow.Array, p Permutation) (arrow.Array, error) {
	d := src.Data()
	n := len(p.Rows)
	var values []*memory.Buffer
	switch d.DataType().ID() {
	case arrow.STRING, arrow.BINARY:
		offsets, data, err := permuteVarWidth(mem, src, p)
		if err != nil {
			return nil, err
		}
		values = []*memory.Buffer{offsets, data}
	case arrow.BOOL:
		out := newBuffer(mem, int(bitutil.BytesForBits(int64(n))))
		if n > 0 {
			in, off, ob := d.Buffers()[1].Bytes(), d.Offset(), out.Bytes()
			for _, r := range p.Asc {
				if bitutil.BitIsSet(in, off+int(r)) {
					bitutil.SetBit(ob, int(p.Pos[r]))
				}
			}
		}
		values = []*memory.Buffer{out}
	case arrow.INT8, arrow.UINT8:
		values = []*memory.Buffer{permuteFixed[uint8](mem, d, p)}
	case arrow.INT16, arrow.UINT16:
		values = []*memory.Buffer{permuteFixed[uint16](mem, d, p)}
	case arrow.INT32, arrow.UINT32, arrow.FLOAT32, arrow.DATE32:
		values = []*memory.Buffer{permuteFixed[uint32](mem, d, p)}
	case arrow.INT64, arrow.UINT64, arrow.FLOAT64, arrow.TIMESTAMP:
		values = []*memory.Buffer{permuteFixed[uint64](mem, d, p)}
	case arrow.DECIMAL128:
		values = []*memory.Buffer{permuteFixed[decimal128.Num](mem, d, p)}
	case arrow.INTERVAL_MONTH_DAY_NANO:
		values = []*memory.Buffer{permuteFixed[arrow.MonthDayNanoInterval](mem, d, p)}
	default:
		return Take(mem, src, p.Rows)
	}
	var validity *memory.Buffer
	nulls := 0
	if src.NullN() > 0 {
		validity = newBuffer(mem, int(bitutil.BytesForBits(int64(n))))
		vb := validity.Bytes()
		for _, r := range p.Asc {
			if src.IsValid(int(r)) {
				bitutil.SetBit(vb, int(p.Pos[r]))
			} else {
				nulls++
			}
		}
	}
	bufs := append([]*memory.Buffer{validity}, values...)
	out := array.NewData(src.DataType(), n, bufs, nil, nulls, 0)
	defer out.Release()
	for _, b := range bufs {
		if b != nil {
			b.Release() // the data holds its own references now
		}
	}
	return array.MakeFromData(out), nil
}

// permuteFixed places the values of a fixed-width array whose values are
// T-sized.
func permuteFixed[T uint8 | uint16 | uint32 | uint64 | decimal128.Num | arrow.MonthDayNanoInterval](mem memory.Allocator, d arrow.ArrayData, p Permutation) *memory.Buffer {
	var zero T
	out := memory.NewResizableBuffer(mem)
	out.Resize(len(p.Rows) * int(unsafe.Sizeof(zero)))
	if len(p.Rows) == 0 {
		return out
	}
	in := arrow.GetValues[T](d, 1)
	dst := arrow.GetData[T](out.Bytes())
	for _, r := range p.Asc {
		dst[p.Pos[r]] = in[r]
	}
	return out
}

// permuteVarWidth places the offsets and bytes of a String or Binary
// array; null slots get no bytes.
func permuteVarWidth(mem memory.Allocator, src arrow.Array, p Permutation) (offsets, values *memory.Buffer, err error) {
	in := binaryOffsets(src)
	var data []byte
	if b := src.Data().Buffers()[2]; b != nil {
		data = b.Bytes()
	}
	n := len(p.Rows)
	offsets = memory.NewResizableBuffer(mem)
	offsets.Resize(arrow.Int32Traits.BytesRequired(n + 1))
	offs := arrow.GetData[int32](offsets.Bytes())
	// The output offsets, in output order: the lengths are the only values
	// read at random, and they are a small part of src.
	hasNulls := src.NullN() > 0
	total := 0
	for i, r := range p.Rows {
		offs[i] = int32(total)
		if !hasNulls || src.IsValid(int(r)) {
			total += int(in[r+1] - in[r])
		}
		if total > math.MaxInt32 {
			offsets.Release()
			return nil, nil, fmt.Errorf("permuting %d values of %s: more than 2 GiB of data", n, src.DataType())
		}
	}
	offs[n] = int32(total)
	values = memory.NewResizableBuffer(mem)
	values.Resize(total)
	vb := values.Bytes()
	for _, r := range p.Asc {
		i := p.Pos[r]
		copy(vb[offs[i]:offs[i+1]], data[in[r]:])
	}
	return offsets, values, nil
}
