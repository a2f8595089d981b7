package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// bindRun binds st with params and runs the portal to its end.
func bindRun(ctx context.Context, st pgwire.Statement, params ...any) ([]string, error) {
	p, err := st.Bind(ctx, params)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	c := &rowCollector{}
	_, _, err = p.Execute(ctx, 0, c)
	return c.rows, err
}

// TestPreparedReplan: every kind of statement prepared through the
// extended protocol (Parse, later Bind and Execute) binds against the
// catalog of the moment, as PostgreSQL re-plans a cached plan: after its
// table is dropped and created again it reads and writes the new table
// (not the dropped one's id), after its table is dropped it fails with
// 42P01 naming the table as written and works again once the table is
// back, after SET search_path it resolves names on the new path, and a
// result that changed shape is 0A000 "cached plan must not change result
// type".
func TestPreparedReplan(t *testing.T) {
	s := newSession(t)
	ctx := context.Background()
	mustRun(t, s, `CREATE TABLE rp (id bigint PRIMARY KEY, v text)`)
	mustRun(t, s, `CREATE TABLE rpa (id bigint, v text)`)
	cases := []struct {
		text   string
		param  int64
		rows   string // the statement's result rows after the re-creation
		effect string // SELECT id, v FROM the table afterwards
	}{
		{`SELECT id, v FROM rp WHERE id = $1`, 1, "1|new", "1|new"},
		{`SELECT count(*) FROM rp WHERE id >= $1`, 0, "1", "1|new"},
		{`INSERT INTO rp VALUES ($1, 'x')`, 5, "", "1|new\n5|x"},
		{`INSERT INTO rp VALUES ($1, 'r') RETURNING id, v`, 5, "5|r", "1|new\n5|r"},
		{`INSERT INTO rp VALUES ($1, 'y') ON CONFLICT (id) DO UPDATE SET v = 'z'`, 1, "", "1|z"},
		{`UPDATE rp SET v = 'u' WHERE id = $1`, 1, "", "1|u"},
		{`UPDATE rp SET v = 'u' WHERE id = $1 RETURNING v`, 1, "u", "1|u"},
		{`DELETE FROM rp WHERE id = $1`, 1, "", ""},
		{`MERGE INTO rp USING (SELECT $1::bigint AS id) s ON rp.id = s.id WHEN MATCHED THEN UPDATE SET v = 'm'`, 1, "", "1|m"},
		{`INSERT INTO rpa VALUES ($1, 'a')`, 7, "", "1|new\n7|a"},
		{`DELETE FROM rpa WHERE id = $1`, 1, "", ""},
		{`UPDATE rpa SET v = 'w' WHERE id = $1`, 1, "", "1|w"},
	}
	recreate := func() {
		t.Helper()
		mustRun(t, s, `DROP TABLE rp`)
		mustRun(t, s, `DROP TABLE rpa`)
		mustRun(t, s, `CREATE TABLE rp (id bigint PRIMARY KEY, v text)`)
		mustRun(t, s, `CREATE TABLE rpa (id bigint, v text)`)
		mustRun(t, s, `INSERT INTO rp VALUES (1, 'new')`)
		mustRun(t, s, `INSERT INTO rpa VALUES (1, 'new')`)
	}
	for _, c := range cases {
		table := "rp"
		if strings.Contains(c.text, "rpa") {
			table = "rpa"
		}
		recreate()
		sts, err := s.Parse(ctx, c.text, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.text, err)
		}
		st := sts[0]
		recreate()
		rows, err := bindRun(ctx, st, c.param)
		if err != nil {
			t.Errorf("%s after DROP and CREATE: %v", c.text, err)
			continue
		}
		if got := strings.Join(rows, "\n"); got != c.rows {
			t.Errorf("%s after DROP and CREATE: rows %q, want %q", c.text, got, c.rows)
		}
		if got := strings.Join(mustRun(t, s, `SELECT id, v FROM `+table+` ORDER BY id`), "\n"); got != c.effect {
			t.Errorf("%s after DROP and CREATE: %s holds %q, want %q", c.text, table, got, c.effect)
		}
		// Dropped: 42P01 naming the table as the statement wrote it; back
		// again: it runs.
		mustRun(t, s, `DROP TABLE `+table)
		if _, err := bindRun(ctx, st, c.param); sqlerr.Code(err) != sqlerr.UndefinedTable || !strings.Contains(err.Error(), `relation "`+table+`" does not exist`) {
			t.Errorf("%s with its table dropped: %v, want 42P01 relation %q does not exist", c.text, err, table)
		}
		mustRun(t, s, `CREATE TABLE `+table+` (id bigint PRIMARY KEY, v text)`)
		if _, err := bindRun(ctx, st, c.param); err != nil {
			t.Errorf("%s with its table created again: %v", c.text, err)
		}
	}

	// search_path: the statement's names resolve on the current path.
	mustRun(t, s, `CREATE SCHEMA rpx`)
	mustRun(t, s, `CREATE TABLE rpx.rp (id bigint PRIMARY KEY, v text)`)
	mustRun(t, s, `INSERT INTO rpx.rp VALUES (1, 'in rpx')`)
	mustRun(t, s, `INSERT INTO rp VALUES (1, 'in public')`)
	sts, err := s.Parse(ctx, `SELECT v FROM rp WHERE id = $1`, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, s, `SET search_path = rpx`)
	if rows, err := bindRun(ctx, sts[0], int64(1)); err != nil || strings.Join(rows, ",") != "in rpx" {
		t.Errorf("after SET search_path = rpx: %v %v, want in rpx", rows, err)
	}
	mustRun(t, s, `RESET search_path`)

	// The result changes shape: 0A000, as PostgreSQL; the parameter types
	// stay those the client was told.
	for _, c := range []struct{ text, ddl string }{
		{`SELECT * FROM rp WHERE id = $1`, `ALTER TABLE rp ADD COLUMN w int`},
		{`SELECT * FROM rp WHERE id = $1`, `ALTER TABLE rp RENAME COLUMN v TO v2`},
		{`SELECT v FROM rp WHERE id = $1`, `DROP TABLE rp; CREATE TABLE rp (id bigint PRIMARY KEY, v int)`},
		{`INSERT INTO rp VALUES ($1) RETURNING *`, `DROP TABLE rp; CREATE TABLE rp (id bigint PRIMARY KEY, w text)`},
	} {
		mustRun(t, s, `DROP TABLE IF EXISTS rp; CREATE TABLE rp (id bigint PRIMARY KEY, v text)`)
		sts, err := s.Parse(ctx, c.text, nil)
		if err != nil {
			t.Fatal(err)
		}
		mustRun(t, s, c.ddl)
		if _, err := bindRun(ctx, sts[0], int64(1)); sqlerr.Code(err) != sqlerr.FeatureNotSupported || err.Error() != "cached plan must not change result type" {
			t.Errorf("%s after %s: %v, want 0A000 cached plan must not change result type", c.text, c.ddl, err)
		}
		if _, err := sts[0].Describe(ctx); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
			t.Errorf("Describe of %s after %s: %v, want 0A000", c.text, c.ddl, err)
		}
	}
	// A parameter's column retyped: the statement keeps its parameter type.
	mustRun(t, s, `DROP TABLE rp; CREATE TABLE rp (id bigint PRIMARY KEY, v text)`)
	sts, err = s.Parse(ctx, `SELECT count(*) FROM rp WHERE id = $1`, nil)
	if err != nil {
		t.Fatal(err)
	}
	before := sts[0].ParamOIDs()
	mustRun(t, s, `DROP TABLE rp; CREATE TABLE rp (id int PRIMARY KEY, v text)`)
	if rows, err := bindRun(ctx, sts[0], int64(1)); err != nil || strings.Join(rows, ",") != "0" {
		t.Errorf("count after id retyped: %v %v", rows, err)
	}
	if after := sts[0].ParamOIDs(); len(after) != 1 || after[0] != before[0] {
		t.Errorf("parameter types %v, then %v", before, after)
	}
}

// TestExecuteReplan: SQL PREPARE/EXECUTE plans each EXECUTE against the
// catalog of the moment, and refuses, as PostgreSQL, one whose result
// would change (0A000 "cached plan must not change result type").
func TestExecuteReplan(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE rx (id bigint PRIMARY KEY, v text)`)
	mustRun(t, s, `INSERT INTO rx VALUES (1, 'a')`)
	mustRun(t, s, `PREPARE q(bigint) AS SELECT * FROM rx WHERE id = $1`)
	mustRun(t, s, `PREPARE ins(bigint) AS INSERT INTO rx VALUES ($1, 'i')`)
	mustRun(t, s, `DROP TABLE rx; CREATE TABLE rx (id bigint PRIMARY KEY, v text); INSERT INTO rx VALUES (1, 'new')`)
	expectRows(t, s, `EXECUTE q(1)`, "1|new")
	mustRun(t, s, `EXECUTE ins(2)`)
	expectRows(t, s, `SELECT id, v FROM rx ORDER BY id`, "1|new", "2|i")
	mustRun(t, s, `ALTER TABLE rx ADD COLUMN w int`)
	wantCode(t, s, `EXECUTE q(1)`, sqlerr.FeatureNotSupported)
	mustRun(t, s, `EXECUTE ins(3)`) // no result: nothing to change
	mustRun(t, s, `DEALLOCATE q`)
	mustRun(t, s, `PREPARE q(bigint) AS SELECT * FROM rx WHERE id = $1`)
	expectRows(t, s, `EXECUTE q(3)`, "3|i|NULL")
}
