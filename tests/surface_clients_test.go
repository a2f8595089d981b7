package tests

import (
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// The SQL ORMs send (issue 20), driven by the clients that send it.

// TestJDBCGeneratedKeys: pgjdbc's getGeneratedKeys (RETURN_GENERATED_KEYS
// and a key-column list, single and batched) over a bigserial key and a
// DEFAULT, and UPDATE/DELETE … RETURNING through executeQuery.
func TestJDBCGeneratedKeys(t *testing.T) {
	t.Parallel()
	got := runJDBC(t, "SurfaceJdbc", "surface_jdbc")
	expectLines(t, got,
		"KEYS_ALL 1 a 1",
		"KEYS_BATCH 2 3",
		"UPDATE_RETURNING 2 15",
		"DELETE_RETURNING c",
		"ROWS 1:a:1 2:b:15",
		"DONE",
	)
}

// TestSQLAlchemyORM: SQLAlchemy's ORM creates a table with a SERIAL key and a
// server default, inserts objects and reads their keys back through INSERT …
// RETURNING; Core insert/update/delete … RETURNING; begin_nested
// (savepoints) whose failure rolls back alone.
func TestSQLAlchemyORM(t *testing.T) {
	t.Parallel()
	python := requireClient(t, "python3", "/usr/bin/python3")
	if err := exec.Command(python, "-c", "import sqlalchemy, psycopg2").Run(); err != nil {
		requireClient(t, "SQLAlchemy (apt-get install python3-sqlalchemy python3-psycopg2)", "/nonexistent/sqlalchemy")
	}
	srv := sharedServer(t)
	pw, _ := srv.adminPassword()
	u := url.URL{Scheme: "postgresql+psycopg2", User: url.UserPassword(adminRole, pw),
		Host: "127.0.0.1:" + strconv.Itoa(srv.port), Path: "/" + database}
	got := runClient(t, testCtx(t), nil, python, testdataPath(t, "sqlalchemy_orm.py"), u.String(), "surface_sqla")
	expectLines(t, got,
		"ORM_IDS [1, 2]",
		"ORM_QTY [3, 9]",
		"CORE_INSERT [(3, 3)]",
		"CORE_UPDATE [(1, 4)]",
		"CORE_DELETE [('b',)]",
		"ROWS [(1, 'a', 4), (3, 'c', 3)]",
		"NESTED_ERROR 23502",
		"NESTED ['a', 'c', 'n1', 'n2']",
		"DONE",
	)
}

// TestPsqlOnErrorRollback: psql's ON_ERROR_ROLLBACK wraps each statement of
// a block in a savepoint and rolls back to it on error, so the block's other
// statements commit.
func TestPsqlOnErrorRollback(t *testing.T) {
	t.Parallel()
	p := &psqlClient{t: t, path: psqlPath(t), srv: sharedServer(t)}
	ctx := testCtx(t)
	out, errOut, _ := p.run(ctx, []string{"-A", "-t", "-v", "ON_ERROR_STOP=0", "-v", "ON_ERROR_ROLLBACK=on"},
		"CREATE SCHEMA surf_psql", "CREATE TABLE surf_psql.t (id int PRIMARY KEY)", "BEGIN",
		"INSERT INTO surf_psql.t VALUES (1)", "INSERT INTO surf_psql.nope VALUES (2)", "INSERT INTO surf_psql.t VALUES (3)",
		"COMMIT", "SELECT string_agg(id::text, ',' ORDER BY id) FROM surf_psql.t")
	if !strings.HasSuffix(out, "\n1,3\n") || !strings.Contains(errOut, "surf_psql.nope") {
		t.Fatalf("stdout:\n%s\nstderr:\n%s", out, errOut)
	}
}

// TestPsqlViews: psql's \dv lists a lake view and \d+ of it is not needed
// for SELECT through it; DROP VIEW removes it from \dv.
func TestPsqlViews(t *testing.T) {
	t.Parallel()
	p := &psqlClient{t: t, path: psqlPath(t), srv: sharedServer(t)}
	ctx := testCtx(t)
	p.exec(ctx, "CREATE SCHEMA surf_dv", "CREATE TABLE surf_dv.t (id int PRIMARY KEY, v text)",
		"INSERT INTO surf_dv.t VALUES (1, 'a'), (2, 'b')", "CREATE VIEW surf_dv.odd AS SELECT id, v FROM surf_dv.t WHERE id % 2 = 1")
	p.check(ctx, `\dv surf_dv.*`, "surf_dv|odd|view|lakesoul")
	p.check(ctx, "SELECT v FROM surf_dv.odd", "a")
	p.exec(ctx, "DROP VIEW surf_dv.odd")
	if out := p.exec(ctx, `\dv surf_dv.*`); strings.Contains(out, "odd") {
		t.Fatalf(`\dv after DROP VIEW: %q`, out)
	}
}
