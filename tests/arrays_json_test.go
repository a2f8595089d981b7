package tests

import (
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestPgxArraysJSON: array and jsonb columns of a lake table through pgx,
// whose extended protocol sends []int64 and []string parameters in binary
// (int8[], text[]) and asks for binary results of types it knows; the same
// rows read back in text form are PostgreSQL's array and jsonb text.
func TestPgxArraysJSON(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := srv.connect(t)
	mustExec(t, ctx, c, "CREATE SCHEMA pgxarr",
		"CREATE TABLE pgxarr.t (id bigint PRIMARY KEY, ids bigint[], tags text[], ok boolean[], doc jsonb)")

	// Binary parameters: pgx encodes []int64 as int8[] and []string as
	// text[] in binary form; a nil element pointer is NULL.
	two := int64(2)
	if _, err := c.Exec(ctx, "INSERT INTO pgxarr.t VALUES ($1, $2, $3, $4, $5), ($6, $7, $8, $9, $10)",
		1, []*int64{new(int64), &two, nil}, []string{"a b", `q"x`, "c,d"}, []bool{true, false},
		map[string]any{"b": []any{1, 2}, "a": map[string]any{"x": nil}},
		2, []int64{}, []string{}, nil, nil); err != nil {
		t.Fatal(err)
	}

	// Binary results.
	var ids []*int64
	var tags []string
	var ok []bool
	var doc map[string]any
	if err := c.QueryRow(ctx, "SELECT ids, tags, ok, doc FROM pgxarr.t WHERE id = $1", 1).Scan(&ids, &tags, &ok, &doc); err != nil {
		t.Fatal(err)
	}
	if len(ids) != 3 || ids[0] == nil || *ids[0] != 0 || ids[1] == nil || *ids[1] != 2 || ids[2] != nil {
		t.Errorf("ids = %v, want [0 2 NULL]", ids)
	}
	if !reflect.DeepEqual(tags, []string{"a b", `q"x`, "c,d"}) || !reflect.DeepEqual(ok, []bool{true, false}) {
		t.Errorf("tags = %q, ok = %v", tags, ok)
	}
	if want := map[string]any{"a": map[string]any{"x": nil}, "b": []any{float64(1), float64(2)}}; !reflect.DeepEqual(doc, want) {
		t.Errorf("doc = %v, want %v", doc, want)
	}

	// = ANY($1) with a binary int8[] parameter, and with the column.
	var got []int64
	rows, err := c.Query(ctx, "SELECT id FROM pgxarr.t WHERE id = ANY($1) ORDER BY id", []int64{2, 3})
	if err != nil {
		t.Fatal(err)
	}
	if got, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil || !reflect.DeepEqual(got, []int64{2}) {
		t.Errorf("= ANY($1): %v, %v", got, err)
	}
	var n int64
	if err := c.QueryRow(ctx, "SELECT count(*) FROM pgxarr.t WHERE $1::bigint = ANY(ids)", 2).Scan(&n); err != nil || n != 1 {
		t.Errorf("$1 = ANY(ids): %d, %v", n, err)
	}

	// Text results: PostgreSQL's array and jsonb text forms.
	var idsText, tagsText, okText, docText string
	if err := c.QueryRow(ctx, "SELECT ids, tags, ok, doc FROM pgxarr.t WHERE id = 1",
		pgx.QueryResultFormats{pgx.TextFormatCode}).Scan(&idsText, &tagsText, &okText, &docText); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ got, want string }{
		{idsText, "{0,2,NULL}"}, {tagsText, `{"a b","q\"x","c,d"}`}, {okText, "{t,f}"},
		{docText, `{"a": {"x": null}, "b": [1, 2]}`},
	} {
		if tc.got != tc.want {
			t.Errorf("text form %q, want %q", tc.got, tc.want)
		}
	}
	var empty string
	if err := c.QueryRow(ctx, "SELECT ids FROM pgxarr.t WHERE id = 2", pgx.QueryResultFormats{pgx.TextFormatCode}).Scan(&empty); err != nil || empty != "{}" {
		t.Errorf("empty array: %q, %v", empty, err)
	}

	// jsonb functions' results in binary form.
	var built map[string]any
	var keys []string
	if err := c.QueryRow(ctx, "SELECT jsonb_build_object('n', id, 'tags', to_jsonb(tags)) FROM pgxarr.t WHERE id = 1").Scan(&built); err != nil {
		t.Fatal(err)
	}
	if want := map[string]any{"n": float64(1), "tags": []any{"a b", `q"x`, "c,d"}}; !reflect.DeepEqual(built, want) {
		t.Errorf("jsonb_build_object = %v, want %v", built, want)
	}
	rows, err = c.Query(ctx, "SELECT jsonb_object_keys(doc) FROM pgxarr.t WHERE id = 1")
	if err != nil {
		t.Fatal(err)
	}
	if keys, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil || !reflect.DeepEqual(keys, []string{"a", "b"}) {
		t.Errorf("jsonb_object_keys: %q, %v", keys, err)
	}

	// Bad input: nothing written, the connection stays usable.
	for _, q := range []string{
		"INSERT INTO pgxarr.t (id, ids) VALUES (3, '{1,2')",
		"INSERT INTO pgxarr.t (id, ids) VALUES (3, '{1,two}')",
		"INSERT INTO pgxarr.t (id, doc) VALUES (3, '{\"a\":')",
	} {
		if _, err := c.Exec(ctx, q); pgCode(err) != "22P02" {
			t.Errorf("%s: %v, want 22P02", q, err)
		}
	}
	if err := c.QueryRow(ctx, "SELECT count(*) FROM pgxarr.t").Scan(&n); err != nil || n != 2 {
		t.Errorf("rows after bad input: %d, %v", n, err)
	}
}

// TestPsycopg2Arrays: psycopg2 reads array columns as Python lists and
// jsonb as dicts.
func TestPsycopg2Arrays(t *testing.T) {
	t.Parallel()
	python, dsn := psycopg2Client(t)
	got := runClient(t, testCtx(t), nil, python, testdataPath(t, "psycopg2_arrays.py"), dsn, "psyarr")
	expectLines(t, got,
		`ROW (1, [1, 2, None], ['a b', 'q"x', 'c,d'], [1.5, -2.0], {'a': {'x': None}, 'b': [1, 2]})`,
		"ROW (2, [], [], None, None)",
		"ANY [(1,)]",
		"UNNEST ['a b', 'c,d', 'q\"x']",
		"MALFORMED 22P02",
		"COUNT 2",
		"DONE",
	)
}
