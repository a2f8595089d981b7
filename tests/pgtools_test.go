package tests

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// PostgreSQL's own tools against lakesoul serve (issue 35, item 10):
// vacuumdb, pgbench -i and pg_restore in one pass, as their users run them.

// pgToolPath finds a PostgreSQL 15 client program (Debian's
// postgresql-client-15), failing with LAKESOUL_REQUIRE_PG=1 when it is
// missing.
func pgToolPath(t *testing.T, name string) string {
	t.Helper()
	for _, p := range []string{"/usr/lib/postgresql/15/bin/" + name, "/usr/bin/" + name} {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
	}
	if os.Getenv(envRequirePG) == "1" {
		t.Fatalf("%s is required (%s=1) but was not found", name, envRequirePG)
	}
	t.Skipf("%s not found (%s=1 makes this a failure)", name, envRequirePG)
	return ""
}

// toolConn is the environment and connection flags of a client program
// logging in to srv as the admin.
func toolConn(t *testing.T, srv *server) (env []string, conn []string) {
	t.Helper()
	pw, err := srv.adminPassword()
	if err != nil {
		t.Fatal(err)
	}
	return cleanEnv("PGPASSWORD=" + pw), []string{"-h", "127.0.0.1", "-p", strconv.Itoa(srv.port), "-U", adminRole}
}

// TestVacuumdb runs vacuumdb on the database (it sends VACUUM for every
// table pg_class lists, pg_catalog's included), with --analyze-in-stages,
// and with --all, which lists the databases pg_database shows and vacuums
// each: the one database served.
func TestVacuumdb(t *testing.T) {
	bin := pgToolPath(t, "vacuumdb")
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := srv.connect(t)
	mustExec(t, ctx, c, "CREATE SCHEMA vac", "CREATE TABLE vac.t (id int PRIMARY KEY, v text)",
		"INSERT INTO vac.t VALUES (1, 'a')", "INSERT INTO vac.t VALUES (1, 'b')")
	env, conn := toolConn(t, srv)
	out := runTool(t, ctx, env, "", bin, append([]string{"-d", database, "-e"}, conn...)...)
	if !strings.Contains(out, "VACUUM pg_catalog.pg_class;") || !strings.Contains(out, "VACUUM vac.t;") {
		t.Errorf("vacuumdb did not vacuum the catalog's and the lake's tables:\n%s", out)
	}
	runTool(t, ctx, env, "", bin, append([]string{"-d", database, "--analyze-in-stages"}, conn...)...)
	out = runTool(t, ctx, env, "", bin, append([]string{"--all", "--maintenance-db", database, "-e"}, conn...)...)
	if strings.Count(out, "vacuuming database") != 1 || !strings.Contains(out, `vacuuming database "lakesoul"`) ||
		!strings.Contains(out, "VACUUM vac.t;") {
		t.Errorf("vacuumdb --all:\n%s", out)
	}
	wantRows(t, "rows after vacuumdb", queryStrings(t, ctx, c, "SELECT id || ':' || v FROM vac.t"), []string{"1:b"})
}

// TestPgbenchInit runs pgbench -i twice (its tables dropped and made again,
// client- and server-side data generation): the tables get their rows, then
// their primary keys (ALTER TABLE … ADD PRIMARY KEY over rows, after its
// VACUUM); a short run of the default script works on them.
func TestPgbenchInit(t *testing.T) {
	bin := pgToolPath(t, "pgbench")
	srv := sharedServer(t)
	ctx := testCtx(t)
	env, conn := toolConn(t, srv)
	for _, steps := range []string{"dtgvp", "dtGvp"} {
		runTool(t, ctx, env, "", bin, append([]string{"-i", "-I", steps, "-s", "1", "--quiet"}, append(conn, database)...)...)
		// A new session: pgbench -i dropped and made the tables again, and
		// a statement prepared over the dropped ones fails 42P01 instead
		// of being planned again as PostgreSQL does (checkPlanTables).
		c := srv.connect(t)
		wantRows(t, "pgbench tables", queryStrings(t, ctx, c, `SELECT (SELECT count(*) FROM pgbench_accounts) || ':' ||
			(SELECT count(DISTINCT aid) FROM pgbench_accounts) || ':' || (SELECT count(*) FROM pgbench_branches) || ':' ||
			(SELECT count(*) FROM pgbench_tellers) || ':' || (SELECT count(*) FROM pgbench_history)`), []string{"100000:100000:1:10:0"})
		wantRows(t, "pgbench keys", queryStrings(t, ctx, c, `SELECT table_name || '.' || column_name FROM information_schema.key_column_usage
			WHERE table_name LIKE 'pgbench%' ORDER BY 1`),
			[]string{"pgbench_accounts.aid", "pgbench_branches.bid", "pgbench_tellers.tid"})
	}
	runTool(t, ctx, env, "", bin, append([]string{"-n", "-c", "2", "-t", "5"}, append(conn, database)...)...)
	c := srv.connect(t)
	wantRows(t, "pgbench history", queryStrings(t, ctx, c, "SELECT count(*) FROM pgbench_history"), []string{"10"})
	wantRows(t, "pgbench accounts", queryStrings(t, ctx, c, "SELECT count(*) FROM pgbench_accounts"), []string{"100000"})
}

// TestPgRestoreSinglePass dumps a lake schema in pg_dump's custom format and
// restores it with pg_restore in one pass — the tables, their rows, then
// their keys, defaults and sequences — once statement by statement and once
// as one transaction (-1), and compares the restored rows and keys.
func TestPgRestoreSinglePass(t *testing.T) {
	dumpBin, restoreBin := pgToolPath(t, "pg_dump"), pgToolPath(t, "pg_restore")
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := srv.connect(t)
	mustExec(t, ctx, c,
		"CREATE SCHEMA rst",
		"CREATE TABLE rst.kv (id bigint PRIMARY KEY, name text NOT NULL, score double precision)",
		"CREATE TABLE rst.pair (a int, b text, n int DEFAULT 3, PRIMARY KEY (a, b))",
		"CREATE TABLE rst.ser (id serial PRIMARY KEY, tags text[])",
		"CREATE TABLE rst.log (at date, msg text)",
		"INSERT INTO rst.kv VALUES (1, 'a', 1.5), (2, 'b', NULL), (3, 'c', -2)",
		"INSERT INTO rst.pair VALUES (1, 'x', 1), (1, 'y', 2), (2, 'x', NULL)",
		"INSERT INTO rst.ser (tags) VALUES ('{a,b}'), (NULL), ('{}')",
		"INSERT INTO rst.log VALUES ('2026-01-01', 'one'), (NULL, 'two')",
		"CREATE VIEW rst.kv_named AS SELECT id, name FROM rst.kv")
	snapshot := func() []string {
		// A new session each time (see TestPgbenchInit on prepared
		// statements over tables dropped and made again).
		c := srv.connect(t)
		return queryStrings(t, ctx, c, `SELECT 'kv', id::text || ':' || name || ':' || coalesce(score::text, '-') FROM rst.kv
			UNION ALL SELECT 'pair', a || ':' || b || ':' || coalesce(n::text, '-') FROM rst.pair
			UNION ALL SELECT 'ser', id || ':' || coalesce(array_to_string(tags, ','), '-') FROM rst.ser
			UNION ALL SELECT 'log', coalesce(at::text, '-') || ':' || msg FROM rst.log
			UNION ALL SELECT 'view', count(*)::text FROM rst.kv_named ORDER BY 1, 2`)
	}
	keys := func() []string {
		c := srv.connect(t)
		return queryStrings(t, ctx, c, `SELECT table_name || '.' || column_name || ':' || ordinal_position
			FROM information_schema.key_column_usage WHERE table_schema = 'rst' ORDER BY 1`)
	}
	want, wantKeys := snapshot(), keys()
	env, conn := toolConn(t, srv)
	file := t.TempDir() + "/rst.dump"
	runTool(t, ctx, env, "", dumpBin, append([]string{"-Fc", "-n", "rst", "-f", file, "-d", database}, conn...)...)
	for _, single := range []bool{false, true} {
		mustExec(t, ctx, c, "DROP SCHEMA rst CASCADE")
		args := append([]string{"-d", database, "--exit-on-error", "--no-owner"}, conn...)
		if single {
			args = append(args, "--single-transaction")
		}
		runTool(t, ctx, env, "", restoreBin, append(args, file)...)
		wantRows(t, "restored rows", snapshot(), want)
		wantRows(t, "restored keys", keys(), wantKeys)
		// The restored serial goes on after the restored rows.
		c := srv.connect(t)
		wantRows(t, "restored sequence", queryStrings(t, ctx, c, "INSERT INTO rst.ser (tags) VALUES (NULL) RETURNING id"), []string{"4"})
		mustExec(t, ctx, c, "DELETE FROM rst.ser WHERE id = 4")
	}
}

// TestVacuumlo runs vacuumlo (verbose, then as a dry run): it copies the
// large objects' OIDs into a temporary table (CREATE TEMP TABLE … AS SELECT
// … FROM pg_largeobject_metadata), ANALYZEs it, looks for oid columns in
// pg_class/pg_attribute and reads the table through a WITH HOLD cursor;
// lake tables hold no large objects, so none is removed.
func TestVacuumlo(t *testing.T) {
	bin := pgToolPath(t, "vacuumlo")
	srv := sharedServer(t)
	ctx := testCtx(t)
	env, conn := toolConn(t, srv)
	for _, flag := range []string{"-v", "-n"} {
		out := runTool(t, ctx, env, "", bin, append(append([]string{flag}, conn...), database)...)
		if !strings.Contains(out, "0 large objects") {
			t.Errorf("vacuumlo %s:\n%s", flag, out)
		}
	}
}
