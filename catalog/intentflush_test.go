package catalog_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/pgtest"
)

// TestWriteIntentCallsDoNotWaitForFlush: every write-intent call — begin,
// claim, renew (the heartbeat), release — commits without waiting for its
// WAL flush, while the commit that consumes an intent still waits for its
// own (catalog/intent.go says why that is enough): the flushed WAL position
// stays where it was across each call, and moves across the commit. The
// cluster's WAL writer flushes only every 10 s here, so nothing else
// flushes in between.
func TestWriteIntentCallsDoNotWaitForFlush(t *testing.T) {
	ctx := context.Background()
	cl := pgtest.Cluster(t)
	admin, err := pgx.Connect(ctx, cl.ConnString("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	for _, q := range []string{"ALTER SYSTEM SET wal_writer_delay = '10s'", "SELECT pg_reload_conf()"} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := cl.CreateDatabase(ctx, "intents"); err != nil {
		t.Fatal(err)
	}
	// (Test clusters commit asynchronously; a catalog does not.)
	if _, err := admin.Exec(ctx, "ALTER DATABASE intents SET synchronous_commit = on"); err != nil {
		t.Fatal(err)
	}
	dsn := cl.ConnString("intents")
	if err := catalog.MigrateUp(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	c, err := catalog.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tbl := newTable(t, c, "default", "t", nil, []string{"id"})

	flushed := func() string {
		t.Helper()
		var lsn string
		if err := admin.QueryRow(ctx, "SELECT pg_current_wal_flush_lsn()::text").Scan(&lsn); err != nil {
			t.Fatal(err)
		}
		return lsn
	}
	check := func(call string, run func()) {
		t.Helper()
		before := flushed()
		run()
		if after := flushed(); after != before {
			t.Errorf("%s flushed WAL (%s → %s)", call, before, after)
		}
	}

	var w *catalog.WriteIntent
	check("BeginWrite", func() {
		if w, err = c.BeginWrite(ctx); err != nil {
			t.Fatal(err)
		}
	})
	path := tbl.Path + "/moved/part-claimed_0000.parquet"
	check("Claim", func() {
		if err := w.Claim(ctx, path); err != nil {
			t.Fatal(err)
		}
	})
	// The commit that consumes the intent is durable when it returns.
	before := flushed()
	if _, err := c.Commit(ctx, w, tbl.ID, catalog.MergeCommit,
		[]catalog.PartitionCommit{{Desc: "-5", CommitID: uuid.New(), Ops: add(path)}}); err != nil {
		t.Fatal(err)
	}
	var behind bool
	if err := admin.QueryRow(ctx, "SELECT pg_current_wal_flush_lsn() = $1::pg_lsn", before).Scan(&behind); err != nil {
		t.Fatal(err)
	}
	if behind {
		t.Error("a commit consuming an intent returned before its WAL flush")
	}

	w2, err := c.BeginWrite(ctx)
	if err != nil {
		t.Fatal(err)
	}
	check("Release", func() { w2.Release(ctx) })

	// The heartbeat's renewal: with a short TTL it renews every second;
	// wait for one (its expiry moving).
	defer func(ttl time.Duration) { catalog.IntentTTL = ttl }(catalog.IntentTTL)
	catalog.IntentTTL = 3 * time.Second
	w3, err := c.BeginWrite(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w3.Release(ctx)
	check("the heartbeat's renewal", func() {
		expiry := func() time.Time {
			var e time.Time
			if err := c.Pool().QueryRow(ctx, "SELECT expires_at FROM lakesoul.write_intent WHERE id = $1", w3.ID()).Scan(&e); err != nil {
				t.Fatal(err)
			}
			return e
		}
		first := expiry()
		deadline := time.Now().Add(10 * time.Second)
		for expiry().Equal(first) {
			if time.Now().After(deadline) {
				t.Fatal("the heartbeat did not renew the intent within 10 s")
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}
