package arrowutil

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
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

// Take returns a new array holding src's values at rows, in that order.
func Take(mem memory.Allocator, src arrow.Array, rows []int) (arrow.Array, error) {
	b := array.NewBuilder(mem, src.DataType())
	defer b.Release()
	app, err := Appender(b)
	if err != nil {
		return nil, err
	}
	b.Reserve(len(rows))
	// Variable-width values: reserve the bytes once instead of growing.
	switch a := src.(type) {
	case *array.String:
		n := 0
		for _, r := range rows {
			n += a.ValueLen(r)
		}
		b.(*array.StringBuilder).ReserveData(n)
	case *array.Binary:
		n := 0
		for _, r := range rows {
			n += len(a.Value(r))
		}
		b.(*array.BinaryBuilder).ReserveData(n)
	}
	for _, r := range rows {
		app(src, r)
	}
	return b.NewArray(), nil
}
