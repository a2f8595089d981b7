package engine_test

import (
	"context"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakesoul-go/lakesoul/engine"
)

// TestScanUnitsSplitByRowGroup: a plain scan of a one-bucket table whose
// one file holds unique keys in several row groups has a unit per row
// group (as the direct scan's workers split it), so its Flight endpoints
// can be read in parallel; the units read one by one give the scan's rows
// exactly once. A second write that overlaps the keys makes the bucket
// one unit again (its rows must be merged).
func TestScanUnitsSplitByRowGroup(t *testing.T) {
	s := newSession(t).(*engine.Session)
	ctx := context.Background()
	mustRun(t, s, `CREATE TABLE one (id bigint PRIMARY KEY, v text) WITH (hash_bucket_num = 1)`)
	// 300 k rows: three row groups, a file well over the 4 MiB from
	// which a file is split.
	mustRun(t, s, `INSERT INTO one SELECT i, md5(i::text) || md5((i + 1)::text) FROM range(300000) AS r(i)`)
	units := func() (*engine.ScanPlan, []string) {
		t.Helper()
		stmts, err := s.Parse(ctx, `SELECT id, v FROM one`, nil)
		if err != nil {
			t.Fatal(err)
		}
		plan, ok, err := s.PlanScanUnits(ctx, stmts[0])
		if err != nil || !ok {
			t.Fatalf("units: %v, %v", ok, err)
		}
		var rows []string
		for _, u := range plan.Units {
			r, err := s.OpenScanUnit(ctx, plan.Namespace, plan.Table, plan.TableID, plan.Columns, u)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Run(ctx, func(rec arrow.RecordBatch) error { rows = append(rows, recordRows(rec)...); return nil }); err != nil {
				t.Fatal(err)
			}
		}
		slices.Sort(rows)
		return plan, rows
	}
	direct, _ := arrowRows(t, s, `SELECT id, v FROM one`)
	slices.Sort(direct)
	plan, rows := units()
	if len(plan.Units) != 3 {
		t.Errorf("a bucket of one file of unique keys in 3 row groups: %d units, want 3", len(plan.Units))
	}
	if len(direct) != 300000 || !slices.Equal(rows, direct) {
		t.Errorf("units read %d rows, the scan %d (equal %v)", len(rows), len(direct), slices.Equal(rows, direct))
	}
	mustRun(t, s, `INSERT INTO one SELECT i, 'w' || i FROM range(0, 300000, 7) AS r(i)`)
	direct, _ = arrowRows(t, s, `SELECT id, v FROM one`)
	slices.Sort(direct)
	plan, rows = units()
	if len(plan.Units) != 1 {
		t.Errorf("a bucket of overlapping files: %d units, want 1", len(plan.Units))
	}
	if len(direct) != 300000 || !slices.Equal(rows, direct) {
		t.Errorf("after the overlapping write: units read %d rows, the scan %d", len(rows), len(direct))
	}
}
