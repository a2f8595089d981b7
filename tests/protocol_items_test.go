package tests

import (
	"bytes"
	"os/exec"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestRecordsBinary: records (row constructors, nested, with NULL fields
// and fields of several types) reach clients that ask for binary results
// (asyncpg) in PostgreSQL's binary form, byte for byte what PostgreSQL 15
// sends for the same query, and in its text form.
func TestRecordsBinary(t *testing.T) {
	srv := sharedServer(t)
	ctx := testCtx(t)
	lake := srv.connect(t)
	ref := srv.catalogConn(t)
	for _, q := range []string{
		"SELECT row(1, 'a'::text)",
		"SELECT row(NULL::int, row(2.5::numeric, true), 'x'::varchar)",
		"SELECT (1::bigint, '2026-01-02'::date, '{1,2}'::int[]), row()",
		"SELECT r FROM (VALUES (row(1, 'q'::text)), (NULL)) v(r)",
	} {
		for _, format := range []int16{pgx.BinaryFormatCode, pgx.TextFormatCode} {
			get := func(c *pgx.Conn) [][]byte {
				t.Helper()
				rows, err := c.Query(ctx, q, pgx.QueryResultFormats{format})
				if err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				defer rows.Close()
				var out [][]byte
				for rows.Next() {
					for _, v := range rows.RawValues() {
						out = append(out, append([]byte(nil), v...))
					}
				}
				if err := rows.Err(); err != nil {
					t.Fatalf("%s (format %d): %v", q, format, err)
				}
				return out
			}
			got, want := get(lake), get(ref)
			if len(got) != len(want) {
				t.Fatalf("%s (format %d): %q, want %q", q, format, got, want)
			}
			for i := range got {
				if !bytes.Equal(got[i], want[i]) {
					t.Errorf("%s (format %d) value %d: %q, want %q", q, format, i, got[i], want[i])
				}
			}
		}
	}
}

// TestPsycopg3 runs psycopg 3 (Debian's python3-psycopg) against lakesoul
// serve: named cursors (DECLARE, then the protocol's Describe and Execute
// of the portal of that name) and binary COPY TO read with copy.rows().
func TestPsycopg3(t *testing.T) {
	python, dsn := pythonClient(t, "psycopg", "python3-psycopg")
	got := runClient(t, testCtx(t), nil, python, testdataPath(t, "psycopg3_client.py"), dsn, "psy3")
	expectLines(t, got,
		"DESCRIPTION ['id', 'name']",
		"FETCHONE (1, 'n1')",
		"FETCHMANY [(2, 'n2'), (3, 'n3'), (4, 'n4')]",
		"FETCHALL 246 (250, 'n250')",
		"ITER 500500",
		"COPY_ROWS [(1, 'n1', 1.5), (2, 'n2', 3.0), (3, 'n3', 4.5)]",
		"DONE")
}

// TestAsyncpg runs asyncpg (Debian's python3-asyncpg) against lakesoul
// serve: its cursors (a named portal moved with MOVE FORWARD n by name) and
// records in binary.
func TestAsyncpg(t *testing.T) {
	python, dsn := pythonClient(t, "asyncpg", "python3-asyncpg")
	srv := sharedServer(t)
	pw, _ := srv.adminPassword()
	dsn = "postgresql://" + adminRole + ":" + pw + "@127.0.0.1:" + strconv.Itoa(srv.port) + "/" + database
	got := runClient(t, testCtx(t), nil, python, testdataPath(t, "asyncpg_client.py"), dsn, "apg")
	expectLines(t, got,
		"FETCH [(1, 'v1'), (2, 'v2'), (3, 'v3')]",
		"FORWARD 10",
		"FETCHROW (14, 'v14')",
		"ITER 100",
		"RECORD (1, 'a')",
		"RECORDS [(1, 2), (2, 4)]",
		`JSONB [<Record id=1 d={'a': 2, 'b': [1]}>, <Record id=2 d={}>]`,
		"DONE")
}

// pythonClient returns the system python with module (from Debian package
// pkg) and a libpq DSN of the shared server (the test skips without them,
// or fails with LAKESOUL_REQUIRE_PG=1).
func pythonClient(t *testing.T, module, pkg string) (python, dsn string) {
	t.Helper()
	python = requireClient(t, "python3", "/usr/bin/python3")
	if err := exec.Command(python, "-c", "import "+module).Run(); err != nil {
		requireClient(t, module+" (apt-get install "+pkg+")", "/nonexistent/"+module)
	}
	srv := sharedServer(t)
	pw, _ := srv.adminPassword()
	return python, "host=127.0.0.1 port=" + strconv.Itoa(srv.port) + " user=" + adminRole + " password=" + pw +
		" dbname=" + database + " sslmode=disable"
}
