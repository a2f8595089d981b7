package arrowutil

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Fixed-size lists of float32 are the lake's vector columns
// (schema.VectorType); they are gathered and appended like fixed-width
// values of 4×n bytes.

// fixedListFloat32 returns the list width when dt is a fixed-size list of
// float32, else 0.
func fixedListFloat32(dt arrow.DataType) int {
	t, ok := dt.(*arrow.FixedSizeListType)
	if !ok || t.Elem().ID() != arrow.FLOAT32 {
		return 0
	}
	return int(t.Len())
}

// fixedListAppender appends rows of a fixed-size list of float32.
func fixedListAppender(bb *array.FixedSizeListBuilder) (AppendFunc, error) {
	w := fixedListFloat32(bb.Type())
	vb, ok := bb.ValueBuilder().(*array.Float32Builder)
	if w == 0 || !ok {
		return nil, fmt.Errorf("cannot copy values of type %s", bb.Type())
	}
	return func(s arrow.Array, i int) {
		l := s.(*array.FixedSizeList)
		vals := l.ListValues().(*array.Float32).Float32Values()
		start := (l.Offset() + i) * w
		bb.Append(true)
		vb.AppendValues(vals[start:start+w], nil)
	}, nil
}

// takeFixedList gathers rows of a fixed-size list of float32 (Take).
func takeFixedList[R int | int32](mem memory.Allocator, src arrow.Array, rows []R, validity *memory.Buffer, nulls int) (arrow.Array, error) {
	w := fixedListFloat32(src.DataType())
	if w == 0 {
		if validity != nil {
			validity.Release()
		}
		return nil, fmt.Errorf("cannot copy values of type %s", src.DataType())
	}
	l := src.(*array.FixedSizeList)
	in := l.ListValues().(*array.Float32).Float32Values()
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(len(rows) * w * 4)
	dst := arrow.GetData[float32](buf.Bytes())
	for i, r := range rows {
		start := (l.Offset() + int(r)) * w
		copy(dst[i*w:(i+1)*w], in[start:start+w])
	}
	elem := src.DataType().(*arrow.FixedSizeListType).Elem()
	child := array.NewData(elem, len(rows)*w, []*memory.Buffer{nil, buf}, nil, 0, 0)
	buf.Release()
	defer child.Release()
	out := array.NewData(src.DataType(), len(rows), []*memory.Buffer{validity}, []arrow.ArrayData{child}, nulls, 0)
	if validity != nil {
		validity.Release()
	}
	defer out.Release()
	return array.MakeFromData(out), nil
}
