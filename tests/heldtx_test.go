package tests

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestHeldCatalogTransactionsPerRole: transaction blocks that ran DDL hold
// a connection of the catalog owner's pool each; one role may hold a
// quarter of the server's share (4 of 16 with the default pool), so a
// user's idle DDL blocks cannot stop other workspaces' DDL in blocks
// (before: 16 blocks of one user made everyone else's fail with 53300).
// The fifth block of the role gets 53300 naming the role, other roles and
// the admin go on, and a block that ends gives its slot back.
func TestHeldCatalogTransactionsPerRole(t *testing.T) {
	s := limitsServer(t)
	ctx := testCtx(t)
	admin := s.connect(t)
	for _, ws := range []string{"held_wa", "held_wb"} {
		mustExec(t, ctx, admin, fmt.Sprintf("SELECT lakesoul.create_workspace('%s')", ws),
			fmt.Sprintf("SELECT lakesoul.create_user('%s_u', 'pw', '%s', admin => true)", ws, ws))
	}
	a := make([]*pgx.Conn, 5)
	for i := range a {
		a[i] = s.login(t, ctx, "held_wa_u", "pw")
	}
	mustExec(t, ctx, a[0], "CREATE SCHEMA held_sa")
	for i := range 4 {
		mustExec(t, ctx, a[i], "BEGIN", fmt.Sprintf("CREATE TABLE held_sa.t%d (id bigint)", i))
	}
	mustExec(t, ctx, a[4], "BEGIN")
	_, err := a[4].Exec(ctx, "CREATE TABLE held_sa.t4 (id bigint)")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "53300" || pe.Message != `too many transaction blocks of role "held_wa_u" hold catalog changes` {
		t.Fatalf("the role's fifth DDL block: %v, want 53300 naming the role", err)
	}
	mustExec(t, ctx, a[4], "ROLLBACK")

	b := s.login(t, ctx, "held_wb_u", "pw")
	mustExec(t, ctx, b, "CREATE SCHEMA held_sb", "BEGIN", "CREATE TABLE held_sb.t (id bigint)", "COMMIT")
	mustExec(t, ctx, admin, "BEGIN", "CREATE SCHEMA held_sadmin", "COMMIT")

	mustExec(t, ctx, a[0], "COMMIT")
	mustExec(t, ctx, a[4], "BEGIN", "CREATE TABLE held_sa.t4 (id bigint)", "COMMIT")
	for i := 1; i < 4; i++ {
		mustExec(t, ctx, a[i], "ROLLBACK")
	}
	if got := queryStrings(t, ctx, admin, "SELECT table_name FROM lakesoul.tables WHERE table_schema = 'held_sa' ORDER BY 1"); strings.Join(got, ",") != "t0,t4" {
		t.Fatalf("held_sa's tables: %v, want t0,t4", got)
	}
}

// TestIdleInTransactionTimeout: idle_in_transaction_session_timeout (its
// default from --idle-in-transaction-session-timeout, SET per session)
// ends a session that waits for its client that long inside a transaction
// block — ok or failed, holding DDL or a cursor over a catalog query —
// with FATAL 25P03 "terminating connection due to idle-in-transaction
// timeout"; the block is rolled back, its catalog connection and its held
// slot given back. Idle sessions outside a block, and sessions that SET it
// to 0, are not ended.
func TestIdleInTransactionTimeout(t *testing.T) {
	s := limitsServer(t, "--idle-in-transaction-session-timeout", "1500ms")
	ctx := testCtx(t)
	admin := s.connect(t)
	mustExec(t, ctx, admin, "SELECT lakesoul.create_workspace('iit_ws')",
		"SELECT lakesoul.create_user('iit_u', 'pw', 'iit_ws', admin => true)")
	u := s.login(t, ctx, "iit_u", "pw")
	if got := queryStrings(t, ctx, u, "SHOW idle_in_transaction_session_timeout"); len(got) != 1 || got[0] != "1500ms" {
		t.Fatalf("SHOW idle_in_transaction_session_timeout: %v, want 1500ms (the server's default)", got)
	}
	mustExec(t, ctx, u, "CREATE SCHEMA iit_s")

	wantTerminated := func(what string, c *pgx.Conn) {
		t.Helper()
		time.Sleep(3 * time.Second)
		_, err := c.Exec(ctx, "SELECT 1")
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "25P03" || pe.Severity != "FATAL" ||
			pe.Message != "terminating connection due to idle-in-transaction timeout" {
			t.Fatalf("%s after the timeout: %v, want FATAL 25P03", what, err)
		}
	}
	// A block holding DDL: rolled back, its slot and connection given back.
	ddl := s.login(t, ctx, "iit_u", "pw")
	mustExec(t, ctx, ddl, "BEGIN", "CREATE TABLE iit_s.t (id bigint)")
	wantTerminated("a block with DDL", ddl)
	if got := queryStrings(t, ctx, admin, "SELECT count(*) FROM lakesoul.tables WHERE table_schema = 'iit_s'"); got[0] != "0" {
		t.Fatalf("the terminated block's CREATE TABLE is visible: %v tables", got)
	}
	// Its held slot is free again: the role's four (the per-role bound)
	// can be held at once.
	var held []*pgx.Conn
	for i := range 4 {
		c := s.login(t, ctx, "iit_u", "pw")
		mustExec(t, ctx, c, "SET idle_in_transaction_session_timeout = 0", "BEGIN", fmt.Sprintf("CREATE TABLE iit_s.h%d (id bigint)", i))
		held = append(held, c)
	}
	for _, c := range held {
		mustExec(t, ctx, c, "ROLLBACK")
	}
	// A failed block.
	failed := s.login(t, ctx, "iit_u", "pw")
	mustExec(t, ctx, failed, "BEGIN")
	if _, err := failed.Exec(ctx, "SELECT 1/0"); pgCode(err) != "22012" {
		t.Fatalf("1/0: %v", err)
	}
	wantTerminated("a failed block", failed)
	// A block with a cursor over a catalog query: its catalog transaction
	// (and the snapshot that holds the catalog's vacuum horizon) ends.
	cur := s.login(t, ctx, "iit_u", "pw")
	mustExec(t, ctx, cur, "SET idle_in_transaction_session_timeout = '1s'", "BEGIN",
		"DECLARE c CURSOR FOR SELECT relname FROM pg_catalog.pg_class", "FETCH 1 FROM c")
	wantTerminated("a block with a catalog cursor", cur)
	cat := s.catalogConn(t)
	poll(t, "iit_u's catalog transactions end", func() bool {
		var n int
		if err := cat.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE usename = 'iit_u' AND (xact_start IS NOT NULL OR backend_xmin IS NOT NULL)`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 0
	})

	// Not in a block, or with the timeout SET to 0: not ended.
	idle := s.login(t, ctx, "iit_u", "pw")
	off := s.login(t, ctx, "iit_u", "pw")
	mustExec(t, ctx, off, "SET idle_in_transaction_session_timeout = 0", "BEGIN", "CREATE TABLE iit_s.kept (id bigint)")
	time.Sleep(3 * time.Second)
	wantAlive(t, ctx, idle, "idling outside a block")
	mustExec(t, ctx, off, "COMMIT")
	if got := queryStrings(t, ctx, admin, "SELECT table_name FROM lakesoul.tables WHERE table_schema = 'iit_s'"); len(got) != 1 || got[0] != "kept" {
		t.Fatalf("iit_s's tables: %v, want kept", got)
	}
	wantAlive(t, ctx, u, "the others' timeouts")
}
