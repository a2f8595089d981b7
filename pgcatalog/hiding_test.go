package pgcatalog

import (
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestHidesCatalogDatabase: nothing of the catalog database's own schemas
// shows through the emulation, and a malformed lake table does not break it.
func TestHidesCatalogDatabase(t *testing.T) {
	c := newCatalogDB(t)
	exec(t, c.su, `SELECT lakesoul.create_table('tid_bad', 's', 'bad', 'file:///lake/s/bad', 'not json', '{}', ';id')`)
	// Visible namespaces, by name and (lake namespaces, which regnamespace
	// does not know) by OID.
	// LakeSoul's namespace "default" is shown as public (SchemaName); the
	// catalog database's own schema public is not shown (its OID below).
	visible := map[string]bool{"pg_catalog": true, "information_schema": true, "s": true, "public": true}
	for _, r := range rewriteAndQuery(t, c.su, `SELECT n.oid::text FROM pg_namespace n WHERE n.nspname = 'public'`) {
		if r[0] == "2200" {
			t.Errorf("pg_namespace shows the catalog database's schema public")
		}
	}
	for _, r := range query(t, c.su, `SELECT oid::text FROM lakesoul_pg.lake_namespace`) {
		visible[r[0]] = true
	}
	for _, q := range []string{
		`SELECT n.nspname FROM pg_namespace n`,
		`SELECT relnamespace::regnamespace::text || '.' || relname FROM pg_class`,
		`SELECT typnamespace::regnamespace::text || '.' || typname FROM pg_type`,
		`SELECT pronamespace::regnamespace::text || '.' || proname FROM pg_proc`,
		`SELECT connamespace::regnamespace::text || '.' || conname FROM pg_constraint`,
		`SELECT adrelid::regclass::text FROM pg_attrdef`,
		`SELECT objoid::regclass::text FROM pg_description WHERE classoid = 'pg_class'::regclass`,
		`SELECT objoid::regnamespace::text FROM pg_description WHERE classoid = 'pg_namespace'::regclass`,
		`SELECT schemaname || '.' || tablename FROM pg_tables`,
		`SELECT schemaname || '.' || indexname FROM pg_indexes`,
		`SELECT schemaname || '.' || viewname FROM pg_views`,
		`SELECT schemaname || '.' || sequencename FROM pg_sequences`,
		`SELECT tgrelid::regclass::text || '.' || tgname FROM pg_trigger`,
		`SELECT polrelid::regclass::text || '.' || polname FROM pg_policy`,
		`SELECT schema_name FROM information_schema.schemata`,
		`SELECT table_schema || '.' || table_name FROM information_schema.tables`,
		`SELECT table_schema || '.' || table_name FROM information_schema.columns`,
		`SELECT table_schema || '.' || table_name FROM information_schema.views`,
		`SELECT constraint_schema || '.' || constraint_name FROM information_schema.table_constraints`,
	} {
		for _, r := range rewriteAndQuery(t, c.su, q) {
			ns, name, _ := strings.Cut(r[0], ".")
			if !visible[ns] {
				t.Errorf("%s: shows %q", q, r[0])
			}
			assertNoInternalNames(t, q, [][]string{{r[0]}, {name}})
		}
	}
	// The malformed table is listed, without columns or key.
	got := rewriteAndQuery(t, c.su, `SELECT c.relnatts::text, c.relhasindex::text,
		(SELECT count(*) FROM pg_attribute a WHERE a.attrelid = c.oid)::text
		FROM pg_class c WHERE c.relname = 'bad'`)
	wantRows(t, "malformed table", got, [][]string{{"0", "false", "0"}})
}

// TestRowLevelSecurity: the views read LakeSoul's tables as the invoking
// role, so its privileges and row-level security decide what it sees.
func TestRowLevelSecurity(t *testing.T) {
	c := newCatalogDB(t)
	rd, role := c.reader(t)
	exec(t, c.su, `ALTER TABLE public.table_info ENABLE ROW LEVEL SECURITY`)
	exec(t, c.su, `CREATE POLICY hide_u ON public.table_info AS RESTRICTIVE FOR SELECT TO `+role+` USING (table_name <> 'u')`)
	flow := loadFlow(t, "psql", "dt_s", nil)
	wantRows(t, `\dt s.* as reader`, runFlow(t, rd, flow)[0], [][]string{{"s", "t", "table", c.owner}})
	wantRows(t, `\dt s.* as superuser`, runFlow(t, c.su, flow)[0],
		[][]string{{"s", "t", "table", c.owner}, {"s", "u", "table", c.owner}})
	for _, q := range []string{
		`SELECT count(*) FROM pg_attribute WHERE attrelid = ` + c.oids["s.u"],
		`SELECT count(*) FROM information_schema.columns WHERE table_name = 'u'`,
		`SELECT count(*) FROM pg_tables WHERE tablename = 'u'`,
	} {
		wantRows(t, q, rewriteAndQuery(t, rd, q), [][]string{{"0"}})
	}

	// Without SELECT on LakeSoul's tables a role cannot list the lake.
	exec(t, c.su, `REVOKE SELECT ON public.table_info FROM `+role)
	out, err := RewriteSQL(`SELECT relname FROM pg_class`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tryQuery(rd, out)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "42501" {
		t.Errorf("pg_class without privileges: %v, want 42501", err)
	}
}
