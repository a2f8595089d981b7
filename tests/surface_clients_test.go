package tests

import (
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// The SQL ORMs send (issue 20), driven by the clients that send it.

// TestJDBCGeneratedKeys: pgjdbc's getGeneratedKeys (RETURN_GENERATED_KEYS
// and a key-column list, single and batched) over a bigserial key and a
// DEFAULT, and UPDATE/DELETE … RETURNING through executeQuery.
func TestJDBCGeneratedKeys(t *testing.T) {
	t.Parallel()
	jar := requireClient(t, "pgjdbc (apt-get install libpostgresql-jdbc-java)", "/usr/share/java/postgresql.jar")
	javac := requireClient(t, "javac (a JDK)", "javac")
	java := requireClient(t, "java", "java")
	srv := sharedServer(t)
	ctx := testCtx(t)
	classes := t.TempDir()
	runClient(t, ctx, nil, javac, "-d", classes, "-cp", jar, testdataPath(t, "SurfaceJdbc.java"))
	pw, _ := srv.adminPassword()
	got := runClient(t, ctx, nil, java, "-cp", classes+string(os.PathListSeparator)+jar, "SurfaceJdbc",
		"jdbc:postgresql://"+srv.addr+"/"+database, adminRole, pw, "surface_jdbc")
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
// RETURNING; Core insert/update/delete … RETURNING.
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
		"DONE",
	)
}
