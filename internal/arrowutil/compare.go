// Package arrowutil holds the typed Arrow helpers the data plane shares:
// comparing values across arrays (sort and merge by primary key) and copying
// single values between arrays (merge output).
package arrowutil

import (
	"bytes"
	"cmp"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// CompareFunc compares value i of a with value j of b, two arrays of the same
// type. Nulls sort first. It returns <0, 0 or >0.
type CompareFunc func(a arrow.Array, i int, b arrow.Array, j int) int

// Comparer returns the CompareFunc for arrays of type dt.
func Comparer(dt arrow.DataType) (CompareFunc, error) {
	var f CompareFunc
	switch dt.ID() {
	case arrow.INT8:
		f = cmpOf[int8, *array.Int8]()
	case arrow.INT16:
		f = cmpOf[int16, *array.Int16]()
	case arrow.INT32:
		f = cmpOf[int32, *array.Int32]()
	case arrow.INT64:
		f = cmpOf[int64, *array.Int64]()
	case arrow.UINT8:
		f = cmpOf[uint8, *array.Uint8]()
	case arrow.UINT16:
		f = cmpOf[uint16, *array.Uint16]()
	case arrow.UINT32:
		f = cmpOf[uint32, *array.Uint32]()
	case arrow.UINT64:
		f = cmpOf[uint64, *array.Uint64]()
	case arrow.FLOAT32:
		f = cmpOf[float32, *array.Float32]()
	case arrow.FLOAT64:
		f = cmpOf[float64, *array.Float64]()
	case arrow.DATE32:
		f = cmpOf[arrow.Date32, *array.Date32]()
	case arrow.TIMESTAMP:
		f = cmpOf[arrow.Timestamp, *array.Timestamp]()
	case arrow.STRING:
		f = func(a arrow.Array, i int, b arrow.Array, j int) int {
			return cmp.Compare(a.(*array.String).Value(i), b.(*array.String).Value(j))
		}
	case arrow.BINARY:
		f = func(a arrow.Array, i int, b arrow.Array, j int) int {
			return bytes.Compare(a.(*array.Binary).Value(i), b.(*array.Binary).Value(j))
		}
	case arrow.BOOL:
		f = func(a arrow.Array, i int, b arrow.Array, j int) int {
			x, y := a.(*array.Boolean).Value(i), b.(*array.Boolean).Value(j)
			switch {
			case x == y:
				return 0
			case !x:
				return -1
			}
			return 1
		}
	case arrow.DECIMAL128:
		f = func(a arrow.Array, i int, b arrow.Array, j int) int {
			return a.(*array.Decimal128).Value(i).Cmp(b.(*array.Decimal128).Value(j))
		}
	default:
		return nil, fmt.Errorf("cannot compare values of type %s", dt)
	}
	return withNulls(f), nil
}

type valuer[T any] interface {
	arrow.Array
	Value(int) T
}

func cmpOf[T cmp.Ordered, A valuer[T]]() CompareFunc {
	return func(a arrow.Array, i int, b arrow.Array, j int) int {
		return cmp.Compare(a.(A).Value(i), b.(A).Value(j))
	}
}

func withNulls(f CompareFunc) CompareFunc {
	return func(a arrow.Array, i int, b arrow.Array, j int) int {
		an, bn := a.IsNull(i), b.IsNull(j)
		switch {
		case an && bn:
			return 0
		case an:
			return -1
		case bn:
			return 1
		}
		return f(a, i, b, j)
	}
}

// RowComparer compares rows of several key columns in order.
type RowComparer []CompareFunc

// NewRowComparer builds a comparer for key columns of the given types.
func NewRowComparer(types []arrow.DataType) (RowComparer, error) {
	rc := make(RowComparer, len(types))
	for i, t := range types {
		f, err := Comparer(t)
		if err != nil {
			return nil, err
		}
		rc[i] = f
	}
	return rc, nil
}

// Compare compares row i of key columns a with row j of key columns b.
func (rc RowComparer) Compare(a []arrow.Array, i int, b []arrow.Array, j int) int {
	for k, f := range rc {
		if c := f(a[k], i, b[k], j); c != 0 {
			return c
		}
	}
	return 0
}
