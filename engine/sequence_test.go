package engine_test

import (
	"testing"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Sequences live in the catalog: nextval gives each row its own value
// (DuckDB must not fold the call), currval/lastval are the session's,
// setval moves the sequence, DROP removes it.
func TestSequences(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE SEQUENCE q START 10 INCREMENT 5`)
	expectRows(t, s, `SELECT nextval('q')`, "10")
	expectRows(t, s, `SELECT currval('q'), lastval()`, "10|10")
	mustRun(t, s, `CREATE TABLE a (id bigint, k text)`)
	mustRun(t, s, `INSERT INTO a SELECT nextval('public.q'), 'v' || i FROM range(3) t(i)`)
	expectRows(t, s, `SELECT count(DISTINCT id), min(id), max(id) FROM a`, "3|15|25")
	expectRows(t, s, `SELECT setval('q', 100)`, "100")
	expectRows(t, s, `SELECT nextval('q')`, "105")
	expectRows(t, s, `SELECT setval('q', 1, false), nextval('q')`, "1|1")
	wantCode(t, s, `CREATE SEQUENCE q`, sqlerr.DuplicateTable)
	mustRun(t, s, `CREATE SEQUENCE IF NOT EXISTS q`)
	mustRun(t, s, `DROP SEQUENCE q`)
	wantCode(t, s, `SELECT nextval('q')`, sqlerr.UndefinedTable)
	wantCode(t, s, `SELECT currval('nope')`, sqlerr.ObjectNotInPrerequisiteState)
	mustRun(t, s, `DROP SEQUENCE IF EXISTS q`)
	wantCode(t, s, `SELECT lakesoul_nextval('x', 'public', 'q')`, sqlerr.UndefinedFunction)
}
