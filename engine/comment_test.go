package engine_test

import (
	"testing"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// TestCommentOn: COMMENT ON TABLE / COLUMN stores descriptions that
// obj_description and col_description return, IS NULL and IS ” remove
// them, and bad targets fail with PostgreSQL's SQLSTATEs.
func TestCommentOn(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE SCHEMA cm; CREATE TABLE cm.t (id bigint PRIMARY KEY, v text)`)
	mustRun(t, s, `COMMENT ON TABLE cm.t IS 'orders, one row per order'`)
	mustRun(t, s, `COMMENT ON COLUMN cm.t.v IS 'the customer''s note'`)
	const q = `SELECT coalesce(obj_description(c.oid, 'pg_class'), '-'), coalesce(col_description(c.oid, 1), '-'),
		coalesce(col_description(c.oid, 2), '-') FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'cm' AND c.relname = 't'`
	expectRows(t, s, q, "orders, one row per order|-|the customer's note")
	mustRun(t, s, `SET search_path = cm; COMMENT ON TABLE t IS NULL; COMMENT ON COLUMN t.id IS 'key'`)
	expectRows(t, s, q, "-|key|the customer's note")
	mustRun(t, s, `COMMENT ON COLUMN cm.t.v IS ''`)
	expectRows(t, s, q, "-|key|-")
	expectRows(t, s, `SELECT count(*) FROM cm.t`, "0")
	for _, c := range []struct{ sql, code string }{
		{`COMMENT ON TABLE cm.nope IS 'x'`, sqlerr.UndefinedTable},
		{`COMMENT ON COLUMN cm.t.nope IS 'x'`, sqlerr.UndefinedColumn},
		{`COMMENT ON FUNCTION now() IS 'x'`, sqlerr.FeatureNotSupported},
	} {
		wantCode(t, s, c.sql, c.code)
	}
}
