package catalog_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Acceptance scenarios of reference §11 not covered in catalog_test.go.

// holdPartitionLock takes, in an open transaction of its own connection, the
// advisory lock lakesoul.commit takes for (table, desc); release ends it.
func holdPartitionLock(t *testing.T, dsn, tableID, desc string) (release func()) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT lakesoul.partition_lock($1, $2)", tableID, desc); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			tx.Rollback(ctx)
			conn.Close(ctx)
		})
	}
	t.Cleanup(release)
	return release
}

// waitForLockWaiters waits until n backends wait on an advisory lock.
func waitForLockWaiters(t *testing.T, c *catalog.Catalog, n int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var waiting int
		if err := c.Pool().QueryRow(context.Background(),
			`SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d lock waiters, want %d", waiting, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Scenario 8: a commit touching partitions A and B inserts both versions in
// one transaction: while B is busy, A's new version is not visible either.
func TestScenario8MultiPartitionVisibility(t *testing.T) {
	c, dsn := openCatalog(t)
	ctx := context.Background()
	tbl := newTable(t, c, "default", "t", []string{"d"}, []string{"id"})
	release := holdPartitionLock(t, dsn, tbl.ID, "d=b")
	done := make(chan error, 1)
	go func() {
		_, err := c.Commit(ctx, nil, tbl.ID, catalog.MergeCommit, []catalog.PartitionCommit{
			{Desc: "d=a", CommitID: uuid.New(), Ops: add("fa")},
			{Desc: "d=b", CommitID: uuid.New(), Ops: add("fb")},
		})
		done <- err
	}()
	waitForLockWaiters(t, c, 1)
	parts, err := c.LiveFiles(ctx, tbl.ID, nil)
	wantFiles(t, "while the commit waits for B", parts, err, "")
	release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	parts, err = c.LiveFiles(ctx, tbl.ID, nil)
	wantFiles(t, "after the commit", parts, err, "d=a:fa d=b:fb")
}

// Scenario 11: two MergeCommits prepared against version 3: one gets
// version 4, the other version 5 whose snapshot is version 4's plus its own.
func TestScenario11ConcurrentMerges(t *testing.T) {
	c, _ := openCatalog(t)
	ctx := context.Background()
	tbl := newTable(t, c, "default", "t", nil, []string{"id"})
	for i := range 4 {
		commit(t, c, tbl, catalog.MergeCommit, catalog.PartitionCommit{Desc: "-5", CommitID: uuid.New(), Ops: add(fmt.Sprint("m", i))})
	}
	read := 3
	ids := []uuid.UUID{uuid.New(), uuid.New()}
	versions := make([]int, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			v, err := c.Commit(ctx, nil, tbl.ID, catalog.MergeCommit,
				[]catalog.PartitionCommit{{Desc: "-5", CommitID: ids[i], Ops: add(fmt.Sprint("w", i)), ReadVersion: &read}})
			if err != nil {
				t.Error(err)
			}
			versions[i] = v["-5"]
		})
	}
	wg.Wait()
	if versions[0]+versions[1] != 9 || versions[0]*versions[1] != 20 {
		t.Fatalf("versions %v, want 4 and 5", versions)
	}
	first, second := 0, 1
	if versions[0] == 5 {
		first, second = 1, 0
	}
	var s4, s5 []uuid.UUID
	if err := c.Pool().QueryRow(ctx, `SELECT (SELECT snapshot FROM partition_info WHERE table_id = $1 AND version = 4),
		(SELECT snapshot FROM partition_info WHERE table_id = $1 AND version = 5)`, tbl.ID).Scan(&s4, &s5); err != nil {
		t.Fatal(err)
	}
	if s4[len(s4)-1] != ids[first] || len(s5) != len(s4)+1 || s5[len(s5)-1] != ids[second] || fmt.Sprint(s5[:len(s4)]) != fmt.Sprint(s4) {
		t.Fatalf("v4 %v v5 %v", s4, s5)
	}
	if got := fmt.Sprint(files(t, c, tbl, "-5")); got != fmt.Sprintf("[m0 m1 m2 m3 w%d w%d]", first, second) {
		t.Fatalf("both writes must be readable: %s", got)
	}
}

// Scenario 13: compaction reads version 5; an upsert commits version 6; the
// compaction commits version 7 = [compaction, upsert], so the upsert's file
// is read after (wins over) the compacted one.
func TestScenario13CompactionKeepsLaterUpsert(t *testing.T) {
	c, _ := openCatalog(t)
	tbl := newTable(t, c, "default", "t", nil, []string{"id"})
	for i := range 6 {
		commit(t, c, tbl, catalog.MergeCommit, catalog.PartitionCommit{Desc: "-5", CommitID: uuid.New(), Ops: add(fmt.Sprint("m", i))})
	}
	read := 5
	up := uuid.New()
	if v := commit(t, c, tbl, catalog.MergeCommit, catalog.PartitionCommit{Desc: "-5", CommitID: up, Ops: add("up")}); v["-5"] != 6 {
		t.Fatalf("upsert version %v", v)
	}
	comp := uuid.New()
	if v := commit(t, c, tbl, catalog.CompactionCommit, catalog.PartitionCommit{Desc: "-5", CommitID: comp, Ops: add("compacted"), ReadVersion: &read}); v["-5"] != 7 {
		t.Fatalf("compaction version %v", v)
	}
	var snap []uuid.UUID
	if err := c.Pool().QueryRow(context.Background(), "SELECT snapshot FROM partition_info WHERE table_id = $1 AND version = 7", tbl.ID).Scan(&snap); err != nil {
		t.Fatal(err)
	}
	if len(snap) != 2 || snap[0] != comp || snap[1] != up {
		t.Fatalf("version 7 snapshot %v", snap)
	}
	if got := fmt.Sprint(files(t, c, tbl, "-5")); got != "[compacted up]" {
		t.Fatalf("read order %s", got)
	}
}

// Scenario 17: when another client keeps taking the version (a unique
// violation on partition_info that the advisory lock cannot prevent, e.g. a
// LakeSoul JVM writer), the commit gives up after 5 attempts with 40001 and
// leaves nothing behind.
func TestScenario17GivesUpAfterFiveAttempts(t *testing.T) {
	c, _ := openCatalog(t)
	ctx := context.Background()
	tbl := newTable(t, c, "default", "t", nil, []string{"id"})
	// Another client (one that does not take the partition lock) inserts the
	// very version each attempt is about to insert. A sequence counts the
	// attempts: nextval survives the rollback.
	if _, err := c.Pool().Exec(ctx, `
		CREATE SEQUENCE public.collisions;
		CREATE FUNCTION public.collide() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF pg_trigger_depth() = 1 THEN
				PERFORM nextval('public.collisions');
				INSERT INTO public.partition_info (table_id, partition_desc, version, commit_op, snapshot, expression)
				VALUES (NEW.table_id, NEW.partition_desc, NEW.version, 'AppendCommit', '{}', '');
			END IF;
			RETURN NEW;
		END $$;
		CREATE TRIGGER collide BEFORE INSERT ON partition_info FOR EACH ROW
			WHEN (NEW.table_id = '`+tbl.ID+`') EXECUTE FUNCTION public.collide();`); err != nil {
		t.Fatal(err)
	}
	_, err := c.Commit(ctx, nil, tbl.ID, catalog.MergeCommit, []catalog.PartitionCommit{{Desc: "-5", CommitID: uuid.New(), Ops: add("x")}})
	if sqlerr.Code(err) != sqlerr.SerializationFailure || !strings.Contains(err.Error(), "5 attempts") {
		t.Fatalf("commit against a permanent collision: %v", err)
	}
	var attempts int
	if err := c.Pool().QueryRow(ctx, "SELECT last_value FROM public.collisions").Scan(&attempts); err != nil || attempts != 5 {
		t.Fatalf("attempts %d (%v), want 5", attempts, err)
	}
	if fp := catalogCounts(t, c, tbl.ID); fp != " | " {
		t.Fatalf("rows left behind: %q", fp)
	}
	if _, err := c.Pool().Exec(ctx, "DROP TRIGGER collide ON partition_info"); err != nil {
		t.Fatal(err)
	}
	if v := commit(t, c, tbl, catalog.MergeCommit, catalog.PartitionCommit{Desc: "-5", CommitID: uuid.New(), Ops: add("y")}); v["-5"] != 0 {
		t.Fatalf("commit after the collisions stopped: %v", v)
	}
}

// Scenario 18: the commit creating version 10 of a never-compacted partition
// notifies lakesoul_compaction_notify (and so does every later one until a
// compaction lands); a CompactionCommit does not; after a compaction at
// version 12 the next notification comes at version 22.
func TestScenario18CompactionNotify(t *testing.T) {
	c, dsn := openCatalog(t)
	ctx := context.Background()
	if err := c.CreateNamespace(ctx, "ns"); err != nil {
		t.Fatal(err)
	}
	tbl := newTable(t, c, "ns", "t", []string{"d"}, []string{"id"})
	listener, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close(ctx)
	if _, err := listener.Exec(ctx, "LISTEN lakesoul_compaction_notify"); err != nil {
		t.Fatal(err)
	}
	// notified drains the notifications that arrived for the last commit.
	notified := func() []string {
		if _, err := listener.Exec(ctx, "SELECT 1"); err != nil {
			t.Fatal(err)
		}
		var out []string
		for {
			wctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			n, err := listener.WaitForNotification(wctx)
			cancel()
			if errors.Is(err, context.DeadlineExceeded) || (err != nil && wctx.Err() != nil) {
				return out
			}
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, n.Payload)
		}
	}
	var fired []int
	var payload string
	for v := 0; v <= 22; v++ {
		pc := catalog.PartitionCommit{Desc: "d=2026-01-01", CommitID: uuid.New(), Ops: add(fmt.Sprint("f", v))}
		op := catalog.MergeCommit
		if v == 12 {
			read := 11
			op, pc.ReadVersion = catalog.CompactionCommit, &read
		}
		if got := commit(t, c, tbl, op, pc); got[pc.Desc] != v {
			t.Fatalf("version %v, want %d", got, v)
		}
		if n := notified(); len(n) > 0 {
			fired = append(fired, v)
			payload = n[0]
		}
	}
	if fmt.Sprint(fired) != "[10 11 22]" {
		t.Fatalf("notifications at versions %v, want [10 11 22]", fired)
	}
	// A client calling lakesoul.commit without deferring (as LakeSoul's own
	// clients' inserts do) gets the notification from inside the commit.
	if _, err := c.Pool().Exec(ctx, `SELECT * FROM lakesoul.commit($1, 'MergeCommit', $2::jsonb)`, tbl.ID,
		fmt.Sprintf(`[{"partition_desc": "d=2026-01-01", "commit_id": "%s", "file_ops": []}]`, uuid.New())); err != nil {
		t.Fatal(err)
	}
	if n := notified(); len(n) != 1 {
		t.Fatalf("in-transaction notification: %v", n)
	}
	var p map[string]string
	if err := json.Unmarshal([]byte(payload), &p); err != nil {
		t.Fatalf("payload %q: %v", payload, err)
	}
	if p["table_path"] != tbl.Path || p["table_partition_desc"] != "d=2026-01-01" || p["table_namespace"] != "ns" || len(p) != 3 {
		t.Fatalf("payload %v", p)
	}
}
