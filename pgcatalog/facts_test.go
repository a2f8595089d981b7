package pgcatalog

import (
	"strings"
	"testing"
)

// TestCatalogFacts: what ORMs and PostgreSQL's tools read of lake relations
// (issue 35, item 8) — array columns' array types, views' columns,
// identity columns, the one database served, lake tables in the
// statistics views — and that no setting of the catalog server that names
// its data directory, files, port or sockets shows through pg_settings,
// pg_show_all_settings() or current_setting(): every setting of the real
// catalog server whose value holds its data directory or port is
// enumerated, so a setting added by a later PostgreSQL is covered.
func TestCatalogFacts(t *testing.T) {
	c := newCatalogDB(t)
	exec(t, c.su, `SELECT lakesoul.create_table('tid_a', 's', 'arr', 'file:///lake/s/arr', $1, '{}', ';id')`,
		`{"type":"struct","fields":[
			{"name":"id","type":"long","nullable":false,"metadata":{"pg_identity":"always"}},
			{"name":"tags","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{}},
			{"name":"ns","type":{"type":"array","elementType":"long","containsNull":true},"nullable":true,"metadata":{}},
			{"name":"vs","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{"pg_type":"varchar[]"}},
			{"name":"fs","type":{"type":"array","elementType":"double","containsNull":true},"nullable":true,"metadata":{}}]}`)
	exec(t, c.su, `SELECT lakesoul.create_view('s', 'v', 'SELECT id, tags FROM s.arr', ARRAY['id', 'tags'],
		ARRAY[20, 1009]::oid[], ARRAY[-1, -1], false)`)

	wantRows(t, "array columns in pg_attribute", rewriteAndQuery(t, c.su, `SELECT a.attname::text, format_type(a.atttypid, a.atttypmod)
		FROM pg_attribute a WHERE a.attrelid = (SELECT c.oid FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 's' AND c.relname = 'arr') AND a.attnum > 0 ORDER BY a.attnum`),
		[][]string{{"id", "bigint"}, {"tags", "text[]"}, {"ns", "bigint[]"}, {"vs", "character varying[]"}, {"fs", "double precision[]"}})
	wantRows(t, "array columns in information_schema", rewriteAndQuery(t, c.su, `SELECT column_name::text, data_type::text, udt_name::text,
		is_identity::text, coalesce(identity_generation::text, '-')
		FROM information_schema.columns WHERE table_schema = 's' AND table_name = 'arr' ORDER BY ordinal_position`),
		[][]string{{"id", "bigint", "int8", "YES", "ALWAYS"}, {"tags", "ARRAY", "_text", "NO", "-"},
			{"ns", "ARRAY", "_int8", "NO", "-"}, {"vs", "ARRAY", "_varchar", "NO", "-"}, {"fs", "ARRAY", "_float8", "NO", "-"}})
	wantRows(t, "view columns", rewriteAndQuery(t, c.su, `SELECT a.attname::text, format_type(a.atttypid, a.atttypmod)
		FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
		WHERE c.relname = 'v' AND c.relkind = 'v' AND a.attnum > 0 ORDER BY a.attnum`),
		[][]string{{"id", "bigint"}, {"tags", "text[]"}})
	wantRows(t, "view columns in information_schema", rewriteAndQuery(t, c.su, `SELECT column_name::text, data_type::text, is_updatable::text
		FROM information_schema.columns WHERE table_schema = 's' AND table_name = 'v' ORDER BY ordinal_position`),
		[][]string{{"id", "bigint", "NO"}, {"tags", "ARRAY", "NO"}})

	wantRows(t, "databases", rewriteAndQuery(t, c.su, `SELECT datname::text, datallowconn::text FROM pg_database`),
		[][]string{{"lakesoul", "true"}})
	wantRows(t, "statistics", rewriteAndQuery(t, c.su, `SELECT schemaname || '.' || relname FROM pg_stat_user_tables ORDER BY 1`),
		[][]string{{"s.arr"}, {"s.t"}, {"s.u"}})
	for _, r := range rewriteAndQuery(t, c.su, `SELECT schemaname || '.' || relname FROM pg_stat_all_tables`) {
		if ns, _, _ := strings.Cut(r[0], "."); ns != "s" && ns != "pg_catalog" && ns != "information_schema" && ns != "pg_toast" {
			t.Errorf("pg_stat_all_tables shows %s", r[0])
		}
		assertNoInternalNames(t, "pg_stat_all_tables", [][]string{r})
	}

	// Every setting whose value names where the catalog server is.
	where := query(t, c.su, `SELECT current_setting('data_directory'), current_setting('port')`)[0]
	leaking := col(query(t, c.su, `SELECT name FROM pg_settings
		WHERE setting LIKE '%' || $1 || '%' OR setting = $2 OR name IN ('config_file', 'hba_file', 'ident_file')`,
		where[0], where[1]), 0)
	if len(leaking) < 5 {
		t.Fatalf("only %v name the catalog server's location", leaking)
	}
	for _, name := range leaking {
		for _, q := range []string{
			`SELECT setting FROM pg_settings WHERE name = '` + name + `'`,
			`SELECT setting FROM pg_show_all_settings() WHERE name = '` + name + `'`,
			`SELECT current_setting('` + name + `', true) WHERE current_setting('` + name + `', true) IS NOT NULL`,
		} {
			if got := rewriteAndQuery(t, c.su, q); len(got) != 0 {
				t.Errorf("%s: %v", q, got)
			}
		}
		sql, err := RewriteSQL(`SELECT current_setting('` + name + `')`)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tryQuery(c.su, sql); err == nil ||
			!strings.Contains(err.Error(), "42704") {
			t.Errorf("current_setting(%q): %v, want 42704", name, err)
		}
	}
	for _, r := range rewriteAndQuery(t, c.su, `SELECT name, coalesce(setting, '') FROM pg_settings`) {
		if strings.Contains(r[1], where[0]) {
			t.Errorf("pg_settings shows %s = %s", r[0], r[1])
		}
	}
	// The sessions' own settings stay.
	wantRows(t, "session settings", rewriteAndQuery(t, c.su, `SELECT current_setting('DateStyle') <> '',
		(SELECT count(*) FROM pg_settings WHERE name IN ('DateStyle', 'server_version_num', 'work_mem'))`),
		[][]string{{"t", "3"}})
}
