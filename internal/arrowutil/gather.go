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

// Ref names one value: row Row of Arr; a nil Arr is a NULL.
type Ref struct {
	Arr arrow.Array
	Row int
}

// Gather builds an array of type dt holding the referenced values in order:
// Take for values spread over many arrays. Every non-nil Arr must have type
// dt. Values are copied straight into buffers from mem sized once (one pass
// for variable-width lengths); types without a direct path fall back to a
// builder.
func Gather(mem memory.Allocator, dt arrow.DataType, refs []Ref) (arrow.Array, error) {
	n := len(refs)
	validity, nulls := gatherValidity(mem, refs)
	var buffers []*memory.Buffer
	switch dt.ID() {
	case arrow.STRING, arrow.BINARY:
		offBuf := newBuffer(mem, (n+1)*4)
		offsets := arrow.Int32Traits.CastFromBytes(offBuf.Bytes())
		size := 0
		for i, r := range refs {
			if r.Arr != nil {
				size += r.Arr.(array.BinaryLike).ValueLen(r.Row)
			}
			offsets[i+1] = int32(size)
		}
		dataBuf := newBuffer(mem, size)
		data := dataBuf.Bytes()
		for i, r := range refs {
			if r.Arr == nil {
				continue
			}
			pos := offsets[i]
			switch a := r.Arr.(type) {
			case *array.String:
				copy(data[pos:], a.Value(r.Row))
			case *array.Binary:
				copy(data[pos:], a.Value(r.Row))
			}
		}
		buffers = []*memory.Buffer{validity, offBuf, dataBuf}
	case arrow.BOOL:
		bitBuf := newBuffer(mem, int(bitutil.BytesForBits(int64(n))))
		bits := bitBuf.Bytes()
		for i, r := range refs {
			if r.Arr != nil && r.Arr.(*array.Boolean).Value(r.Row) {
				bitutil.SetBit(bits, i)
			}
		}
		buffers = []*memory.Buffer{validity, bitBuf}
	default:
		fw, ok := dt.(arrow.FixedWidthDataType)
		if !ok || fw.BitWidth()%8 != 0 {
			return gatherWithBuilder(mem, dt, refs)
		}
		w := fw.BitWidth() / 8
		dataBuf := newBuffer(mem, n*w)
		data := dataBuf.Bytes()
		for i, r := range refs {
			if r.Arr == nil {
				continue
			}
			d := r.Arr.Data()
			src := d.Buffers()[1].Bytes()
			at := (d.Offset() + r.Row) * w
			copy(data[i*w:(i+1)*w], src[at:at+w])
		}
		buffers = []*memory.Buffer{validity, dataBuf}
	}
	d := array.NewData(dt, n, buffers, nil, nulls, 0)
	for _, b := range buffers {
		if b != nil {
			b.Release() // the data holds them now
		}
	}
	defer d.Release()
	return array.MakeFromData(d), nil
}

// gatherValidity returns the validity bitmap of refs from mem (nil when no
// value is NULL) and the NULL count.
func gatherValidity(mem memory.Allocator, refs []Ref) (*memory.Buffer, int) {
	nulls := 0
	for _, r := range refs {
		if r.Arr == nil || r.Arr.IsNull(r.Row) {
			nulls++
		}
	}
	if nulls == 0 {
		return nil, 0
	}
	buf := newBuffer(mem, int(bitutil.BytesForBits(int64(len(refs)))))
	bits := buf.Bytes()
	for i, r := range refs {
		if r.Arr != nil && r.Arr.IsValid(r.Row) {
			bitutil.SetBit(bits, i)
		}
	}
	return buf, nulls
}

func gatherWithBuilder(mem memory.Allocator, dt arrow.DataType, refs []Ref) (arrow.Array, error) {
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	app, err := Appender(b)
	if err != nil {
		return nil, fmt.Errorf("gather %s: %w", dt, err)
	}
	b.Reserve(len(refs))
	for _, r := range refs {
		if r.Arr == nil {
			b.AppendNull()
			continue
		}
		app(r.Arr, r.Row)
	}
	return b.NewArray(), nil
}

// Pick names row Row of the Arr-th array of a GatherPicks call.
type Pick struct {
	Arr, Row int32
}

// GatherPicks is Gather for values of a few arrays picked row by row (a
// merge's output): the arrays' buffers are taken apart once, so a value
// costs no interface call. Every array has type dt.
func GatherPicks(mem memory.Allocator, dt arrow.DataType, arrs []arrow.Array, picks []Pick) (arrow.Array, error) {
	n := len(picks)
	var values []*memory.Buffer
	switch dt.ID() {
	case arrow.STRING, arrow.BINARY:
		offs := make([][]int32, len(arrs))
		data := make([][]byte, len(arrs))
		for k, a := range arrs {
			offs[k] = binaryOffsets(a)
			if b := a.Data().Buffers()[2]; b != nil {
				data[k] = b.Bytes()
			}
		}
		offBuf := newBuffer(mem, (n+1)*4)
		out := arrow.Int32Traits.CastFromBytes(offBuf.Bytes())
		size := 0
		for i, p := range picks {
			o := offs[p.Arr]
			size += int(o[p.Row+1] - o[p.Row])
			if size > math.MaxInt32 {
				offBuf.Release()
				return nil, fmt.Errorf("gathering %d values of %s: more than 2 GiB of data", n, dt)
			}
			out[i+1] = int32(size)
		}
		dataBuf := memory.NewResizableBuffer(mem)
		dataBuf.Resize(size)
		db := dataBuf.Bytes()
		for i, p := range picks {
			if l := out[i+1] - out[i]; l > 0 {
				copy(db[out[i]:out[i+1]], data[p.Arr][offs[p.Arr][p.Row]:])
			}
		}
		values = []*memory.Buffer{offBuf, dataBuf}
	case arrow.BOOL:
		bitBuf := newBuffer(mem, int(bitutil.BytesForBits(int64(n))))
		bits := bitBuf.Bytes()
		for i, p := range picks {
			d := arrs[p.Arr].Data()
			if bitutil.BitIsSet(d.Buffers()[1].Bytes(), d.Offset()+int(p.Row)) {
				bitutil.SetBit(bits, i)
			}
		}
		values = []*memory.Buffer{bitBuf}
	case arrow.INT8, arrow.UINT8:
		values = []*memory.Buffer{gatherPicksFixed[uint8](mem, arrs, picks)}
	case arrow.INT16, arrow.UINT16:
		values = []*memory.Buffer{gatherPicksFixed[uint16](mem, arrs, picks)}
	case arrow.INT32, arrow.UINT32, arrow.FLOAT32, arrow.DATE32:
		values = []*memory.Buffer{gatherPicksFixed[uint32](mem, arrs, picks)}
	case arrow.INT64, arrow.UINT64, arrow.FLOAT64, arrow.TIMESTAMP:
		values = []*memory.Buffer{gatherPicksFixed[uint64](mem, arrs, picks)}
	case arrow.DECIMAL128:
		values = []*memory.Buffer{gatherPicksFixed[decimal128.Num](mem, arrs, picks)}
	case arrow.INTERVAL_MONTH_DAY_NANO:
		values = []*memory.Buffer{gatherPicksFixed[arrow.MonthDayNanoInterval](mem, arrs, picks)}
	default:
		refs := make([]Ref, n)
		for i, p := range picks {
			refs[i] = Ref{Arr: arrs[p.Arr], Row: int(p.Row)}
		}
		return Gather(mem, dt, refs)
	}
	validity, nulls := gatherPicksValidity(mem, arrs, picks)
	bufs := append([]*memory.Buffer{validity}, values...)
	d := array.NewData(dt, n, bufs, nil, nulls, 0)
	defer d.Release()
	for _, b := range bufs {
		if b != nil {
			b.Release() // the data holds them now
		}
	}
	return array.MakeFromData(d), nil
}

// gatherPicksValidity is the validity bitmap of the picked values (nil
// when none is NULL) and their NULL count.
func gatherPicksValidity(mem memory.Allocator, arrs []arrow.Array, picks []Pick) (*memory.Buffer, int) {
	var bitmaps [][]byte
	for k, a := range arrs {
		if a.NullN() > 0 {
			if bitmaps == nil {
				bitmaps = make([][]byte, len(arrs))
			}
			bitmaps[k] = a.NullBitmapBytes()
		}
	}
	if bitmaps == nil {
		return nil, 0
	}
	buf := newBuffer(mem, int(bitutil.BytesForBits(int64(len(picks)))))
	bits, nulls := buf.Bytes(), 0
	for i, p := range picks {
		if bm := bitmaps[p.Arr]; bm == nil || bitutil.BitIsSet(bm, arrs[p.Arr].Data().Offset()+int(p.Row)) {
			bitutil.SetBit(bits, i)
		} else {
			nulls++
		}
	}
	if nulls == 0 {
		buf.Release()
		return nil, 0
	}
	return buf, nulls
}

// gatherPicksFixed gathers picked values of a fixed-width type whose values
// are T-sized.
func gatherPicksFixed[T uint8 | uint16 | uint32 | uint64 | decimal128.Num | arrow.MonthDayNanoInterval](mem memory.Allocator, arrs []arrow.Array, picks []Pick) *memory.Buffer {
	var zero T
	out := newBuffer(mem, len(picks)*int(unsafe.Sizeof(zero)))
	if len(picks) == 0 {
		return out
	}
	in := make([][]T, len(arrs))
	for k, a := range arrs {
		if a.Len() > 0 {
			in[k] = arrow.GetValues[T](a.Data(), 1)
		}
	}
	ov := arrow.GetData[T](out.Bytes())
	for i, p := range picks {
		ov[i] = in[p.Arr][p.Row]
	}
	return out
}
