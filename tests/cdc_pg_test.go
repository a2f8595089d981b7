package tests

import (
	"context"
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/internal/pgtest"
	"github.com/lakesoul-go/lakesoul/pgcluster"
)

// CDC from PostgreSQL (issue 16) through pgwire: CREATE SUBSCRIPTION on
// lakesoul serve, a real publisher with wal_level = logical, the lake
// compared with the source after every kind of change, crashes and faults.

// cdcSource is a publisher: database "app" on a throwaway cluster with
// wal_level = logical, reachable over TCP.
type cdcSource struct {
	cluster *pgcluster.Cluster
	dsn     string // as its superuser
	conn    *pgx.Conn
}

func newCDCSource(t *testing.T) *cdcSource {
	t.Helper()
	ctx := testCtx(t)
	c := pgtest.LogicalCluster(t)
	if err := c.CreateDatabase(ctx, "app"); err != nil {
		t.Fatal(err)
	}
	s := &cdcSource{cluster: c, dsn: fmt.Sprintf("host=127.0.0.1 port=%d dbname=app user=%s sslmode=disable", c.Port(), c.SuperUser())}
	s.connect(t)
	return s
}

func (s *cdcSource) connect(t *testing.T) {
	t.Helper()
	conn, err := pgx.Connect(testCtx(t), s.dsn)
	if err != nil {
		t.Fatal(err)
	}
	s.conn = conn
	t.Cleanup(func() { conn.Close(context.Background()) })
}

// lsn is the publisher's current WAL insert position.
func (s *cdcSource) lsn(t *testing.T) string {
	t.Helper()
	var lsn string
	if err := s.conn.QueryRow(testCtx(t), "SELECT pg_current_wal_insert_lsn()::text").Scan(&lsn); err != nil {
		t.Fatal(err)
	}
	return lsn
}

// waitSubscription polls lakesoul.subscriptions over c until the
// subscription's position is at or after lsn (compared by the source).
func waitSubscription(t *testing.T, c *pgx.Conn, src *cdcSource, name, lsn string) {
	t.Helper()
	ctx := testCtx(t)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var state, pos, lastErr string
		err := c.QueryRow(ctx, "SELECT state, coalesce(position, ''), coalesce(last_error, '') FROM lakesoul.subscriptions WHERE name = $1", name).
			Scan(&state, &pos, &lastErr)
		if err == nil && pos != "" {
			var done bool
			if err := src.conn.QueryRow(ctx, "SELECT $1::pg_lsn >= $2::pg_lsn", pos, lsn).Scan(&done); err != nil {
				t.Fatal(err)
			}
			if done {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("subscription %s not at %s after 2 minutes: state %s, position %q, last_error %q (%v)", name, lsn, state, pos, lastErr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitSubscriptionState polls lakesoul.subscriptions over c until
// subscription name is in state want with errPart in its last_error ("":
// any), for two minutes at most.
func waitSubscriptionState(t *testing.T, c *pgx.Conn, name, want, errPart string) {
	t.Helper()
	ctx := testCtx(t)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var state, lastErr string
		if err := c.QueryRow(ctx, "SELECT state, coalesce(last_error, '') FROM lakesoul.subscriptions WHERE name = $1", name).Scan(&state, &lastErr); err != nil {
			t.Fatal(err)
		}
		if state == want && strings.Contains(lastErr, errPart) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("subscription %s: state %s (last_error %q), want %s with %q", name, state, lastErr, want, errPart)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// sameRows compares a query on the lake with the same query on the source.
func sameRows(t *testing.T, what string, lake *pgx.Conn, src *cdcSource, q string) {
	t.Helper()
	ctx := testCtx(t)
	got, want := queryStrings(t, ctx, lake, q), queryStrings(t, ctx, src.conn, q)
	for i := 0; i < max(len(got), len(want)); i++ {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Fatalf("%s: lake has %d rows, source %d; row %d differs:\n lake   %q\n source %q", what, len(got), len(want), i, g, w)
		}
	}
}

// externalCatalog is a catalog database on a throwaway cluster, so that
// servers can be killed and share it.
func externalCatalog(t *testing.T) string {
	t.Helper()
	c := pgtest.Cluster(t)
	if err := c.CreateDatabase(testCtx(t), "cat"); err != nil {
		t.Fatal(err)
	}
	return c.ConnString("cat")
}

// TestCDCPostgresSubscription: CREATE SUBSCRIPTION over pgwire copies the
// publication's tables and follows inserts, updates, deletes, key updates,
// TRUNCATE and schema changes; lakesoul.subscriptions shows it without its
// password; DISABLE stops it, ENABLE catches up, REFRESH PUBLICATION and new
// tables bring tables in; DROP SUBSCRIPTION removes the slot.
func TestCDCPostgresSubscription(t *testing.T) {
	requirePG(t)
	ctx := testCtx(t)
	src := newCDCSource(t)
	mustExec(t, ctx, src.conn,
		"CREATE ROLE repl LOGIN REPLICATION PASSWORD 'repl-Secret9'",
		"CREATE SCHEMA app",
		"CREATE TABLE app.accounts (id int PRIMARY KEY, owner varchar(20), balance bigint, price numeric(10,2), born date, seen timestamptz, tags text[], flag boolean, blob bytea)",
		"CREATE TABLE app.ledger (transfer int, amount bigint)",
		`INSERT INTO app.accounts SELECT g, 'o' || g, g * 100, g / 7.0, DATE '2020-01-01' + g, TIMESTAMPTZ '2026-01-01 00:00:00+00' + g * INTERVAL '1 minute 0.5 second',
			ARRAY['a' || g, 'b'], g % 2 = 0, decode(to_hex(g), 'escape') FROM generate_series(1, 500) g`,
		"INSERT INTO app.ledger VALUES (1, 10), (2, 20)",
		"CREATE PUBLICATION app_pub FOR ALL TABLES",
		"GRANT USAGE ON SCHEMA app TO repl",
		"GRANT SELECT ON ALL TABLES IN SCHEMA app TO repl",
		"ALTER DEFAULT PRIVILEGES IN SCHEMA app GRANT SELECT ON TABLES TO repl",
	)
	base := testBaseDir(t)
	s, err := startServer(filepath.Join(base, "data"), "cdc-Secret1", "--catalog-url", externalCatalog(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.stopT(t)
	c := s.connect(t)
	conn := fmt.Sprintf("host=127.0.0.1 port=%d dbname=app user=repl password=repl-Secret9", src.cluster.Port())
	mustExec(t, ctx, c, "CREATE SUBSCRIPTION app_sync CONNECTION '"+conn+"' PUBLICATION app_pub WITH (commit_interval = '200ms', hash_bucket_num = 2)")
	waitSubscription(t, c, src, "app_sync", src.lsn(t))
	accounts := "SELECT id, owner, balance, price, born, seen, tags::text, flag, blob FROM app.accounts ORDER BY id"
	sameRows(t, "accounts after the copy", c, src, accounts)
	ledger := "SELECT transfer, amount FROM app.ledger ORDER BY transfer"
	sameRows(t, "ledger (an append table) after the copy", c, src, ledger)

	// What users see: no password anywhere, PostgreSQL's column names.
	rows, err := c.Query(ctx, "SELECT * FROM lakesoul.subscriptions")
	if err != nil {
		t.Fatal(err)
	}
	rows.Close()
	var names []string
	for _, f := range rows.FieldDescriptions() {
		names = append(names, f.Name)
	}
	wantRows(t, "lakesoul.subscriptions columns", []string{strings.Join(names, ",")},
		[]string{"name,source,state,position,lag_bytes,lag_seconds,last_commit_at,tables,last_error"})
	row := queryStrings(t, ctx, c, "SELECT name, source, state, tables::text FROM lakesoul.subscriptions")
	wantRows(t, "lakesoul.subscriptions", row, []string{fmt.Sprintf("app_sync|host=127.0.0.1 port=%d dbname=app user=repl|streaming|{app.accounts,app.ledger}", src.cluster.Port())})
	if all := strings.Join(queryStrings(t, ctx, c, "SELECT * FROM lakesoul.subscriptions"), " "); strings.Contains(all, "repl-Secret9") {
		t.Fatalf("lakesoul.subscriptions shows the password: %s", all)
	}

	// Inserts, updates, deletes, a key update, TRUNCATE, schema changes,
	// a numeric widening; each transaction in one piece.
	mustExec(t, ctx, src.conn,
		"UPDATE app.accounts SET balance = balance + 1, tags = tags || 'u'::text WHERE id % 3 = 0",
		"DELETE FROM app.accounts WHERE id BETWEEN 100 AND 150",
		"UPDATE app.accounts SET id = id + 1000 WHERE id BETWEEN 10 AND 12",
		"INSERT INTO app.ledger VALUES (3, 30)",
		"BEGIN", "TRUNCATE app.ledger", "INSERT INTO app.ledger VALUES (4, 40)", "COMMIT",
		"ALTER TABLE app.accounts ADD COLUMN region text",
		"ALTER TABLE app.accounts ALTER COLUMN price TYPE numeric(14,2)",
		"ALTER TABLE app.accounts DROP COLUMN flag",
		"UPDATE app.accounts SET region = 'eu', price = 123456789.12 WHERE id < 5",
	)
	waitSubscription(t, c, src, "app_sync", src.lsn(t))
	sameRows(t, "accounts after changes", c, src, "SELECT id, owner, balance, price, born, seen, tags::text, blob, region FROM app.accounts ORDER BY id")
	sameRows(t, "ledger after TRUNCATE", c, src, ledger)

	// DISABLE stops applying; ENABLE catches up.
	mustExec(t, ctx, c, "ALTER SUBSCRIPTION app_sync DISABLE")
	wantRows(t, "disabled state", queryStrings(t, ctx, c, "SELECT state FROM lakesoul.subscriptions"), []string{"disabled"})
	mustExec(t, ctx, src.conn, "INSERT INTO app.ledger VALUES (5, 50)")
	mustExec(t, ctx, c, "ALTER SUBSCRIPTION app_sync ENABLE")
	waitSubscription(t, c, src, "app_sync", src.lsn(t))
	sameRows(t, "ledger after ENABLE", c, src, ledger)

	// A new table of the FOR ALL TABLES publication appears by itself, with
	// the rows it had before its first change reached the subscription.
	mustExec(t, ctx, src.conn,
		"CREATE TABLE app.items (sku text PRIMARY KEY, qty int)",
		"INSERT INTO app.items VALUES ('a', 1), ('b', 2)",
		"UPDATE app.items SET qty = 3 WHERE sku = 'a'")
	waitSubscription(t, c, src, "app_sync", src.lsn(t))
	sameRows(t, "a new table", c, src, "SELECT sku, qty FROM app.items ORDER BY sku")

	// Bad input: each fails with its SQLSTATE and leaves nothing.
	pgPlain := pgtest.Cluster(t) // wal_level = replica
	bad := []struct{ what, sql, code string }{
		{"unreachable", "CREATE SUBSCRIPTION bad CONNECTION 'host=127.0.0.1 port=1 dbname=app user=repl connect_timeout=5' PUBLICATION app_pub", "08001"},
		{"no replication rights", fmt.Sprintf("CREATE SUBSCRIPTION bad CONNECTION 'host=127.0.0.1 port=%d dbname=app user=norepl' PUBLICATION app_pub", src.cluster.Port()), "42501"},
		{"unknown publication", "CREATE SUBSCRIPTION bad CONNECTION '" + conn + "' PUBLICATION nope", "42704"},
		{"wal_level", "CREATE SUBSCRIPTION bad CONNECTION '" + pgPlain.ConnString("postgres") + "' PUBLICATION app_pub", "55000"},
		{"same target tables", "CREATE SUBSCRIPTION bad CONNECTION '" + conn + "' PUBLICATION app_pub", "42710"},
		{"in a transaction block", "BEGIN; CREATE SUBSCRIPTION bad CONNECTION '" + conn + "' PUBLICATION app_pub", "25001"},
	}
	mustExec(t, ctx, src.conn, "CREATE ROLE norepl LOGIN")
	for _, b := range bad {
		_, err := c.Exec(ctx, b.sql)
		if got := pgCode(err); got != b.code {
			t.Errorf("%s: SQLSTATE %s (%v), want %s", b.what, got, err, b.code)
		}
		if b.what == "wal_level" && (err == nil || !strings.Contains(err.Error(), "wal_level")) {
			t.Errorf("wal_level: the error does not name wal_level: %v", err)
		}
		_, _ = c.Exec(ctx, "ROLLBACK")
	}
	wantRows(t, "subscriptions after bad input", queryStrings(t, ctx, c, "SELECT name FROM lakesoul.subscriptions"), []string{"app_sync"})

	// Only the admin manages subscriptions.
	mustExec(t, ctx, c, "SELECT lakesoul.create_workspace('cdcws')", "SELECT lakesoul.create_user('cdc_alice', 'alice-Pw1', 'cdcws', admin => true)")
	alice, err := pgx.Connect(ctx, s.dsn("cdc_alice", "alice-Pw1", database))
	if err != nil {
		t.Fatal(err)
	}
	defer alice.Close(ctx)
	if _, err := alice.Exec(ctx, "CREATE SUBSCRIPTION mine CONNECTION '"+conn+"' PUBLICATION app_pub"); pgCode(err) != "42501" {
		t.Errorf("a workspace admin's CREATE SUBSCRIPTION: %v, want 42501", err)
	}
	if _, err := alice.Exec(ctx, "DROP SUBSCRIPTION app_sync"); pgCode(err) != "42501" {
		t.Errorf("a workspace admin's DROP SUBSCRIPTION: %v, want 42501", err)
	}
	if _, err := alice.Exec(ctx, "SELECT * FROM lakesoul.subscription"); err == nil {
		t.Errorf("a user reads lakesoul.subscription (with the connection strings)")
	}

	// DROP SUBSCRIPTION removes the slot; the lake tables stay.
	mustExec(t, ctx, c, "DROP SUBSCRIPTION app_sync")
	wantRows(t, "slots after DROP SUBSCRIPTION", queryStrings(t, ctx, src.conn, "SELECT count(*) FROM pg_replication_slots"), []string{"0"})
	wantRows(t, "subscriptions after DROP", queryStrings(t, ctx, c, "SELECT count(*) FROM lakesoul.subscriptions"), []string{"0"})
	sameRows(t, "ledger after DROP", c, src, ledger)
	mustExec(t, ctx, c, "DROP SUBSCRIPTION IF EXISTS app_sync")
}

// TestCDCPostgresCrashAndTakeover: two servers share a catalog and a
// warehouse; a stream of transfers runs on the source while a reader polls
// the lake through the server that does not apply the subscription. The
// one that applies it is killed with SIGKILL mid-stream: the other takes
// the subscription over when its lease runs out and resumes at the stored
// position, and the killed one comes back. Throughout, every read sees the
// source's invariants — the total balance, each account's balance equal to
// its ledger (one source transaction touches both tables), no ledger entry
// twice (an append table) — and at the end the lake equals the source.
func TestCDCPostgresCrashAndTakeover(t *testing.T) {
	requirePG(t)
	ctx := testCtx(t)
	src := newCDCSource(t)
	const accounts, start = 200, 1000
	mustExec(t, ctx, src.conn,
		"CREATE TABLE accounts (id int PRIMARY KEY, balance bigint NOT NULL)",
		"CREATE TABLE ledger (transfer int NOT NULL, from_id int NOT NULL, to_id int NOT NULL, amount bigint NOT NULL)",
		fmt.Sprintf("INSERT INTO accounts SELECT g, %d FROM generate_series(1, %d) g", start, accounts),
		"CREATE PUBLICATION bank FOR TABLE accounts, ledger")
	catURL := externalCatalog(t)
	base := testBaseDir(t)
	warehouse := "file://" + filepath.Join(base, "a", "warehouse")
	servers := make([]*server, 2)
	for i, dir := range []string{"a", "b"} {
		s, err := startServer(filepath.Join(base, dir), "cdc-Secret1", "--catalog-url", catURL, "--warehouse", warehouse)
		if err != nil {
			t.Fatal(err)
		}
		servers[i] = s
	}
	defer func() {
		for _, s := range servers {
			s.stopT(t)
		}
	}()
	c := servers[0].connect(t)
	mustExec(t, ctx, c, "CREATE SUBSCRIPTION bank_sync CONNECTION '"+src.dsn+"' PUBLICATION bank WITH (target_schema = 'bank', commit_interval = '100ms')")
	waitSubscription(t, c, src, "bank_sync", src.lsn(t))

	// The holder, from its worker id (host-pid-…).
	catalogDB, err := pgx.Connect(ctx, catURL)
	if err != nil {
		t.Fatal(err)
	}
	defer catalogDB.Close(ctx)
	holder := func() int {
		var by string
		if err := catalogDB.QueryRow(ctx, "SELECT coalesce(claimed_by, '') FROM lakesoul.subscription WHERE name = 'bank_sync'").Scan(&by); err != nil {
			t.Fatal(err)
		}
		for i, s := range servers {
			if strings.Contains(by, fmt.Sprintf("-%d-", s.cmd.Process.Pid)) {
				return i
			}
		}
		t.Fatalf("subscription held by %q, neither server", by)
		return -1
	}
	victim := holder()
	other := servers[1-victim]
	reader := other.connect(t)

	conn, err := pgx.Connect(ctx, src.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	load := startBankLoad(accounts, 1, func(i, from, to, amount int) error {
		return pgx.BeginFunc(context.Background(), conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(context.Background(), "UPDATE accounts SET balance = balance - $1 WHERE id = $2", amount, from); err != nil {
				return err
			}
			if _, err := tx.Exec(context.Background(), "UPDATE accounts SET balance = balance + $1 WHERE id = $2", amount, to); err != nil {
				return err
			}
			_, err := tx.Exec(context.Background(), "INSERT INTO ledger VALUES ($1, $2, $3, $4)", i, from, to, amount)
			return err
		})
	})
	var checks int
	check := func() {
		t.Helper()
		checkBank(t, ctx, reader, accounts, start, checks)
		checks++
	}
	// Let some transfers reach the lake, then kill the applying server.
	load.waitFor(t, 300, check)
	waitSubscription(t, reader, src, "bank_sync", src.lsn(t))
	check()
	if err := syscall.Kill(servers[victim].cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-servers[victim].exited
	// The stream goes on while nobody applies it; the other server takes
	// over once the lease runs out.
	before := load.transfers.Load()
	load.waitFor(t, before+300, check)
	restarted, err := startServer(servers[victim].dataDir, "cdc-Secret1", "--catalog-url", catURL, "--warehouse", warehouse)
	if err != nil {
		t.Fatal(err)
	}
	servers[victim] = restarted
	target := src.lsn(t)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		check()
		var caughtUp bool
		var pos string
		if err := reader.QueryRow(ctx, "SELECT coalesce(position, '') FROM lakesoul.subscriptions WHERE name = 'bank_sync'").Scan(&pos); err != nil {
			t.Fatal(err)
		}
		if err := src.conn.QueryRow(ctx, "SELECT $1 <> '' AND $1::pg_lsn >= $2::pg_lsn", pos, target).Scan(&caughtUp); err != nil {
			t.Fatal(err)
		}
		if caughtUp {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no server resumed the subscription: position %s, want %s", pos, target)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := load.finish(); err != nil {
		t.Fatal(err)
	}
	waitSubscription(t, reader, src, "bank_sync", src.lsn(t))
	check()
	t.Logf("%d transfers, %d consistent reads", load.transfers.Load(), checks)
	wantLake := func(lakeQ, srcQ string) {
		t.Helper()
		wantRows(t, lakeQ, queryStrings(t, ctx, reader, lakeQ), queryStrings(t, ctx, src.conn, srcQ))
	}
	wantLake("SELECT id, balance FROM bank.accounts ORDER BY id", "SELECT id, balance FROM accounts ORDER BY id")
	wantLake("SELECT transfer, from_id, to_id, amount FROM bank.ledger ORDER BY transfer", "SELECT transfer, from_id, to_id, amount FROM ledger ORDER BY transfer")
}

// TestCDCPostgresFaults: a publisher that goes down puts the subscription
// in state error with a last_error, and it resumes by itself when the
// publisher is back, missing nothing; a slot dropped behind the
// subscription's back is an error that stays (no silent gap).
func TestCDCPostgresFaults(t *testing.T) {
	requirePG(t)
	ctx := testCtx(t)
	src := newCDCSource(t)
	mustExec(t, ctx, src.conn,
		"CREATE TABLE t (id int PRIMARY KEY, v text)",
		"INSERT INTO t VALUES (1, 'a')",
		"CREATE PUBLICATION p FOR TABLE t")
	s, err := startServer(filepath.Join(testBaseDir(t), "data"), "cdc-Secret1")
	if err != nil {
		t.Fatal(err)
	}
	defer s.stopT(t)
	c := s.connect(t)
	mustExec(t, ctx, c, "CREATE SUBSCRIPTION f CONNECTION '"+src.dsn+"' PUBLICATION p WITH (target_schema = 'f', commit_interval = '100ms')")
	waitSubscription(t, c, src, "f", src.lsn(t))
	mustExec(t, ctx, src.conn, "INSERT INTO t VALUES (2, 'b')")
	waitSubscription(t, c, src, "f", src.lsn(t))

	// The publisher goes down: error, last_error.
	src.conn.Close(ctx)
	opts := src.cluster.Options()
	if err := src.cluster.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	waitSubscriptionState(t, c, "f", "error", "publisher")
	// It comes back: the subscription resumes by itself.
	restarted, err := pgcluster.Open(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { restarted.Stop(context.Background()) })
	src.cluster = restarted
	src.connect(t)
	mustExec(t, ctx, src.conn, "INSERT INTO t VALUES (3, 'c')", "UPDATE t SET v = 'A' WHERE id = 1")
	waitSubscription(t, c, src, "f", src.lsn(t))
	waitSubscriptionState(t, c, "f", "streaming", "")
	wantRows(t, "after the publisher came back", queryStrings(t, ctx, c, "SELECT id, v FROM f.t ORDER BY id"),
		queryStrings(t, ctx, src.conn, "SELECT id, v FROM t ORDER BY id"))

	// The slot is dropped on the publisher: the subscription cannot go on
	// without a gap, so it stays in error.
	var slot string
	if err := src.conn.QueryRow(ctx, "SELECT slot_name FROM pg_replication_slots").Scan(&slot); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		_, _ = src.conn.Exec(ctx, "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = $1 AND active_pid IS NOT NULL", slot)
		if _, err := src.conn.Exec(ctx, "SELECT pg_drop_replication_slot($1)", slot); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("could not drop the subscription's slot")
		}
		time.Sleep(20 * time.Millisecond)
	}
	mustExec(t, ctx, src.conn, "INSERT INTO t VALUES (4, 'd')")
	waitSubscriptionState(t, c, "f", "error", "no longer exists")
	time.Sleep(3 * time.Second) // retries keep failing: still error, no row 4
	waitSubscriptionState(t, c, "f", "error", "no longer exists")
	wantRows(t, "after the slot was dropped", queryStrings(t, ctx, c, "SELECT count(*) FROM f.t WHERE id = 4"), []string{"0"})
	mustExec(t, ctx, c, "DROP SUBSCRIPTION f")
}

// bankLoad runs transfers between accounts on a source until finished:
// transfer makes transfer i of amount from one account to another, with
// its ledger entry, in one source transaction.
type bankLoad struct {
	transfers atomic.Int64
	stop      chan struct{}
	done      chan error
}

func startBankLoad(accounts int, seed int64, transfer func(i, from, to, amount int) error) *bankLoad {
	l := &bankLoad{stop: make(chan struct{}), done: make(chan error, 1)}
	go func() {
		rng := rand.New(rand.NewSource(seed))
		for i := 1; i <= 20000; i++ {
			select {
			case <-l.stop:
				l.done <- nil
				return
			default:
			}
			if err := transfer(i, 1+rng.Intn(accounts), 1+rng.Intn(accounts), 1+rng.Intn(50)); err != nil {
				l.done <- err
				return
			}
			l.transfers.Add(1)
			time.Sleep(2 * time.Millisecond)
		}
		l.done <- nil
	}()
	return l
}

// waitFor waits until the load has made n transfers, calling between (if
// any) while it waits. It fails the test when the load stops first (with its
// error: a source that refused a transfer) or after two minutes, instead of
// waiting for ever.
func (l *bankLoad) waitFor(t *testing.T, n int64, between func()) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for l.transfers.Load() < n {
		select {
		case err := <-l.done:
			l.done <- err // for finish
			t.Fatalf("the source's load stopped after %d transfers, before %d: %v", l.transfers.Load(), n, err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the source's load made %d transfers in two minutes, want %d", l.transfers.Load(), n)
		}
		if between != nil {
			between()
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// finish stops the load and returns its error.
func (l *bankLoad) finish() error {
	close(l.stop)
	return <-l.done
}

// checkBank reads the lake's bank.accounts and bank.ledger through c and
// fails unless they hold the source's invariants: every account, the total
// balance, no ledger entry twice, each account's balance its start plus its
// ledger (one source transaction touches both tables).
func checkBank(t *testing.T, ctx context.Context, c *pgx.Conn, accounts, start, read int) {
	t.Helper()
	q := fmt.Sprintf(`SELECT (SELECT count(*) FROM bank.accounts), (SELECT sum(balance)::bigint FROM bank.accounts),
		(SELECT count(*) - count(DISTINCT transfer) FROM bank.ledger),
		(SELECT count(*) FROM bank.accounts a WHERE a.balance <> %d
			+ coalesce((SELECT sum(amount) FROM bank.ledger l WHERE l.to_id = a.id), 0)
			- coalesce((SELECT sum(amount) FROM bank.ledger l WHERE l.from_id = a.id), 0))`, start)
	got, err := tryQueryStrings(ctx, c, q)
	if err != nil {
		t.Fatalf("read %d: %v", read, err)
	}
	if want := fmt.Sprintf("%d|%d|0|0", accounts, accounts*start); len(got) != 1 || got[0] != want {
		t.Fatalf("read %d saw %v, want [%s] (count, total, duplicate ledger entries, accounts off their ledger)", read, got, want)
	}
}
