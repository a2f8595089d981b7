package engine_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/pgtest"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// TestAlterSchemaRename creates one object of every kind a schema without
// tables can hold, and stored definitions of every kind naming them (a
// view's relation, a DEFAULT's sequence, a CHECK's enum cast, a view's
// cast; in the schema and in public), renames the schema and checks that:
// no row of any catalog table naming a namespace — enumerated from the
// catalog's own information_schema, so a kind added later is covered —
// still names the old one and each kind's rows name the new one; no stored
// definition names the old schema; the schema keeps its OID; every object
// works by its new name and none by the old; the old name can be used
// again. A schema holding a table is refused (0A000) and left as it was.
// Errors as PostgreSQL 15 gives them.
func TestAlterSchemaRename(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	if err := catalog.MigrateUp(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	s := sessionOn(t, dsn, filepath.Join(t.TempDir(), "wh"))
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)

	mustRun(t, s, `
		CREATE SCHEMA sales;
		CREATE TYPE sales.mood AS ENUM ('ok', 'bad');
		CREATE SEQUENCE sales.counter;
		CREATE TABLE pub (id bigint, n bigint DEFAULT nextval('sales.counter'), m sales.mood DEFAULT 'ok'::sales.mood,
			CHECK (m <> 'bad'::sales.mood));
		CREATE VIEW sales.v AS SELECT id, n, m FROM pub WHERE m = 'ok'::sales.mood;
		CREATE VIEW sales.tt AS SELECT id FROM lakesoul.snapshot('pub', now());
		CREATE VIEW pv AS SELECT id, n FROM sales.v;
		GRANT CREATE ON SCHEMA sales TO PUBLIC;
		INSERT INTO pub (id) VALUES (1)`)
	oid := func(name string) uint32 {
		var o uint32
		if err := conn.QueryRow(ctx, "SELECT oid FROM lakesoul_pg.pg_namespace WHERE nspname = $1", name).Scan(&o); err != nil {
			t.Fatalf("pg_namespace %s: %v", name, err)
		}
		return o
	}
	before := oid("sales")

	// Every base table of the catalog with a column naming a namespace.
	rows, err := conn.Query(ctx, `
		SELECT c.table_schema, c.table_name, c.column_name
		  FROM information_schema.columns c
		  JOIN information_schema.tables t USING (table_schema, table_name)
		 WHERE t.table_type = 'BASE TABLE' AND c.table_schema NOT IN ('pg_catalog', 'information_schema')
		   AND c.column_name IN ('namespace', 'table_namespace')
		 ORDER BY 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	type col struct{ schema, table, column string }
	cols, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (col, error) {
		var c col
		return c, r.Scan(&c.schema, &c.table, &c.column)
	})
	if err != nil {
		t.Fatal(err)
	}
	count := func(c col, ns string) int {
		var n int
		q := "SELECT count(*) FROM " + pgx.Identifier{c.schema, c.table}.Sanitize() + " WHERE " + pgx.Identifier{c.column}.Sanitize() + " = $1"
		if err := conn.QueryRow(ctx, q, ns).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// A subscription's tables name the namespace it writes into: a setting
	// of the subscription (made by administrators), not an object of the
	// schema.
	owned := func(c col) bool { return !(c.schema == "lakesoul" && c.table == "subscription_table") }
	had := map[col]int{}
	for _, c := range cols {
		if owned(c) {
			had[c] = count(c, "sales")
		}
	}
	for _, want := range []string{"lakesoul.sequence", "lakesoul.view", "lakesoul.enum_type", "public.namespace", "lakesoul.namespace_oid", "lakesoul.namespace_grant"} {
		found := false
		for c, n := range had {
			found = found || c.schema+"."+c.table == want && n > 0
		}
		if !found {
			t.Fatalf("the objects made no row in %s (columns %v)", want, cols)
		}
	}

	mustRun(t, s, "ALTER SCHEMA sales RENAME TO shop")

	for c, n := range had {
		if got := count(c, "sales"); got != 0 {
			t.Errorf("after the rename %s.%s has %d rows with %s = 'sales'", c.schema, c.table, got, c.column)
		}
		if got := count(c, "shop"); got != n {
			t.Errorf("after the rename %s.%s has %d rows with %s = 'shop', want %d", c.schema, c.table, got, c.column, n)
		}
	}
	// No stored definition names the old schema (a table's path keeps it:
	// its files stay where they are).
	var stale []string
	rows, err = conn.Query(ctx, `
		SELECT 'view ' || namespace || '.' || name FROM lakesoul.view WHERE definition LIKE '%sales%'
		UNION ALL
		SELECT 'table ' || table_namespace || '.' || table_name FROM public.table_info
		 WHERE table_schema LIKE '%sales%' OR properties::text LIKE '%sales%'`)
	if err != nil {
		t.Fatal(err)
	}
	if stale, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		t.Fatal(err)
	}
	if len(stale) > 0 {
		t.Errorf("stored definitions still naming schema sales: %v", stale)
	}
	if after := oid("shop"); after != before {
		t.Errorf("schema OID %d after the rename, %d before", after, before)
	}

	mustRun(t, s, "INSERT INTO pub (id) VALUES (2)")
	expectRows(t, s, "SELECT id, n, m FROM shop.v ORDER BY id", "1|1|ok", "2|2|ok")
	expectRows(t, s, "SELECT count(*) FROM shop.tt", "2")
	expectRows(t, s, "SELECT id, n FROM pv ORDER BY id", "1|1", "2|2")
	expectRows(t, s, "SELECT nextval('shop.counter')", "3")
	expectRows(t, s, "SELECT 'ok'::shop.mood", "ok")
	if _, err := run(t, s, "INSERT INTO pub (id, m) VALUES (3, 'bad')"); sqlerr.Code(err) != sqlerr.CheckViolation {
		t.Errorf("a CHECK naming the renamed type: %v, want 23514", err)
	}
	if _, err := run(t, s, "SELECT * FROM sales.v"); sqlerr.Code(err) != sqlerr.UndefinedTable {
		t.Errorf("the view by its old schema: %v, want 42P01", err)
	}
	if _, err := run(t, s, "SELECT nextval('sales.counter')"); sqlerr.Code(err) != sqlerr.UndefinedTable {
		t.Errorf("the sequence by its old schema: %v, want 42P01", err)
	}

	// The old name is free again.
	mustRun(t, s, "CREATE SCHEMA sales; CREATE SEQUENCE sales.counter")
	expectRows(t, s, "SELECT nextval('sales.counter')", "1")

	// A schema holding a table keeps its name: its files live in its
	// directory.
	mustRun(t, s, "CREATE SCHEMA lots; CREATE TABLE lots.t (id bigint); CREATE VIEW lots.v AS SELECT id FROM lots.t")
	if _, err := run(t, s, "ALTER SCHEMA lots RENAME TO lots2"); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
		t.Errorf("renaming a schema with a table: %v, want 0A000", err)
	}
	expectRows(t, s, "SELECT count(*) FROM lots.v", "0")

	for _, c := range []struct {
		stmt, code string
	}{
		{"ALTER SCHEMA shop RENAME TO sales", sqlerr.DuplicateSchema},
		{"ALTER SCHEMA shop RENAME TO shop", sqlerr.DuplicateSchema},
		{"ALTER SCHEMA shop RENAME TO public", sqlerr.DuplicateSchema},
		{"ALTER SCHEMA missing RENAME TO other", sqlerr.InvalidSchemaName},
		{"ALTER SCHEMA shop RENAME TO pg_shop", sqlerr.ReservedName},
		{"CREATE SCHEMA pg_shop", sqlerr.ReservedName},
		{"ALTER SCHEMA public RENAME TO other", sqlerr.FeatureNotSupported},
	} {
		if _, err := run(t, s, c.stmt); sqlerr.Code(err) != c.code {
			t.Errorf("%s: %v, want %s", c.stmt, err, c.code)
		}
	}
	// A rename inside a transaction block rolls back with it.
	mustRun(t, s, "BEGIN; ALTER SCHEMA shop RENAME TO store; ROLLBACK")
	expectRows(t, s, "SELECT count(*) FROM shop.v", "2")
}
