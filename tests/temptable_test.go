package tests

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

// queryOne returns the single text value of q on c.
func queryOne(t *testing.T, ctx context.Context, c *pgx.Conn, q string) string {
	t.Helper()
	got := queryStrings(t, ctx, c, q)
	if len(got) != 1 {
		t.Fatalf("%s: %v, want one value", q, got)
	}
	return got[0]
}

// execTag runs q and returns its command tag.
func execTag(t *testing.T, ctx context.Context, c *pgx.Conn, q string) string {
	t.Helper()
	tag, err := c.Exec(ctx, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return tag.String()
}

// TestTempTables: CREATE TEMP TABLE (and … AS SELECT) makes a table of the
// session alone: INSERT/UPDATE/DELETE/RETURNING on it, joins with lake
// tables, unqualified names find it before lake tables of the search path,
// another session may have one of the same name, no catalog listing shows
// it, ON COMMIT DROP and ROLLBACK drop it, and it is gone with the session.
func TestTempTables(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	a := srv.connect(t)
	b := srv.connect(t)
	mustExec(t, ctx, a, "CREATE SCHEMA tmp_s", "CREATE TABLE tmp_s.lake (id bigint, v text, PRIMARY KEY (id))",
		"INSERT INTO tmp_s.lake VALUES (1, 'x'), (2, 'y')")
	t.Cleanup(func() { _, _ = b.Exec(context.Background(), "DROP SCHEMA tmp_s CASCADE") })

	if tag := execTag(t, ctx, a, "CREATE TEMP TABLE tt (id bigint, w text)"); tag != "CREATE TABLE" {
		t.Errorf("CREATE TEMP TABLE tag %q", tag)
	}
	for _, c := range [][2]string{
		{"INSERT INTO tt VALUES (1, 'one'), (3, 'three'), (4, 'four')", "INSERT 0 3"},
		{"UPDATE tt SET w = 'uno' WHERE id = 1", "UPDATE 1"},
		{"DELETE FROM pg_temp.tt WHERE id = 4", "DELETE 1"},
	} {
		if tag := execTag(t, ctx, a, c[0]); tag != c[1] {
			t.Errorf("%s: tag %q, want %q", c[0], tag, c[1])
		}
	}
	var ret int64
	if err := a.QueryRow(ctx, "INSERT INTO tt VALUES ($1, 'five') RETURNING id * 10", 5).Scan(&ret); err != nil || ret != 50 {
		t.Errorf("INSERT … RETURNING: %d, %v", ret, err)
	}
	if got := queryOne(t, ctx, a, "SELECT string_agg(l.v || '=' || t.w, ',' ORDER BY l.id) FROM tmp_s.lake l JOIN tt t ON t.id = l.id"); got != "x=uno" {
		t.Errorf("join with a lake table: %q", got)
	}
	mustExec(t, ctx, a, "INSERT INTO tt SELECT id + 100, v FROM tmp_s.lake")
	if got := queryOne(t, ctx, a, "SELECT count(*) FROM tt"); got != "5" {
		t.Errorf("rows after INSERT … SELECT from a lake table: %s", got)
	}

	// Another session: a table of the same name, its own rows.
	mustExec(t, ctx, b, "CREATE TEMP TABLE tt (id int, other text)", "INSERT INTO tt VALUES (7, 'b')")
	if got := queryOne(t, ctx, b, "SELECT string_agg(id || other, ',') FROM tt"); got != "7b" {
		t.Errorf("session b's tt: %q", got)
	}
	if got := queryOne(t, ctx, a, "SELECT count(*) FROM tt WHERE id = 7"); got != "0" {
		t.Errorf("session a sees b's rows: %s", got)
	}
	for _, q := range []string{
		"SELECT count(*) FROM lakesoul.tables WHERE table_name = 'tt'",
		"SELECT count(*) FROM information_schema.tables WHERE table_name = 'tt'",
		"SELECT count(*) FROM pg_class WHERE relname = 'tt'",
	} {
		if got := queryOne(t, ctx, b, q); got != "0" {
			t.Errorf("%s: %s", q, got)
		}
	}

	mustExec(t, ctx, b, "DISCARD TEMP")
	if _, err := b.Exec(ctx, "SELECT * FROM tt"); pgCode(err) != "42P01" {
		t.Errorf("after DISCARD TEMP: %v, want 42P01", err)
	}

	// CREATE TEMP TABLE … AS, and shadowing a lake table of the search path.
	if tag := execTag(t, ctx, a, "CREATE TEMP TABLE tc AS SELECT id, v FROM tmp_s.lake WHERE id > 1"); tag != "SELECT 1" {
		t.Errorf("CREATE TEMP TABLE AS tag %q", tag)
	}
	if got := queryOne(t, ctx, a, "SELECT v FROM tc"); got != "y" {
		t.Errorf("tc: %q", got)
	}
	mustExec(t, ctx, a, "SET search_path = tmp_s, public", "CREATE TEMP TABLE lake (id bigint, v text)", "INSERT INTO lake VALUES (9, 'temp')")
	if got := queryOne(t, ctx, a, "SELECT string_agg(v, ',') FROM lake"); got != "temp" {
		t.Errorf("unqualified name: %q, want the temporary table", got)
	}
	if got := queryOne(t, ctx, a, "SELECT count(*) FROM tmp_s.lake"); got != "2" {
		t.Errorf("qualified lake table: %s", got)
	}
	mustExec(t, ctx, a, "DROP TABLE lake")
	if got := queryOne(t, ctx, a, "SELECT count(*) FROM lake"); got != "2" {
		t.Errorf("after DROP of the temporary table: %s, want the lake table's rows", got)
	}

	// ON COMMIT DROP, ROLLBACK, duplicates.
	mustExec(t, ctx, a, "BEGIN", "CREATE TEMP TABLE od (x int) ON COMMIT DROP", "INSERT INTO od VALUES (1)")
	if got := queryOne(t, ctx, a, "SELECT count(*) FROM od"); got != "1" {
		t.Errorf("od in its block: %s", got)
	}
	mustExec(t, ctx, a, "COMMIT", "BEGIN", "CREATE TEMP TABLE rb (x int)", "ROLLBACK")
	for _, q := range []string{"SELECT * FROM od", "SELECT * FROM rb"} {
		if _, err := a.Exec(ctx, q); pgCode(err) != "42P01" {
			t.Errorf("%s: %v, want 42P01", q, err)
		}
	}
	if _, err := a.Exec(ctx, "CREATE TEMP TABLE tt (z int)"); pgCode(err) != "42P07" {
		t.Errorf("duplicate temporary table: %v, want 42P07", err)
	}
	mustExec(t, ctx, a, "CREATE TEMP TABLE IF NOT EXISTS tt (z int)")
	if _, err := a.Exec(ctx, "CREATE TEMP TABLE tmp_s.bad (z int)"); pgCode(err) != "42P16" {
		t.Errorf("temporary table in a lake schema: %v, want 42P16", err)
	}

	// Gone with the session, even for sessions that reuse its DuckDB
	// connection.
	a.Close(ctx)
	for range 4 {
		c := srv.connect(t)
		if _, err := c.Exec(ctx, "SELECT * FROM tt"); pgCode(err) != "42P01" {
			t.Errorf("a new session reads a closed session's temporary table: %v", err)
		}
		if _, err := c.Exec(ctx, "SELECT * FROM pg_temp.tc"); pgCode(err) != "42P01" {
			t.Errorf("pg_temp.tc in a new session: %v", err)
		}
		c.Close(ctx)
	}
}
