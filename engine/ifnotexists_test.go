package engine_test

import (
	"testing"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// TestCreateTableIfNotExistsSkipsDefinition: CREATE TABLE IF NOT EXISTS of
// an existing table or view does nothing, whatever its definition says —
// as PostgreSQL, which skips before it looks at the columns (bun/migrate
// declares its lock table's column UNIQUE, which lake tables refuse, and
// CREATE TABLE IF NOT EXISTS runs at every start); without IF NOT EXISTS,
// or for a new table, the definition is checked.
func TestCreateTableIfNotExistsSkipsDefinition(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE locks (id bigserial, table_name varchar PRIMARY KEY)`)
	mustRun(t, s, `CREATE VIEW v AS SELECT 1 AS one`)
	for _, q := range []string{
		`CREATE TABLE IF NOT EXISTS locks (id bigserial NOT NULL, table_name varchar, PRIMARY KEY (id), UNIQUE (table_name))`,
		`CREATE TABLE IF NOT EXISTS locks (x no_such_type REFERENCES other (id))`,
		`CREATE TABLE IF NOT EXISTS public.locks (x int UNIQUE)`,
		`CREATE TABLE IF NOT EXISTS v (x int UNIQUE)`,
	} {
		mustRun(t, s, q)
	}
	expectRows(t, s, `SELECT column_name FROM information_schema.columns WHERE table_name = 'locks' ORDER BY ordinal_position`, "id", "table_name")
	wantCode(t, s, `CREATE TABLE IF NOT EXISTS fresh (x int UNIQUE)`, sqlerr.FeatureNotSupported)
}
