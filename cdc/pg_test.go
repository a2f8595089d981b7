package cdc_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/cdc"
	"github.com/lakesoul-go/lakesoul/internal/pgtest"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/reader"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// harness is a publisher (a throwaway cluster with wal_level = logical), a
// migrated catalog and a local warehouse.
type harness struct {
	t      *testing.T
	srcDSN string // the publisher's database "app", over TCP
	port   int
	src    *pgx.Conn
	env    *cdc.Env
	cat    *catalog.Catalog
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	ctx := context.Background()
	pub := pgtest.LogicalCluster(t)
	admin, err := pgx.Connect(ctx, pub.ConnString("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE app"); err != nil {
		t.Fatal(err)
	}
	admin.Close(ctx)
	h := &harness{t: t, port: pub.Port(), srcDSN: fmt.Sprintf("host=127.0.0.1 port=%d dbname=app user=%s sslmode=disable", pub.Port(), pub.SuperUser())}
	if h.src, err = pgx.Connect(ctx, h.srcDSN); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.src.Close(context.Background()) })
	dsn := pgtest.DSN(t)
	if err := catalog.MigrateUp(ctx, dsn); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	if h.cat, err = catalog.Open(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.cat.Close)
	h.env = &cdc.Env{Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})), Catalog: h.cat, Store: objstore.Local{}, Warehouse: objstore.LocalURI(t.TempDir()), Lease: 3 * time.Second}
	return h
}

func (h *harness) exec(sqls ...string) {
	h.t.Helper()
	for _, q := range sqls {
		if _, err := h.src.Exec(context.Background(), q); err != nil {
			h.t.Fatalf("%s: %v", q, err)
		}
	}
}

// start runs a sync service until the test ends.
func (h *harness) start() *cdc.Service {
	svc := cdc.Start(context.Background(), h.env, 2)
	h.t.Cleanup(svc.Close)
	return svc
}

// waitCaughtUp waits until the subscription's position is at or after the
// publisher's current WAL position.
func (h *harness) waitCaughtUp(sub string) {
	h.t.Helper()
	ctx := context.Background()
	var target string
	if err := h.src.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn()::text").Scan(&target); err != nil {
		h.t.Fatal(err)
	}
	want, _ := pglogrepl.ParseLSN(target)
	deadline := time.Now().Add(90 * time.Second)
	for {
		s, err := h.cat.SubscriptionByName(ctx, sub)
		if err != nil {
			h.t.Fatal(err)
		}
		if s.Position != "" {
			if got, err := pglogrepl.ParseLSN(s.Position); err == nil && got >= want {
				h.t.Logf("caught up: %s >= %s", s.Position, target)
				return
			}
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("subscription %s at %q (state %s), not caught up with %s; %s", sub, s.Position, s.State, target, h.status(sub))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (h *harness) status(sub string) string {
	var state, lastErr string
	_ = h.cat.Pool().QueryRow(context.Background(),
		"SELECT state, coalesce(last_error, '') FROM lakesoul.subscriptions WHERE name = $1", sub).Scan(&state, &lastErr)
	return fmt.Sprintf("state %s, last_error %q", state, lastErr)
}

// lake reads a lake table's rows as sorted "col=value …" strings, without
// the CDC column.
func (h *harness) lake(ns, name string) []string {
	h.t.Helper()
	ctx := context.Background()
	t, err := h.cat.TableByName(ctx, ns, name)
	if err != nil {
		h.t.Fatal(err)
	}
	parts, err := h.cat.LiveFiles(ctx, t.ID, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	scan := &reader.Scan{Store: h.env.Store, Table: t, Partitions: parts}
	units, err := scan.Units()
	if err != nil {
		h.t.Fatal(err)
	}
	var out []string
	for _, u := range units {
		it, err := scan.Open(ctx, u)
		if err != nil {
			h.t.Fatal(err)
		}
		for {
			b, err := it.Next(ctx)
			if err == io.EOF {
				break
			}
			if err != nil {
				h.t.Fatal(err)
			}
			for r := 0; r < int(b.NumRows()); r++ {
				var cells []string
				for c := 0; c < int(b.NumCols()); c++ {
					if b.ColumnName(c) == cdc.OpColumn {
						continue
					}
					v := "NULL"
					if col := b.Column(c); !col.IsNull(r) {
						v = col.ValueStr(r)
					}
					cells = append(cells, b.ColumnName(c)+"="+v)
				}
				out = append(out, strings.Join(cells, " "))
			}
			b.Release()
		}
		it.Close()
	}
	sort.Strings(out)
	return out
}

// source reads a source query's rows as sorted "col=value …" strings (the
// query casts to the text the lake shows).
func (h *harness) source(q string) []string {
	h.t.Helper()
	rows, err := h.src.Query(context.Background(), q)
	if err != nil {
		h.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			h.t.Fatal(err)
		}
		var cells []string
		for i, f := range rows.FieldDescriptions() {
			v := "NULL"
			if vals[i] != nil {
				v = fmt.Sprint(vals[i])
			}
			cells = append(cells, f.Name+"="+v)
		}
		out = append(out, strings.Join(cells, " "))
	}
	if err := rows.Err(); err != nil {
		h.t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func (h *harness) same(what string, lake, src []string) {
	h.t.Helper()
	if strings.Join(lake, "\n") != strings.Join(src, "\n") {
		h.t.Fatalf("%s: lake and source differ\nlake (%d rows):\n%s\nsource (%d rows):\n%s", what,
			len(lake), strings.Join(lake, "\n"), len(src), strings.Join(src, "\n"))
	}
}

// TestPGSyncEndToEnd: the initial copy, then inserts, updates, deletes, a
// key update, a truncate and schema changes, each checked against the
// source; an append table gets the inserts.
func TestPGSyncEndToEnd(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	h.exec(
		"CREATE TABLE accounts (id bigint PRIMARY KEY, owner varchar(20), balance int, note text)",
		"CREATE TABLE events (ev text, n int)",
		"INSERT INTO accounts SELECT g, 'o' || g, g * 10, CASE WHEN g % 3 = 0 THEN NULL ELSE 'n\t' || g END FROM generate_series(1, 1000) g",
		"INSERT INTO events VALUES ('a', 1), ('b', 2)",
		"CREATE PUBLICATION app_pub FOR ALL TABLES",
	)
	err := cdc.Create(ctx, h.env, cdc.CreateSpec{Name: "app_sync", Connection: h.srcDSN, Publications: []string{"app_pub"},
		Options: map[string]string{"commit_interval": "100ms"}})
	if err != nil {
		t.Fatal(err)
	}
	h.start()
	h.waitCaughtUp("app_sync")
	accounts := "SELECT id::text AS id, owner, balance::text AS balance, note FROM accounts"
	h.same("after the copy", h.lake("app", "accounts"), h.source(accounts))
	h.same("append table after the copy", h.lake("app", "events"), h.source("SELECT ev, n::text AS n FROM events"))

	h.exec(
		"UPDATE accounts SET balance = balance + 1 WHERE id % 2 = 0",
		"DELETE FROM accounts WHERE id > 990",
		"UPDATE accounts SET id = 5000 WHERE id = 7",
		"INSERT INTO accounts VALUES (2000, 'new', 1, NULL)",
		"INSERT INTO events VALUES ('c', 3)",
	)
	h.waitCaughtUp("app_sync")
	h.same("after DML", h.lake("app", "accounts"), h.source(accounts))
	h.same("append table after DML", h.lake("app", "events"), h.source("SELECT ev, n::text AS n FROM events"))

	h.exec("BEGIN", "TRUNCATE accounts", "INSERT INTO accounts VALUES (1, 'again', 5, 'x')", "COMMIT")
	h.waitCaughtUp("app_sync")
	h.same("after TRUNCATE", h.lake("app", "accounts"), h.source(accounts))

	h.exec(
		"ALTER TABLE accounts ADD COLUMN extra text",
		"ALTER TABLE accounts ALTER COLUMN balance TYPE bigint",
		"ALTER TABLE accounts ALTER COLUMN owner TYPE varchar(40)",
		"ALTER TABLE accounts DROP COLUMN note",
		"INSERT INTO accounts VALUES (3, 'with extra', 9000000000, 'e')",
		"UPDATE accounts SET extra = 'u' WHERE id = 1",
	)
	h.waitCaughtUp("app_sync")
	h.same("after DDL", h.lake("app", "accounts"),
		h.source("SELECT id::text AS id, owner, balance::text AS balance, extra FROM accounts"))
	lt, err := h.cat.TableByName(ctx, "app", "accounts")
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := lt.Schema.FieldsByName("owner"); len(f) != 1 || f[0].Metadata.String() == "" || !strings.Contains(f[0].Metadata.String(), "varchar(40)") {
		t.Errorf("owner is %v, want varchar(40)", f)
	}

	// A rename stops that table; the others go on.
	h.exec("ALTER TABLE accounts RENAME COLUMN extra TO extra2", "INSERT INTO accounts VALUES (4, 'r', 1, 'x')",
		"INSERT INTO events VALUES ('d', 4)")
	h.waitCaughtUp("app_sync")
	h.same("append table goes on", h.lake("app", "events"), h.source("SELECT ev, n::text AS n FROM events"))
	var lastErr string
	if err := h.cat.Pool().QueryRow(ctx, "SELECT coalesce(last_error, '') FROM lakesoul.subscriptions WHERE name = 'app_sync'").Scan(&lastErr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(lastErr, "renamed") {
		t.Errorf("last_error = %q, want the rename", lastErr)
	}
	if err := cdc.Drop(ctx, h.env, "app_sync", false); err != nil {
		t.Fatal(err)
	}
	var slots int
	if err := h.src.QueryRow(ctx, "SELECT count(*) FROM pg_replication_slots").Scan(&slots); err != nil {
		t.Fatal(err)
	}
	if slots != 0 {
		t.Errorf("%d replication slots left after DROP SUBSCRIPTION", slots)
	}
}

// TestPGCreateErrors: bad CREATE SUBSCRIPTIONs fail with their SQLSTATE and
// leave nothing behind.
func TestPGCreateErrors(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	h.exec("CREATE TABLE t (id int PRIMARY KEY)", "CREATE PUBLICATION p FOR ALL TABLES",
		"CREATE ROLE norepl LOGIN", "GRANT ALL ON t TO norepl")
	norepl := fmt.Sprintf("host=127.0.0.1 port=%d dbname=app user=norepl sslmode=disable", h.port)
	cases := []struct {
		name, conn, pub, code string
	}{
		{"unreachable", "host=127.0.0.1 port=1 dbname=app user=x connect_timeout=5", "p", sqlerr.UnableToConnect},
		{"no replication rights", norepl, "p", sqlerr.InsufficientPrivilege},
		{"unknown publication", h.srcDSN, "nope", sqlerr.UndefinedObject},
	}
	for _, c := range cases {
		err := cdc.Create(ctx, h.env, cdc.CreateSpec{Name: "s", Connection: c.conn, Publications: []string{c.pub}})
		if got := sqlerr.Code(err); got != c.code {
			t.Errorf("%s: SQLSTATE %s (%v), want %s", c.name, got, err, c.code)
		}
	}
	if _, err := h.cat.SubscriptionByName(ctx, "s"); sqlerr.Code(err) != sqlerr.UndefinedObject {
		t.Errorf("a failed CREATE SUBSCRIPTION left a subscription: %v", err)
	}
	if err := cdc.Create(ctx, h.env, cdc.CreateSpec{Name: "one", Connection: h.srcDSN, Publications: []string{"p"}}); err != nil {
		t.Fatal(err)
	}
	err := cdc.Create(ctx, h.env, cdc.CreateSpec{Name: "two", Connection: h.srcDSN, Publications: []string{"p"}})
	if got := sqlerr.Code(err); got != sqlerr.DuplicateObject {
		t.Errorf("second subscription onto the same tables: SQLSTATE %s (%v), want 42710", got, err)
	}
}

// TestPGRefreshPublication: a table with rows added to the publication
// after the subscription started is copied by REFRESH PUBLICATION (in a
// snapshot of its own, its earlier changes skipped), then followed.
func TestPGRefreshPublication(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	h.exec(
		"CREATE TABLE a (id int PRIMARY KEY, v text)",
		"CREATE TABLE b (id int PRIMARY KEY, v text)",
		"INSERT INTO a VALUES (1, 'a')",
		"INSERT INTO b SELECT g, 'b' || g FROM generate_series(1, 100) g",
		"CREATE PUBLICATION p FOR TABLE a",
	)
	if err := cdc.Create(ctx, h.env, cdc.CreateSpec{Name: "r", Connection: h.srcDSN, Publications: []string{"p"},
		Options: map[string]string{"commit_interval": "100ms", "target_schema": "r"}}); err != nil {
		t.Fatal(err)
	}
	h.start()
	h.waitCaughtUp("r")
	h.exec("ALTER PUBLICATION p ADD TABLE b", "UPDATE b SET v = 'changed' WHERE id <= 10", "DELETE FROM b WHERE id > 90")
	if err := cdc.Alter(ctx, h.env, "r", "refresh"); err != nil {
		t.Fatal(err)
	}
	h.exec("INSERT INTO b VALUES (1000, 'after')", "INSERT INTO a VALUES (2, 'a2')")
	h.waitCaughtUp("r")
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := h.cat.TableByName(ctx, "r", "b"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("table b never appeared: %s", h.status("r"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	h.exec("UPDATE b SET v = 'later' WHERE id = 1")
	h.waitCaughtUp("r")
	h.same("b after REFRESH", h.lake("r", "b"), h.source("SELECT id::text AS id, v FROM b"))
	h.same("a goes on", h.lake("r", "a"), h.source("SELECT id::text AS id, v FROM a"))
}

// TestPGChunkedCopy: a large table's initial copy is read in page ranges
// over several connections in the slot's snapshot; the lake holds exactly
// the source's rows (none twice, none missing), and streaming goes on from
// the slot's point.
func TestPGChunkedCopy(t *testing.T) {
	defer cdc.SetCopyChunkMinPages(8)()
	h := newHarness(t)
	ctx := context.Background()
	h.exec(
		"CREATE TABLE big (id bigint PRIMARY KEY, v text)",
		"CREATE TABLE plain (n int, v text)", // an append table: a duplicate would show
		"INSERT INTO big SELECT g, repeat(md5(g::text), 3) FROM generate_series(1, 30000) g",
		"INSERT INTO plain SELECT g, md5(g::text) FROM generate_series(1, 30000) g",
		// Dead tuples and rows moved by updates: page ranges still hold each live row once.
		"UPDATE big SET v = 'u' || id WHERE id % 7 = 0",
		"DELETE FROM plain WHERE n % 5 = 0",
		"CREATE PUBLICATION chunk_pub FOR TABLE big, plain",
	)
	before := cdc.CopiedChunks()
	if err := cdc.Create(ctx, h.env, cdc.CreateSpec{Name: "chunks", Connection: h.srcDSN, Publications: []string{"chunk_pub"},
		Options: map[string]string{"commit_interval": "100ms", "target_schema": "chunks"}}); err != nil {
		t.Fatal(err)
	}
	h.start()
	h.waitCaughtUp("chunks")
	if n := cdc.CopiedChunks() - before; n < 4 {
		t.Fatalf("%d chunks copied, want the two tables chunked", n)
	}
	h.same("big after the copy", h.lake("chunks", "big"), h.source("SELECT id::text AS id, v FROM big"))
	h.same("append table after the copy", h.lake("chunks", "plain"), h.source("SELECT n::text AS n, v FROM plain"))
	h.exec("UPDATE big SET v = 'later' WHERE id <= 10", "INSERT INTO plain VALUES (-1, 'after')")
	h.waitCaughtUp("chunks")
	h.same("big after streaming", h.lake("chunks", "big"), h.source("SELECT id::text AS id, v FROM big"))
	h.same("append table after streaming", h.lake("chunks", "plain"), h.source("SELECT n::text AS n, v FROM plain"))
}
