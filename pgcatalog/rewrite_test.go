package pgcatalog

import (
	"errors"
	"testing"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

func TestRewriteSQL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		// Qualified and unqualified catalogs; the alias becomes the old name.
		{"SELECT relname FROM pg_catalog.pg_class",
			"SELECT relname FROM lakesoul_pg.pg_class pg_class"},
		{"SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace",
			"SELECT c.relname FROM lakesoul_pg.pg_class c JOIN lakesoul_pg.pg_namespace n ON n.oid = c.relnamespace"},
		{"SELECT table_name FROM information_schema.tables WHERE tables.table_schema = 's'",
			"SELECT table_name FROM lakesoul_pg.info_tables tables WHERE tables.table_schema = 's'"},
		{"SELECT * FROM mydb.pg_catalog.pg_attribute",
			"SELECT * FROM lakesoul_pg.pg_attribute pg_attribute"},
		// Schema-qualified column references follow their relation.
		{"SELECT pg_catalog.pg_class.relname FROM pg_catalog.pg_class",
			"SELECT pg_class.relname FROM lakesoul_pg.pg_class pg_class"},
		{"SELECT information_schema.columns.column_name FROM information_schema.columns",
			"SELECT columns.column_name FROM lakesoul_pg.info_columns columns"},
		// Catalogs without emulation and non-catalog names stay.
		{"SELECT * FROM pg_catalog.pg_am, pg_roles, information_schema.routines, t, s.pg_class",
			"SELECT * FROM pg_catalog.pg_am, pg_roles, information_schema.routines, t, s.pg_class"},
		{"SELECT * FROM tables", "SELECT * FROM tables"},
		// A WITH name shadows a catalog of the same name.
		{"WITH pg_class AS (SELECT 1 AS oid) SELECT oid FROM pg_class",
			"WITH pg_class AS (SELECT 1 AS oid) SELECT oid FROM pg_class"},
		// Subqueries, joins, set operations.
		{"SELECT 1 WHERE EXISTS (SELECT 1 FROM pg_index i) UNION SELECT 2 FROM pg_catalog.pg_tables",
			"SELECT 1 WHERE EXISTS (SELECT 1 FROM lakesoul_pg.pg_index i) UNION SELECT 2 FROM lakesoul_pg.pg_tables pg_tables"},
		// Functions that take relation OIDs.
		{"SELECT pg_catalog.pg_table_is_visible(c.oid), pg_get_indexdef(1), pg_get_indexdef(1, 0, true)",
			"SELECT lakesoul_pg.pg_table_is_visible(c.oid), lakesoul_pg.pg_get_indexdef(1), lakesoul_pg.pg_get_indexdef(1, 0, true)"},
		{"SELECT pg_catalog.obj_description(1, 'pg_class'), col_description(1, 2), pg_total_relation_size(1)",
			"SELECT lakesoul_pg.obj_description(1, 'pg_class'), lakesoul_pg.col_description(1, 2), lakesoul_pg.pg_total_relation_size(1)"},
		{"SELECT pg_size_pretty(pg_table_size(1)), pg_relation_size(1, 'main'), pg_indexes_size(1)",
			"SELECT pg_size_pretty(lakesoul_pg.pg_table_size(1)), lakesoul_pg.pg_relation_size(1, 'main'), lakesoul_pg.pg_indexes_size(1)"},
		// Other arities, other schemas and named arguments stay.
		{"SELECT pg_get_indexdef(1, 2), s.pg_table_is_visible(1), pg_table_is_visible(p => 1)",
			"SELECT pg_get_indexdef(1, 2), s.pg_table_is_visible(1), pg_table_is_visible(p := 1)"},
		// CURRENT_SCHEMA in all its spellings.
		{"SELECT current_schema, current_schema(), pg_catalog.current_schemas(true)",
			`SELECT lakesoul_pg."current_schema"(), lakesoul_pg."current_schema"(), lakesoul_pg.current_schemas(true)`},
		{"VALUES (1)", "VALUES (1)"},
		{"EXPLAIN SELECT * FROM pg_class", "EXPLAIN SELECT * FROM lakesoul_pg.pg_class pg_class"},
		// tableoid of an emulated catalog is the catalog's OID, named tableoid;
		// of other relations, and ambiguous ones, it stays (tableoid.go).
		{"SELECT n.tableoid, n.oid FROM pg_namespace n",
			"SELECT 'pg_catalog.pg_namespace'::pg_catalog.regclass::pg_catalog.oid AS tableoid, n.oid FROM lakesoul_pg.pg_namespace n"},
		{"SELECT tableoid, oid FROM pg_catalog.pg_type",
			"SELECT 'pg_catalog.pg_type'::pg_catalog.regclass::pg_catalog.oid AS tableoid, oid FROM lakesoul_pg.pg_type pg_type"},
		// A join: qualified references resolve, d is not emulated.
		{"SELECT c.tableoid AS t FROM pg_class c LEFT JOIN pg_inherits d ON d.inhrelid = c.tableoid AND d.tableoid > 0",
			"SELECT 'pg_catalog.pg_class'::pg_catalog.regclass::pg_catalog.oid AS t FROM lakesoul_pg.pg_class c LEFT JOIN pg_inherits d ON d.inhrelid = 'pg_catalog.pg_class'::pg_catalog.regclass::pg_catalog.oid AND d.tableoid > 0"},
		// Unqualified with two relations is PostgreSQL's ambiguity: left alone.
		{"SELECT tableoid FROM pg_class, pg_namespace",
			"SELECT tableoid FROM lakesoul_pg.pg_class pg_class, lakesoul_pg.pg_namespace pg_namespace"},
		// The innermost query with the name decides; correlated references reach out.
		{"SELECT (SELECT tableoid FROM pg_am), (SELECT c.tableoid FROM pg_am) FROM pg_class c",
			"SELECT (SELECT tableoid FROM pg_am), (SELECT 'pg_catalog.pg_class'::pg_catalog.regclass::pg_catalog.oid FROM pg_am) FROM lakesoul_pg.pg_class c"},
		{"SELECT tableoid FROM pg_roles", "SELECT tableoid FROM pg_roles"},
		{"WITH pg_class AS (SELECT 1 AS x) SELECT tableoid FROM pg_class",
			"WITH pg_class AS (SELECT 1 AS x) SELECT tableoid FROM pg_class"},
	} {
		got, err := RewriteSQL(tc.in)
		if err != nil {
			t.Errorf("RewriteSQL(%q): %v", tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("RewriteSQL(%q)\n got  %s\n want %s", tc.in, got, tc.want)
		}
	}
}

func TestRewriteRejectsNonQueries(t *testing.T) {
	for _, in := range []string{
		"DELETE FROM pg_catalog.pg_class",
		"UPDATE pg_namespace SET nspname = 'x'",
		"INSERT INTO information_schema.tables SELECT * FROM information_schema.tables",
		"SELECT * INTO t FROM pg_class",
		"WITH d AS (DELETE FROM t RETURNING 1) SELECT * FROM pg_class",
		"CREATE TABLE t AS SELECT * FROM pg_class",
		"TRUNCATE pg_catalog.pg_description",
		"SELECT 1; DROP TABLE pg_attribute",
		"SET search_path = s",
		"SELECT 1 FROM pg_class FOR UPDATE",
	} {
		_, err := RewriteSQL(in)
		var se *sqlerr.Error
		if !errors.As(err, &se) || se.Code != sqlerr.InsufficientPrivilege {
			t.Errorf("RewriteSQL(%q) = %v, want a 42501 error", in, err)
		}
	}
}

func TestRewriteSyntaxError(t *testing.T) {
	_, err := RewriteSQL("SELEC 1")
	var se *sqlerr.Error
	if !errors.As(err, &se) || se.Code != sqlerr.SyntaxError || se.Position != 1 {
		t.Errorf("RewriteSQL(SELEC 1) = %#v, want 42601 at position 1", err)
	}
	if err := Rewrite(nil); err == nil {
		t.Error("Rewrite(nil) succeeded")
	}
}

func TestIsCatalogRelation(t *testing.T) {
	for _, tc := range []struct {
		schema, name string
		want         bool
	}{
		{"pg_catalog", "pg_class", true},
		{"pg_catalog", "anything", true},
		{"information_schema", "tables", true},
		{"", "pg_class", true},
		{"", "pg_stat_activity", true},
		{"", "tables", false},
		{"", "t", false},
		{"s", "pg_class", false},
		{"lakesoul_pg", "pg_class", false},
		{"PG_CATALOG", "pg_class", false}, // a quoted, different schema
	} {
		if got := IsCatalogRelation(tc.schema, tc.name); got != tc.want {
			t.Errorf("IsCatalogRelation(%q, %q) = %v, want %v", tc.schema, tc.name, got, tc.want)
		}
	}
}
