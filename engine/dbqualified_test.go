package engine_test

import (
	"testing"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// TestDatabaseQualifiedNames: every statement that names an object by a
// dotted list (DROP of each object kind, COMMENT ON, ALTER TYPE) takes
// "database"."schema"."name" with this database, as PostgreSQL does (dbt and
// ORMs write such names); another database is 0A000, more parts 42601.
func TestDatabaseQualifiedNames(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE SCHEMA dq`)
	create := []string{
		`CREATE TABLE dq.t (id bigint PRIMARY KEY, v text)`,
		`CREATE VIEW dq.v AS SELECT id FROM dq.t`,
		`CREATE SEQUENCE dq.q`,
		`CREATE INDEX dq_t_v ON dq.t (v)`,
		`CREATE TYPE dq.e AS ENUM ('a')`,
	}
	for _, c := range create {
		mustRun(t, s, c)
	}
	three := "lakesoul.dq."
	for _, tc := range []struct{ ok, other, four string }{
		{`COMMENT ON TABLE ` + three + `t IS 'x'`, `COMMENT ON TABLE otherdb.dq.t IS 'x'`, `COMMENT ON TABLE a.lakesoul.dq.t IS 'x'`},
		{`ALTER TYPE ` + three + `e ADD VALUE 'b'`, `ALTER TYPE otherdb.dq.e ADD VALUE 'c'`, `ALTER TYPE a.lakesoul.dq.e ADD VALUE 'c'`},
		{`DROP VIEW ` + three + `v`, `DROP VIEW otherdb.dq.v`, `DROP VIEW a.lakesoul.dq.v`},
		{`DROP INDEX ` + three + `dq_t_v`, `DROP INDEX otherdb.dq.dq_t_v`, `DROP INDEX a.lakesoul.dq.dq_t_v`},
		{`DROP SEQUENCE ` + three + `q`, `DROP SEQUENCE otherdb.dq.q`, `DROP SEQUENCE a.lakesoul.dq.q`},
		{`DROP TABLE ` + three + `t`, `DROP TABLE otherdb.dq.t`, `DROP TABLE a.lakesoul.dq.t`},
		{`DROP TYPE ` + three + `e`, `DROP TYPE otherdb.dq.e`, `DROP TYPE a.lakesoul.dq.e`},
	} {
		if _, err := run(t, s, tc.other); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
			t.Errorf("%s: %v, want 0A000", tc.other, err)
		}
		if _, err := run(t, s, tc.four); sqlerr.Code(err) != sqlerr.SyntaxError {
			t.Errorf("%s: %v, want 42601", tc.four, err)
		}
		if _, err := run(t, s, tc.ok); err != nil {
			t.Errorf("%s: %v", tc.ok, err)
		}
	}
	expectRows(t, s, `SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'dq'`, "0")
}
