package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/engine"
	"github.com/lakesoul-go/lakesoul/internal/pgtest"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// valueRows collects rows as the values a portal hands to pgwire.
type valueRows struct{ rows [][]any }

func (c *valueRows) WriteRow(vals []any) error {
	c.rows = append(c.rows, slices.Clone(vals))
	return nil
}

// values runs one statement and returns its rows' values.
func values(t *testing.T, ctx context.Context, s pgwire.Session, text string) [][]any {
	t.Helper()
	rows, err := valuesErr(ctx, s, text)
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return rows
}

func valuesErr(ctx context.Context, s pgwire.Session, text string) ([][]any, error) {
	stmts, err := s.Parse(ctx, text, nil)
	if err != nil {
		return nil, err
	}
	if len(stmts) != 1 {
		return nil, fmt.Errorf("%d statements", len(stmts))
	}
	p, err := stmts[0].Bind(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	c := &valueRows{}
	if _, _, err := p.Execute(ctx, 0, c); err != nil {
		return nil, err
	}
	return c.rows, nil
}

// A FETCH from a cursor makes DuckDB produce the rows fetched, not the
// whole result: a cursor over a result of 10^12 rows answers at once, and
// so does a COPY TO whose client stops reading.
func TestCursorStreams(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, "CREATE SCHEMA st")
	mustRun(t, s, "CREATE TABLE st.one (id bigint PRIMARY KEY, v text)")
	mustRun(t, s, "INSERT INTO st.one VALUES (1, 'a')")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	huge := "SELECT one.id, r.range AS n, repeat('x', 100) AS pad FROM st.one, range(1000000000000) r"
	mustRun(t, s, "BEGIN")
	mustRun(t, s, "DECLARE c CURSOR FOR "+huge)
	for _, want := range []int64{0, 1, 2} {
		got := values(t, ctx, s, "FETCH 1 FROM c")
		if len(got) != 1 || got[0][1] != want {
			t.Fatalf("FETCH: %v, want n = %d", got, want)
		}
	}
	mustRun(t, s, "COMMIT")

	stmts, err := s.Parse(ctx, "COPY ("+huge+") TO STDOUT", nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := stmts[0].Bind(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	enough := errors.New("the client has enough")
	w := &stopAfter{n: 100000, err: enough}
	if _, _, err := p.Execute(ctx, 0, w); !errors.Is(err, enough) {
		t.Fatalf("COPY TO: %v", err)
	}
}

type stopAfter struct {
	n   int
	err error
}

func (w *stopAfter) WriteRow([]any) error {
	if w.n--; w.n < 0 {
		return w.err
	}
	return nil
}

// Cursors whose streams share the session's DuckDB connection, and
// statements between their FETCHes, see exactly the rows each query has:
// a stream is parked in a file when the connection is needed, and read
// from there.
func TestCursorsInterleave(t *testing.T) {
	dir := t.TempDir()
	s := sessionWith(t, filepath.Join(dir, "wh"), engine.Config{TempDir: filepath.Join(dir, "tmp")})
	ctx := context.Background()
	mustRun(t, s, "CREATE SCHEMA il")
	mustRun(t, s, "CREATE TABLE il.t (id bigint PRIMARY KEY, v text, d double precision)")
	mustRun(t, s, "INSERT INTO il.t SELECT i, 'v' || i, i / 3.0 FROM generate_series(1, 20000) AS g(i)")
	qa := "SELECT id, v, d FROM il.t ORDER BY id"
	qb := "SELECT id * 2 AS x, upper(v) AS u FROM il.t ORDER BY id DESC"
	wantA, wantB := values(t, ctx, s, qa), values(t, ctx, s, qb)

	mustRun(t, s, "BEGIN")
	mustRun(t, s, "DECLARE a CURSOR FOR "+qa)
	mustRun(t, s, "DECLARE b CURSOR FOR "+qb)
	var gotA, gotB [][]any
	gotA = append(gotA, values(t, ctx, s, "FETCH 10 FROM a")...)
	gotB = append(gotB, values(t, ctx, s, "FETCH 10 FROM b")...) // parks a
	gotA = append(gotA, values(t, ctx, s, "FETCH 1000 FROM a")...)
	if n := values(t, ctx, s, "SELECT count(*) FROM il.t"); n[0][0] != int64(20000) { // parks b
		t.Fatalf("count: %v", n)
	}
	gotB = append(gotB, values(t, ctx, s, "FETCH 5 FROM b")...)
	gotA = append(gotA, values(t, ctx, s, "FETCH ALL FROM a")...)
	gotB = append(gotB, values(t, ctx, s, "FETCH ALL FROM b")...)
	mustRun(t, s, "COMMIT")
	if !reflect.DeepEqual(gotA, wantA) {
		t.Errorf("cursor a: %d rows, differ from the query's %d", len(gotA), len(wantA))
	}
	if !reflect.DeepEqual(gotB, wantB) {
		t.Errorf("cursor b: %d rows, differ from the query's %d", len(gotB), len(wantB))
	}
	left, _ := os.ReadDir(filepath.Join(dir, "tmp"))
	left = slices.DeleteFunc(left, func(e os.DirEntry) bool { return e.Name() == "duckdb" }) // DuckDB's own spill directory
	if len(left) != 0 {
		t.Errorf("temp dir keeps %d entries", len(left))
	}
}

// A WITH HOLD cursor is materialised at COMMIT: its rows are the query's at
// its transaction, whatever happens to the table afterwards; values of
// every type come back exactly; ROLLBACK drops the held cursors it
// declared; an error while materialising fails the COMMIT, whose writes
// are then rolled back.
func TestHeldCursors(t *testing.T) {
	s := newSession(t)
	ctx := context.Background()
	mustRun(t, s, "CREATE SCHEMA hold")
	mustRun(t, s, "CREATE TABLE hold.t (id bigint PRIMARY KEY, v text)")
	mustRun(t, s, "INSERT INTO hold.t SELECT i, 'v' || i FROM generate_series(1, 3000) AS g(i)")

	mustRun(t, s, "BEGIN")
	mustRun(t, s, "DECLARE h CURSOR WITH HOLD FOR SELECT id, v FROM hold.t ORDER BY id")
	mustRun(t, s, "DECLARE d CURSOR WITH HOLD FOR SELECT id FROM hold.t") // a direct scan
	if got := values(t, ctx, s, "FETCH 2 FROM h"); len(got) != 2 || got[1][0] != int64(2) {
		t.Fatalf("FETCH before COMMIT: %v", got)
	}
	mustRun(t, s, "COMMIT")
	mustRun(t, s, "DROP TABLE hold.t")
	got := values(t, ctx, s, "FETCH ALL FROM h")
	if len(got) != 2998 || got[0][0] != int64(3) || got[2997][1] != "v3000" {
		t.Fatalf("FETCH after COMMIT and DROP: %d rows", len(got))
	}
	if got := values(t, ctx, s, "FETCH ALL FROM d"); len(got) != 3000 {
		t.Fatalf("direct scan cursor after COMMIT and DROP: %d rows", len(got))
	}
	mustRun(t, s, "CLOSE ALL")

	// Every DuckDB result type, and a catalog query's, through a held
	// cursor as through the query.
	mustRun(t, s, "CREATE TABLE hold.one (id bigint PRIMARY KEY)")
	mustRun(t, s, "INSERT INTO hold.one VALUES (1)")
	exprs := []string{
		"true", "1::smallint", "2::integer", "3::bigint", "1.5::real", "2.25::double precision", "12.340::numeric(10,3)",
		"'text'", "'\\x00ff'::bytea", "DATE '2024-02-29'", "TIME '12:34:56.789'", "TIMESTAMP '2024-01-02 03:04:05.123456'",
		"TIMESTAMPTZ '2024-01-02 03:04:05+02'", "'6ba7b810-9dad-11d1-80b4-00c04fd430c8'::uuid", "INTERVAL '1 year 2 days 3 seconds'",
		"ARRAY[1, NULL, 3]", "ARRAY['a', 'b']", "ARRAY[[1, 2], [3, 4]]", "ROW(1, 'x')", "'{\"a\": [1, 2.50]}'::jsonb", "'{\"b\":1}'::json",
		"NULL::text", "170141183460469231731687303715884105727::hugeint", "'infinity'::double precision",
	}
	duck := "SELECT " + strings.Join(exprs, ", ") + " FROM hold.one"
	cat := "SELECT oid, relname, relkind, relacl, reltuples, 1.5::numeric AS n, ARRAY[1, 2] AS a, now() - now() AS i, " +
		"'{\"a\": 1}'::jsonb AS j, inet '10.0.0.1' AS ip, 'x'::bytea AS b FROM pg_class ORDER BY oid LIMIT 50"
	for _, q := range []string{duck, cat} {
		want := values(t, ctx, s, q)
		mustRun(t, s, "DECLARE x CURSOR WITH HOLD FOR "+q) // outside a block: materialised at once
		if got := values(t, ctx, s, "FETCH ALL FROM x"); !reflect.DeepEqual(got, want) {
			t.Errorf("%s\nheld cursor: %#v\nquery:       %#v", q, got, want)
		}
		mustRun(t, s, "CLOSE x")
	}

	// ROLLBACK drops the held cursors its transaction declared.
	mustRun(t, s, "BEGIN")
	mustRun(t, s, "DECLARE r CURSOR WITH HOLD FOR SELECT id FROM hold.one")
	mustRun(t, s, "ROLLBACK")
	if _, err := run(t, s, "FETCH 1 FROM r"); sqlerr.Code(err) != "34000" {
		t.Errorf("held cursor after ROLLBACK: %v, want 34000", err)
	}

	// An error while materialising fails the COMMIT and rolls its block back.
	mustRun(t, s, "BEGIN")
	mustRun(t, s, "INSERT INTO hold.one VALUES (2)")
	mustRun(t, s, "DECLARE e CURSOR WITH HOLD FOR SELECT 1 / (id - 2) FROM hold.one")
	if _, err := run(t, s, "COMMIT"); sqlerr.Code(err) != "22012" {
		t.Errorf("COMMIT materialising a failing cursor: %v, want 22012", err)
	}
	expectRows(t, s, "SELECT count(*) FROM hold.one", "1")
	if _, err := run(t, s, "FETCH 1 FROM e"); sqlerr.Code(err) != "34000" {
		t.Errorf("cursor of a failed COMMIT: %v, want 34000", err)
	}
}

// A held cursor over a catalog query keeps no catalog transaction open
// once its transaction committed: the catalog's vacuum horizon is free.
func TestHeldCatalogCursorEndsItsTransaction(t *testing.T) {
	dsn := pgtest.DSN(t)
	if err := catalog.MigrateUp(context.Background(), dsn); err != nil {
		t.Fatal(err)
	}
	s := sessionOn(t, dsn, filepath.Join(t.TempDir(), "wh"))
	ctx := context.Background()
	db, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	pinned := func() int {
		var n int
		if err := db.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_xmin IS NOT NULL`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, declare := range [][]string{
		{"DECLARE c CURSOR WITH HOLD FOR SELECT relname FROM pg_class"},
		{"BEGIN", "DECLARE c CURSOR WITH HOLD FOR SELECT relname FROM pg_class", "FETCH 1 FROM c", "COMMIT"},
	} {
		for _, q := range declare {
			mustRun(t, s, q)
		}
		if n := pinned(); n != 0 {
			t.Errorf("%q: %d catalog backends hold a snapshot", declare, n)
		}
		if got := mustRun(t, s, "FETCH ALL FROM c"); len(got) < 10 {
			t.Errorf("%q: FETCH ALL: %d rows", declare, len(got))
		}
		mustRun(t, s, "CLOSE c")
	}
}

// A held cursor's file is bounded by the temp space limit: beyond it the
// materialisation fails with 53100, and the space is given back.
func TestHeldCursorTempLimit(t *testing.T) {
	dir := t.TempDir()
	s := sessionWith(t, filepath.Join(dir, "wh"), engine.Config{TempDir: filepath.Join(dir, "tmp"), TempLimit: 1 << 20})
	mustRun(t, s, "CREATE SCHEMA lim")
	mustRun(t, s, "CREATE TABLE lim.t (id bigint PRIMARY KEY, pad text)")
	mustRun(t, s, "INSERT INTO lim.t SELECT i, repeat('x', 1000) FROM generate_series(1, 3000) AS g(i)")
	if _, err := run(t, s, "DECLARE big CURSOR WITH HOLD FOR SELECT id, pad FROM lim.t ORDER BY id"); sqlerr.Code(err) != sqlerr.DiskFull {
		t.Fatalf("held cursor of 3 MB under a 1 MiB limit: %v, want 53100", err)
	}
	mustRun(t, s, "DECLARE small CURSOR WITH HOLD FOR SELECT id, pad FROM lim.t WHERE id <= 500 ORDER BY id")
	if got := mustRun(t, s, "FETCH ALL FROM small"); len(got) != 500 {
		t.Fatalf("small held cursor: %d rows", len(got))
	}
}

// sessionWith opens a session of an engine configured by cfg (catalog,
// store and warehouse filled in) on a fresh catalog.
func sessionWith(t *testing.T, dir string, cfg engine.Config) pgwire.Session {
	t.Helper()
	dsn := pgtest.DSN(t)
	if err := catalog.MigrateUp(context.Background(), dsn); err != nil {
		t.Fatal(err)
	}
	return sessionOnConfig(t, dsn, dir, cfg)
}
