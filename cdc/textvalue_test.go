package cdc

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakesoul-go/lakesoul/schema"
)

// TestAppendText: PostgreSQL's text forms parse into the lake types the
// mapping gives, exactly; malformed values are errors.
func TestAppendText(t *testing.T) {
	cases := []struct {
		col  Column
		in   string
		want string // ValueStr of the appended value
	}{
		{Column{TypeOID: schema.OIDInt8}, "-9223372036854775808", "-9223372036854775808"},
		{Column{TypeOID: schema.OIDInt4}, "2147483647", "2147483647"},
		{Column{TypeOID: schema.OIDInt2}, "-32768", "-32768"},
		{Column{TypeOID: schema.OIDFloat8}, "1.2345678901234567", "1.2345678901234567"},
		{Column{TypeOID: schema.OIDFloat8}, "-Infinity", "-Inf"},
		{Column{TypeOID: schema.OIDFloat4}, "NaN", "NaN"},
		{Column{TypeOID: schema.OIDBool}, "t", "true"},
		{Column{TypeOID: schema.OIDVarchar, TypeMod: 24}, "héllo", "héllo"},
		{Column{TypeOID: schema.OIDBytea}, `\x00ff10`, "AP8Q"},
		{Column{TypeOID: schema.OIDDate}, "2026-03-04", "2026-03-04"},
		{Column{TypeOID: schema.OIDDate}, "10000-01-01", "10000-01-01"},
		{Column{TypeOID: schema.OIDTimestamp}, "2026-03-04 05:06:07.123456", "2026-03-04T05:06:07.123456"},
		{Column{TypeOID: schema.OIDTimestamp}, "1969-12-31 23:59:59.5", "1969-12-31T23:59:59.5"},
		{Column{TypeOID: schema.OIDTimestamptz}, "2026-03-04 05:06:07+05:30", "2026-03-03T23:36:07Z"},
		{Column{TypeOID: schema.OIDTimestamptz}, "2026-03-04 05:06:07.5-08", "2026-03-04T13:06:07.5Z"},
		{Column{TypeOID: schema.OIDNumeric, TypeMod: (12<<16 | 3) + 4}, "-123456789.125", "-123456789.125"},
		{Column{TypeOID: schema.OIDNumeric, TypeMod: -1}, "1e1000", "1e1000"}, // unconstrained: text
		{Column{TypeOID: 1186}, "1 day 02:03:04", "1 day 02:03:04"},           // interval: text
		{Column{TypeOID: 1007}, "{1,2,NULL}", "{1,2,NULL}"},                   // int4[]: text
		{Column{TypeOID: schema.OIDUUID}, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
	}
	for _, c := range cases {
		f := lakeField(c.col)
		b := array.NewBuilder(memory.DefaultAllocator, f.Type)
		if err := appendText(b, f.Type, []byte(c.in)); err != nil {
			t.Errorf("%s %q: %v", f.Type, c.in, err)
			continue
		}
		arr := b.NewArray()
		if got := arr.ValueStr(0); got != c.want {
			t.Errorf("%s %q: got %q, want %q", f.Type, c.in, got, c.want)
		}
		arr.Release()
		b.Release()
	}
	for _, bad := range []struct {
		oid uint32
		in  string
	}{{schema.OIDInt4, "2147483648"}, {schema.OIDDate, "infinity"}, {schema.OIDDate, "0044-03-15 BC"},
		{schema.OIDTimestamp, "2026-03-04"}, {schema.OIDBool, "maybe"}, {schema.OIDBytea, "abc"}} {
		f := lakeField(Column{TypeOID: bad.oid})
		b := array.NewBuilder(memory.DefaultAllocator, f.Type)
		if err := appendText(b, f.Type, []byte(bad.in)); err == nil {
			t.Errorf("%s %q: no error", f.Type, bad.in)
		}
		b.Release()
	}
}

// TestCopyBinaryWriter: COPY's binary format split across writes, NULLs,
// binary and text columns, the trailer.
func TestCopyBinaryWriter(t *testing.T) {
	cols := []Column{{Name: "id", TypeOID: schema.OIDInt8}, {Name: "s", TypeOID: schema.OIDText}, {Name: "n", TypeOID: schema.OIDNumeric}}
	var rows []string
	w := &copyBinaryWriter{cols: cols, row: func(vals []value) error {
		var cells []string
		for _, v := range vals {
			cells = append(cells, fmt.Sprintf("%c:%x", v.kind, v.data))
		}
		rows = append(rows, strings.Join(cells, "|"))
		return nil
	}}
	var data []byte
	data = append(data, copySignature...)
	data = binary.BigEndian.AppendUint32(data, 0)
	data = binary.BigEndian.AppendUint32(data, 0)
	field := func(b []byte) {
		if b == nil {
			data = binary.BigEndian.AppendUint32(data, 0xffffffff)
			return
		}
		data = binary.BigEndian.AppendUint32(data, uint32(len(b)))
		data = append(data, b...)
	}
	data = binary.BigEndian.AppendUint16(data, 3)
	field(binary.BigEndian.AppendUint64(nil, 7))
	field([]byte("a\tb"))
	field([]byte("1.50"))
	data = binary.BigEndian.AppendUint16(data, 3)
	field(binary.BigEndian.AppendUint64(nil, 8))
	field(nil)
	field([]byte{})
	data = binary.BigEndian.AppendUint16(data, 0xffff)
	for i := 0; i < len(data); i += 7 { // arbitrary splits
		if _, err := w.Write(data[i:min(i+7, len(data))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.finish(); err != nil {
		t.Fatal(err)
	}
	want := []string{"b:0000000000000007|b:610962|t:312e3530", "b:0000000000000008|n:|t:"}
	if strings.Join(rows, ";") != strings.Join(want, ";") {
		t.Fatalf("rows %q, want %q", rows, want)
	}
	bad := &copyBinaryWriter{cols: cols, row: func([]value) error { return nil }}
	if _, err := bad.Write(append(append([]byte(nil), data[:len(copySignature)+8]...), 0, 2)); err == nil {
		t.Fatal("a row with the wrong field count was accepted")
	}
}

// TestAppendBinary: PostgreSQL's binary send format of dates and
// timestamps (days and microseconds since 2000-01-01).
func TestAppendBinary(t *testing.T) {
	for _, c := range []struct {
		oid  uint32
		in   []byte
		want string
	}{
		{schema.OIDDate, binary.BigEndian.AppendUint32(nil, 0), "2000-01-01"},
		{schema.OIDDate, binary.BigEndian.AppendUint32(nil, uint32(0xffffffff)), "1999-12-31"},
		{schema.OIDTimestamptz, binary.BigEndian.AppendUint64(nil, 1_500_000), "2000-01-01T00:00:01.5Z"},
		{schema.OIDInt2, binary.BigEndian.AppendUint16(nil, 0xffff), "-1"},
		{schema.OIDBool, []byte{1}, "true"},
	} {
		f := lakeField(Column{TypeOID: c.oid})
		b := array.NewBuilder(memory.DefaultAllocator, f.Type)
		if err := appendBinary(b, f.Type, c.in); err != nil {
			t.Fatal(err)
		}
		arr := b.NewArray()
		if got := arr.ValueStr(0); got != c.want {
			t.Errorf("%s %x: got %q, want %q", f.Type, c.in, got, c.want)
		}
		arr.Release()
		b.Release()
	}
	f := lakeField(Column{TypeOID: schema.OIDDate})
	b := array.NewBuilder(memory.DefaultAllocator, f.Type)
	if err := appendBinary(b, f.Type, binary.BigEndian.AppendUint32(nil, 0x7fffffff)); err == nil {
		t.Error("infinity date accepted")
	}
	b.Release()
}

// TestEvolve: which source schema changes the lake follows.
func TestEvolve(t *testing.T) {
	base := []Column{{Name: "id", TypeOID: schema.OIDInt8, Key: 1, Num: 1}, {Name: "n", TypeOID: schema.OIDInt4, Num: 2},
		{Name: "s", TypeOID: schema.OIDVarchar, TypeMod: 14, Num: 3}, {Name: "d", TypeOID: schema.OIDNumeric, TypeMod: (10<<16 | 2) + 4, Num: 4}}
	tbl, err := newLakeTable("table_x", "ns", "t", "file:///w/ns/t", base, 4)
	if err != nil {
		t.Fatal(err)
	}
	with := func(f func(cs []Column) []Column) []Column {
		cs := append([]Column(nil), base...)
		return f(cs)
	}
	ok := []struct {
		what string
		cols []Column
		want string // resulting fields
	}{
		{"int to bigint", with(func(cs []Column) []Column { cs[1].TypeOID = schema.OIDInt8; return cs }), "id:int64 n:int64 s:utf8 d:decimal(10, 2) rowKinds:utf8"},
		{"varchar longer", with(func(cs []Column) []Column { cs[2].TypeMod = 44; return cs }), "id:int64 n:int32 s:utf8 d:decimal(10, 2) rowKinds:utf8"},
		{"numeric precision up", with(func(cs []Column) []Column { cs[3].TypeMod = (14<<16 | 2) + 4; return cs }), "id:int64 n:int32 s:utf8 d:decimal(14, 2) rowKinds:utf8"},
		{"added", with(func(cs []Column) []Column { return append(cs, Column{Name: "x", TypeOID: schema.OIDText, Num: 5}) }), "id:int64 n:int32 s:utf8 d:decimal(10, 2) x:utf8 rowKinds:utf8"},
		{"dropped", with(func(cs []Column) []Column { return append(cs[:1], cs[2:]...) }), "id:int64 s:utf8 d:decimal(10, 2) rowKinds:utf8"},
		{"dropped and added in its place", with(func(cs []Column) []Column { cs[1] = Column{Name: "m", TypeOID: schema.OIDInt4, Num: 5}; return cs }), "id:int64 s:utf8 d:decimal(10, 2) m:int32 rowKinds:utf8"},
	}
	for _, c := range ok {
		nt, err := evolve(tbl, base, c.cols)
		if err != nil || nt == nil {
			t.Errorf("%s: %v (%v)", c.what, err, nt)
			continue
		}
		var got []string
		for _, f := range nt.Schema.Fields() {
			got = append(got, f.Name+":"+f.Type.String())
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("%s: fields %q, want %q", c.what, strings.Join(got, " "), c.want)
		}
	}
	bad := []struct {
		what string
		cols []Column
	}{
		{"rename", with(func(cs []Column) []Column { cs[1].Name = "n2"; return cs })},
		{"bigint to int", with(func(cs []Column) []Column { cs[0].TypeOID = schema.OIDInt4; return cs })},
		{"int to text", with(func(cs []Column) []Column { cs[1].TypeOID = schema.OIDText; return cs })},
		{"varchar shorter", with(func(cs []Column) []Column { cs[2].TypeMod = 8; return cs })},
		{"numeric scale down", with(func(cs []Column) []Column { cs[3].TypeMod = (10<<16 | 1) + 4; return cs })},
		{"key change", with(func(cs []Column) []Column { cs[1].Key = 2; return cs })},
	}
	for _, c := range bad {
		if _, err := evolve(tbl, base, c.cols); err == nil {
			t.Errorf("%s: no error", c.what)
		} else if _, inc := err.(*errIncompatible); !inc {
			t.Errorf("%s: %v is not an incompatible change", c.what, err)
		}
	}
	if nt, err := evolve(tbl, base, base); nt != nil || err != nil {
		t.Errorf("no change: %v %v", nt, err)
	}
}
