package pgwire

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

func testConn() *conn {
	return &conn{types: pgtype.NewMap(), reported: map[string]string{"TimeZone": "UTC"}}
}

// Known answers from PostgreSQL 15's array_out, record_out and interval_out.
func TestCompositeText(t *testing.T) {
	c := testConn()
	for _, tc := range []struct {
		oid  uint32
		v    any
		want string
	}{
		{1009, []any{"a", nil, "b c", "", "NULL", `x"y`, "a,b", "{}", `x\y`}, `{a,NULL,"b c","","NULL","x\"y","a,b","{}","x\\y"}`},
		{1022, []any{1.5, 1e20}, `{1.5,1e+20}`},
		{1007, []any{[]any{int32(1), int32(2)}, []any{int32(3), int32(4)}}, `{{1,2},{3,4}}`},
		{1016, []any{}, `{}`},
		{2249, Record{OIDs: []uint32{23, 25, 25, 25, 25, 25, 25}, Values: []any{int32(1), "a b", nil, "", `x"y`, "(", `x\y`}},
			`(1,"a b",,"","x""y","(","x\\y")`},
		{2287, []any{Record{OIDs: []uint32{23, 25}, Values: []any{int32(1), "a"}}}, `{"(1,a)"}`},
		{1185, []any{time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)}, `{"2026-01-01 10:00:00+00"}`},
		{1187, []any{pgtype.Interval{Days: 1, Valid: true}}, `{"1 day"}`},
		{1000, []any{true, false}, `{t,f}`},
		{1001, []any{[]byte{1, 0xff}}, `{"\\x01ff"}`},
		{1186, pgtype.Interval{Months: 14, Days: 3, Microseconds: int64(4*time.Hour+5*time.Minute+6500*time.Millisecond) / 1000, Valid: true},
			"1 year 2 mons 3 days 04:05:06.5"},
		{1186, pgtype.Interval{Days: -1, Valid: true}, "-1 days"},
		{1186, pgtype.Interval{Days: -1, Microseconds: 2 * 3600e6, Valid: true}, "-1 days +02:00:00"},
		{1186, pgtype.Interval{Valid: true}, "00:00:00"},
		{1186, pgtype.Interval{Microseconds: -1500000, Valid: true}, "-00:00:01.5"},
		{1186, pgtype.Interval{Months: 1, Days: -1, Valid: true}, "1 mon -1 days"},
		{1186, pgtype.Interval{Months: -14, Valid: true}, "-1 years -2 mons"},
		{1186, pgtype.Interval{Days: 1, Microseconds: -2 * 3600e6, Valid: true}, "1 day -02:00:00"},
		{1186, pgtype.Interval{Microseconds: int64(25 * time.Hour / time.Microsecond), Valid: true}, "25:00:00"},
	} {
		got, err := c.encodeValue(tc.oid, pgproto3.TextFormat, tc.v, nil)
		if err != nil || string(got) != tc.want {
			t.Errorf("%d %v: %s, %v; want %s", tc.oid, tc.v, got, err, tc.want)
		}
	}
	if _, err := c.encodeValue(1007, pgproto3.TextFormat, []any{[]any{int32(1), int32(2)}, []any{int32(3)}}, nil); sqlerr.Code(err) != "2202E" {
		t.Errorf("ragged array: %v", err)
	}
}

// Binary forms decode with pgx's codecs.
func TestCompositeBinary(t *testing.T) {
	c := testConn()
	m := pgtype.NewMap()
	b, err := c.encodeValue(1016, pgproto3.BinaryFormat, []any{int64(1), nil, int64(3)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ints []*int64
	if err := m.Scan(1016, pgproto3.BinaryFormat, b, &ints); err != nil || len(ints) != 3 || *ints[0] != 1 || ints[1] != nil || *ints[2] != 3 {
		t.Fatalf("int8[]: %v %v", ints, err)
	}
	b, err = c.encodeValue(1009, pgproto3.BinaryFormat, []any{[]any{"a", "b"}, []any{"c", "d"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var md pgtype.Array[string]
	if err := m.Scan(1009, pgproto3.BinaryFormat, b, &md); err != nil || len(md.Dims) != 2 || md.Elements[3] != "d" {
		t.Fatalf("text[][]: %+v %v", md, err)
	}
	b, err = c.encodeValue(1186, pgproto3.BinaryFormat, pgtype.Interval{Months: 1, Days: 2, Microseconds: 3, Valid: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var iv pgtype.Interval
	if err := m.Scan(1186, pgproto3.BinaryFormat, b, &iv); err != nil || iv.Months != 1 || iv.Days != 2 || iv.Microseconds != 3 {
		t.Fatalf("interval: %+v %v", iv, err)
	}
	b, err = c.encodeValue(2249, pgproto3.BinaryFormat, Record{OIDs: []uint32{23, 25}, Values: []any{int32(7), nil}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{0, 0, 0, 2, 0, 0, 0, 23, 0, 0, 0, 4, 0, 0, 0, 7, 0, 0, 0, 25, 0xff, 0xff, 0xff, 0xff}
	if string(b) != string(want) {
		t.Fatalf("record: %x", b)
	}
}
