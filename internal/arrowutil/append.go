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

// AppendFunc appends value i of src (or null) to the builder it was made for.
type AppendFunc func(src arrow.Array, i int)

// Appender returns an AppendFunc for builder b. src arrays must have b's type.
func Appender(b array.Builder) (AppendFunc, error) {
	var f AppendFunc
	switch bb := b.(type) {
	case *array.Int8Builder:
		f = func(s arrow.Array, i int) { bb.Append(s.(*array.Int8).Value(i)) }
	case *array.Int16Builder:
		f = func(s arrow.Array, i int) { bb.Append(s.(*array.Int16).Value(i)) }
	case *array.Int32Builder:
		f = func(s arrow.Array, i int) { bb.Append(s.(*array.Int32).Value(i)) }
	case *array.Int64Builder:
		f = func(s arrow.Array, i int) { bb.Append(s.(*array.Int64).Value(i)) }
	case *array.Uint8Builder:
		f = func(s arrow.Array, i int) { bb.Append(s.(*array.Uint8).Value(i)) }
	case *array.Uint16Builder:
		f = func(s arrow.Array, i int) { bb.Append(s.(*array.Uint16).Value(i)) }
	case *array.Uint32Builder:
		f = func(s arrow.Array, i int) { bb.Append(s.(*array.Uint32).Value(i)) }
	case *array.Uint64Builder:
		f = func(s arrow.Array, i int) { bb.Append(s.(*array.Uint64).Value(i)) }
	case *array.Float32Builder:
		f = func(s arrow.Array, i int) { bb.Append(s.(*array.Float32).Value(i)) }
	case *array.Float64Builder:
		f = func(s arrow.Array, i int) { bb.Append(s.(*array.Float64).Value(i)) }
	case *array.BooleanBuilder:
		f = func(s arrow.Array, i int) { bb.Append(s.(*array.Boolean).Value(i)) }
	case *array.StringBuilder:
		f = func(s arrow.Array, i int) { bb.Append(s.(*array.String).Value(i)) }
	case *array.BinaryBuilder:
		f = func(s arrow.Array, i int) { bb.Append(s.(*array.Binary).Value(i)) }
	case *array.Date32Builder:
		f = func(s arrow.Array, i int) { bb.Append(s.(*array.Date32).Value(i)) }
	case *array.TimestampBuilder:
		f = func(s arrow.Array, i int) { bb.Append(s.(*array.Timestamp).Value(i)) }
	case *array.Decimal128Builder:
		f = func(s arrow.Array, i int) { bb.Append(s.(*array.Decimal128).Value(i)) }
	case *array.MonthDayNanoIntervalBuilder:
		f = func(s arrow.Array, i int) { bb.Append(s.(*array.MonthDayNanoInterval).Value(i)) }
	case *array.FixedSizeListBuilder:
		var err error
		if f, err = fixedListAppender(bb); err != nil {
			return nil, err
		}
	case *array.ListBuilder:
		var err error
		if f, err = listAppender(bb); err != nil { // list.go
			return nil, err
		}
	default:
		return nil, fmt.Errorf("cannot copy values of type %s", b.Type())
	}
	return func(s arrow.Array, i int) {
		if s == nil || s.IsNull(i) {
			b.AppendNull()
			return
		}
		f(s, i)
	}, nil
}

// Take returns a new array holding src's values at rows, in that order. It
// supports the types Appender does and gathers straight into buffers sized
// once: the writer gathers every value of every file this way, and a
// builder's per-value bookkeeping cost more than the copies themselves.
// Null slots of the result hold zero bytes of string/binary data; the
// validity bitmap exists only when src has nulls.
func Take[R int | int32](mem memory.Allocator, src arrow.Array, rows []R) (arrow.Array, error) {
	d := src.Data()
	n := len(rows)
	var validity *memory.Buffer
	nulls := 0
	if src.NullN() > 0 {
		validity, nulls = takeValidity(mem, src, rows)
	}
	var values []*memory.Buffer
	switch d.DataType().ID() {
	case arrow.FIXED_SIZE_LIST:
		return takeFixedList(mem, src, rows, validity, nulls) // fixedlist.go
	case arrow.LIST:
		if validity != nil {
			validity.Release()
		}
		return takeList(mem, src, rows) // list.go
	case arrow.STRING, arrow.BINARY:
		offsets, data, err := takeVarWidth(mem, src, rows)
		if err != nil {
			if validity != nil {
				validity.Release()
			}
			return nil, err
		}
		values = []*memory.Buffer{offsets, data}
	case arrow.BOOL:
		out := newBuffer(mem, int(bitutil.BytesForBits(int64(n))))
		if n > 0 {
			in, off, ob := d.Buffers()[1].Bytes(), d.Offset(), out.Bytes()
			for i, r := range rows {
				if bitutil.BitIsSet(in, off+int(r)) {
					bitutil.SetBit(ob, i)
				}
			}
		}
		values = []*memory.Buffer{out}
	case arrow.INT8, arrow.UINT8:
		values = []*memory.Buffer{takeFixed[uint8](mem, d, rows)}
	case arrow.INT16, arrow.UINT16:
		values = []*memory.Buffer{takeFixed[uint16](mem, d, rows)}
	case arrow.INT32, arrow.UINT32, arrow.FLOAT32, arrow.DATE32:
		values = []*memory.Buffer{takeFixed[uint32](mem, d, rows)}
	case arrow.INT64, arrow.UINT64, arrow.FLOAT64, arrow.TIMESTAMP:
		values = []*memory.Buffer{takeFixed[uint64](mem, d, rows)}
	case arrow.DECIMAL128:
		values = []*memory.Buffer{takeFixed[decimal128.Num](mem, d, rows)}
	case arrow.INTERVAL_MONTH_DAY_NANO:
		values = []*memory.Buffer{takeFixed[arrow.MonthDayNanoInterval](mem, d, rows)}
	default:
		if validity != nil {
			validity.Release()
		}
		return nil, fmt.Errorf("cannot copy values of type %s", src.DataType())
	}
	bufs := append([]*memory.Buffer{validity}, values...)
	out := array.NewData(src.DataType(), n, bufs, nil, nulls, 0)
	defer out.Release()
	// The data holds its own references now.
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	return array.MakeFromData(out), nil
}

// newBuffer allocates a zeroed buffer of size bytes.
func newBuffer(mem memory.Allocator, size int) *memory.Buffer {
	b := memory.NewResizableBuffer(mem)
	b.Resize(size)
	clear(b.Bytes()) // allocators need not hand out zeroed memory
	return b
}

// takeValidity gathers src's validity bits at rows; it returns the bitmap
// and the number of nulls in it.
func takeValidity[R int | int32](mem memory.Allocator, src arrow.Array, rows []R) (*memory.Buffer, int) {
	out := newBuffer(mem, int(bitutil.BytesForBits(int64(len(rows)))))
	ob, nulls := out.Bytes(), 0
	for i, r := range rows {
		if src.IsValid(int(r)) {
			bitutil.SetBit(ob, i)
		} else {
			nulls++
		}
	}
	return out, nulls
}

// takeFixed gathers the values of a fixed-width array whose values are T-sized.
// T is only the width: copying the bits is the same for every type of it.
func takeFixed[T uint8 | uint16 | uint32 | uint64 | decimal128.Num | arrow.MonthDayNanoInterval, R int | int32](mem memory.Allocator, d arrow.ArrayData, rows []R) *memory.Buffer {
	var zero T
	out := memory.NewResizableBuffer(mem)
	out.Resize(len(rows) * int(unsafe.Sizeof(zero)))
	if len(rows) == 0 {
		return out
	}
	in := arrow.GetValues[T](d, 1)
	dst := arrow.GetData[T](out.Bytes())
	for i, r := range rows {
		dst[i] = in[r]
	}
	return out
}

// takeVarWidth gathers the offsets and bytes of a String or Binary array;
// null slots get no bytes.
func takeVarWidth[R int | int32](mem memory.Allocator, src arrow.Array, rows []R) (offsets, values *memory.Buffer, err error) {
	var in []int32
	var data []byte
	switch a := src.(type) {
	case *array.String:
		in = a.ValueOffsets()
	case *array.Binary:
		in = a.ValueOffsets()
	}
	if b := src.Data().Buffers()[2]; b != nil {
		data = b.Bytes()
	}
	offsets = memory.NewResizableBuffer(mem)
	offsets.Resize(arrow.Int32Traits.BytesRequired(len(rows) + 1))
	offs := arrow.GetData[int32](offsets.Bytes())
	// The first pass reads each row's offsets (a random access) and keeps
	// where its bytes start, so the copying pass reads only the bytes.
	starts := make([]int32, len(rows))
	hasNulls := src.NullN() > 0
	total := 0
	for i, r := range rows {
		offs[i] = int32(total)
		starts[i] = in[r]
		if !hasNulls || src.IsValid(int(r)) {
			total += int(in[r+1] - in[r])
		}
		if total > math.MaxInt32 {
			offsets.Release()
			return nil, nil, fmt.Errorf("taking %d values of %s: more than 2 GiB of data", len(rows), src.DataType())
		}
	}
	offs[len(rows)] = int32(total)
	values = memory.NewResizableBuffer(mem)
	values.Resize(total)
	vb := values.Bytes()
	for i, start := range starts {
		copy(vb[offs[i]:offs[i+1]], data[start:])
	}
	return offsets, values, nil
}
