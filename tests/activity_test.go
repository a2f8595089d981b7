package tests

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lakesoul-go/lakesoul/internal/pgtest"
)

// connectAs opens a pgx connection as user with an application_name,
// closed when the test ends; notices are collected in *notices when given.
func connectAs(t *testing.T, srv *server, user, password, app string, notices *[]string) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(srv.dsn(user, password, database) + "&application_name=" + app)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	if notices != nil {
		cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
			mu.Lock()
			*notices = append(*notices, n.Severity+" "+n.Code+" "+n.Message)
			mu.Unlock()
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("connect as %s: %v", user, err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// waitActivity polls pg_stat_activity through c until the session pid
// shows state, and returns its query.
func waitActivity(t *testing.T, ctx context.Context, c *pgx.Conn, pid uint32, state string) string {
	t.Helper()
	for {
		var got, query *string
		err := c.QueryRow(ctx, "SELECT state, query FROM pg_stat_activity WHERE pid = $1", int32(pid)).Scan(&got, &query)
		if err != nil && err != pgx.ErrNoRows {
			t.Fatalf("pg_stat_activity: %v", err)
		}
		if got != nil && *got == state {
			return *query
		}
		select {
		case <-ctx.Done():
			t.Fatalf("session %d never reached state %q (last %v)", pid, state, got)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestStatActivity: pg_stat_activity lists the lake server's sessions as
// PostgreSQL lists its backends — pid as BackendKeyData reported it, role,
// application_name, client address, start times, state and query — and
// never the catalog PostgreSQL's own backends. A role sees the details of
// its own sessions; of others' it sees the row with '<insufficient
// privilege>' as query, as in PostgreSQL; an administrator sees all.
func TestStatActivity(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	admin := connectAs(t, srv, adminRole, sharedPassword, "act-admin", nil)
	mustExec(t, ctx, admin, "SELECT lakesoul.create_workspace('actws')",
		"SELECT lakesoul.create_user('act_alice', 'alice-pw', 'actws')",
		"SELECT lakesoul.create_user('act_bob', 'bob-pw', 'actws')")
	alice := connectAs(t, srv, "act_alice", "alice-pw", "act-alice", nil)
	bob := connectAs(t, srv, "act_bob", "bob-pw", "act-bob", nil)
	bobPID := bob.PgConn().PID()

	// The session itself, while its query runs.
	const self = "SELECT pid, usename, application_name, state, query, backend_type, datname, client_addr IS NOT NULL, client_port > 0, backend_start <= now(), query_start >= backend_start, xact_start IS NOT NULL FROM pg_stat_activity WHERE pid = pg_backend_pid()"
	wantRows(t, "own row", queryStrings(t, ctx, admin, self), []string{
		fmt.Sprintf("%d|lakesoul|act-admin|active|%s|client backend|lakesoul|true|true|true|true|true", admin.PgConn().PID(), self)})

	// Another session, idle, then idle in a transaction block, then in a failed one.
	mustExec(t, ctx, bob, "SELECT 1 AS bob_was_here")
	if q := waitActivity(t, ctx, admin, bobPID, "idle"); q != "SELECT 1 AS bob_was_here" {
		t.Errorf("idle session's query = %q", q)
	}
	wantRows(t, "idle session's transaction", queryStrings(t, ctx, admin,
		"SELECT xact_start IS NULL, state_change >= query_start FROM pg_stat_activity WHERE pid = $1", int32(bobPID)),
		[]string{"true|true"})
	mustExec(t, ctx, bob, "BEGIN", "SELECT 2")
	waitActivity(t, ctx, admin, bobPID, "idle in transaction")
	wantRows(t, "open transaction", queryStrings(t, ctx, admin,
		"SELECT xact_start IS NOT NULL, xact_start <= query_start FROM pg_stat_activity WHERE pid = $1", int32(bobPID)),
		[]string{"true|true"})
	if _, err := bob.Exec(ctx, "SELECT 1/0"); pgCode(err) != "22012" {
		t.Fatalf("1/0: %v", err)
	}
	waitActivity(t, ctx, admin, bobPID, "idle in transaction (aborted)")
	mustExec(t, ctx, bob, "ROLLBACK")
	waitActivity(t, ctx, admin, bobPID, "idle")

	// Another role's session: listed, details hidden.
	wantRows(t, "bob's row as alice", queryStrings(t, ctx, alice,
		"SELECT usename, application_name, query, state, client_addr, backend_start, query_start FROM pg_stat_activity WHERE pid = $1", int32(bobPID)),
		[]string{"act_bob|act-bob|<insufficient privilege>|NULL|NULL|NULL|NULL"})
	wantRows(t, "alice's own row", queryStrings(t, ctx, alice,
		"SELECT usename, state, backend_type FROM pg_stat_activity WHERE pid = pg_backend_pid()"),
		[]string{"act_alice|active|client backend"})

	// Only the lake server's sessions: none of the catalog's backends.
	cat := srv.catalogConn(t)
	var backends []int32
	rows, err := cat.Query(ctx, "SELECT pid FROM pg_stat_activity")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var pid int32
		if err := rows.Scan(&pid); err != nil {
			t.Fatal(err)
		}
		backends = append(backends, pid)
	}
	rows.Close()
	if len(backends) == 0 {
		t.Fatal("the catalog lists no backends of its own")
	}
	wantRows(t, "catalog backends in the lake's pg_stat_activity", queryStrings(t, ctx, admin,
		"SELECT pid FROM pg_stat_activity WHERE pid = ANY($1) OR backend_type IS DISTINCT FROM 'client backend'", backends), nil)
	// Joins and aggregates over it work as over any relation.
	wantRows(t, "aggregate", queryStrings(t, ctx, admin,
		"SELECT count(*) >= 3, count(DISTINCT pid) = count(*) FROM pg_catalog.pg_stat_activity a WHERE a.usename IN ('lakesoul', 'act_alice', 'act_bob')"),
		[]string{"true|true"})
}

// TestCancelTerminateBackend: pg_cancel_backend and pg_terminate_backend act
// on lake sessions, from another session (pgx and psql): an administrator
// may signal any session, a role its own; another role's session is 42501;
// a pid that is no session is false with a WARNING, as in PostgreSQL.
func TestCancelTerminateBackend(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	var adminNotices []string
	admin := connectAs(t, srv, adminRole, sharedPassword, "sig-admin", &adminNotices)
	mustExec(t, ctx, admin, "SELECT lakesoul.create_workspace('sigws')",
		"SELECT lakesoul.create_user('sig_alice', 'alice-pw', 'sigws')",
		"SELECT lakesoul.create_user('sig_bob', 'bob-pw', 'sigws')")
	alice := connectAs(t, srv, "sig_alice", "alice-pw", "sig-alice", nil)
	bob := connectAs(t, srv, "sig_bob", "bob-pw", "sig-victim", nil)
	bob2 := connectAs(t, srv, "sig_bob", "bob-pw", "sig-bob2", nil)

	// sleepIn runs a long statement on c and returns its error once it ends.
	sleepIn := func(c *pgx.Conn) chan error {
		done := make(chan error, 1)
		go func() {
			_, err := c.Exec(ctx, "SELECT pg_sleep(600)")
			done <- err
		}()
		waitActivity(t, ctx, admin, c.PgConn().PID(), "active")
		return done
	}
	wantCanceled := func(what string, done chan error) {
		t.Helper()
		if err := <-done; pgCode(err) != "57014" {
			t.Errorf("%s: the sleeping statement ended with %v, want 57014", what, err)
		}
	}

	// Another role's session: 42501, and it keeps running.
	done := sleepIn(bob)
	bobPID := int32(bob.PgConn().PID())
	if _, err := alice.Exec(ctx, "SELECT pg_cancel_backend($1)", bobPID); pgCode(err) != "42501" {
		t.Errorf("alice cancels bob: %v, want 42501", err)
	}
	if _, err := alice.Exec(ctx, "SELECT pg_terminate_backend($1)", bobPID); pgCode(err) != "42501" {
		t.Errorf("alice terminates bob: %v, want 42501", err)
	}
	waitActivity(t, ctx, admin, uint32(bobPID), "active")
	// The same role, from its other session.
	if got := queryStrings(t, ctx, bob2, "SELECT pg_cancel_backend($1)", bobPID); strings.Join(got, "") != "true" {
		bob.PgConn().CancelRequest(ctx)
		t.Errorf("bob cancels his own: %q, want true", got)
	}
	wantCanceled("own cancel", done)
	mustExec(t, ctx, bob, "SELECT 1") // the session goes on

	// The admin, by the PostgreSQL idiom, with psql.
	done = sleepIn(bob)
	psql := &psqlClient{t: t, path: psqlPath(t), srv: srv}
	if out := psql.exec(ctx, "SELECT pg_cancel_backend(pid) AS cancelled FROM pg_stat_activity WHERE application_name = 'sig-victim' AND state = 'active'"); strings.TrimSpace(out) != "t" {
		bob.PgConn().CancelRequest(ctx)
		t.Errorf("psql pg_cancel_backend: %q", out)
	}
	wantCanceled("psql cancel", done)

	// Not a session: false with PostgreSQL's WARNING.
	wantRows(t, "unknown pid", queryStrings(t, ctx, admin, "SELECT pg_cancel_backend(1), pg_terminate_backend(2)"), []string{"false|false"})
	want := []string{"WARNING 01000 PID 1 is not a PostgreSQL backend process", "WARNING 01000 PID 2 is not a PostgreSQL backend process"}
	if strings.Join(adminNotices, "\n") != strings.Join(want, "\n") {
		t.Errorf("notices = %q, want %q", adminNotices, want)
	}
	// Only as a result column of the outermost SELECT.
	if _, err := admin.Exec(ctx, "SELECT 1 WHERE pg_cancel_backend(1)"); pgCode(err) != "0A000" {
		t.Errorf("pg_cancel_backend in WHERE: %v, want 0A000", err)
	}

	// Terminate, with psql: the victim's connection ends with 57P01.
	if out := psql.exec(ctx, fmt.Sprintf("SELECT pg_terminate_backend(%d)", bobPID)); strings.TrimSpace(out) != "t" {
		t.Errorf("psql pg_terminate_backend: %q", out)
	}
	if _, err := bob.Exec(ctx, "SELECT 1"); err == nil || (pgCode(err) != "57P01" && !bob.IsClosed()) {
		t.Errorf("terminated session still works: %v", err)
	}
	for {
		var n int
		if err := admin.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE pid = $1", bobPID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	mustExec(t, ctx, bob2, "SELECT 1") // other sessions go on
}

// TestStatActivityPerServer: two servers on one catalog each list and
// signal their own sessions, as two PostgreSQL clusters do: a session of
// server A is not in server B's pg_stat_activity, and B's
// pg_cancel_backend/pg_terminate_backend of A's pid are false (no session
// of B), leaving it running.
func TestStatActivityPerServer(t *testing.T) {
	t.Parallel()
	requirePG(t)
	ctx := testCtx(t)
	cluster := pgtest.Cluster(t)
	if err := cluster.CreateDatabase(ctx, "twosrv"); err != nil {
		t.Fatal(err)
	}
	url := cluster.ConnString("twosrv")
	const pw = "twosrv-Secret1"
	a, err := startServer(filepath.Join(testBaseDir(t), "a"), pw, "--catalog-url", url, "--compaction-workers", "0")
	if err != nil {
		t.Fatal(err)
	}
	defer a.stopT(t)
	b, err := startServer(filepath.Join(testBaseDir(t), "b"), pw, "--catalog-url", url, "--compaction-workers", "0")
	if err != nil {
		t.Fatal(err)
	}
	defer b.stopT(t)
	onA := connectAs(t, a, adminRole, pw, "on-a", nil)
	onB := connectAs(t, b, adminRole, pw, "on-b", nil)
	aPID := onA.PgConn().PID()
	const q = "SELECT application_name FROM pg_stat_activity WHERE application_name IN ('on-a', 'on-b') ORDER BY 1"
	wantRows(t, "server A's sessions", queryStrings(t, ctx, onA, q), []string{"on-a"})
	wantRows(t, "server B's sessions", queryStrings(t, ctx, onB, q), []string{"on-b"})
	wantRows(t, "B signals A's pid", queryStrings(t, ctx, onB, "SELECT pg_cancel_backend($1), pg_terminate_backend($1)", int32(aPID)),
		[]string{"false|false"})
	wantRows(t, "A's session after B's signals", queryStrings(t, ctx, onA, "SELECT 1"), []string{"1"})
}
