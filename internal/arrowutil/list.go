package arrowutil

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Variable-length lists are the lake's array columns (schema.IsArray): they
// are copied element by element through a builder, the elements by the
// appender of their own type.

// listAppender appends rows of a list whose elements Appender supports.
func listAppender(bb *array.ListBuilder) (AppendFunc, error) {
	elem, err := Appender(bb.ValueBuilder())
	if err != nil {
		return nil, err
	}
	return func(s arrow.Array, i int) {
		l := s.(*array.List)
		start, end := l.ValueOffsets(i)
		vals := l.ListValues()
		bb.Append(true)
		for k := start; k < end; k++ {
			elem(vals, int(k))
		}
	}, nil
}

// takeList gathers rows of a list (Take) through a builder.
func takeList[R int | int32](mem memory.Allocator, src arrow.Array, rows []R) (arrow.Array, error) {
	b := array.NewBuilder(mem, src.DataType())
	defer b.Release()
	app, err := Appender(b)
	if err != nil {
		return nil, err
	}
	b.Reserve(len(rows))
	for _, r := range rows {
		app(src, int(r))
	}
	return b.NewArray(), nil
}
