package tests

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestTimeTravelPsql drives history, time travel, incremental reads,
// rollback, cleanup and lakesoul.tables (DESIGN.md §4) through psql.
func TestTimeTravelPsql(t *testing.T) {
	t.Parallel()
	p := &psqlClient{t: t, path: psqlPath(t), srv: sharedServer(t)}
	ctx := testCtx(t)
	p.exec(ctx,
		"CREATE SCHEMA tt",
		"CREATE TABLE tt.t (id bigint, v text, d date, PRIMARY KEY (id)) PARTITION BY LIST (d)",
		"INSERT INTO tt.t VALUES (1, 'a', '2026-01-01'), (2, 'b', '2026-01-02')")
	time.Sleep(5 * time.Millisecond)
	p.exec(ctx, "INSERT INTO tt.t VALUES (1, 'a2', '2026-01-01')")
	p.check(ctx, `SELECT "partition", version, commit_op FROM lakesoul.history('tt.t') ORDER BY 1, 2`,
		"d=2026-01-01|0|MergeCommit", "d=2026-01-01|1|MergeCommit", "d=2026-01-02|0|MergeCommit")
	t1 := strings.TrimSpace(p.exec(ctx, `SELECT committed_at FROM lakesoul.history('tt.t') WHERE version = 1`))

	p.check(ctx, `SELECT id, v FROM lakesoul.snapshot('tt.t', TIMESTAMPTZ '`+t1+`') ORDER BY id`, "1|a", "2|b")
	p.check(ctx, `SELECT id, v FROM lakesoul.snapshot('tt.t', version => 1, partition => 'd=2026-01-01')`, "1|a2")
	p.check(ctx, `SELECT id, v FROM lakesoul.changes('tt.t', TIMESTAMPTZ '`+t1+`', now() + interval '1 hour')`, "1|a2")
	p.check(ctx, `SELECT o.id, o.v, n.v FROM lakesoul.snapshot('tt.t', version => 0) o JOIN tt.t n USING (id) ORDER BY 1`,
		"1|a|a2", "2|b|b")
	p.check(ctx, `SELECT table_schema, table_name, partitions FROM lakesoul.tables WHERE table_schema = 'tt'`, "tt|t|d;id")

	// CALL prints its result rows.
	p.check(ctx, `CALL lakesoul.rollback('tt.t', version => 0, partition => 'd=2026-01-01')`, "d=2026-01-01|2")
	p.check(ctx, `SELECT id, v FROM tt.t ORDER BY id`, "1|a", "2|b")
	p.check(ctx, `CALL lakesoul.rollback('tt.t', TIMESTAMPTZ '`+t1+`' + interval '1 millisecond')`, "d=2026-01-01|3", "d=2026-01-02|1")
	p.check(ctx, `SELECT id, v FROM tt.t ORDER BY id`, "1|a2", "2|b")
	p.check(ctx, `CALL lakesoul.cleanup('tt.t', now() + interval '1 hour')`)

	_, errOut, err := p.run(ctx, nil, `SELECT * FROM lakesoul.snapshot('tt.t', version => 9)`)
	if err == nil || !strings.Contains(errOut, "version 9 of table tt.t does not exist") {
		t.Fatalf("unknown version: %v %s", err, errOut)
	}
}

// TestTimeTravelPgx uses the extended protocol: prepared time-travel queries,
// CALL with parameters, and SQLSTATEs of bad input.
func TestTimeTravelPgx(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	c := srv.connect(t)
	ctx := testCtx(t)
	mustExec(t, ctx, c,
		"CREATE SCHEMA ttx",
		"CREATE TABLE ttx.t (id bigint, v double precision, PRIMARY KEY (id))",
		"INSERT INTO ttx.t VALUES (1, 1.0), (2, 2.0)",
		"INSERT INTO ttx.t VALUES (1, 10.0)",
		"INSERT INTO ttx.t VALUES (3, 3.0)")
	var before time.Time
	if err := c.QueryRow(ctx, `SELECT committed_at FROM lakesoul.history('ttx.t') WHERE version = 1`).Scan(&before); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeDescribeExec, pgx.QueryExecModeSimpleProtocol} {
		var n int64
		var sum float64
		if err := c.QueryRow(ctx, `SELECT count(*), sum(v) FROM lakesoul.snapshot('ttx.t', version => 1)`, mode).Scan(&n, &sum); err != nil {
			t.Fatalf("%v: %v", mode, err)
		}
		if n != 2 || sum != 12 {
			t.Fatalf("%v: version 1 has %d rows, sum %v", mode, n, sum)
		}
	}
	// A parameter in CALL is the catalog's to bind.
	var part string
	var version int32
	if err := c.QueryRow(ctx, `CALL lakesoul.rollback('ttx.t', version => $1)`, 0).Scan(&part, &version); err != nil {
		t.Fatal(err)
	}
	if part != "-5" || version != 3 {
		t.Fatalf("rollback gave %s %d", part, version)
	}
	var n int64
	if err := c.QueryRow(ctx, `SELECT count(*) FROM ttx.t`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("after rollback: %d rows %v", n, err)
	}
	for _, tc := range []struct {
		sql  string
		args []any
		code string
	}{
		{`SELECT * FROM lakesoul.snapshot('ttx.t', version => 42)`, nil, "22023"},
		{`SELECT * FROM lakesoul.snapshot('ttx.nope', version => 0)`, nil, "42P01"},
		{`SELECT * FROM lakesoul.snapshot('ttx.t', $1::timestamptz)`, []any{before}, "0A000"},
		{`SELECT * FROM lakesoul.snapshot('ttx.t', TIMESTAMPTZ '2001-01-01 00:00:00+00')`, nil, "22023"},
		{`CALL lakesoul.rollback('ttx.t', version => 0, partition => 'x=1')`, nil, "42704"},
		{`CALL lakesoul.cleanup('ttx.t', $1)`, []any{"not a time"}, "22"}, // 22007 or 22P02
	} {
		rows, err := c.Query(ctx, tc.sql, tc.args...)
		if err == nil {
			rows.Close()
			err = rows.Err()
		}
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || !strings.HasPrefix(pe.Code, tc.code) {
			t.Errorf("%s: %v, want SQLSTATE %s", tc.sql, err, tc.code)
		}
	}
}

// TestChangesKeepCDCDeletes is LakeSoul's scenario 29: on a CDC table an
// incremental read keeps the op column and does not filter deletes. A range
// holding insert(1,a), update(1,b) and delete(1) yields one row, id 1 with op
// delete (the files of the range are merged); ranges of one commit each yield
// insert, update and delete in turn. A snapshot read has no id 1.
func TestChangesKeepCDCDeletes(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	c := srv.connect(t)
	ctx := testCtx(t)
	mustExec(t, ctx, c,
		"CREATE SCHEMA ttc",
		"CREATE TABLE ttc.t (id bigint, v text, op text, PRIMARY KEY (id)) WITH (cdc_column = 'op')",
		"INSERT INTO ttc.t VALUES (2, 'x', 'insert')",
		"INSERT INTO ttc.t VALUES (1, 'a', 'insert')",
		"UPDATE ttc.t SET v = 'b' WHERE id = 1",
		"DELETE FROM ttc.t WHERE id = 1")
	at := func(version int) string {
		return queryStrings(t, ctx, c, `SELECT committed_at::text FROM lakesoul.history('ttc.t') WHERE version = $1`, version)[0]
	}
	t1, t2, t3 := at(1), at(2), at(3)
	check := func(q string, want ...string) {
		t.Helper()
		got := queryStrings(t, ctx, c, q)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", q, got, want)
		}
	}
	check(`SELECT id, v, op FROM ttc.t ORDER BY id`, "2|x|insert")
	check(`SELECT id, op FROM lakesoul.changes('ttc.t', TIMESTAMPTZ '`+t1+`') ORDER BY id`, "1|delete")
	check(`SELECT id, v, op FROM lakesoul.changes('ttc.t', TIMESTAMPTZ '`+t1+`', TIMESTAMPTZ '`+t2+`')`, "1|a|insert")
	check(`SELECT id, v, op FROM lakesoul.changes('ttc.t', TIMESTAMPTZ '`+t2+`', TIMESTAMPTZ '`+t3+`')`, "1|b|update")
	check(`SELECT id, op FROM lakesoul.changes('ttc.t', TIMESTAMPTZ '`+t3+`')`, "1|delete")
	// The snapshot functions still drop deletes.
	check(`SELECT id FROM lakesoul.snapshot('ttc.t', version => 3)`, "2")
}
