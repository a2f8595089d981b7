package reader

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestWidenDecimal: a decimal widens to more precision with no fewer
// digits on either side of the point, and keeps its values.
func TestWidenDecimal(t *testing.T) {
	d := func(p, s int32) arrow.DataType { return &arrow.Decimal128Type{Precision: p, Scale: s} }
	for _, c := range []struct {
		from, to arrow.DataType
		ok       bool
	}{
		{d(10, 2), d(14, 2), true}, {d(10, 2), d(12, 4), true}, {d(10, 2), d(10, 2), true},
		{d(10, 2), d(11, 3), true}, {d(10, 2), d(10, 3), false}, {d(10, 2), d(14, 1), false}, {d(10, 2), d(9, 2), false},
		{d(10, 2), arrow.PrimitiveTypes.Float64, false},
	} {
		if got := CanWiden(c.from, c.to); got != c.ok {
			t.Errorf("CanWiden(%s, %s) = %v, want %v", c.from, c.to, got, c.ok)
		}
	}
	b := array.NewDecimal128Builder(memory.DefaultAllocator, d(10, 2).(*arrow.Decimal128Type))
	n, _ := decimal128.FromString("-12345678.91", 10, 2)
	b.Append(n)
	b.AppendNull()
	arr := b.NewArray()
	defer arr.Release()
	w, err := widen(memory.DefaultAllocator, arr, d(12, 4))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Release()
	wd := w.(*array.Decimal128)
	if got := wd.Value(0).ToString(4) + " " + wd.DataType().String(); got != "-12345678.9100 decimal(12, 4)" || !wd.IsNull(1) {
		t.Fatalf("widened to %q (null: %v)", got, wd.IsNull(1))
	}
}
