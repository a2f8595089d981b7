package layout

import (
	"bytes"
	"errors"
	"math"
	"math/big"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestPartitions(t *testing.T) {
	tests := []struct {
		text       string
		rangeCols  []string
		pkCols     []string
		formatOnly bool
	}{
		{"date,region;id", []string{"date", "region"}, []string{"id"}, false},
		{";id", nil, []string{"id"}, false},
		{";a,b", nil, []string{"a", "b"}, false},
		{"date;", []string{"date"}, nil, false},
		{";", nil, nil, false},
	}
	for _, tt := range tests {
		if got := FormatPartitions(tt.rangeCols, tt.pkCols); got != tt.text {
			t.Errorf("FormatPartitions(%q, %q) = %q, want %q", tt.rangeCols, tt.pkCols, got, tt.text)
		}
		r, p, err := ParsePartitions(tt.text)
		if err != nil || !reflect.DeepEqual(r, tt.rangeCols) || !reflect.DeepEqual(p, tt.pkCols) {
			t.Errorf("ParsePartitions(%q) = %q, %q, %v", tt.text, r, p, err)
		}
	}
	// LakeSoul skips empty names.
	if r, p, err := ParsePartitions(",a,;b,"); err != nil || !reflect.DeepEqual(r, []string{"a"}) || !reflect.DeepEqual(p, []string{"b"}) {
		t.Errorf("lenient parse: %q %q %v", r, p, err)
	}
	for _, bad := range []string{"", "id", "a;b;c"} {
		if _, _, err := ParsePartitions(bad); err == nil {
			t.Errorf("ParsePartitions(%q): want error", bad)
		}
	}
}

func TestFormatValue(t *testing.T) {
	mem := memory.NewGoAllocator()
	build := func(b array.Builder, fill func()) arrow.Array {
		defer b.Release()
		fill()
		return b.NewArray()
	}
	strB := array.NewStringBuilder(mem)
	str := build(strB, func() {
		strB.AppendValues([]string{"abc", "", "a=b,c", "中文/x"}, nil)
		strB.AppendNull()
	})
	lstrB := array.NewLargeStringBuilder(mem)
	lstr := build(lstrB, func() { lstrB.AppendValues([]string{"", "x,y"}, nil) })
	binB := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
	bin := build(binB, func() { binB.AppendValues([][]byte{{0xde, 0xad, 0x0f}, {}}, nil); binB.AppendNull() })
	fsbB := array.NewFixedSizeBinaryBuilder(mem, &arrow.FixedSizeBinaryType{ByteWidth: 2})
	fsb := build(fsbB, func() { fsbB.Append([]byte{0xAB, 0x01}) })
	boolB := array.NewBooleanBuilder(mem)
	boolA := build(boolB, func() { boolB.AppendValues([]bool{true, false}, nil) })
	i8B := array.NewInt8Builder(mem)
	i8 := build(i8B, func() { i8B.AppendValues([]int8{-128, 5}, nil) })
	i64B := array.NewInt64Builder(mem)
	i64 := build(i64B, func() { i64B.AppendValues([]int64{math.MinInt64, 42}, nil); i64B.AppendNull() })
	u64B := array.NewUint64Builder(mem)
	u64 := build(u64B, func() { u64B.AppendValues([]uint64{math.MaxUint64}, nil) })
	f32B := array.NewFloat32Builder(mem)
	f32 := build(f32B, func() { f32B.AppendValues([]float32{0.1, 1, -2.5, 1e20}, nil) })
	f64B := array.NewFloat64Builder(mem)
	f64 := build(f64B, func() {
		f64B.AppendValues([]float64{0.1, 1, 1e21, 1e-7, math.Inf(1), math.Inf(-1), math.NaN(), negZero}, nil)
	})
	dB := array.NewDate32Builder(mem)
	d32 := build(dB, func() { dB.AppendValues([]arrow.Date32{0, 19737, -1, -719528, 2932897, -719529}, nil) })
	ts := func(unit arrow.TimeUnit, vals ...arrow.Timestamp) arrow.Array {
		b := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: unit, TimeZone: "Asia/Shanghai"})
		return build(b, func() { b.AppendValues(vals, nil) })
	}
	tsS := ts(arrow.Second, 0, 1705314645, -1)
	tsMs := ts(arrow.Millisecond, 1705314645123, -1, 5)
	tsUs := ts(arrow.Microsecond, 1705314645000001, -1)
	tsNs := ts(arrow.Nanosecond, 1705314645123456789, -1, math.MinInt64)
	// 10^38-1 (arrow-go's decimal128.MaxDecimal128 constant is not that value).
	max38 := decimal128.FromBigInt(new(big.Int).Sub(new(big.Int).Exp(big.NewInt(10), big.NewInt(38), nil), big.NewInt(1)))
	decB := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 38, Scale: 2})
	dec := build(decB, func() {
		decB.AppendValues([]decimal128.Num{decimal128.FromI64(12345), decimal128.FromI64(-7), max38}, nil)
	})

	tests := []struct {
		arr  arrow.Array
		i    int
		want string
	}{
		{str, 0, "abc"},
		{str, 1, EmptyStringValue},
		{str, 2, "a__L@KE$OUL_EQ__b__L@KE$OUL_COMMA__c"},
		{str, 3, "中文/x"},
		{str, 4, NullValue},
		{lstr, 0, EmptyStringValue},
		{lstr, 1, "x__L@KE$OUL_COMMA__y"},
		{bin, 0, "dead0f"},
		{bin, 1, ""},
		{bin, 2, NullValue},
		{fsb, 0, "ab01"},
		{boolA, 0, "true"},
		{boolA, 1, "false"},
		{i8, 0, "-128"},
		{i8, 1, "5"},
		{i64, 0, "-9223372036854775808"},
		{i64, 1, "42"},
		{i64, 2, NullValue},
		{u64, 0, "18446744073709551615"},
		{f32, 0, "0.1"},
		{f32, 1, "1"},
		{f32, 2, "-2.5"},
		{f32, 3, "100000000000000000000"},
		{f64, 0, "0.1"},
		{f64, 1, "1"},
		{f64, 2, "1000000000000000000000"},
		{f64, 3, "0.0000001"},
		{f64, 4, "inf"},
		{f64, 5, "-inf"},
		{f64, 6, "NaN"},
		{f64, 7, "-0"},
		{d32, 0, "1970-01-01"},
		{d32, 1, "2024-01-15"},
		{d32, 2, "1969-12-31"},
		{d32, 3, "0000-01-01"},
		{d32, 4, "+10000-01-01"},
		{d32, 5, "-0001-12-31"},
		{tsS, 0, "1970-01-01T00:00:00"},
		{tsS, 1, "2024-01-15T10:30:45"},
		{tsS, 2, "1969-12-31T23:59:59"},
		{tsMs, 0, "2024-01-15T10:30:45.123"},
		{tsMs, 1, "1969-12-31T23:59:59.999"},
		{tsMs, 2, "1970-01-01T00:00:00.005"},
		{tsUs, 0, "2024-01-15T10:30:45.000001"},
		{tsUs, 1, "1969-12-31T23:59:59.999999"},
		{tsNs, 0, "2024-01-15T10:30:45.123456789"},
		{tsNs, 1, "1969-12-31T23:59:59.999999999"},
		{tsNs, 2, "1677-09-21T00:12:43.145224192"},
		{dec, 0, "12345"},
		{dec, 1, "-7"},
		{dec, 2, "99999999999999999999999999999999999999"},
	}
	for _, tt := range tests {
		got, err := FormatValue(tt.arr, tt.i)
		if err != nil || got != tt.want {
			t.Errorf("FormatValue(%s[%d]) = %q, %v; want %q", tt.arr.DataType(), tt.i, got, err, tt.want)
			continue
		}
		// Round trip through ParseValue back to the array's value.
		v, err := ParseValue(got, tt.arr.DataType())
		if err != nil {
			t.Errorf("ParseValue(%q, %s): %v", got, tt.arr.DataType(), err)
			continue
		}
		if want := arrayValue(tt.arr, tt.i); !sameValue(v, want) {
			t.Errorf("round trip %s[%d]: %#v != %#v", tt.arr.DataType(), tt.i, v, want)
		}
	}

	if _, err := FormatValue(str, 5); err == nil {
		t.Error("out of range row: want error")
	}
	lb := array.NewListBuilder(mem, arrow.PrimitiveTypes.Int32)
	list := build(lb, func() { lb.AppendNull() })
	if _, err := FormatValue(list, 0); err == nil {
		t.Error("list (null): want error")
	}
	tsBig := ts(arrow.Second, math.MaxInt64)
	if _, err := FormatValue(tsBig, 0); err == nil {
		t.Error("timestamp beyond chrono range: want error")
	}
}

// arrayValue returns row i of arr typed as ParseValue returns it.
func arrayValue(arr arrow.Array, i int) any {
	if arr.IsNull(i) {
		return nil
	}
	switch a := arr.(type) {
	case *array.String:
		return a.Value(i)
	case *array.LargeString:
		return a.Value(i)
	case *array.Binary:
		return a.Value(i)
	case *array.FixedSizeBinary:
		return a.Value(i)
	case *array.Boolean:
		return a.Value(i)
	case *array.Int8:
		return a.Value(i)
	case *array.Int64:
		return a.Value(i)
	case *array.Uint64:
		return a.Value(i)
	case *array.Float32:
		return a.Value(i)
	case *array.Float64:
		return a.Value(i)
	case *array.Date32:
		return a.Value(i)
	case *array.Timestamp:
		return a.Value(i)
	case *array.Decimal128:
		return a.Value(i)
	}
	panic("arrayValue: unhandled " + arr.DataType().String())
}

func sameValue(got, want any) bool {
	switch w := want.(type) {
	case []byte:
		g, ok := got.([]byte)
		return ok && bytes.Equal(g, w)
	case float64:
		g, ok := got.(float64)
		return ok && (math.Float64bits(g) == math.Float64bits(w) || (math.IsNaN(g) && math.IsNaN(w)))
	}
	return reflect.DeepEqual(got, want)
}

func TestParseValue(t *testing.T) {
	dec := &arrow.Decimal128Type{Precision: 5, Scale: 1}
	ms := &arrow.TimestampType{Unit: arrow.Millisecond}
	ns := &arrow.TimestampType{Unit: arrow.Nanosecond}
	sec := &arrow.TimestampType{Unit: arrow.Second}
	tests := []struct {
		text string
		dt   arrow.DataType
		want any
	}{
		{NullValue, arrow.PrimitiveTypes.Int32, nil},
		{NullValue, arrow.BinaryTypes.String, nil},
		{NullValue, ms, nil},
		{EmptyStringValue, arrow.BinaryTypes.String, ""},
		{EmptyStringValue, arrow.BinaryTypes.LargeString, ""},
		{"a__L@KE$OUL_EQ__b__L@KE$OUL_COMMA__c", arrow.BinaryTypes.String, "a=b,c"},
		{"plain", arrow.BinaryTypes.String, "plain"},
		{"-128", arrow.PrimitiveTypes.Int8, int8(-128)},
		{"300", arrow.PrimitiveTypes.Int16, int16(300)},
		{"-5", arrow.PrimitiveTypes.Int32, int32(-5)},
		{"9223372036854775807", arrow.PrimitiveTypes.Int64, int64(math.MaxInt64)},
		{"255", arrow.PrimitiveTypes.Uint8, uint8(255)},
		{"65535", arrow.PrimitiveTypes.Uint16, uint16(65535)},
		{"7", arrow.PrimitiveTypes.Uint32, uint32(7)},
		{"18446744073709551615", arrow.PrimitiveTypes.Uint64, uint64(math.MaxUint64)},
		{"0.1", arrow.PrimitiveTypes.Float32, float32(0.1)},
		{"1e3", arrow.PrimitiveTypes.Float64, 1000.0},
		{"-inf", arrow.PrimitiveTypes.Float64, math.Inf(-1)},
		{"true", arrow.FixedWidthTypes.Boolean, true},
		{"false", arrow.FixedWidthTypes.Boolean, false},
		{"DEADbeef", arrow.BinaryTypes.Binary, []byte{0xde, 0xad, 0xbe, 0xef}},
		{"", arrow.BinaryTypes.LargeBinary, []byte{}},
		{"2024-01-15", arrow.FixedWidthTypes.Date32, arrow.Date32(19737)},
		{"2024-1-5", arrow.FixedWidthTypes.Date32, arrow.Date32(19727)},
		{"1969-12-31", arrow.FixedWidthTypes.Date32, arrow.Date32(-1)},
		{"2000-02-29", arrow.FixedWidthTypes.Date32, arrow.Date32(11016)},
		{"2024-01-15T10:30:45.123", ms, arrow.Timestamp(1705314645123)},
		{"2024-01-15 10:30:45.123000000", ms, arrow.Timestamp(1705314645123)}, // Flink format
		{"2024-01-15T10:30:45", ms, arrow.Timestamp(1705314645000)},
		{"2024-01-15T10:30:45.1239", ms, arrow.Timestamp(1705314645123)}, // extra digits truncated
		{"1705314645123", ms, arrow.Timestamp(1705314645123)},            // raw integer
		{"1969-12-31T23:59:59.999999999", ns, arrow.Timestamp(-1)},
		{"2024-01-15T10:30:45", sec, arrow.Timestamp(1705314645)},
		{"12345", dec, decimal128.FromI64(12345)},
		{"-99999", dec, decimal128.FromI64(-99999)},
		{"0", dec, decimal128.Num{}},
	}
	for _, tt := range tests {
		got, err := ParseValue(tt.text, tt.dt)
		if err != nil {
			t.Errorf("ParseValue(%q, %s): %v", tt.text, tt.dt, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseValue(%q, %s) = %#v, want %#v", tt.text, tt.dt, got, tt.want)
		}
	}

	bad := []struct {
		text string
		dt   arrow.DataType
	}{
		{"128", arrow.PrimitiveTypes.Int8},
		{"-1", arrow.PrimitiveTypes.Uint32},
		{"x", arrow.PrimitiveTypes.Int64},
		{"", arrow.PrimitiveTypes.Int64},
		{EmptyStringValue, arrow.PrimitiveTypes.Int64},
		{"1.5.2", arrow.PrimitiveTypes.Float64},
		{"maybe", arrow.FixedWidthTypes.Boolean},
		{"abc", arrow.BinaryTypes.Binary},
		{"ab", &arrow.FixedSizeBinaryType{ByteWidth: 2}},
		{"2024-02-30", arrow.FixedWidthTypes.Date32},
		{"2023-02-29", arrow.FixedWidthTypes.Date32},
		{"2024-13-01", arrow.FixedWidthTypes.Date32},
		{"2024-01-15T00:00:00", arrow.FixedWidthTypes.Date32},
		{"2024/01/15", arrow.FixedWidthTypes.Date32},
		{"2024-01-15T24:00:00", ms},
		{"2024-01-15T10:30", ms},
		{"2024-01-15T10:30:45.", ms},
		{"2024-01-15T10:30:45.1234567891", ns},
		{"2024-01-15X10:30:45", ms},
		{"2300-01-01T00:00:00", ns}, // beyond int64 nanoseconds
		{"123456", dec},             // exceeds precision 5
		{"1.5", dec},
		{"340282366920938463463374607431768211456", &arrow.Decimal128Type{Precision: 38}},
	}
	for _, tt := range bad {
		if got, err := ParseValue(tt.text, tt.dt); err == nil {
			t.Errorf("ParseValue(%q, %s) = %#v, want error", tt.text, tt.dt, got)
		}
	}
	if _, err := ParseValue("1", arrow.ListOf(arrow.PrimitiveTypes.Int32)); !errors.Is(err, ErrUnsupportedType) {
		t.Errorf("list: got %v, want ErrUnsupportedType", err)
	}
	if got, err := ParseValue("2", &arrow.FixedSizeBinaryType{ByteWidth: 1}); err == nil {
		t.Errorf("odd hex: got %#v", got)
	}
}

func TestDateConversionsRoundTrip(t *testing.T) {
	for days := int64(-800000); days <= 3000000; days += 997 {
		y, m, d := civilFromDays(days)
		if got := daysFromCivil(y, m, d); got != days {
			t.Fatalf("day %d → %d-%d-%d → %d", days, y, m, d, got)
		}
		txt := formatDate(days)
		back, rest, err := parseDate(txt)
		if err != nil || rest != "" || back != days {
			t.Fatalf("day %d → %q → %d %q %v", days, txt, back, rest, err)
		}
	}
}

func TestDesc(t *testing.T) {
	tests := []struct {
		cols, values []string
		desc, dir    string
	}{
		{nil, nil, NonPartitioned, ""},
		{[]string{"date"}, []string{"2024-01-15"}, "date=2024-01-15", "date=2024-01-15"},
		{[]string{"date", "region"}, []string{"2024-01-15", "us"}, "date=2024-01-15,region=us", "date=2024-01-15/region=us"},
		{[]string{"a", "b"}, []string{NullValue, EmptyStringValue}, "a=__L@KE$OUL_NULL__,b=__L@KE$OUL_EMPTY_STRING__",
			"a=__L@KE$OUL_NULL__/b=__L@KE$OUL_EMPTY_STRING__"},
		{[]string{"s"}, []string{"x__L@KE$OUL_COMMA__y"}, "s=x__L@KE$OUL_COMMA__y", "s=x__L@KE$OUL_COMMA__y"},
		// Directories escape as LakeSoul's Spark writer does; the desc does not.
		{[]string{"ts"}, []string{"2026-01-01T10:00:00"}, "ts=2026-01-01T10:00:00", "ts=2026-01-01T10%3A00%3A00"},
		{[]string{"p"}, []string{"/../../x"}, "p=/../../x", "p=%2F..%2F..%2Fx"},
	}
	for _, tt := range tests {
		desc := FormatDesc(tt.cols, tt.values)
		if desc != tt.desc {
			t.Errorf("FormatDesc(%q, %q) = %q, want %q", tt.cols, tt.values, desc, tt.desc)
		}
		if dir, err := PartitionDir(desc); err != nil || dir != tt.dir {
			t.Errorf("PartitionDir(%q) = %q, %v, want %q", desc, dir, err, tt.dir)
		}
		kvs, err := ParseDesc(desc)
		if err != nil {
			t.Errorf("ParseDesc(%q): %v", desc, err)
			continue
		}
		if len(kvs) != len(tt.cols) {
			t.Errorf("ParseDesc(%q) = %v", desc, kvs)
			continue
		}
		for i, kv := range kvs {
			if kv.Key != tt.cols[i] || kv.Value != tt.values[i] {
				t.Errorf("ParseDesc(%q)[%d] = %v", desc, i, kv)
			}
		}
	}

	// Values containing '=' after the first (unescaped by the Rust writer) and
	// empty values are kept.
	kvs, err := ParseDesc("a=x=y,b=")
	if err != nil || !reflect.DeepEqual(kvs, []KV{{"a", "x=y"}, {"b", ""}}) {
		t.Errorf("lenient ParseDesc: %v %v", kvs, err)
	}
	for _, bad := range []string{"", "a", "=1", "a=1,", ",a=1", "a=1,,b=2", "a=1,b", "a=1,a=2"} {
		if kvs, err := ParseDesc(bad); err == nil {
			t.Errorf("ParseDesc(%q) = %v, want error", bad, kvs)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("FormatDesc with mismatched slices: want panic")
		}
	}()
	FormatDesc([]string{"a"}, nil)
}

// End to end: a row's range values → desc → parsed back to the same values.
func TestDescRoundTrip(t *testing.T) {
	mem := memory.NewGoAllocator()
	sb := array.NewStringBuilder(mem)
	defer sb.Release()
	sb.AppendValues([]string{"a=b,c", ""}, nil)
	sb.AppendNull()
	s := sb.NewArray()
	defer s.Release()
	db := array.NewDate32Builder(mem)
	defer db.Release()
	db.AppendValues([]arrow.Date32{19737, 0, 1}, nil)
	d := db.NewArray()
	defer d.Release()

	cols := []string{"region", "date"}
	for row := range 3 {
		vs := make([]string, 2)
		for i, a := range []arrow.Array{s, d} {
			v, err := FormatValue(a, row)
			if err != nil {
				t.Fatal(err)
			}
			vs[i] = v
		}
		kvs, err := ParseDesc(FormatDesc(cols, vs))
		if err != nil {
			t.Fatal(err)
		}
		gs, err := ParseValue(kvs[0].Value, s.DataType())
		if err != nil {
			t.Fatal(err)
		}
		gd, err := ParseValue(kvs[1].Value, d.DataType())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(gs, arrayValue(s, row)) || gd != arrow.Date32(d.(*array.Date32).Value(row)) {
			t.Errorf("row %d: got %#v %#v", row, gs, gd)
		}
	}
}
