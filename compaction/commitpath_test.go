package compaction_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/compaction"
	"github.com/lakesoul-go/lakesoul/internal/pgtest"
	"github.com/lakesoul-go/lakesoul/metrics"
)

// A compaction commits through the catalog's commit path: when the catalog
// connection dies while the commit is in flight (here its backend is
// terminated, 57P01, while the commit waits at COMMIT), the commit is re-sent
// as every commit is, lands once, and is counted in the commit metrics — one
// committed commit and its re-send — as every commit is.
func TestCompactionCommitTakesTheCatalogsCommitPath(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	tbl := e.table("cp", cols, false, 1, nil)
	for i := 0; i < 3; i++ {
		e.upsert(tbl, []any{i, "v", i, "x"}, []any{i + 10, "w", i, "y"})
	}
	before := e.read(tbl)
	admin, err := pgx.Connect(ctx, e.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if err := pgtest.InstallCommitFaults(ctx, admin); err != nil {
		t.Fatal(err)
	}
	if err := pgtest.ArmCommitFault(ctx, admin, tbl.ID, "sleep"); err != nil {
		t.Fatal(err)
	}
	// Once the compaction's commit sleeps at COMMIT: disarm, and cut it.
	killed := make(chan error, 1)
	go func() {
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			var pid int32
			err := admin.QueryRow(ctx, `SELECT pid FROM pg_stat_activity
				WHERE query LIKE '%lakesoul.compaction_commit(%' AND wait_event = 'PgSleep' AND pid <> pg_backend_pid()`).Scan(&pid)
			if err == pgx.ErrNoRows {
				time.Sleep(20 * time.Millisecond)
				continue
			}
			if err == nil {
				if err = pgtest.ArmCommitFault(ctx, admin, tbl.ID, ""); err == nil {
					_, err = admin.Exec(ctx, "SELECT pg_terminate_backend($1)", pid)
				}
			}
			killed <- err
			return
		}
		killed <- context.DeadlineExceeded
	}()

	committed, retries := metrics.Commits(metrics.Committed), metrics.CommitRetries()
	res, err := compaction.CompactPartition(ctx, e.cat, e.store, tbl, "-5", compaction.Options{})
	if kerr := <-killed; kerr != nil {
		t.Fatalf("cutting the commit's connection: %v", kerr)
	}
	if err != nil {
		t.Fatalf("compaction whose commit connection was cut: %v", err)
	}
	if res.Status != compaction.Compacted {
		t.Fatalf("result %+v", res)
	}
	if got := metrics.Commits(metrics.Committed) - committed; got != 1 {
		t.Errorf("committed commits counted: %v, want 1 (the compaction's)", got)
	}
	if got := metrics.CommitRetries() - retries; got < 1 {
		t.Errorf("commit re-sends counted: %v, want at least 1", got)
	}
	expectSame(t, "rows after the compaction", e.read(tbl), before)
	pf, err := e.cat.LiveFiles(ctx, tbl.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(pf) != 1 || pf[0].Version != res.Version {
		t.Fatalf("partitions %+v, compaction result %+v", pf, res)
	}
}
