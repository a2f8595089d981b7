package engine_test

import (
	"testing"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// bytea text is PostgreSQL's (hex or escape format) in literals and in
// untyped text parameters, not DuckDB's BLOB text.
func TestByteaText(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE b (id int PRIMARY KEY, v bytea)`)
	mustRun(t, s, `INSERT INTO b VALUES (1, '\x00ff41'::bytea), (2, 'a\\b\001'::bytea), (3, ''::bytea), (4, '\x'::bytea)`)
	mustRun(t, s, `INSERT INTO b VALUES ($1, $2::bytea)`, "5", `\x0a0b`)
	mustRun(t, s, `INSERT INTO b VALUES (7, '\x0102'), (8, 'ab')`) // untyped literals take the column's type
	expectRows(t, s, `SELECT id, v FROM b ORDER BY id`, "1|[0 255 65]", "2|[97 92 98 1]", "3|[]", "4|[]", "5|[10 11]",
		"7|[1 2]", "8|[97 98]")
	expectRows(t, s, `SELECT count(*) FROM b WHERE v = '\x00ff41'::bytea`, "1")
	if _, err := run(t, s, `INSERT INTO b VALUES (6, '\xzz'::bytea)`); err == nil {
		t.Fatal("malformed bytea literal accepted")
	} else if code := sqlerr.Code(err); code != "22P02" {
		t.Fatalf("malformed bytea literal: %v (SQLSTATE %s), want 22P02", err, code)
	}
	expectRows(t, s, `SELECT count(*) FROM b`, "7")
}

// Untyped literals in INSERT ... VALUES take the target column's type, not
// a type DuckDB infers from the first row.
func TestInsertValuesLiteralsTakeColumnTypes(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE f (id int PRIMARY KEY, r real, d double precision, n numeric(6,2))`)
	mustRun(t, s, `INSERT INTO f VALUES (1, 1.5, 2.25, 1.5), (2, 'Infinity', '-Infinity', '12.345'), (3, 'NaN', '1e300', 7)`)
	expectRows(t, s, `SELECT id, r, d, n FROM f ORDER BY id`, "1|1.5|2.25|1.50", "2|+Inf|-Inf|12.35", "3|NaN|1e+300|7.00")
}
