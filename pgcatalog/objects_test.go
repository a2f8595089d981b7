package pgcatalog

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
)

// TestEmulationObjects checks the invariant between this package's names and
// the migration: every emulated relation is a lakesoul_pg view with the real
// object's columns, every other lakesoul_pg view is a lake_ helper, and every
// emulated function exists with the arities Rewrite assumes.
func TestEmulationObjects(t *testing.T) {
	c := newCatalogDB(t)
	cols := func(rel string) []string {
		return col(query(t, c.su, `SELECT attname || ' ' || format_type(atttypid, atttypmod)
			FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped
			ORDER BY attnum`, rel), 0)
	}
	views := map[string]bool{}
	for real, view := range emulatedRelations {
		views[view] = true
		want := cols(real)
		switch real {
		case "pg_catalog.pg_attribute":
			want[len(want)-1] = "attmissingval text" // a view cannot have an anyarray column
		case "pg_catalog.pg_attrdef":
			want[len(want)-1] = "adbin text" // a lake default has no node tree (migration 000021)
		}
		if got := cols(EmulationSchema + "." + view); strings.Join(got, ", ") != strings.Join(want, ", ") {
			t.Errorf("%s.%s columns\n got  %v\n want %v (%s)", EmulationSchema, view, got, want, real)
		}
	}
	for _, v := range col(query(t, c.su, `SELECT relname FROM pg_class
		WHERE relnamespace = 'lakesoul_pg'::regnamespace AND relkind = 'v'`), 0) {
		if !views[v] && !strings.HasPrefix(v, "lake_") {
			t.Errorf("view lakesoul_pg.%s is neither emulated nor a lake_ helper", v)
		}
	}
	for fn, arities := range emulatedFunctions {
		got := col(query(t, c.su, `SELECT DISTINCT pronargs::text FROM pg_proc
			WHERE pronamespace = 'lakesoul_pg'::regnamespace AND proname = $1 ORDER BY 1`, fn), 0)
		var want []string
		for _, n := range arities {
			want = append(want, fmt.Sprint(n))
		}
		sort.Strings(want)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("lakesoul_pg.%s arities %v, want %v", fn, got, want)
		}
	}
}

// TestDownMigration: 000003's down file removes the emulation and the up file
// applies again.
func TestDownMigration(t *testing.T) {
	c := newCatalogDB(t)
	for _, f := range []string{"000003_pg_catalog_emulation.down.sql", "000003_pg_catalog_emulation.up.sql"} {
		b, err := migrationsFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.su.Exec(context.Background(), b); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if strings.HasSuffix(f, ".down.sql") {
			wantRows(t, "after down", query(t, c.su,
				`SELECT count(*)::text FROM pg_namespace WHERE nspname = 'lakesoul_pg'`), [][]string{{"0"}})
		}
	}
	wantRows(t, "after up", rewriteAndQuery(t, c.su, `SELECT relname FROM pg_class WHERE relname = 'u'`),
		[][]string{{"u"}})
}
