package tests

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestAffectRowTwice: a statement that would write one row twice fails as
// PostgreSQL's does (21000 with its message and hint) instead of keeping one
// of the writes — INSERT … ON CONFLICT DO UPDATE proposing a key twice
// (VALUES and SELECT; an existing key and a new one; with a WHERE that
// skips the earlier proposal or the later one) and MERGE matching a target
// row with two source rows whose actions modify it — while statements that
// touch each row once, or skip the second touch, succeed with PostgreSQL's
// rows. Every statement runs against lakesoul serve and PostgreSQL on every
// key kind (integer, bigint, text, uuid, date, composite) and must give the
// same outcome and leave the same rows.
func TestAffectRowTwice(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	lake := srv.connect(t)
	ref := srv.referenceDB(t, "twice_ref")
	mustExec(t, ctx, ref, "CREATE SCHEMA twice")
	mustExec(t, ctx, lake, "CREATE SCHEMA twice")

	// A key kind: its column definitions, key columns and two keys (a is
	// stored before each statement, b is not), as select-list values.
	keys := []struct {
		cols, key, a, b string
	}{
		{"k int", "k", "1", "2"},
		{"k bigint", "k", "9000000000", "-1"},
		{"k text", "k", "'a'", "'b'"},
		{"k uuid", "k", "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid", "'b0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid"},
		{"k date", "k", "'2026-01-01'::date", "'2026-01-02'::date"},
		{"k1 int, k2 text", "k1, k2", "1, 'x'", "1, 'y'"},
	}
	// Statements over table {T} with key columns {K}, keys {A} and {B};
	// MERGE's source s has key columns {S} (and v), joined by {JOIN}.
	stmts := []string{
		"INSERT INTO {T} VALUES ({A}, 10), ({A}, 20) ON CONFLICT ({K}) DO UPDATE SET v = excluded.v",
		"INSERT INTO {T} VALUES ({B}, 10), ({B}, 20) ON CONFLICT ({K}) DO UPDATE SET v = excluded.v",
		"INSERT INTO {T} VALUES ({A}, 10), ({B}, 20) ON CONFLICT ({K}) DO UPDATE SET v = {T}.v + excluded.v",
		"INSERT INTO {T} SELECT {A}, g FROM generate_series(1, 2) g ON CONFLICT ({K}) DO UPDATE SET v = excluded.v",
		"INSERT INTO {T} SELECT {B}, g FROM generate_series(1, 2) g ON CONFLICT ({K}) DO UPDATE SET v = excluded.v",
		"INSERT INTO {T} VALUES ({A}, 10), ({A}, 20) ON CONFLICT ({K}) DO UPDATE SET v = excluded.v WHERE {T}.v > 100",
		"INSERT INTO {T} VALUES ({A}, 10), ({A}, 200) ON CONFLICT ({K}) DO UPDATE SET v = excluded.v WHERE excluded.v > 100",
		"INSERT INTO {T} VALUES ({A}, 200), ({A}, 10) ON CONFLICT ({K}) DO UPDATE SET v = excluded.v WHERE excluded.v > 100",
		"INSERT INTO {T} VALUES ({A}, 10), ({A}, 20) ON CONFLICT ({K}) DO UPDATE SET v = excluded.v RETURNING v",
		"MERGE INTO {T} USING (SELECT {A}, 10 UNION ALL SELECT {A}, 20) AS s({S}) ON {JOIN} WHEN MATCHED THEN UPDATE SET v = s.v",
		"MERGE INTO {T} USING (SELECT {A}, 10 UNION ALL SELECT {B}, 20) AS s({S}) ON {JOIN} WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT VALUES ({SK}, s.v)",
		"MERGE INTO {T} USING (SELECT {A}, 10 UNION ALL SELECT {A}, 20) AS s({S}) ON {JOIN} WHEN MATCHED AND s.v > 15 THEN UPDATE SET v = s.v",
		"MERGE INTO {T} USING (SELECT {A}, 10 UNION ALL SELECT {A}, 20) AS s({S}) ON {JOIN} WHEN MATCHED AND s.v > 15 THEN UPDATE SET v = s.v WHEN MATCHED THEN DO NOTHING",
		"MERGE INTO {T} USING (SELECT {A}, 10 UNION ALL SELECT {A}, 20) AS s({S}) ON {JOIN} WHEN MATCHED AND s.v < 15 THEN DO NOTHING WHEN MATCHED THEN UPDATE SET v = {T}.v + s.v",
	}
	n := 0
	for _, k := range keys {
		keyCols := strings.Split(k.key, ", ")
		var srcCols, join, srcKey []string
		for _, c := range keyCols {
			srcCols = append(srcCols, "s"+c)
			join = append(join, fmt.Sprintf("{T}.%s = s.s%s", c, c))
			srcKey = append(srcKey, "s.s"+c)
		}
		for _, st := range stmts {
			n++
			table := fmt.Sprintf("twice.t%d", n)
			q := strings.NewReplacer("{JOIN}", strings.Join(join, " AND "), "{SK}", strings.Join(srcKey, ", "),
				"{S}", strings.Join(srcCols, ", ")+", v").Replace(st)
			q = strings.NewReplacer("{T}", table, "{K}", k.key, "{A}", k.a, "{B}", k.b).Replace(q)
			setup := []string{
				fmt.Sprintf("CREATE TABLE %s (%s, v int, PRIMARY KEY (%s))", table, k.cols, k.key),
				fmt.Sprintf("INSERT INTO %s VALUES (%s, 1)", table, k.a),
			}
			mustExec(t, ctx, lake, setup...)
			mustExec(t, ctx, ref, setup...)
			if got, want := twiceOutcome(ctx, lake, q), twiceOutcome(ctx, ref, q); got != want {
				t.Errorf("%s:\n lakesoul %s\n postgres %s", q, got, want)
			}
			check := fmt.Sprintf("SELECT * FROM %s ORDER BY 1, 2", table)
			if got, want := checkRows(t, ctx, lake, check), checkRows(t, ctx, ref, check); got != want {
				t.Errorf("%s: lakesoul rows %s, postgres %s", q, got, want)
			}
		}
	}
}

// twiceOutcome is a statement's error (SQLSTATE, message, hint) or its
// command tag and rows.
func twiceOutcome(ctx context.Context, c *pgx.Conn, q string) string {
	results, err := c.PgConn().Exec(ctx, q).ReadAll()
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return fmt.Sprintf("ERROR %s %q hint %q", pe.Code, pe.Message, pe.Hint)
	}
	if err != nil {
		return "ERROR " + err.Error()
	}
	return resultText(results)
}

// checkRows is the command tag and rows of q, a query reading what the
// statements under test left, failing the test when q fails (a check both
// systems refuse alike would compare equal and check nothing).
func checkRows(t *testing.T, ctx context.Context, c *pgx.Conn, q string) string {
	t.Helper()
	results, err := c.PgConn().Exec(ctx, q).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return resultText(results)
}

// resultText is the last result's command tag and rows.
func resultText(results []*pgconn.Result) string {
	r := results[len(results)-1]
	var rows []string
	for _, row := range r.Rows {
		var f []string
		for _, v := range row {
			f = append(f, string(v))
		}
		rows = append(rows, strings.Join(f, "|"))
	}
	return r.CommandTag.String() + " " + strings.Join(rows, ";")
}
