package layout

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

var negZero = math.Copysign(0, -1)

// Known answers from LakeSoul's rust/lakesoul-io hash tests (as i32).
func TestHashKnownAnswers(t *testing.T) {
	tests := []struct {
		name string
		got  uint32
		want int32
	}{
		{"int32 1", HashInt32(1, HashSeed), -559580957},
		{"int32 2", HashInt32(2, HashSeed), 1765031574},
		{"int32 3", HashInt32(3, HashSeed), -1823081949},
		{"int32 4", HashInt32(4, HashSeed), -397064898},
		{"uint64 1", HashUint64(1, HashSeed), -1712319331},
		{"uint64 2", HashUint64(2, HashSeed), -797927272},
		{"uint64 3", HashUint64(3, HashSeed), 519220707},
		{"uint64 4", HashUint64(4, HashSeed), 1344313940},
		{"int64 1", HashInt64(1, HashSeed), -1712319331},
		{"f32 1", HashFloat32(1, HashSeed), -466301895},
		{"f32 2", HashFloat32(2, HashSeed), 1199227445},
		{"f32 3", HashFloat32(3, HashSeed), 1710391653},
		{"f32 4", HashFloat32(4, HashSeed), -1959694433},
		{"f64 1", HashFloat64(1, HashSeed), -460888942},
		{"f64 2", HashFloat64(2, HashSeed), -2030303457},
		{"f64 3", HashFloat64(3, HashSeed), 1075969934},
		{"f64 4", HashFloat64(4, HashSeed), 1290556682},
		{`"1"`, HashString("1", HashSeed), 1625004744},
		{`"2"`, HashString("2", HashSeed), 870267989},
		{`"3"`, HashString("3", HashSeed), -1756013582},
		{`"4"`, HashString("4", HashSeed), -2142269034},
		{`bytes "1"`, HashBytes([]byte("1"), HashSeed), 1625004744},
		{`"321" seeded "321"`, HashString("321", HashString("321", HashSeed)), -218318595},
		{`"12" seeded "1"`, HashString("12", HashString("1", HashSeed)), 891492135},
		{`"22" seeded "2"`, HashString("22", HashString("2", HashSeed)), 1475972200},
		{"f32 0", HashFloat32(0, HashSeed), 933211791},
		{"f32 -0", HashFloat32(float32(negZero), HashSeed), 933211791},
		{"f64 0", HashFloat64(0, HashSeed), -1670924195},
		{"f64 -0", HashFloat64(negZero, HashSeed), -1670924195},
		{"uint8 49", HashUint32(uint32(uint8(49)), HashSeed), 766678906},
		{"int32 49", HashInt32(49, HashSeed), 766678906},
		{"false", HashBool(false, HashSeed), 933211791},
		{"int32 1065353216 = f32 1 bits", HashInt32(1065353216, HashSeed), -466301895},
	}
	for _, tt := range tests {
		if int32(tt.got) != tt.want {
			t.Errorf("%s: got %d, want %d", tt.name, int32(tt.got), tt.want)
		}
	}
}

func TestHashEquivalences(t *testing.T) {
	tests := []struct {
		name string
		a, b uint32
	}{
		{"true is word 1", HashBool(true, HashSeed), HashInt32(1, HashSeed)},
		{"int8 -1 sign-extends", HashInt32(int32(int8(-1)), HashSeed), HashUint32(0xffffffff, HashSeed)},
		{"decimal 1 is 16 LE bytes", HashDecimal128(decimal128.FromI64(1), HashSeed),
			HashBytes([]byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, HashSeed)},
		{"decimal -2 is 16 LE bytes", HashDecimal128(decimal128.FromI64(-2), HashSeed),
			HashBytes([]byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, HashSeed)},
		{"int64 is 8 LE bytes", HashInt64(0x0102030405060708, 7),
			HashBytes([]byte{8, 7, 6, 5, 4, 3, 2, 1}, 7)},
		{"int32 is 4 LE bytes", HashInt32(0x01020304, 7), HashBytes([]byte{4, 3, 2, 1}, 7)},
		{"f64 bits", HashFloat64(1.5, 9), HashUint64(math.Float64bits(1.5), 9)},
		{"string == bytes (tail 3)", HashString("abcdefg", 5), HashBytes([]byte("abcdefg"), 5)},
		{"string == bytes (tail 0)", HashString("abcdefgh", 5), HashBytes([]byte("abcdefgh"), 5)},
		{"empty string", HashString("", 5), HashBytes(nil, 5)},
	}
	for _, tt := range tests {
		if tt.a != tt.b {
			t.Errorf("%s: %d != %d", tt.name, tt.a, tt.b)
		}
	}
	// The tail is byte-wise (Spark), not the standard Murmur3 tail: "1" is
	// not the uint8 word 49.
	if HashString("1", HashSeed) == HashUint32(49, HashSeed) {
		t.Error("byte tail hashed like a word")
	}
	if HashBytes(nil, HashSeed) == HashSeed {
		t.Error("empty input must still be finalised")
	}
}

func TestBucketOf(t *testing.T) {
	tests := []struct {
		hash    uint32
		buckets int
		want    int
	}{
		{HashInt32(1, HashSeed), 4, 3},
		{HashString("1", HashSeed), 4, 0},
		{0xffffffff, 3, 0}, // unsigned modulo: 4294967295 % 3 == 0 (signed pmod(-1,3) would be 2)
		{0xfffffffe, 10, 4},
		{12345, 1, 0},
		{12345, 0, 0},
		{12345, -1, 0},
		{7, 1 << 40, 7},
	}
	for _, tt := range tests {
		if got := BucketOf(tt.hash, tt.buckets); got != tt.want {
			t.Errorf("BucketOf(%d, %d) = %d, want %d", tt.hash, tt.buckets, got, tt.want)
		}
	}
}

// col is a test column: an Arrow array plus the per-row scalar hash it must
// agree with (nil entries are nulls).
type col struct {
	arr  arrow.Array
	hash []func(seed uint32) uint32
}

func buildCols(t testing.TB) []col {
	mem := memory.NewGoAllocator()
	var cols []col
	add := func(b array.Builder, hs []func(uint32) uint32) {
		cols = append(cols, col{b.NewArray(), hs})
		b.Release()
	}
	{
		b := array.NewBooleanBuilder(mem)
		b.AppendValues([]bool{true, false, false}, []bool{true, false, true})
		add(b, []func(uint32) uint32{
			func(s uint32) uint32 { return HashBool(true, s) }, nil,
			func(s uint32) uint32 { return HashBool(false, s) }})
	}
	{
		b := array.NewInt8Builder(mem)
		b.AppendValues([]int8{-1, 0, 127}, nil)
		add(b, []func(uint32) uint32{
			func(s uint32) uint32 { return HashInt32(-1, s) },
			func(s uint32) uint32 { return HashInt32(0, s) },
			func(s uint32) uint32 { return HashInt32(127, s) }})
	}
	{
		b := array.NewInt16Builder(mem)
		b.AppendValues([]int16{-300, 0, 5}, []bool{true, true, false})
		add(b, []func(uint32) uint32{
			func(s uint32) uint32 { return HashInt32(-300, s) },
			func(s uint32) uint32 { return HashInt32(0, s) }, nil})
	}
	{
		b := array.NewInt32Builder(mem)
		b.AppendValues([]int32{1, 2, math.MinInt32}, nil)
		add(b, []func(uint32) uint32{
			func(s uint32) uint32 { return HashInt32(1, s) },
			func(s uint32) uint32 { return HashInt32(2, s) },
			func(s uint32) uint32 { return HashInt32(math.MinInt32, s) }})
	}
	{
		b := array.NewInt64Builder(mem)
		b.AppendValues([]int64{-1, 1 << 40, 3}, nil)
		add(b, []func(uint32) uint32{
			func(s uint32) uint32 { return HashInt64(-1, s) },
			func(s uint32) uint32 { return HashInt64(1<<40, s) },
			func(s uint32) uint32 { return HashInt64(3, s) }})
	}
	{
		b := array.NewUint8Builder(mem)
		b.AppendValues([]uint8{49, 255, 0}, nil)
		add(b, []func(uint32) uint32{
			func(s uint32) uint32 { return HashUint32(49, s) },
			func(s uint32) uint32 { return HashUint32(255, s) },
			func(s uint32) uint32 { return HashUint32(0, s) }})
	}
	{
		b := array.NewUint16Builder(mem)
		b.AppendValues([]uint16{65535, 1, 2}, nil)
		add(b, []func(uint32) uint32{
			func(s uint32) uint32 { return HashUint32(65535, s) },
			func(s uint32) uint32 { return HashUint32(1, s) },
			func(s uint32) uint32 { return HashUint32(2, s) }})
	}
	{
		b := array.NewUint32Builder(mem)
		b.AppendValues([]uint32{math.MaxUint32, 1, 2}, nil)
		add(b, []func(uint32) uint32{
			func(s uint32) uint32 { return HashUint32(math.MaxUint32, s) },
			func(s uint32) uint32 { return HashUint32(1, s) },
			func(s uint32) uint32 { return HashUint32(2, s) }})
	}
	{
		b := array.NewUint64Builder(mem)
		b.AppendValues([]uint64{math.MaxUint64, 1, 2}, nil)
		add(b, []func(uint32) uint32{
			func(s uint32) uint32 { return HashUint64(math.MaxUint64, s) },
			func(s uint32) uint32 { return HashUint64(1, s) },
			func(s uint32) uint32 { return HashUint64(2, s) }})
	}
	{
		b := array.NewFloat32Builder(mem)
		b.AppendValues([]float32{1, float32(negZero), 2.5}, nil)
		add(b, []func(uint32) uint32{
			func(s uint32) uint32 { return HashFloat32(1, s) },
			func(s uint32) uint32 { return HashFloat32(0, s) },
			func(s uint32) uint32 { return HashFloat32(2.5, s) }})
	}
	{
		b := array.NewFloat64Builder(mem)
		b.AppendValues([]float64{negZero, 1, math.Inf(-1)}, nil)
		add(b, []func(uint32) uint32{
			func(s uint32) uint32 { return HashFloat64(0, s) },
			func(s uint32) uint32 { return HashFloat64(1, s) },
			func(s uint32) uint32 { return HashFloat64(math.Inf(-1), s) }})
	}
	strs := []string{"1", "", "hello, world!"}
	strHashes := []func(uint32) uint32{
		func(s uint32) uint32 { return HashString(strs[0], s) },
		func(s uint32) uint32 { return HashString(strs[1], s) },
		func(s uint32) uint32 { return HashString(strs[2], s) }}
	{
		b := array.NewStringBuilder(mem)
		b.AppendValues(strs, nil)
		add(b, strHashes)
	}
	{
		b := array.NewLargeStringBuilder(mem)
		b.AppendValues(strs, nil)
		add(b, strHashes)
	}
	{
		b := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
		b.AppendStringValues(strs, []bool{true, false, true})
		add(b, []func(uint32) uint32{strHashes[0], nil, strHashes[2]})
	}
	{
		b := array.NewBinaryBuilder(mem, arrow.BinaryTypes.LargeBinary)
		b.AppendStringValues(strs, nil)
		add(b, strHashes)
	}
	{
		b := array.NewFixedSizeBinaryBuilder(mem, &arrow.FixedSizeBinaryType{ByteWidth: 3})
		b.AppendValues([][]byte{[]byte("abc"), []byte("xyz"), []byte("123")}, nil)
		add(b, []func(uint32) uint32{
			func(s uint32) uint32 { return HashString("abc", s) },
			func(s uint32) uint32 { return HashString("xyz", s) },
			func(s uint32) uint32 { return HashString("123", s) }})
	}
	{
		b := array.NewDate32Builder(mem)
		b.AppendValues([]arrow.Date32{19000, -1, 0}, nil)
		add(b, []func(uint32) uint32{
			func(s uint32) uint32 { return HashInt32(19000, s) },
			func(s uint32) uint32 { return HashInt32(-1, s) },
			func(s uint32) uint32 { return HashInt32(0, s) }})
	}
	{
		b := array.NewDate64Builder(mem)
		b.AppendValues([]arrow.Date64{86400000, -1, 0}, nil)
		add(b, []func(uint32) uint32{
			func(s uint32) uint32 { return HashInt64(86400000, s) },
			func(s uint32) uint32 { return HashInt64(-1, s) },
			func(s uint32) uint32 { return HashInt64(0, s) }})
	}
	{
		b := array.NewTime32Builder(mem, arrow.FixedWidthTypes.Time32ms.(*arrow.Time32Type))
		b.AppendValues([]arrow.Time32{1000, 2, 3}, nil)
		add(b, []func(uint32) uint32{
			func(s uint32) uint32 { return HashInt32(1000, s) },
			func(s uint32) uint32 { return HashInt32(2, s) },
			func(s uint32) uint32 { return HashInt32(3, s) }})
	}
	{
		b := array.NewTime64Builder(mem, arrow.FixedWidthTypes.Time64us.(*arrow.Time64Type))
		b.AppendValues([]arrow.Time64{1000, 2, 3}, nil)
		add(b, []func(uint32) uint32{
			func(s uint32) uint32 { return HashInt64(1000, s) },
			func(s uint32) uint32 { return HashInt64(2, s) },
			func(s uint32) uint32 { return HashInt64(3, s) }})
	}
	for _, unit := range []arrow.TimeUnit{arrow.Second, arrow.Millisecond, arrow.Microsecond, arrow.Nanosecond} {
		b := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: unit, TimeZone: "UTC"})
		b.AppendValues([]arrow.Timestamp{1700000000, -5, 0}, []bool{false, true, true})
		add(b, []func(uint32) uint32{nil,
			func(s uint32) uint32 { return HashInt64(-5, s) },
			func(s uint32) uint32 { return HashInt64(0, s) }})
	}
	{
		b := array.NewDurationBuilder(mem, &arrow.DurationType{Unit: arrow.Second})
		b.AppendValues([]arrow.Duration{7, 8, 9}, nil)
		add(b, []func(uint32) uint32{
			func(s uint32) uint32 { return HashInt64(7, s) },
			func(s uint32) uint32 { return HashInt64(8, s) },
			func(s uint32) uint32 { return HashInt64(9, s) }})
	}
	{
		b := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 20, Scale: 3})
		d := []decimal128.Num{decimal128.FromI64(1), decimal128.FromI64(-12345), decimal128.New(1, 0)}
		b.AppendValues(d, nil)
		add(b, []func(uint32) uint32{
			func(s uint32) uint32 { return HashDecimal128(d[0], s) },
			func(s uint32) uint32 { return HashDecimal128(d[1], s) },
			func(s uint32) uint32 { return HashDecimal128(d[2], s) }})
	}
	return cols
}

// expected computes the composite hash row by row from scalar hashes.
func expected(cols []col, rows int) []uint32 {
	want := make([]uint32, rows)
	for r := range want {
		var h uint32
		for ci, c := range cols {
			f := c.hash[r]
			switch {
			case f == nil && ci == 0:
				h = 0
			case f == nil:
			case ci == 0:
				h = f(HashSeed)
			default:
				h = f(h)
			}
		}
		want[r] = h
	}
	return want
}

func TestHashRowsSingleColumns(t *testing.T) {
	for _, c := range buildCols(t) {
		t.Run(c.arr.DataType().String(), func(t *testing.T) {
			out := []uint32{9, 9, 9}
			if err := HashRows([]arrow.Array{c.arr}, out); err != nil {
				t.Fatal(err)
			}
			want := expected([]col{c}, 3)
			for r := range out {
				if out[r] != want[r] {
					t.Errorf("row %d: got %d, want %d", r, out[r], want[r])
				}
			}
		})
	}
}

func TestHashRowsComposite(t *testing.T) {
	cols := buildCols(t)
	// Every ordered pair and a few longer chains, so each type is exercised as
	// first column (seed 42, null → 0) and as later column (running seed,
	// null → unchanged).
	var combos [][]col
	for _, a := range cols {
		for _, b := range cols {
			combos = append(combos, []col{a, b})
		}
	}
	combos = append(combos, cols, cols[len(cols)/2:])
	for _, combo := range combos {
		arrs := make([]arrow.Array, len(combo))
		names := make([]string, len(combo))
		for i, c := range combo {
			arrs[i] = c.arr
			names[i] = c.arr.DataType().String()
		}
		out := make([]uint32, 3)
		if err := HashRows(arrs, out); err != nil {
			t.Fatal(err)
		}
		want := expected(combo, 3)
		for r := range out {
			if out[r] != want[r] {
				t.Errorf("%s row %d: got %d, want %d", strings.Join(names, ","), r, out[r], want[r])
			}
		}
	}
}

func TestHashRowsNullSemantics(t *testing.T) {
	mem := memory.NewGoAllocator()
	sb := array.NewStringBuilder(mem)
	defer sb.Release()
	sb.AppendValues([]string{"1", "", "1", ""}, []bool{true, false, true, false})
	a := sb.NewArray()
	defer a.Release()
	sb.AppendValues([]string{"2", "2", "", ""}, []bool{true, true, false, false})
	b := sb.NewArray()
	defer b.Release()

	out := make([]uint32, 4)
	if err := HashRows([]arrow.Array{a, b}, out); err != nil {
		t.Fatal(err)
	}
	want := []uint32{
		HashString("2", HashString("1", HashSeed)), // both present
		HashString("2", 0),                         // first null → running hash 0
		HashString("1", HashSeed),                  // later null leaves hash unchanged
		0,                                          // all null
	}
	for r := range want {
		if out[r] != want[r] {
			t.Errorf("row %d: got %d, want %d", r, out[r], want[r])
		}
	}
	// Composite KAT: a="1", b="12" (LakeSoul's "12" seeded with hash("1")).
	sb.AppendValues([]string{"12"}, nil)
	c := sb.NewArray()
	defer c.Release()
	one := array.NewSlice(a, 0, 1)
	defer one.Release()
	out = out[:1]
	if err := HashRows([]arrow.Array{one, c}, out); err != nil {
		t.Fatal(err)
	}
	if int32(out[0]) != 891492135 {
		t.Errorf("composite (\"1\",\"12\") = %d, want 891492135", int32(out[0]))
	}
}

func TestHashRowsSlicedArrays(t *testing.T) {
	mem := memory.NewGoAllocator()
	const n = 37
	ib := array.NewInt64Builder(mem)
	sb := array.NewStringBuilder(mem)
	bb := array.NewBooleanBuilder(mem)
	defer ib.Release()
	defer sb.Release()
	defer bb.Release()
	for i := range n {
		if i%5 == 3 {
			ib.AppendNull()
			sb.AppendNull()
			bb.AppendNull()
			continue
		}
		ib.Append(int64(i * 1000))
		sb.Append(strings.Repeat("x", i))
		bb.Append(i%2 == 0)
	}
	full := []arrow.Array{ib.NewArray(), sb.NewArray(), bb.NewArray()}
	fullOut := make([]uint32, n)
	if err := HashRows(full, fullOut); err != nil {
		t.Fatal(err)
	}
	for _, r := range [][2]int{{0, n}, {1, n}, {3, 20}, {9, 10}, {5, 5}, {11, 36}} {
		sl := make([]arrow.Array, len(full))
		for i, a := range full {
			sl[i] = array.NewSlice(a, int64(r[0]), int64(r[1]))
		}
		out := make([]uint32, r[1]-r[0])
		if err := HashRows(sl, out); err != nil {
			t.Fatal(err)
		}
		for i := range out {
			if out[i] != fullOut[r[0]+i] {
				t.Errorf("slice %v row %d: got %d, want %d", r, i, out[i], fullOut[r[0]+i])
			}
		}
		for _, a := range sl {
			a.Release()
		}
	}
	for _, a := range full {
		a.Release()
	}
}

func TestHashRowsErrors(t *testing.T) {
	mem := memory.NewGoAllocator()
	ib := array.NewInt32Builder(mem)
	defer ib.Release()
	ib.AppendValues([]int32{1, 2}, nil)
	ints := ib.NewArray()
	defer ints.Release()
	lb := array.NewListBuilder(mem, arrow.PrimitiveTypes.Int32)
	defer lb.Release()
	lb.AppendNull()
	lb.AppendNull()
	list := lb.NewArray()
	defer list.Release()
	nb := array.NewNullBuilder(mem)
	defer nb.Release()
	nb.AppendNull()
	nb.AppendNull()
	nulls := nb.NewArray()
	defer nulls.Release()

	tests := []struct {
		name string
		cols []arrow.Array
		rows int
	}{
		{"list", []arrow.Array{ints, list}, 2},
		{"null type", []arrow.Array{nulls}, 2},
		{"short out", []arrow.Array{ints}, 1},
		{"long out", []arrow.Array{ints}, 3},
	}
	for _, tt := range tests {
		out := make([]uint32, tt.rows)
		for i := range out {
			out[i] = 77
		}
		if err := HashRows(tt.cols, out); err == nil {
			t.Errorf("%s: want error", tt.name)
		}
		for i := range out {
			if out[i] != 77 {
				t.Errorf("%s: out written on error", tt.name)
			}
		}
	}
	// No columns: every row hashes to 0, as LakeSoul's zeroed buffer.
	out := []uint32{1, 2}
	if err := HashRows(nil, out); err != nil || out[0] != 0 || out[1] != 0 {
		t.Errorf("no columns: %v %v", out, err)
	}
}

// The supported-type list and the hasher switch must agree.
func TestHashableTypesHaveHashers(t *testing.T) {
	seen := map[arrow.Type]bool{}
	for _, c := range buildCols(t) {
		seen[c.arr.DataType().ID()] = true
	}
	for id := arrow.NULL; id <= arrow.DECIMAL64+5; id++ {
		if hashableType(&fakeType{id}) != seen[id] {
			t.Errorf("type %s: hashable=%v but tested=%v", id, hashableType(&fakeType{id}), seen[id])
		}
	}
}

type fakeType struct{ id arrow.Type }

func (f *fakeType) ID() arrow.Type               { return f.id }
func (f *fakeType) Name() string                 { return f.id.String() }
func (f *fakeType) Fingerprint() string          { return f.id.String() }
func (f *fakeType) String() string               { return f.id.String() }
func (f *fakeType) Layout() arrow.DataTypeLayout { return arrow.DataTypeLayout{} }

func TestHashRowsNoAllocs(t *testing.T) {
	arrs, out := benchColumns(1024)
	allocs := testing.AllocsPerRun(20, func() {
		if err := HashRows(arrs, out); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("HashRows allocates %v times per call", allocs)
	}
}

func benchColumns(n int) ([]arrow.Array, []uint32) {
	mem := memory.NewGoAllocator()
	ib := array.NewInt64Builder(mem)
	sb := array.NewStringBuilder(mem)
	tb := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Microsecond})
	for i := range n {
		ib.Append(int64(i))
		if i%100 == 7 {
			sb.AppendNull()
		} else {
			sb.Append(fmt.Sprintf("user-%08d", i))
		}
		tb.Append(arrow.Timestamp(1_700_000_000_000_000 + i))
	}
	return []arrow.Array{ib.NewArray(), sb.NewArray(), tb.NewArray()}, make([]uint32, n)
}

func BenchmarkHashRows(b *testing.B) {
	const n = 8192
	arrs, out := benchColumns(n)
	b.SetBytes(n * (8 + 13 + 8))
	b.ReportAllocs()
	for b.Loop() {
		if err := HashRows(arrs, out); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
}

func BenchmarkHashRowsInt64(b *testing.B) {
	const n = 8192
	arrs, out := benchColumns(n)
	b.ReportAllocs()
	for b.Loop() {
		if err := HashRows(arrs[:1], out); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
}
