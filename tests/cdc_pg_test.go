package tests

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
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
