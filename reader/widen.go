package reader

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakesoul-go/lakesoul/schema"
)

// Schema evolution: ALTER TABLE may widen a column's type losslessly (LakeSoul
// §4.5: Arrow can_cast). Files keep the type they were written with; the
// reader widens their values to the table's type.

// CanWiden reports whether values of type from convert to type to without loss.
func CanWiden(from, to arrow.DataType) bool {
	if arrow.TypeEqual(from, to) {
		return true
	}
	if schema.IsInterval(to) {
		// An interval column's file form (schema.IntervalFileType).
		return arrow.TypeEqual(from, schema.IntervalFileType)
	}
	if fd, ok := from.(*arrow.Decimal128Type); ok {
		// More precision, and no fewer digits on either side of the point.
		td, ok := to.(*arrow.Decimal128Type)
		return ok && td.Scale >= fd.Scale && td.Precision-td.Scale >= fd.Precision-fd.Scale
	}
	rank := func(dt arrow.DataType) (kind byte, bits int) {
		switch dt.ID() {
		case arrow.INT8:
			return 'i', 8
		case arrow.INT16:
			return 'i', 16
		case arrow.INT32:
			return 'i', 32
		case arrow.INT64:
			return 'i', 64
		case arrow.FLOAT32:
			return 'f', 32
		case arrow.FLOAT64:
			return 'f', 64
		}
		return 0, 0
	}
	fk, fb := rank(from)
	tk, tb := rank(to)
	switch {
	case fk == 0 || tk == 0:
		return false
	case fk == tk:
		return tb > fb
	case fk == 'i' && tk == 'f':
		// Integers convert exactly while they fit the mantissa.
		return (tb == 64 && fb <= 32) || (tb == 32 && fb <= 16)
	}
	return false
}

// widen converts arr to type to; CanWiden(arr.DataType(), to) must hold.
// Widen converts arr to type to, which CanWiden(arr's type, to) allows.
func Widen(mem memory.Allocator, arr arrow.Array, to arrow.DataType) (arrow.Array, error) {
	return widen(mem, arr, to)
}

func widen(mem memory.Allocator, arr arrow.Array, to arrow.DataType) (arrow.Array, error) {
	if fb, ok := arr.(*array.FixedSizeBinary); ok && schema.IsInterval(to) {
		return schema.IntervalArray(mem, fb)
	}
	b := array.NewBuilder(mem, to)
	defer b.Release()
	b.Reserve(arr.Len())
	if d, ok := arr.(*array.Decimal128); ok {
		by := to.(*arrow.Decimal128Type).Scale - d.DataType().(*arrow.Decimal128Type).Scale
		db := b.(*array.Decimal128Builder)
		for i := 0; i < d.Len(); i++ {
			if d.IsNull(i) {
				db.AppendNull()
				continue
			}
			db.Append(d.Value(i).IncreaseScaleBy(by))
		}
		return b.NewArray(), nil
	}
	get, err := numberGetter(arr)
	if err != nil {
		return nil, err
	}
	for i := 0; i < arr.Len(); i++ {
		if arr.IsNull(i) {
			b.AppendNull()
			continue
		}
		iv, fv, isInt := get(i)
		switch bb := b.(type) {
		case *array.Int16Builder:
			bb.Append(int16(iv))
		case *array.Int32Builder:
			bb.Append(int32(iv))
		case *array.Int64Builder:
			bb.Append(iv)
		case *array.Float32Builder:
			if isInt {
				bb.Append(float32(iv))
			} else {
				bb.Append(float32(fv))
			}
		case *array.Float64Builder:
			if isInt {
				bb.Append(float64(iv))
			} else {
				bb.Append(fv)
			}
		default:
			return nil, fmt.Errorf("cannot widen to %s", to)
		}
	}
	return b.NewArray(), nil
}

func numberGetter(arr arrow.Array) (func(int) (int64, float64, bool), error) {
	switch a := arr.(type) {
	case *array.Int8:
		return func(i int) (int64, float64, bool) { return int64(a.Value(i)), 0, true }, nil
	case *array.Int16:
		return func(i int) (int64, float64, bool) { return int64(a.Value(i)), 0, true }, nil
	case *array.Int32:
		return func(i int) (int64, float64, bool) { return int64(a.Value(i)), 0, true }, nil
	case *array.Int64:
		return func(i int) (int64, float64, bool) { return a.Value(i), 0, true }, nil
	case *array.Float32:
		return func(i int) (int64, float64, bool) { return 0, float64(a.Value(i)), false }, nil
	}
	return nil, fmt.Errorf("cannot widen %s", arr.DataType())
}
