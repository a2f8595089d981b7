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

// TestVacuumSystemRelations runs VACUUM and ANALYZE on every relation of
// pg_catalog and information_schema the catalog database has (enumerated
// from its pg_class; vacuumdb sends VACUUM for each table pg_class lists) —
// each is accepted and does nothing — and checks that a system relation that
// does not exist is 42P01, like a lake table that does not exist.
func TestVacuumSystemRelations(t *testing.T) {
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
	rows, err := conn.Query(ctx, `SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname IN ('pg_catalog', 'information_schema') AND c.relkind IN ('r', 'v', 'm', 'p') ORDER BY 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	rels, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([2]string, error) {
		var v [2]string
		return v, r.Scan(&v[0], &v[1])
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rels) < 100 {
		t.Fatalf("only %d system relations", len(rels))
	}
	mustRun(t, s, "CREATE SCHEMA v; CREATE TABLE v.t (id bigint, PRIMARY KEY (id)); INSERT INTO v.t VALUES (1)")
	for _, r := range rels {
		name := pgx.Identifier{r[0], r[1]}.Sanitize()
		mustRun(t, s, "VACUUM "+name)
		mustRun(t, s, "ANALYZE "+name)
		mustRun(t, s, "VACUUM (ANALYZE) "+name+", v.t")
	}
	mustRun(t, s, "VACUUM pg_proc, pg_class")
	for _, q := range []string{"VACUUM pg_catalog.nope", "VACUUM pg_nope", "ANALYZE information_schema.nope", "VACUUM v.nope"} {
		if _, err := run(t, s, q); sqlerr.Code(err) != sqlerr.UndefinedTable {
			t.Errorf("%s: %v, want 42P01", q, err)
		}
	}
	expectRows(t, s, "SELECT id FROM v.t", "1")
}
