package compaction_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/compaction"
)

// Scenario 18: the commit that creates version 10 of a never-compacted
// partition notifies lakesoul_compaction_notify with table_path,
// table_partition_desc and table_namespace, and queues a job; a
// CompactionCommit notifies nothing; after a compaction at version 12 the
// next notification comes with version 22.
func TestScenario18TriggerAndQueue(t *testing.T) {
	e := newEnv(t)
	tbl := e.table("t18", cols, true, 1, nil)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, e.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "LISTEN "+compaction.NotifyChannel); err != nil {
		t.Fatal(err)
	}
	notified := func() (map[string]string, bool) {
		wctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		n, err := conn.WaitForNotification(wctx)
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, false
		}
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]string
		if err := json.Unmarshal([]byte(n.Payload), &m); err != nil {
			t.Fatalf("payload %q: %v", n.Payload, err)
		}
		return m, true
	}
	commit := func(op string, read *int) int {
		v, err := e.cat.Commit(ctx, nil, tbl.ID, op, []catalog.PartitionCommit{{Desc: "d=x", CommitID: newID(), ReadVersion: read,
			Ops: []catalog.FileOp{{Path: tbl.Path + "/d=x/part-" + newID().String() + "_0000.parquet", Op: "add", Size: 1, ExistCols: []string{"id"}}}}})
		if err != nil {
			t.Fatal(err)
		}
		return v["d=x"]
	}
	jobs := func() int64 {
		return e.count(`SELECT count(*) FROM lakesoul.compaction_job WHERE table_id = $1`, tbl.ID)
	}
	for v := 0; v < 10; v++ {
		commit(catalog.MergeCommit, nil)
		if m, ok := notified(); ok {
			t.Fatalf("notification at version %d: %v", v, m)
		}
	}
	if jobs() != 0 {
		t.Fatal("job queued before version 10")
	}
	if v := commit(catalog.MergeCommit, nil); v != 10 {
		t.Fatalf("version %d", v)
	}
	m, ok := notified()
	if !ok || m["table_path"] != tbl.Path || m["table_partition_desc"] != "d=x" || m["table_namespace"] != "s" {
		t.Fatalf("notification at version 10: %v %v", m, ok)
	}
	if jobs() != 1 {
		t.Fatal("no job queued at version 10")
	}
	commit(catalog.MergeCommit, nil) // 11: notifies again (>=), still one job
	if _, ok := notified(); !ok || jobs() != 1 {
		t.Fatal("version 11 should notify again and keep one job")
	}
	read := 11
	if v := commit(catalog.CompactionCommit, &read); v != 12 {
		t.Fatalf("compaction got version %d", v)
	}
	if m, ok := notified(); ok {
		t.Fatalf("a CompactionCommit notified: %v", m)
	}
	for v := 13; v <= 22; v++ {
		commit(catalog.MergeCommit, nil)
		_, ok := notified()
		if ok != (v == 22) {
			t.Fatalf("version %d: notified %v", v, ok)
		}
	}
	if n := e.count(`SELECT count(*) FROM lakesoul.compaction_job j WHERE lakesoul.compaction_due(j.table_id, j.partition_desc)`); n != 1 {
		t.Fatalf("due jobs: %d", n)
	}
}

// Dropping a table removes its jobs and its discarded-file rows.
func TestDropTableForgetsJobs(t *testing.T) {
	e := newEnv(t)
	tbl := e.table("gone", cols, false, 1, nil)
	for i := 0; i < 11; i++ {
		e.upsert(tbl, []any{i, "x", i, nil})
	}
	compactOne(t, e, tbl, "-5", compaction.Options{})
	e.upsert(tbl, []any{1, "y", 1, nil})
	if _, err := e.cat.Pool().Exec(context.Background(),
		`INSERT INTO lakesoul.compaction_job (table_id, partition_desc) VALUES ($1, '-5')`, tbl.ID); err != nil {
		t.Fatal(err)
	}
	if e.count(`SELECT count(*) FROM public.discard_compressed_file_info`) == 0 {
		t.Fatal("no discard rows")
	}
	if _, err := e.cat.DropTable(context.Background(), "s", "gone"); err != nil {
		t.Fatal(err)
	}
	if n := e.count(`SELECT count(*) FROM public.discard_compressed_file_info`) + e.count(`SELECT count(*) FROM lakesoul.compaction_job`); n != 0 {
		t.Fatalf("%d rows left", n)
	}
}
