package tests

import (
	"path/filepath"
	"testing"
)

// TestCDCCheckConstraints: a subscription that writes into a lake table made
// before it, with a CHECK constraint, verifies the constraint on every
// batch. A source row that breaks it commits nothing: the subscription
// stays in error with the violation as its last_error and the rows before
// it in the lake, as a PostgreSQL subscriber's apply worker does. Once the
// constraint is dropped, the same batch lands.
func TestCDCCheckConstraints(t *testing.T) {
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
	mustExec(t, ctx, c, "CREATE SCHEMA ck",
		"CREATE TABLE ck.t (id int PRIMARY KEY, v text, CONSTRAINT v_short CHECK (length(v) < 5))")
	mustExec(t, ctx, c, "CREATE SUBSCRIPTION ck CONNECTION '"+src.dsn+"' PUBLICATION p WITH (target_schema = 'ck', commit_interval = '100ms')")
	waitSubscription(t, c, src, "ck", src.lsn(t))
	mustExec(t, ctx, src.conn, "INSERT INTO t VALUES (2, 'b')")
	waitSubscription(t, c, src, "ck", src.lsn(t))
	wantRows(t, "rows that keep the check", queryStrings(t, ctx, c, "SELECT id, v FROM ck.t ORDER BY id"), []string{"1|a", "2|b"})

	mustExec(t, ctx, src.conn, "INSERT INTO t VALUES (3, 'too long')")
	waitSubscriptionState(t, c, "ck", "error", `violates check constraint "v_short"`)
	wantRows(t, "nothing of the breaking batch", queryStrings(t, ctx, c, "SELECT id, v FROM ck.t ORDER BY id"), []string{"1|a", "2|b"})

	mustExec(t, ctx, c, "ALTER TABLE ck.t DROP CONSTRAINT v_short")
	waitSubscription(t, c, src, "ck", src.lsn(t))
	wantRows(t, "after the check was dropped", queryStrings(t, ctx, c, "SELECT id, v FROM ck.t ORDER BY id"), []string{"1|a", "2|b", "3|too long"})
}
