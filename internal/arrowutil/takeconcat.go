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

// Segment names rows of one array, in order: Rows, or every row when Rows
// is nil.
type Segment struct {
	Arr  arrow.Array
	Rows []int
}

// Len is the number of rows the segment names.
func (s Segment) Len() int {
	if s.Rows != nil {
		return len(s.Rows)
	}
	return s.Arr.Len()
}

// TakeConcat is Take over several arrays in turn: the rows of each segment,
// one segment after another, as one array of type dt, with buffers from mem
// sized once. Every segment's array has type dt. It is what Take of each
// segment followed by array.Concatenate gives, with one copy instead of
// two; a segment of every row is copied as one block.
func TakeConcat(mem memory.Allocator, dt arrow.DataType, segs []Segment) (arrow.Array, error) {
	n := 0
	for _, s := range segs {
		n += s.Len()
	}
	var values []*memory.Buffer
	switch dt.ID() {
	case arrow.STRING, arrow.BINARY:
		offsets, data, err := concatVarWidth(mem, segs, n)
		if err != nil {
			return nil, err
		}
		values = []*memory.Buffer{offsets, data}
	case arrow.BOOL:
		out := newBuffer(mem, int(bitutil.BytesForBits(int64(n))))
		ob, at := out.Bytes(), 0
		for _, s := range segs {
			d := s.Arr.Data()
			in, off := d.Buffers()[1].Bytes(), d.Offset()
			if s.Rows == nil {
				bitutil.CopyBitmap(in, off, s.Arr.Len(), ob, at)
				at += s.Arr.Len()
				continue
			}
			for _, r := range s.Rows {
				if bitutil.BitIsSet(in, off+r) {
					bitutil.SetBit(ob, at)
				}
				at++
			}
		}
		values = []*memory.Buffer{out}
	case arrow.INT8, arrow.UINT8:
		values = []*memory.Buffer{concatFixed[uint8](mem, segs, n)}
	case arrow.INT16, arrow.UINT16:
		values = []*memory.Buffer{concatFixed[uint16](mem, segs, n)}
	case arrow.INT32, arrow.UINT32, arrow.FLOAT32, arrow.DATE32:
		values = []*memory.Buffer{concatFixed[uint32](mem, segs, n)}
	case arrow.INT64, arrow.UINT64, arrow.FLOAT64, arrow.TIMESTAMP:
		values = []*memory.Buffer{concatFixed[uint64](mem, segs, n)}
	case arrow.DECIMAL128:
		values = []*memory.Buffer{concatFixed[decimal128.Num](mem, segs, n)}
	case arrow.INTERVAL_MONTH_DAY_NANO:
		values = []*memory.Buffer{concatFixed[arrow.MonthDayNanoInterval](mem, segs, n)}
	default:
		return takeThenConcat(mem, segs)
	}
	validity, nulls := concatValidity(mem, segs, n)
	bufs := append([]*memory.Buffer{validity}, values...)
	out := array.NewData(dt, n, bufs, nil, nulls, 0)
	defer out.Release()
	for _, b := range bufs {
		if b != nil {
			b.Release() // the data holds its own references now
		}
	}
	return array.MakeFromData(out), nil
}

// concatValidity is the validity bitmap of the segments' rows (nil when
// none is NULL) and their NULL count.
func concatValidity(mem memory.Allocator, segs []Segment, n int) (*memory.Buffer, int) {
	hasNulls := false
	for _, s := range segs {
		if s.Arr.NullN() > 0 {
			hasNulls = true
			break
		}
	}
	if !hasNulls {
		return nil, 0
	}
	buf := newBuffer(mem, int(bitutil.BytesForBits(int64(n))))
	bits, at := buf.Bytes(), 0
	for _, s := range segs {
		if s.Arr.NullN() == 0 {
			bitutil.SetBitsTo(bits, int64(at), int64(s.Len()), true)
			at += s.Len()
			continue
		}
		if s.Rows == nil {
			d := s.Arr.Data()
			bitutil.CopyBitmap(d.Buffers()[0].Bytes(), d.Offset(), s.Arr.Len(), bits, at)
			at += s.Arr.Len()
			continue
		}
		for _, r := range s.Rows {
			if s.Arr.IsValid(r) {
				bitutil.SetBit(bits, at)
			}
			at++
		}
	}
	return buf, n - bitutil.CountSetBits(bits, 0, n)
}

// concatFixed gathers the segments' values of a fixed-width type whose
// values are T-sized (T is only the width, as for takeFixed).
func concatFixed[T uint8 | uint16 | uint32 | uint64 | decimal128.Num | arrow.MonthDayNanoInterval](mem memory.Allocator, segs []Segment, n int) *memory.Buffer {
	var zero T
	out := newBuffer(mem, n*int(unsafe.Sizeof(zero)))
	if n == 0 {
		return out
	}
	ov := arrow.GetData[T](out.Bytes())
	at := 0
	for _, s := range segs {
		if s.Len() == 0 {
			continue
		}
		in := arrow.GetValues[T](s.Arr.Data(), 1)
		if s.Rows == nil {
			at += copy(ov[at:], in[:s.Arr.Len()])
			continue
		}
		for _, r := range s.Rows {
			ov[at] = in[r]
			at++
		}
	}
	return out
}

// concatVarWidth gathers the segments' String or Binary offsets and bytes;
// null slots get no bytes.
func concatVarWidth(mem memory.Allocator, segs []Segment, n int) (offsets, values *memory.Buffer, err error) {
	offsets = newBuffer(mem, arrow.Int32Traits.BytesRequired(n+1))
	offs := arrow.GetData[int32](offsets.Bytes())
	// The first pass sets the output offsets; the second copies.
	total, at := 0, 0
	for _, s := range segs {
		in := binaryOffsets(s.Arr)
		if s.Rows == nil {
			base := int(in[0])
			for i := range s.Arr.Len() {
				offs[at] = int32(total + int(in[i]) - base)
				at++
			}
			total += int(in[s.Arr.Len()]) - base
		} else {
			nulls := s.Arr.NullN() > 0
			for _, r := range s.Rows {
				offs[at] = int32(total)
				at++
				if !nulls || s.Arr.IsValid(r) {
					total += int(in[r+1] - in[r])
				}
			}
		}
		if total > math.MaxInt32 {
			offsets.Release()
			return nil, nil, fmt.Errorf("taking %d values of %s: more than 2 GiB of data", n, s.Arr.DataType())
		}
	}
	offs[n] = int32(total)
	values = memory.NewResizableBuffer(mem)
	values.Resize(total)
	vb := values.Bytes()
	at = 0
	for _, s := range segs {
		in := binaryOffsets(s.Arr)
		var data []byte
		if b := s.Arr.Data().Buffers()[2]; b != nil {
			data = b.Bytes()
		}
		if s.Rows == nil {
			copy(vb[offs[at]:], data[in[0]:in[s.Arr.Len()]])
			at += s.Arr.Len()
			continue
		}
		if s.Arr.NullN() > 0 {
			// A null's value is empty in the output, whatever the input holds.
			for _, r := range s.Rows {
				if l := offs[at+1] - offs[at]; l > 0 {
					copy(vb[offs[at]:offs[at+1]], data[in[r]:])
				}
				at++
			}
			continue
		}
		// Consecutive rows (a merge's winners mostly come in runs) are one
		// block of values in the input: one copy each.
		for k := 0; k < len(s.Rows); {
			r, j := s.Rows[k], k+1
			for j < len(s.Rows) && s.Rows[j] == s.Rows[j-1]+1 {
				j++
			}
			m := j - k
			copy(vb[offs[at]:offs[at+m]], data[in[r]:in[r+m]])
			at, k = at+m, j
		}
	}
	return offsets, values, nil
}

// binaryOffsets is the value offsets of a String or Binary array, from its
// first row on.
func binaryOffsets(a arrow.Array) []int32 {
	switch a := a.(type) {
	case *array.String:
		return a.ValueOffsets()
	case *array.Binary:
		return a.ValueOffsets()
	}
	panic(fmt.Sprintf("binaryOffsets of %s", a.DataType()))
}

// takeThenConcat is TakeConcat for types without a direct path.
func takeThenConcat(mem memory.Allocator, segs []Segment) (arrow.Array, error) {
	parts := make([]arrow.Array, 0, len(segs))
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	for _, s := range segs {
		if s.Rows == nil {
			s.Arr.Retain()
			parts = append(parts, s.Arr)
			continue
		}
		p, err := Take(mem, s.Arr, s.Rows)
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	return array.Concatenate(parts, mem)
}
