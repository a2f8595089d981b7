package tests

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Real-client tests: pgjdbc (Debian's libpostgresql-jdbc-java) replaying
// Spark's and Flink's JDBC sequences, psycopg2, and node-postgres. Each
// client is a small program in testdata/clients that prints one line per
// fact; the tests compare those lines. A missing client skips its test,
// unless LAKESOUL_REQUIRE_PG=1 (.ci/run installs them).

// requireClient returns path if it exists (or a PATH lookup of name
// succeeds), else skips or fails the test.
func requireClient(t *testing.T, what string, paths ...string) string {
	t.Helper()
	for _, p := range paths {
		if strings.ContainsRune(p, '/') {
			if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
				return p
			}
			continue
		}
		if lp, err := exec.LookPath(p); err == nil {
			return lp
		}
	}
	if os.Getenv(envRequirePG) == "1" {
		t.Fatalf("%s is required (%s=1) but was not found (looked for %v)", what, envRequirePG, paths)
	}
	t.Skipf("%s not found (%s=1 makes this a failure)", what, envRequirePG)
	return ""
}

// runClient runs a client program and returns its output lines; it fails
// the test when the program fails.
func runClient(t *testing.T, ctx context.Context, env []string, name string, args ...string) []string {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\nstdout:\n%s\nstderr:\n%s", name, args, err, stdout.String(), stderr.String())
	}
	return strings.Split(strings.TrimSpace(stdout.String()), "\n")
}

// expectLines checks that every wanted line appears in got, in order.
func expectLines(t *testing.T, got []string, want ...string) {
	t.Helper()
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	if i < len(want) {
		t.Errorf("missing line %q (and any after it)\nwant, in order:\n  %s\ngot:\n  %s", want[i],
			strings.Join(want, "\n  "), strings.Join(got, "\n  "))
	}
}

func testdataPath(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "clients", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestJDBCSpark replays, with pgjdbc, Spark's JDBC sink (autocommit off,
// batched INSERTs, commit), its schema probe with the ResultSetMetaData
// calls that reach pgjdbc's fetchFieldMetaData, four partitioned range reads
// with a fetch size and autocommit off, DatabaseMetaData, and Flink's
// INSERT … ON CONFLICT … DO UPDATE upsert sink.
func TestJDBCSpark(t *testing.T) {
	t.Parallel()
	got := runJDBC(t, "SparkJdbc", "jdbc_spark")
	expectLines(t, got,
		"SERVER 16.4",
		"UNCOMMITTED_VISIBLE 0", // the sink's batches are invisible until commit
		"SINK 200 19950.00",
		"ROLLBACK 0",
		// label, java.sql.Types, type name, precision, scale, signed,
		// isNullable (0 = the key is NOT NULL: table OID and attnum reached
		// pgjdbc's metadata query), table name
		"PROBE id -5 int8 19 0 true 0 t",
		"PROBE name 12 text 2147483647 0 false 1 t",
		"PROBE amount 2 numeric 12 2 true 1 t",
		"PROBE d 91 date 13 0 false 1 t",
		"PROBE ts 93 timestamp 29 6 false 1 t",
		"PROBE_ROWS none",
		"PROBE_SUBQ 2 numeric 12 2",
		"ROW42 name 42 42.25 2026-01-15 2026-02-03 04:05:06.5",
		"PARTITIONED 200 19900",
		"SCHEMAS true",
		"TABLE jdbc_spark.t TABLE",
		"COLUMN id int8 -5 1 NO",
		"COLUMN name text 12 2 YES",
		"COLUMN amount numeric 2 3 YES",
		"COLUMN d date 91 4 YES",
		"COLUMN ts timestamp 93 5 YES",
		"PK id 1",
	)
	// Flink's upsert sink needs INSERT … ON CONFLICT … DO UPDATE: 10 keys
	// updated, 10 new.
	for _, l := range got {
		if strings.HasPrefix(l, "UPSERT_ERROR") {
			t.Errorf("Flink upsert sink (INSERT … ON CONFLICT … DO UPDATE) failed: %s", l)
		}
	}
	expectLines(t, got, "UPSERT 210 20", "DONE")
}

// runJDBC compiles testdata/clients/<class>.java against Debian's pgjdbc
// and runs it against the shared server as the admin with schema as its
// last argument; it returns the program's output lines.
func runJDBC(t *testing.T, class, schema string) []string {
	t.Helper()
	jar := requireClient(t, "pgjdbc (apt-get install libpostgresql-jdbc-java)", "/usr/share/java/postgresql.jar")
	javac := requireClient(t, "javac (a JDK)", "javac")
	java := requireClient(t, "java", "java")
	srv := sharedServer(t)
	ctx := testCtx(t)
	classes := t.TempDir()
	runClient(t, ctx, nil, javac, "-d", classes, "-cp", jar, testdataPath(t, class+".java"))
	pw, _ := srv.adminPassword()
	return runClient(t, ctx, nil, java, "-cp", classes+string(os.PathListSeparator)+jar, class,
		"jdbc:postgresql://"+srv.addr+"/"+database, adminRole, pw, schema)
}

// TestPsycopg2 runs psycopg2 (Debian's python3-psycopg2 under
// /usr/bin/python3): parameters, copy_expert in and out, a failing COPY,
// named cursors (DECLARE/FETCH/CLOSE), SET TIME ZONE.
func TestPsycopg2(t *testing.T) {
	t.Parallel()
	python, dsn := psycopg2Client(t)
	got := runClient(t, testCtx(t), nil, python, testdataPath(t, "psycopg2_client.py"), dsn, "psy")
	expectLines(t, got,
		"VERSION 160004",
		"PARAMS 1 it's 9.99 2026-01-02 2026-01-02T03:04:05+00:00",
		"COPY_IN 5001",
		`COPY_OUT 'id,name,price\n2,"n, 2",2.50\n5002,,\n'`,
		"COPY_BAD 22P04",
		"NAMED 5002 250009.99",
		"FETCHMANY [4991, 4992, 4993]",
		"TZ 2026-01-02T04:04:05+01:00",
		"SHOW Europe/Berlin",
		"DONE",
	)
}

// psycopg2Client returns the system python with psycopg2 and a DSN of the
// shared server (the test skips without them).
func psycopg2Client(t *testing.T) (python, dsn string) {
	t.Helper()
	python = requireClient(t, "python3", "/usr/bin/python3")
	if err := exec.Command(python, "-c", "import psycopg2").Run(); err != nil {
		requireClient(t, "psycopg2 (apt-get install python3-psycopg2)", "/nonexistent/psycopg2")
	}
	srv := sharedServer(t)
	pw, _ := srv.adminPassword()
	return python, "host=127.0.0.1 port=" + strconv.Itoa(srv.port) + " user=" + adminRole + " password=" + pw +
		" dbname=" + database + " sslmode=disable"
}

// TestPsycopg2Types checks that psycopg2 parses json, jsonb, arrays, uuid
// and interval results of lake queries into Python values: PostgreSQL's
// text forms under PostgreSQL's type OIDs (issue 14, item 7).
func TestPsycopg2Types(t *testing.T) {
	t.Parallel()
	python, dsn := psycopg2Client(t)
	got := runClient(t, testCtx(t), nil, python, testdataPath(t, "psycopg2_types.py"), dsn, "psytypes")
	expectLines(t, got,
		`JSONB dict {'a': {'c': 'x'}, 'b': [1, 2.5]}`,
		`JSON dict {'k': [1, 2]}`,
		`UUID UUID UUID('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11')`,
		`ARROW list [1, 2.5]`,
		`ARROW_TEXT str '{"c": "x"}'`,
		`INT8_ARRAY list [1, 2]`,
		`TEXT_ARRAY list ['a', None]`,
		`INTERVAL timedelta datetime.timedelta(days=1, seconds=7384, microseconds=500000)`,
		`UUID_ARRAY list [UUID('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11')]`,
		`CONTAINS bool True`,
		`EXISTS bool True`,
		`PATH_TEXT str 'x'`,
		`JSONB_LITERAL dict {'y': [True, None], 'z': 1}`,
		`JSONB_ARRAY list [{'q': 1}]`,
		`OIDS [3802, 114, 2950, 3802, 25, 1016, 1009, 1186, 2951, 16, 16, 25, 3802, 3807]`,
		"NO_OPERATOR 42883",
		"AFTER_ERROR 1",
		"DONE",
	)
}

// TestNodePostgres installs node-postgres (npm install pg) into a temp dir
// and runs a client: parameters over the extended protocol, types, table
// OIDs in field descriptions, transactions, SQLSTATEs.
func TestNodePostgres(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	node, env := nodePackages(t, srv, "pg@8") // wire_clients_test.go
	got := runClient(t, testCtx(t), env, node, testdataPath(t, "pg_client.js"), "nodepg")
	var fields string
	for _, l := range got {
		if strings.HasPrefix(l, "FIELDS ") {
			fields = l
		}
	}
	// id:int4, name:text, v:float8, ok:bool, each with the table's OID and
	// its column number.
	for i, want := range []string{"id:23:", "name:25:", "v:701:", "ok:16:"} {
		if !strings.Contains(fields, want) || !strings.Contains(fields, ":"+strconv.Itoa(i+1)) || strings.Contains(fields, ":0:") {
			t.Errorf("field descriptions %q: want %s…:%d with a table OID", fields, want, i+1)
		}
	}
	expectLines(t, got,
		"VERSION 16.4",
		`ROWS [{"id":4,"name":"name 4","v":2,"ok":true},{"id":5,"name":"name 5","v":2.5,"ok":false}]`,
		"AGG [[5,7.5]]",
		"ERROR 42703",
		"AFTER_ROLLBACK 5",
		"DONE",
	)
}
