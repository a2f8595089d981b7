package pgcatalog

import "testing"

// TestFunctions covers the replacement functions on lake and real OIDs.
func TestFunctions(t *testing.T) {
	c := newCatalogDB(t)
	tOID, uOID, pkey := c.oids["s.t"], c.oids["s.u"], c.oids["s.t_pkey"]
	exec(t, c.su, `SET lakesoul.search_path = 's'`)
	exec(t, c.su, `SELECT * FROM lakesoul.commit('tid_t', 'AppendCommit', $1::jsonb)`,
		`[{"partition_desc": "d=2024-01-01", "commit_id": "00000000-0000-0000-0000-000000000001",
		   "file_ops": [{"path": "file:///lake/s/t/d=2024-01-01/a.parquet", "file_op": "add",
		                 "size": 1234, "file_exist_cols": "id"}]}]`)
	for _, tc := range []struct{ sql, want string }{
		{`pg_table_is_visible(` + tOID + `)`, "t"},
		{`pg_table_is_visible(` + pkey + `)`, "t"},
		{`pg_table_is_visible('pg_catalog.pg_class'::regclass)`, "t"},
		{`pg_table_is_visible(0)`, null},
		{`pg_get_indexdef(` + pkey + `)`, "CREATE UNIQUE INDEX t_pkey ON s.t USING btree (id)"},
		{`pg_get_indexdef(` + pkey + `, 1, false)`, "id"},
		{`pg_get_indexdef(` + tOID + `) IS NULL`, "t"},
		{`pg_get_indexdef('pg_catalog.pg_class_oid_index'::regclass)`,
			"CREATE UNIQUE INDEX pg_class_oid_index ON pg_catalog.pg_class USING btree (oid)"},
		{`pg_get_constraintdef(` + pkey + `)`, "PRIMARY KEY (id)"},
		{`pg_get_constraintdef((SELECT oid FROM pg_catalog.pg_constraint WHERE conname = 'pg_class_oid_index'))`,
			"PRIMARY KEY (oid)"},
		{`obj_description((SELECT oid FROM pg_namespace WHERE nspname = 's'), 'pg_namespace') IS NULL`, "t"},
		{`obj_description('pg_catalog'::regnamespace, 'pg_namespace')`, "system catalog schema"},
		{`obj_description(` + tOID + `, 'pg_class') IS NULL`, "t"},
		{`col_description(` + tOID + `, 1) IS NULL`, "t"},
		{`pg_table_size(` + tOID + `)`, "1234"}, // live files (lakesoul.live_files)
		{`pg_total_relation_size(` + tOID + `)`, "1234"},
		{`pg_relation_size(` + tOID + `)`, "1234"},
		{`pg_table_size(` + uOID + `)`, "0"},
		{`pg_relation_size(` + pkey + `)`, "0"},
		{`pg_relation_size(` + tOID + `, 'fsm')`, "0"},
		{`pg_indexes_size(` + uOID + `)`, "0"},
		{`pg_total_relation_size('pg_catalog.pg_class'::regclass) =
			pg_catalog.pg_total_relation_size('pg_catalog.pg_class'::regclass)`, "t"},
		{`current_schema`, "s"},
		{`current_schemas(true)::text`, "{pg_catalog,s}"},
	} {
		got := rewriteAndQuery(t, c.su, `SELECT `+tc.sql)
		if got[0][0] != tc.want {
			t.Errorf("%s = %q, want %q", tc.sql, got[0][0], tc.want)
		}
	}
	exec(t, c.su, `UPDATE public.namespace SET comment = 'sales' WHERE namespace = 's'`)
	wantRows(t, "namespace comment", rewriteAndQuery(t, c.su,
		`SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = 's'`), [][]string{{"sales"}})
}
