package tests

import (
	"reflect"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// TestResultTypesBinary reads json, jsonb, arrays, uuid, intervals and
// records of lake queries with pgx's extended protocol, which asks for
// binary results: every value must decode with PostgreSQL's binary format
// for the described OID (issue 14, item 7), through DuckDB and through the
// direct scan of a plain projection.
func TestResultTypesBinary(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	c := srv.connect(t)
	ctx := testCtx(t)
	mustExec(t, ctx, c,
		"CREATE SCHEMA rtb",
		"CREATE TABLE rtb.t (id bigint, doc jsonb, raw json, uid uuid, tag text, PRIMARY KEY (id))",
		`INSERT INTO rtb.t VALUES (1, '{"b": [1, 2.5], "a": {"c": "x"}}', '{"k": [1,  2]}', 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', 'a')`)
	var (
		doc, raw, arrow map[string]any
		uid             [16]byte
		ids             []int64
		tags            []*string
		iv              pgtype.Interval
		uids            []pgtype.UUID
		rec             any
		ok              bool
	)
	err := c.QueryRow(ctx, `SELECT doc, raw, uid, doc -> 'a', ARRAY[id, 2], ARRAY[tag, NULL], interval '1 day 02:03:04.5',
		ARRAY[uid], ROW(id, tag), doc @> '{"b": [1]}' FROM rtb.t WHERE id = $1`, 1).
		Scan(&doc, &raw, &uid, &arrow, &ids, &tags, &iv, &uids, &rec, &ok)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"a": map[string]any{"c": "x"}, "b": []any{float64(1), 2.5}}
	if !reflect.DeepEqual(doc, want) || !reflect.DeepEqual(raw, map[string]any{"k": []any{float64(1), float64(2)}}) ||
		!reflect.DeepEqual(arrow, map[string]any{"c": "x"}) {
		t.Errorf("json: %v %v %v", doc, raw, arrow)
	}
	if uid != [16]byte{0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11} {
		t.Errorf("uuid: %x", uid)
	}
	if !reflect.DeepEqual(ids, []int64{1, 2}) || len(tags) != 2 || *tags[0] != "a" || tags[1] != nil {
		t.Errorf("arrays: %v %v", ids, tags)
	}
	if iv.Days != 1 || iv.Microseconds != int64((2*time.Hour+3*time.Minute+4500*time.Millisecond)/time.Microsecond) {
		t.Errorf("interval: %+v", iv)
	}
	if len(uids) != 1 || uids[0].Bytes != uid || !reflect.DeepEqual(rec, []any{int64(1), "a"}) || !ok {
		t.Errorf("uuid[] %v, record %v, @> %v", uids, rec, ok)
	}

	// A plain projection of a PK table is a direct scan; its json, jsonb and
	// uuid columns carry the same types and values, in text and binary.
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		var d, r map[string]any
		var u [16]byte
		if err := c.QueryRow(ctx, `SELECT doc, raw, uid FROM rtb.t`, mode).Scan(&d, &r, &u); err != nil {
			t.Fatalf("%v: %v", mode, err)
		}
		if !reflect.DeepEqual(d, want) || u != uid {
			t.Errorf("%v: %v %v %x", mode, d, r, u)
		}
	}
	rows, err := c.Query(ctx, `SELECT doc, raw, uid FROM rtb.t`)
	if err != nil {
		t.Fatal(err)
	}
	var oids []uint32
	for _, f := range rows.FieldDescriptions() {
		oids = append(oids, f.DataTypeOID)
	}
	rows.Close()
	if !reflect.DeepEqual(oids, []uint32{3802, 114, 2950}) {
		t.Errorf("column types %v, want jsonb, json, uuid", oids)
	}
}

// TestSemanticsEverySession checks PostgreSQL's integer division and
// division by zero on several sessions open at once: each has a DuckDB
// connection of its own, and the settings behind them must hold on all.
func TestSemanticsEverySession(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	first := srv.connect(t)
	mustExec(t, ctx, first, "CREATE SCHEMA ses", "CREATE TABLE ses.t (id int, PRIMARY KEY (id))", "INSERT INTO ses.t VALUES (7)")
	conns := []*pgx.Conn{first}
	for range 3 {
		conns = append(conns, srv.connect(t))
	}
	for i, c := range conns {
		if got := queryStrings(t, ctx, c, "SELECT id / 2, 7 / 2, -id / 2 FROM ses.t"); len(got) != 1 || got[0] != "3|3|-3" {
			t.Errorf("session %d: %v, want 3|3|-3", i, got)
		}
		if _, err := tryQueryStrings(ctx, c, "SELECT id / (id - 7) FROM ses.t"); pgCode(err) != "22012" {
			t.Errorf("session %d: division by zero gave %v", i, err)
		}
	}
}
