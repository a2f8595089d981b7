package tests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// commitNote is a lakesoul_commits payload.
type commitNote struct {
	Table       string `json:"table"`
	TableID     string `json:"table_id"`
	Partition   string `json:"partition"`
	Version     int    `json:"version"`
	CommitOp    string `json:"commit_op"`
	CommittedAt string `json:"committed_at"`
}

// nextCommit waits up to wait for the next lakesoul_commits notification
// of table on c, skipping others (parallel tests commit other tables).
func nextCommit(t *testing.T, ctx context.Context, c *pgx.Conn, table string, wait time.Duration) (commitNote, *pgconn.Notification, bool) {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		n, err := c.WaitForNotification(wctx)
		if err != nil {
			if errors.Is(wctx.Err(), context.DeadlineExceeded) {
				return commitNote{}, nil, false
			}
			t.Fatalf("WaitForNotification: %v", err)
		}
		if n.Channel != "lakesoul_commits" {
			t.Fatalf("unexpected notification on %q: %q", n.Channel, n.Payload)
		}
		var note commitNote
		if err := json.Unmarshal([]byte(n.Payload), &note); err != nil {
			t.Fatalf("payload %q: %v", n.Payload, err)
		}
		if note.Table == table {
			return note, n, true
		}
	}
}

// follower is the README recipe: a consumer that LISTENs lakesoul_commits
// and reads each announced partition version's increment with
// lakesoul.changes. Per partition it keeps the newest version consumed and
// the end of the interval it read; an interval is [min(end, committed_at),
// committed_at + 1 ms): versions of one partition can share a millisecond,
// so a notice no later than the previous end re-reads from its own
// committed_at (at least once, never a gap).
type follower struct {
	version map[string]int
	end     map[string]time.Time
	rows    map[int64]string
}

func (f *follower) consume(t *testing.T, ctx context.Context, c *pgx.Conn, n commitNote) {
	t.Helper()
	if v, ok := f.version[n.Partition]; ok && n.Version <= v {
		return // already read by a later notice's interval
	}
	at, err := time.Parse(time.RFC3339Nano, n.CommittedAt)
	if err != nil {
		t.Fatalf("committed_at %q: %v", n.CommittedAt, err)
	}
	since := at
	if end, ok := f.end[n.Partition]; ok && end.Before(at) {
		since = end
	} else if !ok {
		since = time.UnixMilli(0)
	}
	until := at.Add(time.Millisecond)
	ts := func(t time.Time) string {
		return "TIMESTAMPTZ " + quoteLiteral(t.UTC().Format("2006-01-02 15:04:05.000Z07:00"))
	}
	rows, err := c.Query(ctx, fmt.Sprintf(`SELECT id, v FROM lakesoul.changes(%s, %s, %s, partition => %s)`,
		quoteLiteral(n.Table), ts(since), ts(until), quoteLiteral(n.Partition)))
	if err != nil {
		t.Fatalf("changes: %v", err)
	}
	for rows.Next() {
		var id int64
		var v string
		if err := rows.Scan(&id, &v); err != nil {
			t.Fatal(err)
		}
		f.rows[id] = v
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("changes: %v", err)
	}
	f.version[n.Partition], f.end[n.Partition] = n.Version, until
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// TestListenCommits: LISTEN lakesoul_commits delivers one NotificationResponse
// per committed partition version (table, table_id, partition, version,
// commit op, committed_at; the pid is the session's own backend key) while
// the session is idle; a consumer following the table with lakesoul.changes
// ends with the table's rows; UNLISTEN stops delivery.
func TestListenCommits(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	w := srv.connect(t)
	l := srv.connect(t)
	reader := srv.connect(t)
	mustExec(t, ctx, w, "CREATE SCHEMA lsn_s",
		"CREATE TABLE lsn_s.t (id bigint, v text, d date, PRIMARY KEY (id)) PARTITION BY LIST (d) WITH (hash_bucket_num = 2)")
	t.Cleanup(func() { _, _ = w.Exec(context.Background(), "DROP SCHEMA lsn_s CASCADE") })
	mustExec(t, ctx, l, "LISTEN lakesoul_commits", "LISTEN lakesoul_commits")
	var id string
	if err := w.QueryRow(ctx, "SELECT table_id FROM lakesoul.tables WHERE table_schema = 'lsn_s' AND table_name = 't'").Scan(&id); err != nil {
		t.Fatal(err)
	}

	mustExec(t, ctx, w, "INSERT INTO lsn_s.t VALUES (1, 'a', '2026-01-01'), (2, 'b', '2026-01-02')")
	f := &follower{version: map[string]int{}, end: map[string]time.Time{}, rows: map[int64]string{}}
	var parts []string
	for range 2 {
		note, n, ok := nextCommit(t, ctx, l, "lsn_s.t", 30*time.Second)
		if !ok {
			t.Fatal("no notification of the INSERT's commit")
		}
		if n.PID != l.PgConn().PID() {
			t.Errorf("notification pid %d, want the session's %d", n.PID, l.PgConn().PID())
		}
		if note.TableID != id || note.Version != 0 || note.CommitOp == "" {
			t.Errorf("notification %+v: want table_id %s, version 0, an op", note, id)
		}
		if _, err := time.Parse(time.RFC3339Nano, note.CommittedAt); err != nil {
			t.Errorf("committed_at %q: %v", note.CommittedAt, err)
		}
		parts = append(parts, note.Partition)
		f.consume(t, ctx, reader, note)
	}
	sort.Strings(parts)
	if strings.Join(parts, " ") != "d=2026-01-01 d=2026-01-02" {
		t.Errorf("partitions %v", parts)
	}

	// More commits of every kind the writer makes; the follower keeps up.
	mustExec(t, ctx, w, "INSERT INTO lsn_s.t VALUES (1, 'a2', '2026-01-01'), (3, 'c', '2026-01-01')",
		"UPDATE lsn_s.t SET v = 'b2' WHERE id = 2",
		"BEGIN", "INSERT INTO lsn_s.t VALUES (4, 'd', '2026-01-02')", "INSERT INTO lsn_s.t VALUES (5, 'e', '2026-01-01')", "COMMIT")
	ops := map[string]bool{}
	want := map[int64]string{1: "a2", 2: "b2", 3: "c", 4: "d", 5: "e"}
	for len(f.rows) < len(want) || fmt.Sprint(f.rows) != fmt.Sprint(want) {
		note, _, ok := nextCommit(t, ctx, l, "lsn_s.t", 30*time.Second)
		if !ok {
			t.Fatalf("follower stopped at %v, want %v", f.rows, want)
		}
		ops[note.CommitOp] = true
		f.consume(t, ctx, reader, note)
	}
	if !ops["MergeCommit"] && !ops["AppendCommit"] {
		t.Errorf("ops %v", ops)
	}

	mustExec(t, ctx, l, "UNLISTEN lakesoul_commits")
	mustExec(t, ctx, w, "INSERT INTO lsn_s.t VALUES (6, 'f', '2026-01-01')")
	if note, _, ok := nextCommit(t, ctx, l, "lsn_s.t", 2*time.Second); ok {
		t.Errorf("notification after UNLISTEN: %+v", note)
	}
}

// TestListenWorkspaces: a user of another workspace that LISTENs
// lakesoul_commits never receives a notice of a table it cannot see; a user
// of the table's workspace does.
func TestListenWorkspaces(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	admin := srv.connect(t)
	mustExec(t, ctx, admin, "SELECT lakesoul.create_workspace('lsnwa')", "SELECT lakesoul.create_workspace('lsnwb')",
		"SELECT lakesoul.create_user('lsn_alice', 'alice-pw', 'lsnwa', admin => true)",
		"SELECT lakesoul.create_user('lsn_ann', 'ann-pw', 'lsnwa')",
		"SELECT lakesoul.create_user('lsn_bob', 'bob-pw', 'lsnwb', admin => true)")
	alice := connectAs(t, srv, "lsn_alice", "alice-pw", "lsn", nil)
	ann := connectAs(t, srv, "lsn_ann", "ann-pw", "lsn", nil)
	bob := connectAs(t, srv, "lsn_bob", "bob-pw", "lsn", nil)
	mustExec(t, ctx, alice, "CREATE SCHEMA lsn_secret", "CREATE TABLE lsn_secret.hidden (id bigint, PRIMARY KEY (id))")
	t.Cleanup(func() { _, _ = alice.Exec(context.Background(), "DROP SCHEMA lsn_secret CASCADE") })
	mustExec(t, ctx, bob, "LISTEN lakesoul_commits")
	mustExec(t, ctx, ann, "LISTEN lakesoul_commits")
	mustExec(t, ctx, alice, "INSERT INTO lsn_secret.hidden VALUES (1)")
	if _, _, ok := nextCommit(t, ctx, ann, "lsn_secret.hidden", 30*time.Second); !ok {
		t.Fatal("a user of the workspace got no notice")
	}
	wctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	for {
		n, err := bob.WaitForNotification(wctx)
		if err != nil {
			break
		}
		if strings.Contains(n.Payload, "lsn_secret") || strings.Contains(n.Payload, "hidden") {
			t.Fatalf("another workspace's user received %q", n.Payload)
		}
	}
}

// TestNotifyChannels: NOTIFY and pg_notify between sessions of the server
// on user channels (PID of the notifier), delivered at COMMIT of a block and
// dropped by ROLLBACK; lakesoul_* channels are the server's (42501).
func TestNotifyChannels(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	a := srv.connect(t)
	b := srv.connect(t)
	mustExec(t, ctx, a, "LISTEN lsn_chan", `LISTEN "Lsn Other"`)
	next := func(wait time.Duration) *pgconn.Notification {
		wctx, cancel := context.WithTimeout(ctx, wait)
		defer cancel()
		for {
			n, err := a.WaitForNotification(wctx)
			if err != nil {
				return nil
			}
			if n.Channel != "lakesoul_commits" {
				return n
			}
		}
	}
	mustExec(t, ctx, b, "NOTIFY lsn_chan, 'one'")
	if n := next(10 * time.Second); n == nil || n.Channel != "lsn_chan" || n.Payload != "one" || n.PID != b.PgConn().PID() {
		t.Fatalf("NOTIFY: got %+v, want lsn_chan/one from pid %d", n, b.PgConn().PID())
	}
	var v string
	if err := b.QueryRow(ctx, "SELECT pg_notify($1, $2)", "Lsn Other", "two").Scan(&v); err != nil {
		t.Fatal(err)
	}
	if n := next(10 * time.Second); n == nil || n.Channel != "Lsn Other" || n.Payload != "two" {
		t.Fatalf("pg_notify: got %+v", n)
	}
	mustExec(t, ctx, b, "BEGIN", "NOTIFY lsn_chan, 'in block'")
	if n := next(500 * time.Millisecond); n != nil {
		t.Fatalf("NOTIFY in a block delivered before COMMIT: %+v", n)
	}
	mustExec(t, ctx, b, "COMMIT")
	if n := next(10 * time.Second); n == nil || n.Payload != "in block" {
		t.Fatalf("after COMMIT: got %+v", n)
	}
	mustExec(t, ctx, b, "BEGIN", "SELECT pg_notify('lsn_chan', 'rolled back')", "ROLLBACK", "NOTIFY lsn_chan")
	if n := next(10 * time.Second); n == nil || n.Payload != "" {
		t.Fatalf("after ROLLBACK: got %+v, want the empty payload of the later NOTIFY", n)
	}
	mustExec(t, ctx, a, "UNLISTEN *")
	mustExec(t, ctx, b, "NOTIFY lsn_chan, 'gone'")
	if n := next(500 * time.Millisecond); n != nil {
		t.Fatalf("after UNLISTEN *: %+v", n)
	}
	for q, code := range map[string]string{
		"NOTIFY lakesoul_commits, 'fake'":                    "42501",
		"SELECT pg_notify('lakesoul_compaction_notify', '')": "42501",
		"SELECT pg_notify('', 'x')":                          "22023",
		"SELECT pg_notify('c', repeat('x', 8000))":           "0A000",
		"NOTIFY c, '" + strings.Repeat("x", 8000) + "'":      "22023",
		"SELECT pg_notify('c', 'x') FROM (SELECT 1) s":       "0A000",
	} {
		if _, err := b.Exec(ctx, q); pgCode(err) != code {
			t.Errorf("%.60s: %v, want %s", q, err, code)
		}
	}
}

// TestListenPsql: psql prints the notifications a session receives after
// the command during which they arrived, as with PostgreSQL.
func TestListenPsql(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	p := &psqlClient{t: t, path: psqlPath(t), srv: srv}
	out := p.exec(ctx, "CREATE SCHEMA lsn_psql", "CREATE TABLE lsn_psql.t (id bigint, PRIMARY KEY (id))",
		"LISTEN lakesoul_commits", "LISTEN lsn_psql_chan", "NOTIFY lsn_psql_chan, 'from psql'",
		"INSERT INTO lsn_psql.t VALUES (1)", "SELECT pg_sleep(2)", "DROP SCHEMA lsn_psql CASCADE")
	if !strings.Contains(out, `Asynchronous notification "lsn_psql_chan" with payload "from psql" received from server process with PID `) {
		t.Errorf("psql output lacks the NOTIFY:\n%s", out)
	}
	if !strings.Contains(out, `Asynchronous notification "lakesoul_commits" with payload "{"table":"lsn_psql.t",`) ||
		!strings.Contains(out, `"version":0`) {
		t.Errorf("psql output lacks the commit notice:\n%s", out)
	}
}

// TestListenPsycopg2: psycopg2's conn.poll() and conn.notifies receive
// commit notices and NOTIFYs.
func TestListenPsycopg2(t *testing.T) {
	t.Parallel()
	python, dsn := psycopg2Client(t)
	got := runClient(t, testCtx(t), nil, python, testdataPath(t, "psycopg2_listen.py"), dsn, "lsn_psy")
	expectLines(t, got, "COMMIT lsn_psy.t -5 0 MergeCommit True", "USER hello from psycopg2 True", "DONE")
}
