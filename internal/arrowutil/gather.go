package arrowutil

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
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
