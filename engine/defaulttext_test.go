package engine_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/pgtest"
)

// TestDefaultTextAsPostgreSQL: a DEFAULT given as a string literal is shown
// coerced to its column's type, as PostgreSQL shows it (column_default of
// information_schema, which drizzle-kit, TypeORM and Prisma compare with
// their schema): the same table made in PostgreSQL itself gives the same
// column_default text for every type, CREATE TABLE and ALTER COLUMN SET
// DEFAULT alike, and the defaults still fill rows.
func TestDefaultTextAsPostgreSQL(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	if err := catalog.MigrateUp(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	s := sessionOn(t, dsn, filepath.Join(t.TempDir(), "wh"))
	const table = `CREATE TABLE dt (id int PRIMARY KEY, t text DEFAULT 'x', v varchar(5) DEFAULT 'y', d date DEFAULT '2020-01-02',
		ts timestamp DEFAULT '2020-01-02 03:04:05', tz timestamptz DEFAULT '2020-01-02 03:04:05+00', u uuid DEFAULT 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
		j jsonb DEFAULT '{"a": 1}', n int DEFAULT 5, b boolean DEFAULT false, w text DEFAULT 'it''s', f text)`
	const alter = `ALTER TABLE dt ALTER COLUMN f SET DEFAULT 'z'`
	mustRun(t, s, table)
	mustRun(t, s, alter)
	for _, q := range []string{"CREATE SCHEMA ref", "SET search_path = ref", table, alter} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("PostgreSQL %s: %v", q, err)
		}
	}
	q := `SELECT column_name || ' ' || coalesce(column_default, 'NULL') FROM information_schema.columns
		WHERE table_schema = $1 AND table_name = 'dt' ORDER BY ordinal_position`
	want := map[string]bool{}
	rows, _ := conn.Query(ctx, q, "ref")
	ref, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range ref {
		want[r] = true
	}
	got := mustRun(t, s, `SELECT column_name || ' ' || coalesce(column_default, 'NULL') FROM information_schema.columns
		WHERE table_schema = 'public' AND table_name = 'dt' ORDER BY ordinal_position`)
	if len(got) != len(ref) {
		t.Fatalf("columns %v, PostgreSQL %v", got, ref)
	}
	for i := range got {
		if got[i] != ref[i] {
			t.Errorf("column_default %q, PostgreSQL %q", got[i], ref[i])
		}
	}
	mustRun(t, s, "INSERT INTO dt (id) VALUES (1)")
	expectRows(t, s, "SELECT t, v, d, u::text, j, n, b, w, f FROM dt",
		`x|y|2020-01-02 00:00:00 +0000 UTC|a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11|{"a": 1}|5|false|it's|z`)
}
