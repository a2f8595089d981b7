package engine_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakesoul-go/lakesoul/engine"
)

// arrowRows runs text through ExecuteArrow and renders its rows.
func arrowRows(t *testing.T, s *engine.Session, text string) ([]string, *arrow.Schema) {
	t.Helper()
	ctx := context.Background()
	stmts, err := s.Parse(ctx, text, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var sc *arrow.Schema
	if _, err := s.ExecuteArrow(ctx, stmts[0], nil, func(rec arrow.RecordBatch) error {
		sc = rec.Schema()
		out = append(out, recordRows(rec)...)
		return nil
	}); err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return out, sc
}

func recordRows(rec arrow.RecordBatch) []string {
	var out []string
	for i := 0; i < int(rec.NumRows()); i++ {
		var f []string
		for _, c := range rec.Columns() {
			f = append(f, c.ValueStr(i))
		}
		out = append(out, strings.Join(f, "|"))
	}
	return out
}

// ExecuteArrow gives the same merged rows and schema on the direct-scan
// route (the merge's arrays) and the DuckDB route, honours LIMIT/OFFSET
// on the direct route, and a plain scan's units read one by one
// (PlanScanUnits, OpenScanUnit) give exactly those rows; scans with a key
// filter or a LIMIT have no units.
func TestExecuteArrow(t *testing.T) {
	s := newSession(t).(*engine.Session)
	ctx := context.Background()
	mustRun(t, s, `CREATE TABLE d (id bigint PRIMARY KEY, v text, n numeric(8,2)) WITH (hash_bucket_num = 4)`)
	mustRun(t, s, `INSERT INTO d SELECT i, 'v' || i, i / 4 FROM range(20000) AS r(i)`)
	mustRun(t, s, `INSERT INTO d (id, v) SELECT i, 'w' || i FROM range(0, 20000, 3) AS r(i)`)

	direct, dsc := arrowRows(t, s, `SELECT id, v, n FROM d`)
	viaDuck, ksc := arrowRows(t, s, `SELECT id, v, n FROM d ORDER BY id`)
	if !dsc.Equal(ksc) {
		t.Errorf("schemas differ:\n%s\n%s", dsc, ksc)
	}
	slices.Sort(direct)
	sorted := slices.Clone(viaDuck)
	slices.Sort(sorted)
	if len(direct) != 20000 || !slices.Equal(direct, sorted) {
		t.Fatalf("direct %d rows, DuckDB %d rows, equal %v", len(direct), len(sorted), slices.Equal(direct, sorted))
	}
	if !slices.Contains(direct, "3|w3|0") || !slices.Contains(direct, "4|v4|1") {
		t.Errorf("merged values missing: %v", direct[:6])
	}
	inTable := map[string]bool{}
	for _, r := range direct {
		inTable[r] = true
	}
	// LIMIT and OFFSET across merged batches (and across the record
	// batches rows are gathered into): as many distinct rows of the
	// table as asked for.
	for _, c := range []struct {
		q    string
		rows int
	}{{`SELECT id, v, n FROM d LIMIT 10 OFFSET 5`, 10}, {`SELECT id, v, n FROM d LIMIT 7000 OFFSET 9000`, 7000},
		{`SELECT id, v, n FROM d OFFSET 19990`, 10}, {`SELECT id, v, n FROM d LIMIT 0`, 0},
		{`SELECT id, v, n FROM d OFFSET 20000`, 0}, {`SELECT id, v, n FROM d LIMIT 30000`, 20000}} {
		got, _ := arrowRows(t, s, c.q)
		seen := map[string]bool{}
		for _, r := range got {
			if seen[r] || !inTable[r] {
				t.Errorf("%s: row %q repeated or not in the table", c.q, r)
				break
			}
			seen[r] = true
		}
		if len(got) != c.rows {
			t.Errorf("%s: %d rows, want %d", c.q, len(got), c.rows)
		}
	}

	stmts, err := s.Parse(ctx, `SELECT id, v, n FROM d`, nil)
	if err != nil {
		t.Fatal(err)
	}
	plan, ok, err := s.PlanScanUnits(ctx, stmts[0])
	if err != nil || !ok || len(plan.Units) != 4 {
		t.Fatalf("units: %v %v %+v", ok, err, plan)
	}
	var units []string
	for _, u := range plan.Units {
		r, err := s.OpenScanUnit(ctx, plan.Namespace, plan.Table, plan.TableID, plan.Columns, u)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Schema().Equal(dsc) {
			t.Errorf("unit schema %s, want %s", r.Schema(), dsc)
		}
		if err := r.Run(ctx, func(rec arrow.RecordBatch) error { units = append(units, recordRows(rec)...); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(units)
	if !slices.Equal(units, direct) {
		t.Errorf("units read %d rows, the scan %d", len(units), len(direct))
	}
	if _, err := s.OpenScanUnit(ctx, plan.Namespace, plan.Table, "table_other", plan.Columns, plan.Units[0]); err == nil {
		t.Error("a unit of another table id was read")
	}
	for _, q := range []string{`SELECT id, v FROM d WHERE id = 3`, `SELECT id FROM d LIMIT 5`, `SELECT id FROM d ORDER BY id`} {
		stmts, err := s.Parse(ctx, q, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok, err := s.PlanScanUnits(ctx, stmts[0]); ok || err != nil {
			t.Errorf("%s: units %v, %v", q, ok, err)
		}
	}
}
