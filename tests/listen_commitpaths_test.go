package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// noticeWait bounds each wait for a notification that must come (a test
// that waits longer has failed); no assertion depends on how fast it comes.
const noticeWait = 30 * time.Second

// notesUntil returns the lakesoul_commits notes of table that arrive on l
// before the first note of marker: committers announce in commit order,
// so a version committed before the marker's commit is announced before
// it (a barrier, not a sleep).
func notesUntil(t *testing.T, ctx context.Context, l *pgx.Conn, table, marker string) []commitNote {
	t.Helper()
	var out []commitNote
	for {
		note, ok := nextNote(t, ctx, l)
		if !ok {
			t.Fatalf("no notification of the marker %s", marker)
		}
		switch note.Table {
		case marker:
			return out
		case table:
			out = append(out, note)
		}
	}
}

// nextNote is the next lakesoul_commits note of any table.
func nextNote(t *testing.T, ctx context.Context, l *pgx.Conn) (commitNote, bool) {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, noticeWait)
	defer cancel()
	n, err := l.WaitForNotification(wctx)
	if err != nil {
		if wctx.Err() != nil {
			return commitNote{}, false
		}
		t.Fatalf("WaitForNotification: %v", err)
	}
	var note commitNote
	if err := json.Unmarshal([]byte(n.Payload), &note); err != nil {
		t.Fatalf("payload %q: %v", n.Payload, err)
	}
	return note, true
}

// TestListenCommitPaths: every path that commits a table version announces
// it once — CALL lakesoul.rollback and compaction as much as writes — and
// paths that commit no version (drop_partition, cleanup) announce nothing;
// pg_listening_channels() lists the session's channels.
func TestListenCommitPaths(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	w := srv.connect(t)
	l := srv.connect(t)
	mustExec(t, ctx, w, "CREATE SCHEMA lcp",
		"CREATE TABLE lcp.t (id bigint, v text, d date, PRIMARY KEY (id)) PARTITION BY LIST (d) WITH (hash_bucket_num = 1)",
		"CREATE TABLE lcp.marker (id bigint)")
	t.Cleanup(func() { _, _ = w.Exec(context.Background(), "DROP SCHEMA lcp CASCADE") })
	mustExec(t, ctx, l, "LISTEN lakesoul_commits", "LISTEN lcp_other")
	wantRows(t, "pg_listening_channels()", queryStrings(t, ctx, l, "SELECT pg_listening_channels()"),
		[]string{"lakesoul_commits", "lcp_other"})
	wantRows(t, "FROM pg_listening_channels()", queryStrings(t, ctx, l, "SELECT * FROM pg_listening_channels() AS c(name)"),
		[]string{"lakesoul_commits", "lcp_other"})
	mustExec(t, ctx, l, "UNLISTEN lcp_other")
	wantRows(t, "after UNLISTEN", queryStrings(t, ctx, l, "SELECT pg_listening_channels()"), []string{"lakesoul_commits"})
	wantRows(t, "another session's channels", queryStrings(t, ctx, w, "SELECT * FROM pg_listening_channels()"), nil)
	if _, err := w.Exec(ctx, "SELECT count(*) FROM pg_listening_channels()"); pgCode(err) != "0A000" {
		t.Errorf("pg_listening_channels in a query: %v, want 0A000", err)
	}

	marker := 0
	barrier := func() []commitNote {
		t.Helper()
		marker++
		mustExec(t, ctx, w, fmt.Sprintf("INSERT INTO lcp.marker VALUES (%d)", marker))
		return notesUntil(t, ctx, l, "lcp.t", "lcp.marker")
	}
	mustExec(t, ctx, w, "INSERT INTO lcp.t VALUES (1, 'a', '2026-01-01'), (2, 'b', '2026-01-02')",
		"INSERT INTO lcp.t VALUES (1, 'a2', '2026-01-01')")
	if got := barrier(); len(got) != 3 {
		t.Fatalf("writes: %d notices, want 3: %+v", len(got), got)
	}

	// A rollback commits a new version of the partition: announced once.
	var part string
	var version int
	if err := w.QueryRow(ctx, "CALL lakesoul.rollback('lcp.t', version => 0, \"partition\" => 'd=2026-01-01')").Scan(&part, &version); err != nil {
		t.Fatal(err)
	}
	var op string
	if err := w.QueryRow(ctx, "SELECT commit_op FROM lakesoul.history('lcp.t') WHERE \"partition\" = $1 AND version = $2", part, version).Scan(&op); err != nil {
		t.Fatal(err)
	}
	got := barrier()
	if len(got) != 1 || got[0].Partition != part || got[0].Version != version || got[0].CommitOp != op {
		t.Fatalf("rollback to version 0 of %s (new version %d, %s): notices %+v", part, version, op, got)
	}
	wantRows(t, "rolled back", queryStrings(t, ctx, w, "SELECT v FROM lcp.t WHERE id = 1"), []string{"a"})

	// Compaction commits a version per partition it rewrote.
	mustExec(t, ctx, w, "CALL lakesoul.compact('lcp.t')")
	got = barrier()
	var announced []string
	for _, n := range got {
		announced = append(announced, fmt.Sprintf("%s:%d:%s", n.Partition, n.Version, n.CommitOp))
	}
	slices.Sort(announced)
	compacted := queryStrings(t, ctx, w, `SELECT "partition" || ':' || version || ':' || commit_op FROM lakesoul.history('lcp.t')
		WHERE commit_op = 'CompactionCommit' ORDER BY 1`)
	if len(compacted) == 0 || !slices.Equal(announced, compacted) {
		t.Errorf("compaction announced %v, committed %v", announced, compacted)
	}

	// drop_partition and cleanup commit no version: nothing is announced.
	mustExec(t, ctx, w, "CALL lakesoul.drop_partition('lcp.t', 'd=2026-01-02')",
		"CALL lakesoul.cleanup('lcp.t', now() + interval '1 hour')")
	if got := barrier(); len(got) != 0 {
		t.Errorf("drop_partition/cleanup announced %+v", got)
	}

	// A failing rollback (no such version) commits nothing, announces nothing.
	if _, err := w.Exec(ctx, "CALL lakesoul.rollback('lcp.t', version => 99)"); err == nil {
		t.Fatal("rollback to a missing version succeeded")
	}
	if got := barrier(); len(got) != 0 {
		t.Errorf("a failed rollback announced %+v", got)
	}
}

// TestListenCDCCommits: a CDC subscription's batches announce each table
// version they commit: every version in the table's history, the initial
// copy's and the streamed batches', has its notice.
func TestListenCDCCommits(t *testing.T) {
	requirePG(t)
	ctx := testCtx(t)
	src := newCDCSource(t)
	mustExec(t, ctx, src.conn,
		"CREATE ROLE repl LOGIN REPLICATION PASSWORD 'repl-Secret9'",
		"CREATE SCHEMA app",
		"CREATE TABLE app.items (id int PRIMARY KEY, v text)",
		"INSERT INTO app.items SELECT g, 'v' || g FROM generate_series(1, 20) g",
		"CREATE PUBLICATION items_pub FOR ALL TABLES",
		"GRANT USAGE ON SCHEMA app TO repl",
		"GRANT SELECT ON ALL TABLES IN SCHEMA app TO repl")
	base := testBaseDir(t)
	s, err := startServer(filepath.Join(base, "data"), "cdc-Secret1", "--catalog-url", externalCatalog(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.stopT(t)
	c := s.connect(t)
	l := s.connect(t)
	mustExec(t, ctx, l, "LISTEN lakesoul_commits")
	conn := fmt.Sprintf("host=127.0.0.1 port=%d dbname=app user=repl password=repl-Secret9", src.cluster.Port())
	mustExec(t, ctx, c, "CREATE SUBSCRIPTION items_sync CONNECTION '"+conn+"' PUBLICATION items_pub WITH (commit_interval = '100ms')")
	waitSubscription(t, c, src, "items_sync", src.lsn(t))
	mustExec(t, ctx, src.conn, "INSERT INTO app.items VALUES (21, 'new')", "UPDATE app.items SET v = 'changed' WHERE id = 1",
		"DELETE FROM app.items WHERE id = 2")
	waitSubscription(t, c, src, "items_sync", src.lsn(t))
	sameRows(t, "items", c, src, "SELECT id, v FROM app.items ORDER BY id")

	rows, err := c.Query(ctx, `SELECT "partition" || ':' || version FROM lakesoul.history('app.items')`)
	if err != nil {
		t.Fatal(err)
	}
	history, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(history) < 2 {
		t.Fatalf("history %v: want the copy and a streamed batch", history)
	}
	seen := map[string]int{}
	for missing := len(history); missing > 0; {
		note, _, ok := nextCommit(t, ctx, l, "app.items", noticeWait)
		if !ok {
			t.Fatalf("notices %v, history %v", seen, history)
		}
		key := fmt.Sprintf("%s:%d", note.Partition, note.Version)
		if !slices.Contains(history, key) {
			continue // a version committed after the history was read
		}
		if seen[key]++; seen[key] == 1 {
			missing--
		}
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("version %s announced %d times", k, n)
		}
	}
}
