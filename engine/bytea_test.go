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
	expectRows(t, s, `SELECT id, v FROM b ORDER BY id`, "1|[0 255 65]", "2|[97 92 98 1]", "3|[]", "4|[]", "5|[10 11]")
	expectRows(t, s, `SELECT count(*) FROM b WHERE v = '\x00ff41'::bytea`, "1")
	if _, err := run(t, s, `INSERT INTO b VALUES (6, '\xzz'::bytea)`); err == nil {
		t.Fatal("malformed bytea literal accepted")
	} else if code := sqlerr.Code(err); code != "22P02" {
		t.Fatalf("malformed bytea literal: %v (SQLSTATE %s), want 22P02", err, code)
	}
	expectRows(t, s, `SELECT count(*) FROM b`, "5")
}
