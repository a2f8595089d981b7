package pgcatalog

import "testing"

// TestRewriteTableoid: tableoid of an emulated catalog becomes the catalog's
// OID, named tableoid; of other relations, and ambiguous ones, it stays.
func TestRewriteTableoid(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"SELECT n.tableoid, n.oid FROM pg_namespace n",
			"SELECT 'pg_catalog.pg_namespace'::pg_catalog.regclass::pg_catalog.oid AS tableoid, n.oid FROM lakesoul_pg.pg_namespace n"},
		{"SELECT tableoid, oid FROM pg_catalog.pg_type",
			"SELECT 'pg_catalog.pg_type'::pg_catalog.regclass::pg_catalog.oid AS tableoid, oid FROM lakesoul_pg.pg_type pg_type"},
		// A join: qualified references resolve, d is not emulated.
		{"SELECT c.tableoid AS t FROM pg_class c LEFT JOIN pg_depend d ON d.classid = c.tableoid AND d.tableoid > 0",
			"SELECT 'pg_catalog.pg_class'::pg_catalog.regclass::pg_catalog.oid AS t FROM lakesoul_pg.pg_class c LEFT JOIN pg_depend d ON d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass::pg_catalog.oid AND d.tableoid > 0"},
		// Unqualified with two relations is PostgreSQL's ambiguity: left alone.
		{"SELECT tableoid FROM pg_class, pg_namespace",
			"SELECT tableoid FROM lakesoul_pg.pg_class pg_class, lakesoul_pg.pg_namespace pg_namespace"},
		// The innermost query with the name decides; correlated references reach out.
		{"SELECT (SELECT tableoid FROM pg_am), (SELECT c.tableoid FROM pg_am) FROM pg_class c",
			"SELECT (SELECT tableoid FROM pg_am), (SELECT 'pg_catalog.pg_class'::pg_catalog.regclass::pg_catalog.oid FROM pg_am) FROM lakesoul_pg.pg_class c"},
		{"SELECT tableoid FROM pg_database", "SELECT tableoid FROM pg_database"},
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
