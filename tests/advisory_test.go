package tests

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// noticeConn is a connection whose notices (WARNINGs of unlocks) are kept.
type noticeConn struct {
	*pgx.Conn
	mu      sync.Mutex
	notices []string
}

func (c *noticeConn) takeNotices() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := strings.Join(c.notices, "; ")
	c.notices = nil
	return out
}

func dialNoticeConn(t *testing.T, ctx context.Context, cfg *pgx.ConnConfig, mode pgx.QueryExecMode) *noticeConn {
	t.Helper()
	nc := &noticeConn{}
	cfg = cfg.Copy()
	cfg.DefaultQueryExecMode = mode
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		nc.mu.Lock()
		nc.notices = append(nc.notices, n.Severity+" "+n.Message)
		nc.mu.Unlock()
	}
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	nc.Conn = c
	return nc
}

// outcome is what a statement answered: its rows or its SQLSTATE and
// message, and the notices it sent.
func outcome(ctx context.Context, c *noticeConn, q string, args ...any) string {
	rows, err := tryQueryStrings(ctx, c.Conn, q, args...)
	out := strings.Join(rows, ",")
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			out = "ERROR " + pe.Code + " " + pe.Message
		} else {
			out = "ERROR " + err.Error()
		}
	}
	if n := c.takeNotices(); n != "" {
		out += " [" + n + "]"
	}
	return out
}

// TestAdvisoryLocksAsPostgreSQL runs two sessions' advisory-lock script on
// lakesoul serve and on PostgreSQL side by side, in the extended and the
// simple protocol: every statement must answer the same rows, errors and
// warnings. The locks are the sessions' own: held across statements,
// queued between sessions, counted, released by unlock, by the block's end
// (transaction locks), by ROLLBACK TO, and by the session's end.
func TestAdvisoryLocksAsPostgreSQL(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	ref := srv.referenceDB(t, "advisory_ref")
	pw, err := srv.adminPassword()
	if err != nil {
		t.Fatal(err)
	}
	lakeCfg, err := pgx.ParseConfig(srv.dsn(adminRole, pw, database))
	if err != nil {
		t.Fatal(err)
	}
	// Keys of this test only (other tests share the server's lock space).
	const k = 7300120000
	script := []struct {
		conn int
		sql  string
		args []any
	}{
		{0, "SELECT pg_advisory_lock(7300120001)", nil},
		{1, "SELECT pg_try_advisory_lock(7300120001)", nil},
		{1, "SELECT pg_try_advisory_lock_shared(7300120001)", nil},
		{0, "SELECT pg_advisory_lock(7300120001)", nil}, // counted twice
		{0, "SELECT pg_advisory_unlock(7300120001)", nil},
		{1, "SELECT pg_try_advisory_lock(7300120001)", nil},
		{0, "SELECT pg_advisory_unlock(7300120001), pg_advisory_unlock(7300120001)", nil},
		{1, "SELECT pg_try_advisory_lock($1) AS got", []any{int64(k + 1)}},
		{1, "SELECT pg_advisory_unlock($1)", []any{int64(k + 1)}},
		{0, "SELECT pg_advisory_lock_shared(7300120002)", nil},
		{1, "SELECT pg_try_advisory_lock_shared(7300120002), pg_try_advisory_lock(7300120002)", nil},
		{1, "SELECT pg_advisory_unlock_shared(7300120002)", nil},
		{1, "SELECT pg_advisory_unlock_shared(7300120002)", nil},
		{0, "SELECT pg_advisory_unlock(7300120002)", nil},
		{0, "SELECT pg_catalog.pg_advisory_unlock_shared(7300120002)", nil},
		{0, "SELECT pg_advisory_lock(73, 12)", nil},
		{1, "SELECT pg_try_advisory_lock(73, 12), pg_try_advisory_lock($1, $2)", []any{int32(73), int32(13)}},
		{1, "SELECT pg_advisory_unlock_all()", nil},
		{0, "SELECT pg_advisory_unlock_all()", nil},
		{1, "SELECT pg_try_advisory_lock(73, 12)", nil},
		{1, "SELECT pg_advisory_unlock(73, 12)", nil},
		{0, "SELECT pg_advisory_lock(hashtext('advisory test ' || 'migrations')) AS held", nil},
		{1, "SELECT pg_try_advisory_lock(hashtext('advisory test migrations'))", nil},
		{0, "SELECT pg_advisory_unlock(hashtext('advisory test migrations'))", nil},
		{0, "SELECT pg_advisory_lock(NULL), pg_try_advisory_lock(NULL::bigint)", nil},
		{0, "SELECT pg_try_advisory_lock($1)", []any{nil}},
		// Transaction locks: held until the block ends, undone by ROLLBACK TO.
		{0, "SELECT pg_advisory_xact_lock(7300120003)", nil},
		{1, "SELECT pg_try_advisory_lock(7300120003)", nil},
		{1, "SELECT pg_advisory_unlock(7300120003)", nil},
		{0, "BEGIN", nil},
		{0, "SELECT pg_advisory_xact_lock(7300120004)", nil},
		{0, "SAVEPOINT a", nil},
		{0, "SELECT pg_try_advisory_xact_lock(7300120005)", nil},
		{0, "SAVEPOINT b", nil},
		{0, "SELECT pg_advisory_xact_lock_shared(7300120006)", nil},
		{0, "SELECT pg_advisory_lock(7300120007)", nil}, // a session lock survives the rollback
		{1, "SELECT pg_try_advisory_xact_lock(7300120004), pg_try_advisory_xact_lock(7300120005), pg_try_advisory_xact_lock(7300120006)", nil},
		{0, "RELEASE SAVEPOINT b", nil},
		{0, "ROLLBACK TO SAVEPOINT a", nil},
		{1, "SELECT pg_try_advisory_xact_lock(7300120004), pg_try_advisory_xact_lock(7300120005), pg_try_advisory_xact_lock(7300120006)", nil},
		{0, "SAVEPOINT c", nil},
		{0, "SELECT pg_advisory_xact_lock(7300120008)", nil},
		{0, "SELECT 1/0", nil},
		{0, "ROLLBACK TO SAVEPOINT c", nil},
		{1, "SELECT pg_try_advisory_xact_lock(7300120008)", nil},
		{0, "ROLLBACK", nil},
		{1, "SELECT pg_try_advisory_xact_lock(7300120004), pg_try_advisory_lock(7300120007)", nil},
		{0, "SELECT pg_advisory_unlock(7300120007)", nil},
		{1, "BEGIN", nil},
		{1, "SELECT pg_advisory_xact_lock(7300120009)", nil},
		{0, "SELECT pg_try_advisory_lock(7300120009)", nil},
		{1, "COMMIT", nil},
		{0, "SELECT pg_try_advisory_lock(7300120009)", nil},
		{0, "SELECT pg_advisory_unlock_all()", nil},
		// lock_timeout applies to the wait.
		{0, "SELECT pg_advisory_lock(7300120010)", nil},
		{1, "SET lock_timeout = '100ms'", nil},
		{1, "SELECT pg_advisory_lock(7300120010)", nil},
		{1, "SELECT pg_advisory_xact_lock_shared(7300120010)", nil},
		{1, "RESET lock_timeout", nil},
		{0, "SELECT pg_advisory_unlock(7300120010)", nil},
		// Errors as PostgreSQL's.
		{0, "SELECT pg_advisory_lock(1, 2, 3)", nil},
		{0, "SELECT pg_advisory_lock(5000000000, 1)", nil},
	}
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		lake := []*noticeConn{dialNoticeConn(t, ctx, lakeCfg, mode), dialNoticeConn(t, ctx, lakeCfg, mode)}
		pg := []*noticeConn{dialNoticeConn(t, ctx, ref.Config(), mode), dialNoticeConn(t, ctx, ref.Config(), mode)}
		for i, st := range script {
			want := outcome(ctx, pg[st.conn], st.sql, st.args...)
			got := outcome(ctx, lake[st.conn], st.sql, st.args...)
			// PostgreSQL names the two-key form's argument types in its
			// error; a key past integer's range is refused as out of range.
			if got != want && !(strings.Contains(st.sql, "5000000000, 1") && strings.HasPrefix(got, "ERROR 22003") && strings.HasPrefix(want, "ERROR 42883")) {
				t.Errorf("mode %v step %d, session %d: %s\n got: %s\nwant: %s", mode, i, st.conn, st.sql, got, want)
			}
		}
		// A session's end releases its locks.
		if got := outcome(ctx, lake[0], "SELECT pg_advisory_lock(7300120011)"); got != "" {
			t.Fatalf("lock: %s", got)
		}
		lake[0].Close(ctx)
		deadline := time.Now().Add(30 * time.Second)
		for outcome(ctx, lake[1], "SELECT pg_try_advisory_lock(7300120011)") != "true" {
			if time.Now().After(deadline) {
				t.Fatalf("a closed session's lock is still held")
			}
			time.Sleep(50 * time.Millisecond)
		}
		mustExec(t, ctx, lake[1].Conn, "SELECT pg_advisory_unlock_all()")
	}
}

// TestAdvisoryLockDeadlock: two sessions waiting for each other's locks —
// one gets PostgreSQL's 40P01, the other then takes its lock.
func TestAdvisoryLockDeadlock(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	a, b := srv.connect(t), srv.connect(t)
	mustExec(t, ctx, a, "SELECT pg_advisory_lock(7300120101)")
	mustExec(t, ctx, b, "SELECT pg_advisory_lock(7300120102)")
	errs := make(chan error, 2)
	go func() {
		_, err := a.Exec(ctx, "SELECT pg_advisory_lock(7300120102)")
		if err != nil {
			mustExecNoT(ctx, a, "SELECT pg_advisory_unlock_all()")
		}
		errs <- err
	}()
	time.Sleep(200 * time.Millisecond) // a waits first (either order deadlocks)
	go func() {
		_, err := b.Exec(ctx, "SELECT pg_advisory_lock(7300120101)")
		if err != nil {
			mustExecNoT(ctx, b, "SELECT pg_advisory_unlock_all()")
		}
		errs <- err
	}()
	var codes []string
	for range 2 {
		codes = append(codes, pgCode(<-errs))
	}
	if !(codes[0] == "40P01" && codes[1] == "" || codes[0] == "" && codes[1] == "40P01") {
		t.Fatalf("deadlocked sessions answered %q, want one 40P01 and one lock taken", codes)
	}
	mustExec(t, ctx, a, "SELECT pg_advisory_unlock_all()")
	mustExec(t, ctx, b, "SELECT pg_advisory_unlock_all()")
}

func mustExecNoT(ctx context.Context, c *pgx.Conn, q string) {
	_, _ = c.Exec(ctx, q)
}

// TestAdvisoryCallsOutsideTheirSelect: a call of any advisory-lock function
// of PostgreSQL (pg_proc's list) in any other position — over a lake
// table, a catalog relation, in WHERE, a subquery, a CTE, DML, EXPLAIN, a
// cursor, CREATE TABLE AS, a set operation — is 0A000, and takes no lock.
func TestAdvisoryCallsOutsideTheirSelect(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := srv.connect(t)
	other := srv.connect(t)
	mustExec(t, ctx, c, "CREATE SCHEMA advpos", "CREATE TABLE advpos.jobs (id bigint PRIMARY KEY)", "INSERT INTO advpos.jobs VALUES (7300120201)")
	ref := srv.referenceDB(t, "advisory_names")
	fns := queryStrings(t, ctx, ref, "SELECT proname || '|' || pronargs FROM pg_proc WHERE proname ~ 'advisory' ORDER BY 1")
	if len(fns) < 11 {
		t.Fatalf("pg_proc lists %d advisory functions", len(fns))
	}
	positions := []string{
		"SELECT {F} FROM advpos.jobs",
		"SELECT id FROM advpos.jobs WHERE {F}",
		"SELECT count(*) FROM pg_class WHERE {F} IS NOT NULL",
		"SELECT (SELECT {F})",
		"WITH x AS (SELECT {F} AS v) SELECT v FROM x",
		"SELECT {F} UNION ALL SELECT {F}",
		"SELECT {F} ORDER BY 1",
		"SELECT {F} LIMIT 1",
		"SELECT {F} WHERE true",
		"VALUES ({F})",
		"INSERT INTO advpos.jobs SELECT 7300120202 WHERE {F} IS NOT NULL",
		"UPDATE advpos.jobs SET id = id WHERE {F} IS NOT NULL",
		"DELETE FROM advpos.jobs WHERE {F} IS NULL",
		"EXPLAIN SELECT {F}",
		"CREATE TABLE advpos.t AS SELECT {F} AS v",
		"SELECT coalesce({F}, {F})",
	}
	for _, fn := range fns {
		name, nargs, _ := strings.Cut(fn, "|")
		args := map[string]string{"0": "", "1": "7300120201", "2": "7300, 120201"}[nargs]
		call := name + "(" + args + ")"
		for _, p := range positions {
			q := strings.ReplaceAll(p, "{F}", call)
			if _, err := c.Exec(ctx, q); pgCode(err) != "0A000" {
				t.Errorf("%s: %v, want 0A000", q, err)
			}
		}
		if _, err := c.Exec(ctx, "BEGIN"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Exec(ctx, "DECLARE cur CURSOR FOR SELECT "+call); pgCode(err) != "0A000" {
			t.Errorf("DECLARE CURSOR FOR SELECT %s: %v, want 0A000", call, err)
		}
		mustExec(t, ctx, c, "ROLLBACK")
	}
	// None of them took a lock.
	wantRows(t, "locks left", queryStrings(t, ctx, other,
		"SELECT pg_try_advisory_lock(7300120201), pg_try_advisory_lock(7300, 120201)"), []string{"true|true"})
	mustExec(t, ctx, other, "SELECT pg_advisory_unlock_all()")
}

// TestSetConfigAsPostgreSQL: set_config is SET [LOCAL] for the session —
// what it sets is what current_setting, SHOW and later statements see, a
// block's ROLLBACK undoes it, is_local lasts until the block ends — on
// lakesoul serve as on PostgreSQL (extended and simple protocol). Before,
// it ran on a pooled catalog connection whose transaction was rolled back:
// it answered the value and changed nothing.
func TestSetConfigAsPostgreSQL(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	ref := srv.referenceDB(t, "setconfig_ref")
	pw, err := srv.adminPassword()
	if err != nil {
		t.Fatal(err)
	}
	lakeCfg, err := pgx.ParseConfig(srv.dsn(adminRole, pw, database))
	if err != nil {
		t.Fatal(err)
	}
	script := []struct {
		sql  string
		args []any
	}{
		{"SELECT set_config('app.tenant', '42', false)", nil},
		{"SELECT current_setting('app.tenant')", nil},
		{"SHOW app.tenant", nil},
		{"BEGIN", nil},
		{"SELECT set_config('app.tenant', '7', true) AS v, set_config('app.user', 'ann', false)", nil},
		{"SELECT current_setting('app.tenant'), current_setting('app.user')", nil},
		{"COMMIT", nil},
		{"SELECT current_setting('app.tenant'), current_setting('app.user')", nil},
		{"BEGIN", nil},
		{"SELECT set_config('app.user', 'bob', false)", nil},
		{"SAVEPOINT s", nil},
		{"SELECT set_config('app.user', 'cid', false)", nil},
		{"ROLLBACK TO SAVEPOINT s", nil},
		{"SELECT current_setting('app.user')", nil},
		{"ROLLBACK", nil},
		{"SELECT current_setting('app.user')", nil},
		{"SELECT set_config('app.local', 'x', true)", nil},
		{"SELECT set_config($1, $2, $3)", []any{"app.param", "p1", false}},
		{"SELECT current_setting('app.param')", nil},
		{"SELECT pg_catalog.set_config('app.expr', 'a' || 'b', 1 > 2)", nil},
		{"SELECT current_setting('app.expr')", nil},
		{"SELECT set_config('statement_timeout', '5s', false)", nil},
		{"SHOW statement_timeout", nil},
		{"SELECT set_config('statement_timeout', '0', false)", nil},
		{"SELECT set_config('TimeZone', 'Europe/Paris', false)", nil},
		{"SELECT current_setting('TimeZone')", nil},
		{"SELECT set_config('TimeZone', 'UTC', false)", nil},
		{"SELECT set_config('search_path', 'pg_catalog, public', false)", nil},
		{"SHOW search_path", nil},
		{"SELECT set_config('search_path', '\"$user\", public', false)", nil},
		{"SELECT set_config('app.tenant', '43', false), set_config('app.user', 'dan', false)", nil},
		{"SELECT current_setting('app.tenant') || current_setting('app.user')", nil},
		{"SELECT set_config('no_such_setting', '1', false)", nil},
		{"SELECT set_config(name, '8MB', false) AS s FROM pg_settings WHERE name = 'work_mem'", nil},
		{"SHOW work_mem", nil},
		{"SELECT set_config(name, 'x', false) FROM pg_settings WHERE name = 'no_such_setting'", nil},
		{"RESET work_mem", nil},
		{"SHOW work_mem", nil},
		{"SET work_mem = '64MB'", nil},
		{"SHOW work_mem", nil},
		{"SELECT current_setting('work_mem')", nil},
		{"RESET work_mem", nil},
		{"SHOW no_such_setting", nil},
		{"SET no_such_setting = 1", nil},
	}
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		lake := dialNoticeConn(t, ctx, lakeCfg, mode)
		pg := dialNoticeConn(t, ctx, ref.Config(), mode)
		for i, st := range script {
			want := outcome(ctx, pg, st.sql, st.args...)
			got := outcome(ctx, lake, st.sql, st.args...)
			if got != want {
				t.Errorf("mode %v step %d: %s\n got: %s\nwant: %s", mode, i, st.sql, got, want)
			}
		}
	}
	// Anywhere but a SELECT of its own, set_config is refused, not lost.
	c := srv.connect(t)
	mustExec(t, ctx, c, "CREATE SCHEMA setcfg", "CREATE TABLE setcfg.t (id int PRIMARY KEY)", "INSERT INTO setcfg.t VALUES (1)")
	// A result column over a lake table: applied for each row, in order.
	mustExec(t, ctx, c, "INSERT INTO setcfg.t VALUES (2)")
	wantRows(t, "set_config per row", queryStrings(t, ctx, c,
		"SELECT id, set_config('app.row', id::text, false) FROM setcfg.t WHERE id = 2"), []string{"2|2"})
	wantRows(t, "set by the row", queryStrings(t, ctx, c, "SELECT current_setting('app.row')"), []string{"2"})
	for _, q := range []string{
		"SELECT id FROM setcfg.t WHERE set_config('app.w', 'x', false) = 'x'",
		"SELECT count(*) FROM pg_class WHERE set_config('app.w', 'x', false) IS NOT NULL",
		"SELECT (SELECT set_config('app.w', 'x', false))",
		"WITH s AS (SELECT set_config('app.w', 'x', false)) SELECT * FROM s",
		"SELECT set_config('app.w', 'x', false) UNION ALL SELECT 'y'",
		"SELECT upper(set_config('app.w', 'x', false))",
		"UPDATE setcfg.t SET id = id WHERE set_config('app.w', 'x', false) IS NOT NULL",
		"EXPLAIN SELECT set_config('app.w', 'x', false)",
		"SELECT set_config('app.w', 'x', false), pg_advisory_lock(1)",
	} {
		if _, err := c.Exec(ctx, q); pgCode(err) != "0A000" {
			t.Errorf("%s: %v, want 0A000", q, err)
		}
	}
	wantRows(t, "nothing set", queryStrings(t, ctx, c, "SELECT coalesce(current_setting('app.w', true), '<none>')"), []string{"<none>"})
}

// TestLargeObjectFunctionsRefused: every large-object function PostgreSQL
// has (pg_proc's lo_*, loread, lowrite) is 0A000 — before, lo_create and
// lo_import answered the OID of an object that a rolled-back catalog
// transaction had already discarded.
func TestLargeObjectFunctionsRefused(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := srv.connect(t)
	ref := srv.referenceDB(t, "largeobject_names")
	calls := queryStrings(t, ctx, ref, "SELECT DISTINCT proname || '(' || "+
		"coalesce((SELECT string_agg('NULL::' || format_type(a, NULL), ', ') FROM unnest(proargtypes) a), '') || ')' "+
		"FROM pg_proc WHERE proname ~ '^lo_|^lo(read|write)$' ORDER BY 1")
	if len(calls) < 18 {
		t.Fatalf("pg_proc lists %d large-object functions", len(calls))
	}
	for _, call := range calls {
		for _, q := range []string{"SELECT " + call, "SELECT pg_catalog." + call, "SELECT count(*) FROM pg_class WHERE " + call + " IS NULL"} {
			if _, err := c.Exec(ctx, q); pgCode(err) != "0A000" {
				t.Errorf("%s: %v, want 0A000", q, err)
			}
		}
	}
	wantRows(t, "large objects", queryStrings(t, ctx, c, "SELECT count(*) FROM pg_largeobject_metadata"), []string{"0"})
}
