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

// TestSystemColumns takes PostgreSQL's system columns from PostgreSQL
// itself (pg_attribute's negative attnums) and checks each against lake
// tables, keyless (DBeaver edits those by ctid) and keyed: naming it in a
// query, qualified or not, on every path (DuckDB, the direct scan, keyed
// lookups, UPDATE and DELETE conditions) is 0A000 with a hint naming the
// primary key, and no column may take its name (42701), as in PostgreSQL.
func TestSystemColumns(t *testing.T) {
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
	rows, err := conn.Query(ctx, "SELECT attname::text FROM pg_attribute WHERE attrelid = 'pg_class'::regclass AND attnum < 0 ORDER BY attnum DESC")
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(names) < 6 {
		t.Fatalf("PostgreSQL lists %d system columns: %v", len(names), names)
	}
	s := sessionOn(t, dsn, filepath.Join(t.TempDir(), "wh"))
	mustRun(t, s, `CREATE TABLE loose (a bigint, b text); INSERT INTO loose VALUES (1, 'x');
		CREATE TABLE keyed (id bigint PRIMARY KEY, b text); INSERT INTO keyed VALUES (1, 'x')`)
	for _, name := range names {
		for _, q := range []string{
			"SELECT " + name + ", a FROM loose",
			"SELECT " + name + " FROM loose",
			"SELECT loose." + name + " FROM loose",
			"SELECT a FROM loose WHERE " + name + " IS NOT NULL",
			"UPDATE loose SET b = 'y' WHERE " + name + " IS NOT NULL",
			"DELETE FROM loose WHERE " + name + " IS NOT NULL",
			"SELECT " + name + " FROM keyed WHERE id = 1",
			"SELECT keyed." + name + ", b FROM keyed",
		} {
			_, err := run(t, s, q)
			if e := sqlerr.From(err); e == nil || e.Code != sqlerr.FeatureNotSupported || e.Hint == "" {
				t.Errorf("%s: %v, want 0A000 with a hint", q, err)
			}
		}
		for _, q := range []string{
			"CREATE TABLE sys_" + name + " (" + name + " bigint)",
			"ALTER TABLE loose ADD COLUMN " + name + " bigint",
			"ALTER TABLE loose RENAME COLUMN b TO " + name,
			"CREATE TABLE sys_as_" + name + " AS SELECT 1 AS " + name,
		} {
			if _, err := run(t, s, q); sqlerr.Code(err) != sqlerr.DuplicateColumn {
				t.Errorf("%s: %v, want 42701", q, err)
			}
		}
	}
	expectRows(t, s, "SELECT a, b FROM loose", "1|x")
}
