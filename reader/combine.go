package reader

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/lakesoul-go/lakesoul/internal/arrowutil"
)

// valueRef is one value of a key group: row `row` of array `arr`, written by
// the file at position `order`.
type valueRef struct {
	arr   arrow.Array
	row   int
	order int
}

// combine appends the value of column c for the current key group under the
// column's (non-UseLast) merge operator. The group is sorted oldest first.
func (it *mergeIterator) combine(c int) error {
	op := it.ops[c]
	vals := it.vals[:0]
	for _, e := range it.group {
		if bc := e.colMap[c]; bc >= 0 {
			vals = append(vals, valueRef{arr: e.batch.Column(bc), row: e.row, order: e.order})
		}
	}
	it.vals = vals
	b := it.builders[c]
	if len(vals) == 0 {
		b.AppendNull()
		return nil
	}
	switch op {
	case UseLastNotNull:
		for i := len(vals) - 1; i >= 0; i-- {
			if !vals[i].arr.IsNull(vals[i].row) {
				it.appends[c](vals[i].arr, vals[i].row)
				return nil
			}
		}
		b.AppendNull()
		return nil
	case SumLast, JoinedLastByComma, JoinedLastBySemicolon:
		vals = lastPerFile(vals)
	case Max, Min:
		cmp, err := arrowutil.Comparer(vals[0].arr.DataType())
		if err != nil {
			return err
		}
		best := -1
		for i, v := range vals {
			if v.arr.IsNull(v.row) {
				continue
			}
			if best < 0 {
				best = i
				continue
			}
			d := cmp(v.arr, v.row, vals[best].arr, vals[best].row)
			if (op == Max && d > 0) || (op == Min && d < 0) {
				best = i
			}
		}
		if best < 0 {
			b.AppendNull()
		} else {
			it.appends[c](vals[best].arr, vals[best].row)
		}
		return nil
	}
	for _, v := range vals {
		if v.arr.IsNull(v.row) {
			b.AppendNull() // any NULL makes sums and joins NULL (LakeSoul)
			return nil
		}
	}
	switch op {
	case SumAll, SumLast:
		return appendSum(b, vals)
	case JoinedLastByComma, JoinedAllByComma, JoinedLastBySemicolon, JoinedAllBySemicolon:
		sep := ","
		if op == JoinedLastBySemicolon || op == JoinedAllBySemicolon {
			sep = ";"
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = v.arr.(*array.String).Value(v.row)
		}
		b.(*array.StringBuilder).Append(strings.Join(parts, sep))
		return nil
	}
	return fmt.Errorf("merge operator %d not implemented", op)
}

// lastPerFile keeps, for each file, its last value (vals are oldest first).
func lastPerFile(vals []valueRef) []valueRef {
	out := vals[:0]
	for i, v := range vals {
		if i+1 < len(vals) && vals[i+1].order == v.order {
			continue
		}
		out = append(out, v)
	}
	return out
}

func appendSum(b array.Builder, vals []valueRef) error {
	switch bb := b.(type) {
	case *array.Int8Builder:
		bb.Append(sumOf[int8, *array.Int8](vals))
	case *array.Int16Builder:
		bb.Append(sumOf[int16, *array.Int16](vals))
	case *array.Int32Builder:
		bb.Append(sumOf[int32, *array.Int32](vals))
	case *array.Int64Builder:
		bb.Append(sumOf[int64, *array.Int64](vals))
	case *array.Float32Builder:
		bb.Append(sumOf[float32, *array.Float32](vals))
	case *array.Float64Builder:
		bb.Append(sumOf[float64, *array.Float64](vals))
	case *array.Decimal128Builder:
		var s decimal128.Num
		for _, v := range vals {
			s = s.Add(v.arr.(*array.Decimal128).Value(v.row))
		}
		bb.Append(s)
	default:
		return fmt.Errorf("cannot sum values of type %s", b.Type())
	}
	return nil
}

// sumOf adds the values (integers wrap on overflow, as LakeSoul's do).
func sumOf[T int8 | int16 | int32 | int64 | float32 | float64, A interface{ Value(int) T }](vals []valueRef) T {
	var s T
	for _, v := range vals {
		s += v.arr.(A).Value(v.row)
	}
	return s
}
