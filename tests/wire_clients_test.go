package tests

import (
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/lib/pq"
)

// The statement and wire fixes of issue 14 ("wire and statements"), each
// driven by the client that found it: node-postgres, postgres.js, lib/pq and
// psqlodbc send untyped parameters; pgjdbc typed ones, BEGIN READ ONLY and
// SET SESSION CHARACTERISTICS; postgres.js waits for Parse/Describe errors
// after a Flush; psqlodbc drops its prepared statements with DEALLOCATE.

// nodePackages installs npm packages into a temp dir (npm install at test
// time) and returns the node binary and the environment that finds them and
// connects to srv.
func nodePackages(t *testing.T, srv *server, pkgs ...string) (node string, env []string) {
	t.Helper()
	node = requireClient(t, "node", "node")
	npm := requireClient(t, "npm", "npm")
	dir := t.TempDir()
	ictx, cancel := context.WithTimeout(testCtx(t), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ictx, npm, append([]string{"install", "--no-audit", "--no-fund", "--silent"}, pkgs...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		if os.Getenv(envRequirePG) == "1" {
			t.Fatalf("npm install %v: %v\n%s", pkgs, err, out)
		}
		t.Skipf("npm install %v failed (%v); %s=1 makes this a failure", pkgs, err, envRequirePG)
	}
	pw, _ := srv.adminPassword()
	env = []string{"NODE_PATH=" + filepath.Join(dir, "node_modules"), "PGHOST=127.0.0.1",
		"PGPORT=" + strconv.Itoa(srv.port), "PGUSER=" + adminRole, "PGPASSWORD=" + pw, "PGDATABASE=" + database}
	return node, env
}

// TestNodePostgresStatements: UPDATE/DELETE/MERGE with node-postgres's
// untyped parameters (item 1), UPDATE … FROM counts, transaction
// characteristics and current_setting (item 5), DDL rolled back with its
// block (item 4), NOT NULL and SERIAL (item 9), the hint of unsupported
// statements (item 10), and a usable connection after each error.
func TestNodePostgresStatements(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	node, env := nodePackages(t, srv, "pg@8")
	got := runClient(t, testCtx(t), env, node, testdataPath(t, "wire_pg.js"), "wire_nodepg")
	expectLines(t, got,
		"UPDATE_PK UPDATE 1",
		"UPDATE_PK_ALL 2",
		"UPDATE_AP 1",
		"UPDATE_AP_ALL 3",
		"DELETE_AP 1",
		"MERGE MERGE",
		`PK [[1,"x",7],[2,"b",7],[5,"m",5]]`,
		`AP [[1,"y"],[2,"y"]]`,
		"UPDATE_FROM 1",
		"ISOLATION read committed",
		"ISOLATION_BLOCK serializable",
		"READ_ONLY_INSERT 25006",
		"SEARCH_PATH true wire_nodepg, public",
		"PARTIAL_NEW_KEY 23502",
		"PARTIAL_OLD_KEY OK",
		"SET_NULL 23502",
		"SERIAL OK",
		`SERIAL_RETURNING [{"id":1,"v":"a"},{"id":2,"v":"b"}]`,
		`PK2 [[2,"kept n",7]]`,
		"AFTER_DROP_ROLLBACK [[2]]",
		"AFTER_CREATE_ROLLBACK 42P01",
		"UNSUPPORTED 0A000 true",
		"SYNTAX 42601",
		"AFTER_ERRORS [[1]]",
		"DONE",
	)
}

// TestPostgresJS runs postgres.js, which prepares with Parse/Describe/Flush
// and waits: errors of parameterised queries must arrive without a Sync
// (item 2; before, the client hung until the test's deadline killed it) and
// leave the connection usable; UPDATE with parameters works (item 1).
func TestPostgresJS(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	node, env := nodePackages(t, srv, "postgres@3")
	got := runClient(t, testCtx(t), env, node, testdataPath(t, "wire_postgresjs.js"), "wire_pgjs")
	expectLines(t, got,
		"ERR_COLUMN 42703",
		"ERR_TABLE 42P01",
		"ERR_VALUE 22P02",
		"ERR_SYNTAX 42601",
		`AFTER [{"id":1,"c":"a"}]`,
		"UPDATE UPDATE 1",
		`ROW [{"c":"b"}]`,
		"DONE",
	)
}

// TestJDBCStatements runs pgjdbc: typed parameters in UPDATE and DELETE of
// append and primary-key tables (item 1), getTransactionIsolation and
// setReadOnly (item 5), DDL with autocommit off (item 4), SQLSTATEs of bad
// input with the connection going on.
func TestJDBCStatements(t *testing.T) {
	t.Parallel()
	got := runJDBC(t, "WireJdbc", "wire_jdbc")
	expectLines(t, got,
		"UPDATE_AP 1", "DELETE_AP 1", "ROWS_AP 1:x",
		"UPDATE_PK 1", "DELETE_PK 1", "ROWS_PK 1:x",
		"ISOLATION 2", // TRANSACTION_READ_COMMITTED, PostgreSQL's default
		"ISOLATION_SET 8",
		"READ_ONLY_SELECT OK",
		"READ_ONLY_INSERT 25006",
		"CREATE OK", "INSERT_NEW OK", "AFTER_ROLLBACK 42P01", "AFTER_COMMIT 1",
		"SERIAL OK",
		"PARTIAL_NEW_KEY 23502",
		"UNSUPPORTED 0A000",
		"SYNTAX 42601",
		"AFTER_ERRORS 1",
		"BATCH_FAILED 22012",
		"AFTER_BATCH_FAILURE 0",
		"BATCH_ROWS 50 COMMITS 1",
		"DONE",
	)
}

// TestPsqlODBC runs psqlodbc (Debian's odbc-postgresql) through pyodbc with
// server-side prepare: it DEALLOCATEs each named statement before preparing
// the next on the same handle (item 3), and binds untyped parameters.
func TestPsqlODBC(t *testing.T) {
	t.Parallel()
	python := requireClient(t, "python3", "/usr/bin/python3")
	driver := requireClient(t, "psqlodbc (apt-get install odbc-postgresql)",
		"/usr/lib/x86_64-linux-gnu/odbc/psqlodbcw.so", "/usr/lib/aarch64-linux-gnu/odbc/psqlodbcw.so")
	if err := exec.Command(python, "-c", "import pyodbc").Run(); err != nil {
		requireClient(t, "pyodbc (apt-get install python3-pyodbc)", "/nonexistent/pyodbc")
	}
	srv := sharedServer(t)
	pw, _ := srv.adminPassword()
	got := runClient(t, testCtx(t), nil, python, testdataPath(t, "wire_odbc.py"), driver, "127.0.0.1",
		strconv.Itoa(srv.port), adminRole, pw, "wire_odbc")
	expectLines(t, got, "INSERTED 3", "ROW v2", "ROW 3", "UPDATE 1 new", "ERROR 42703", "AFTER_ERROR 3", "DONE")
}

// TestLibPQ drives lib/pq through database/sql: lib/pq sends Parse without
// parameter types and binds every parameter as text (item 1); a
// transaction's CREATE TABLE rolls back with it (item 4).
func TestLibPQ(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	pw, _ := srv.adminPassword()
	db, err := sql.Open("postgres", srv.dsn(adminRole, pw, database))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	exec := func(q string, args ...any) int64 {
		t.Helper()
		r, err := db.ExecContext(ctx, q, args...)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		n, _ := r.RowsAffected()
		return n
	}
	exec("CREATE SCHEMA wire_libpq")
	exec("CREATE TABLE wire_libpq.pk (id bigint PRIMARY KEY, c text, ts timestamp)")
	exec("CREATE TABLE wire_libpq.ap (id int, c text)")
	exec("INSERT INTO wire_libpq.pk VALUES ($1, $2, $3), ($4, $5, $6)", 1, "a", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), 2, "b", nil)
	exec("INSERT INTO wire_libpq.ap VALUES ($1, $2), ($3, $4)", 1, "a", 2, "b")
	if n := exec("UPDATE wire_libpq.pk SET c = $1, ts = $2 WHERE id = $3", "x", "2026-05-17 10:00:00", 2); n != 1 {
		t.Errorf("UPDATE of a PK table: %d rows", n)
	}
	if n := exec("UPDATE wire_libpq.ap SET c = $1 WHERE id = $2", "x", 1); n != 1 {
		t.Errorf("UPDATE of an append table: %d rows", n)
	}
	if n := exec("UPDATE wire_libpq.ap SET c = $1", "y"); n != 2 {
		t.Errorf("UPDATE without WHERE: %d rows", n)
	}
	if n := exec("DELETE FROM wire_libpq.pk WHERE id = $1", 1); n != 1 {
		t.Errorf("DELETE: %d rows", n)
	}
	var c string
	var ts time.Time
	if err := db.QueryRowContext(ctx, "SELECT c, ts FROM wire_libpq.pk WHERE id = $1", 2).Scan(&c, &ts); err != nil ||
		c != "x" || !ts.Equal(time.Date(2026, 5, 17, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("updated row: %q %v %v", c, ts, err)
	}
	// A bad statement gets its SQLSTATE; the pool's connection goes on.
	_, err = db.ExecContext(ctx, "UPDATE wire_libpq.ap SET nope = $1", 1)
	if pe, ok := err.(*pq.Error); !ok || pe.Code != "42703" {
		t.Errorf("UPDATE of a missing column: %v", err)
	}
	// DDL in a transaction rolls back with it.
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "CREATE TABLE wire_libpq.tx (id int)"); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO wire_libpq.tx VALUES ($1)", 1); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	_, err = db.ExecContext(ctx, "SELECT * FROM wire_libpq.tx")
	if pe, ok := err.(*pq.Error); !ok || pe.Code != "42P01" {
		t.Errorf("table created in a rolled-back transaction: %v", err)
	}
}

// TestDeallocate: DEALLOCATE name / ALL drop the connection's prepared
// statements, so the name can be prepared again (item 3); unknown names
// are 26000; DISCARD ALL refuses to run in a block (25001).
func TestDeallocate(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := srv.connect(t).PgConn()
	prepare := func(name string) {
		t.Helper()
		if _, err := c.Prepare(ctx, name, "SELECT $1::int + 1", nil); err != nil {
			t.Fatalf("prepare %s: %v", name, err)
		}
	}
	execCode := func(q string) string {
		t.Helper()
		_, err := c.Exec(ctx, q).ReadAll()
		return pgCode(err)
	}
	prepare("s1")
	if _, err := c.Prepare(ctx, "s1", "SELECT 2", nil); pgCode(err) != "42P05" {
		t.Fatalf("preparing an existing name: %v, want 42P05", err)
	}
	if code := execCode("DEALLOCATE s1"); code != "" {
		t.Fatalf("DEALLOCATE s1: %s", code)
	}
	prepare("s1")
	prepare("s2")
	if code := execCode("DEALLOCATE ALL"); code != "" {
		t.Fatalf("DEALLOCATE ALL: %s", code)
	}
	prepare("s1")
	prepare("s2")
	if code := execCode("DEALLOCATE PREPARE nope"); code != "26000" {
		t.Fatalf("DEALLOCATE of an unknown name: %q, want 26000", code)
	}
	if code := execCode("BEGIN; DISCARD ALL"); code != "25001" {
		t.Fatalf("DISCARD ALL in a block: %q, want 25001", code)
	}
	execCode("ROLLBACK")
	if code := execCode("DISCARD ALL"); code != "" {
		t.Fatalf("DISCARD ALL: %s", code)
	}
	prepare("s1")
	// A deallocated statement cannot be bound any more.
	execCode("DEALLOCATE s1")
	rr := c.ExecPrepared(ctx, "s1", [][]byte{[]byte("1")}, nil, nil).Read()
	if pgCode(rr.Err) != "26000" {
		t.Fatalf("executing a deallocated statement: %v, want 26000", rr.Err)
	}
}

// TestDDLInBlockIsolation: another session sees a block's DDL only once the
// block committed, and a DROP TABLE rolled back keeps the table and its rows
// (item 4).
func TestDDLInBlockIsolation(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	a, b := srv.connect(t), srv.connect(t)
	mustExec(t, ctx, a, "CREATE SCHEMA wire_ddl", "CREATE TABLE wire_ddl.keep (id int PRIMARY KEY, v text)",
		"INSERT INTO wire_ddl.keep VALUES (1, 'a'), (2, 'b')")
	mustExec(t, ctx, a, "BEGIN", "CREATE TABLE wire_ddl.fresh (id int PRIMARY KEY)", "INSERT INTO wire_ddl.fresh VALUES (1)")
	if _, err := tryQueryStrings(ctx, b, "SELECT * FROM wire_ddl.fresh"); pgCode(err) != "42P01" {
		t.Fatalf("another session sees an uncommitted CREATE TABLE: %v", err)
	}
	mustExec(t, ctx, a, "COMMIT")
	wantRows(t, "committed table", queryStrings(t, ctx, b, "SELECT id FROM wire_ddl.fresh"), []string{"1"})

	mustExec(t, ctx, a, "BEGIN", "DROP TABLE wire_ddl.keep")
	wantRows(t, "rows of a table dropped in an open block", queryStrings(t, ctx, b, "SELECT id FROM wire_ddl.keep ORDER BY id"), []string{"1", "2"})
	mustExec(t, ctx, a, "ROLLBACK")
	wantRows(t, "rows after ROLLBACK of DROP TABLE", queryStrings(t, ctx, a, "SELECT v FROM wire_ddl.keep ORDER BY id"), []string{"a", "b"})

	// psql's \d reads pg_catalog; after COMMIT it lists the new table.
	mustExec(t, ctx, a, "BEGIN", "CREATE TABLE wire_ddl.late (id int)", "COMMIT")
	var n int
	if err := b.QueryRow(ctx, "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = 'wire_ddl'").Scan(&n); err != nil || n != 3 {
		t.Fatalf("pg_tables after COMMIT: %d %v", n, err)
	}
}

// TestNotNullCopy: a COPY that leaves a NOT NULL column out of a
// primary-key table upserts existing keys and fails with 23502 for a new
// key, committing nothing (item 9), in pgx's binary COPY and in text COPY.
func TestNotNullCopy(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := srv.connect(t)
	mustExec(t, ctx, c, "CREATE SCHEMA wire_copy", "CREATE TABLE wire_copy.t (id int PRIMARY KEY, c text, n int NOT NULL)",
		"INSERT INTO wire_copy.t VALUES (1, 'a', 1), (2, 'b', 2)")
	cols := []string{"id", "c"}
	if _, err := c.CopyFrom(ctx, pgx.Identifier{"wire_copy", "t"}, cols, pgx.CopyFromRows([][]any{{int32(1), "x"}, {int32(3), "new"}})); pgCode(err) != "23502" {
		t.Fatalf("COPY of a new key without its NOT NULL column: %v, want 23502", err)
	}
	if _, err := c.PgConn().CopyFrom(ctx, strings.NewReader("2\ty\n"), "COPY wire_copy.t (id, c) FROM STDIN"); err != nil {
		t.Fatalf("COPY of an existing key without its NOT NULL column: %v", err)
	}
	wantRows(t, "rows after the COPYs", queryStrings(t, ctx, c, "SELECT id, c, n FROM wire_copy.t ORDER BY id"), []string{"1|a|1", "2|y|2"})
}
