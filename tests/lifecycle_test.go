package tests

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestRestart stops the server with SIGTERM (while a client is connected)
// and starts it again on the same data dir: every table and row is still
// there, and the server keeps working.
func TestRestart(t *testing.T) {
	t.Parallel()
	requirePG(t)
	base := testBaseDir(t)
	dataDir := filepath.Join(base, "data")
	const pw = "restart pw with spaces & ünïcode"

	srv := startServerT(t, dataDir, pw)
	ctx := testCtx(t)
	c := srv.connect(t)
	mustExec(t, ctx, c,
		"CREATE SCHEMA r",
		"CREATE TABLE r.t (id bigint, k text, v double precision, d date, PRIMARY KEY (id)) PARTITION BY LIST (d) WITH (hash_bucket_num = 2)",
		"CREATE TABLE r.log (msg text, n int)",
		"CREATE SCHEMA r2",
		"CREATE TABLE r2.empty (id int PRIMARY KEY)",
		"INSERT INTO r.t VALUES (1, 'a', 1.0, '2026-01-01'), (2, 'b', 2.0, '2026-01-02'), (3, 'c', 3.0, '2026-01-02')",
		"INSERT INTO r.t (id, v, d) VALUES (2, 20.0, '2026-01-02')",
		"INSERT INTO r.log VALUES ('hello', 1)",
		"INSERT INTO r.log VALUES ('hello', 1)")
	wantT := []string{"1|a|1|2026-01-01", "2|b|20|2026-01-02", "3|c|3|2026-01-02"}
	wantLog := []string{"hello|1", "hello|1"}
	wantTables := []string{"r|log", "r|t", "r2|empty"}
	tablesQuery := "SELECT table_schema, table_name FROM information_schema.tables WHERE table_schema IN ('r', 'r2') ORDER BY 1, 2"
	check := func(what string, c *pgx.Conn) {
		t.Helper()
		wantRows(t, what+": r.t", queryStrings(t, ctx, c, "SELECT * FROM r.t ORDER BY id"), wantT)
		wantRows(t, what+": r.log", queryStrings(t, ctx, c, "SELECT * FROM r.log"), wantLog)
		wantRows(t, what+": r2.empty", queryStrings(t, ctx, c, "SELECT count(*) FROM r2.empty"), []string{"0"})
		wantRows(t, what+": tables", queryStrings(t, ctx, c, tablesQuery), wantTables)
		wantRows(t, what+": filter", queryStrings(t, ctx, c, "SELECT id FROM r.t WHERE v > 2.5 AND d = '2026-01-02' ORDER BY id"),
			[]string{"2", "3"})
	}
	check("before restart", c)

	// c stays open across the stop: the server must end it and still exit 0.
	srv.stopT(t)
	if _, err := c.Exec(ctx, "SELECT 1"); err == nil {
		t.Error("a session survived the server's shutdown")
	} else if code := pgCode(err); code != "" && code != "57P01" {
		t.Errorf("session at shutdown: SQLSTATE %q (%v), want 57P01 or a closed connection", code, err)
	}

	srv = startServerT(t, dataDir, pw)
	c = srv.connect(t)
	check("after restart", c)

	// Writes after the restart merge with what was there.
	mustExec(t, ctx, c,
		"INSERT INTO r.t (id, k, d) VALUES (3, 'cc', '2026-01-02'), (4, 'd', '2026-01-02')",
		"INSERT INTO r.log VALUES ('again', 2)",
		"CREATE TABLE r.after (x int)")
	wantT = []string{"1|a|1|2026-01-01", "2|b|20|2026-01-02", "3|cc|3|2026-01-02", "4|d|NULL|2026-01-02"}
	wantLog = []string{"again|2", "hello|1", "hello|1"}
	wantTables = []string{"r|after", "r|log", "r|t", "r2|empty"}
	wantRows(t, "after restart and writes: r.t", queryStrings(t, ctx, c, "SELECT * FROM r.t ORDER BY id"), wantT)
	wantRows(t, "after restart and writes: r.log", queryStrings(t, ctx, c, "SELECT * FROM r.log ORDER BY msg"), wantLog)
	wantRows(t, "after restart and writes: tables", queryStrings(t, ctx, c, tablesQuery), wantTables)
	c.Close(ctx)
	srv.stopT(t)
}

// TestDropTable checks that DROP TABLE removes the table (42P01 afterwards)
// and its directory under <data-dir>/warehouse/<schema>/<table>, that a new
// table of the same name starts empty, and that DROP SCHEMA ... CASCADE
// removes the remaining tables and their directories.
func TestDropTable(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := srv.connect(t)
	mustExec(t, ctx, c,
		"CREATE SCHEMA dr",
		"CREATE TABLE dr.t (id bigint PRIMARY KEY, d date) PARTITION BY LIST (d)",
		"CREATE TABLE dr.keep (x int)",
		"INSERT INTO dr.t VALUES (1, '2026-01-01'), (2, '2026-01-02')",
		"INSERT INTO dr.keep VALUES (7)")
	tDir := filepath.Join(srv.dataDir, "warehouse", "dr", "t")
	keepDir := filepath.Join(srv.dataDir, "warehouse", "dr", "keep")
	if files := filesUnder(t, tDir); len(files) == 0 {
		t.Fatalf("no data files under %s before DROP TABLE", tDir)
	}
	keepFiles := filesUnder(t, keepDir)
	if len(keepFiles) == 0 {
		t.Fatalf("no data files under %s", keepDir)
	}

	tag, err := c.Exec(ctx, "DROP TABLE dr.t")
	if err != nil || tag.String() != "DROP TABLE" {
		t.Fatalf("DROP TABLE dr.t: %q, %v", tag, err)
	}
	for _, q := range []string{"SELECT * FROM dr.t", "INSERT INTO dr.t VALUES (3, '2026-01-03')", "DROP TABLE dr.t"} {
		if _, err := c.Exec(ctx, q); pgCode(err) != "42P01" {
			t.Errorf("%s after DROP TABLE: SQLSTATE %q (%v), want 42P01", q, pgCode(err), err)
		}
	}
	if _, err := os.Stat(tDir); !os.IsNotExist(err) {
		t.Errorf("%s still exists after DROP TABLE (%v); holds %q", tDir, err, filesUnder(t, tDir))
	}
	mustExec(t, ctx, c, "DROP TABLE IF EXISTS dr.t")
	wantRows(t, "dr.keep after dropping dr.t", queryStrings(t, ctx, c, "SELECT x FROM dr.keep"), []string{"7"})
	if got := filesUnder(t, keepDir); !slices.Equal(got, keepFiles) {
		t.Errorf("files of dr.keep changed by DROP TABLE dr.t: %q, want %q", got, keepFiles)
	}
	wantRows(t, "tables of dr",
		queryStrings(t, ctx, c, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'dr' ORDER BY 1"),
		[]string{"keep"})

	// A new table of the same name does not see the old one's data.
	mustExec(t, ctx, c,
		"CREATE TABLE dr.t (id bigint PRIMARY KEY, d date) PARTITION BY LIST (d)",
		"INSERT INTO dr.t VALUES (9, '2026-01-01')")
	wantRows(t, "re-created dr.t", queryStrings(t, ctx, c, "SELECT id, d FROM dr.t ORDER BY id"), []string{"9|2026-01-01"})

	// DROP SCHEMA ... CASCADE drops the rest.
	if _, err := c.Exec(ctx, "DROP SCHEMA dr"); pgCode(err) != "2BP01" {
		t.Errorf("DROP SCHEMA dr (not empty): SQLSTATE %q (%v), want 2BP01", pgCode(err), err)
	}
	mustExec(t, ctx, c, "DROP SCHEMA dr CASCADE")
	for _, q := range []string{"SELECT * FROM dr.t", "SELECT * FROM dr.keep"} {
		if _, err := c.Exec(ctx, q); pgCode(err) != "42P01" {
			t.Errorf("%s after DROP SCHEMA CASCADE: SQLSTATE %q (%v), want 42P01", q, pgCode(err), err)
		}
	}
	for _, dir := range []string{tDir, keepDir} {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s still exists after DROP SCHEMA CASCADE (%v); holds %q", dir, err, filesUnder(t, dir))
		}
	}
	if _, err := c.Exec(ctx, "CREATE TABLE dr.t (x int)"); pgCode(err) != "3F000" {
		t.Errorf("CREATE TABLE in a dropped schema: SQLSTATE %q (%v), want 3F000", pgCode(err), err)
	}
}

// TestGeneratedPassword starts a fresh data dir without --admin-password:
// the server generates a password, saves it in <data-dir>/admin-password
// (mode 0600) and it works, also after a restart, which keeps it.
func TestGeneratedPassword(t *testing.T) {
	t.Parallel()
	requirePG(t)
	base := testBaseDir(t)
	dataDir := filepath.Join(base, "data")
	pwFile := filepath.Join(dataDir, "admin-password")

	srv := startServerT(t, dataDir, "")
	ctx := testCtx(t)
	fi, err := os.Stat(pwFile)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode() != 0o600 {
		t.Errorf("%s has mode %v, want -rw------- (0600)", pwFile, fi.Mode())
	}
	raw, err := os.ReadFile(pwFile)
	if err != nil {
		t.Fatal(err)
	}
	pw := strings.TrimSpace(string(raw))
	if len(pw) < 16 {
		t.Errorf("generated password %q is shorter than 16 characters", pw)
	}

	conn, err := pgx.Connect(ctx, srv.dsn(adminRole, pw, database))
	if err != nil {
		t.Fatalf("connect with the generated password: %v", err)
	}
	mustExec(t, ctx, conn, "CREATE SCHEMA g", "CREATE TABLE g.t (x int)", "INSERT INTO g.t VALUES (1)")
	conn.Close(ctx)
	if conn, err := pgx.Connect(ctx, srv.dsn(adminRole, pw+"x", database)); err == nil {
		conn.Close(ctx)
		t.Error("a wrong password was accepted")
	} else if pgCode(err) != "28P01" {
		t.Errorf("wrong password: SQLSTATE %q (%v), want 28P01", pgCode(err), err)
	}
	srv.stopT(t)

	// Restarted without --admin-password, the saved password stays valid.
	srv = startServerT(t, dataDir, "")
	if raw2, err := os.ReadFile(pwFile); err != nil || string(raw2) != string(raw) {
		t.Errorf("admin-password changed across a restart: %q -> %q (%v)", raw, raw2, err)
	}
	conn, err = pgx.Connect(ctx, srv.dsn(adminRole, pw, database))
	if err != nil {
		t.Fatalf("connect with the generated password after a restart: %v", err)
	}
	wantRows(t, "g.t after restart", queryStrings(t, ctx, conn, "SELECT x FROM g.t"), []string{"1"})
	conn.Close(ctx)
	srv.stopT(t)
}
