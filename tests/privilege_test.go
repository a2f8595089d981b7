package tests

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/objstore"
)

// Issue 13, privilege and isolation: SQL a workspace user writes may reach
// the catalog PostgreSQL, but only on the user's own login. These are the
// reported escalations and their variants; each must fail and change
// nothing, and the user stays who they are.

// privilegeFixture is two workspaces: alice administers priv_a, bob priv_b,
// where bob keeps a table with a secret row.
type privilegeFixture struct {
	s            *server
	admin, alice *pgx.Conn
	bob          *pgx.Conn
	bobTableID   string
	tag          string
}

func newPrivilegeFixture(t *testing.T, tag string) *privilegeFixture {
	t.Helper()
	s := sharedServer(t)
	ctx := testCtx(t)
	f := &privilegeFixture{s: s, admin: s.connect(t)}
	mustExec(t, ctx, f.admin,
		"SELECT lakesoul.create_workspace('"+tag+"_a')",
		"SELECT lakesoul.create_workspace('"+tag+"_b')",
		"SELECT lakesoul.create_user('"+tag+"_alice', 'alice-pw', '"+tag+"_a', admin => true)",
		"SELECT lakesoul.create_user('"+tag+"_bob', 'bob-pw', '"+tag+"_b', admin => true)")
	login := func(user, pw string) *pgx.Conn { return s.login(t, ctx, user, pw) }
	f.tag = tag
	f.alice = login(tag+"_alice", "alice-pw")
	f.bob = login(tag+"_bob", "bob-pw")
	mustExec(t, ctx, f.alice, "CREATE SCHEMA "+tag+"_sa", "CREATE TABLE "+tag+"_sa.t (id bigint PRIMARY KEY, v text)",
		"INSERT INTO "+tag+"_sa.t VALUES (1, 'mine')")
	mustExec(t, ctx, f.bob, "CREATE SCHEMA "+tag+"_sb", "CREATE TABLE "+tag+"_sb.secret (id bigint PRIMARY KEY, v text)",
		"INSERT INTO "+tag+"_sb.secret VALUES (1, 'bob only')")
	if err := f.admin.QueryRow(ctx, "SELECT table_id FROM lakesoul.tables WHERE table_schema = $1 AND table_name = 'secret'", tag+"_sb").Scan(&f.bobTableID); err != nil {
		t.Fatal(err)
	}
	return f
}

// assertStillAlice checks that alice is herself, without superuser rights.
func (f *privilegeFixture) assertStillAlice(t *testing.T) {
	t.Helper()
	wantRows(t, "alice is still alice", queryStrings(t, testCtx(t), f.alice,
		"SELECT current_user, session_user, (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)"),
		[]string{f.tag + "_alice|" + f.tag + "_alice|false"})
}

// TestUserSQLRunsOnTheUsersLogin: functions that execute SQL strings
// (query_to_xml, ts_stat, …) may reset the role, but the reset role is the
// login's — the user — so superuser functions, pg_authid and other
// workspaces stay out of reach.
func TestUserSQLRunsOnTheUsersLogin(t *testing.T) {
	f := newPrivilegeFixture(t, "pv1")
	ctx := testCtx(t)
	reset := "set_config(''role'', ''none'', true)"
	target := filepath.Join(t.TempDir(), "lo_export_target")
	attacks := map[string]string{
		"SELECT query_to_xml('SELECT " + reset + "', true, false, '') IS NOT NULL, pg_read_file('/etc/passwd')":                                "42501",
		"SELECT pg_read_file('/etc/passwd') FROM ts_stat('SELECT to_tsvector(" + reset + ")') LIMIT 1":                                         "42501",
		"SELECT (SELECT count(*) FROM ts_stat('SELECT to_tsvector(" + reset + ")')), (SELECT count(*) FROM pg_authid)":                         "42501",
		"SELECT query_to_xml('SELECT rolpassword FROM pg_authid', true, false, '')":                                                            "42501",
		"SELECT query_to_xml('SELECT set_config(''role'', ''lakesoul'', true)', true, false, '')":                                              "42501",
		"SELECT lo_export(lo_from_bytea(0, 'pwned'), '" + target + "')":                                                                        "",
		"SELECT query_to_xml('SELECT lakesoul.create_user(''mallory'', ''x'', ''" + f.tag + "_b'', admin => true)', true, false, '')":          "",
		"SELECT query_to_xml('SELECT " + reset + "', true, false, ''), lakesoul.create_user('mallory', 'x', '" + f.tag + "_b', admin => true)": "0A000",
		"SELECT lakesoul.create_user('mallory', 'x', '" + f.tag + "_b', admin => true)":                                                        "42501",
		"SELECT lakesoul.create_workspace('" + f.tag + "_mine')":                                                                               "42501",
		"SELECT * FROM lakesoul.history('" + f.tag + "_sb.secret')":                                                                            "42P01",
		"SELECT count(*) FROM public.data_commit_info WHERE table_id = '" + f.bobTableID + "' HAVING count(*) > 0":                             "",
	}
	for q, code := range attacks {
		rows, err := tryQueryStrings(ctx, f.alice, q)
		switch {
		case code == "" && err == nil && len(rows) > 0 && strings.Contains(q, "HAVING"):
			t.Errorf("alice: %s: saw bob's commits: %v", q, rows)
		case code == "" && err == nil && !strings.Contains(q, "HAVING"):
			t.Errorf("alice: %s: succeeded (%v), want an error", q, rows)
		case code != "" && pgCode(err) != code:
			t.Errorf("alice: %s: %v, want %s", q, err, code)
		}
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lo_export wrote a server file: %v", err)
	}
	if _, err := pgx.Connect(ctx, f.s.dsn("mallory", "x", database)); pgCode(err) != "28P01" {
		t.Errorf("mallory logs in: %v, want 28P01 (never created)", err)
	}
	wantRows(t, "bob's secret", queryStrings(t, ctx, f.bob, "SELECT v FROM "+f.tag+"_sb.secret"), []string{"bob only"})
	f.assertStillAlice(t)
}

// TestTimeTravelArgumentsRunAsTheUser: the argument expressions of
// lakesoul.snapshot and CALL are evaluated on the user's login; the call
// itself gets only their values.
func TestTimeTravelArgumentsRunAsTheUser(t *testing.T) {
	f := newPrivilegeFixture(t, "pv2")
	ctx := testCtx(t)
	for q, code := range map[string]string{
		// set_config is refused before anything runs (it would set the
		// session's own setting, setconfig.go); the role switch it tried is
		// tried through dynamic SQL on the catalog instead.
		"SELECT * FROM lakesoul.snapshot('" + f.tag + "_sa.t', set_config('role', 'none', true)::timestamptz)":                                                       "0A000",
		"SELECT * FROM lakesoul.snapshot('" + f.tag + "_sa.t', query_to_xml('SELECT set_config(''role'', ''lakesoul'', true)', true, false, '')::text::timestamptz)": "42501",
		"SELECT * FROM lakesoul.snapshot('" + f.tag + "_sa.t', pg_read_file('/etc/hostname')::timestamptz)":                                                          "42501",
		"SELECT * FROM lakesoul.snapshot('" + f.tag + "_sa.t', set_config('role', 'lakesoul', true)::timestamptz)":                                                   "0A000",
		"SELECT * FROM lakesoul.changes('" + f.tag + "_sa.t', query_to_xml('SELECT 1', true, false, '')::text::timestamptz)":                                         "22007",
		"CALL lakesoul.rollback('" + f.tag + "_sa.t', set_config('role', 'lakesoul', true)::timestamptz)":                                                            "0A000",
		"CALL lakesoul.rollback('" + f.tag + "_sa.t', query_to_xml('SELECT set_config(''role'', ''lakesoul'', true)', true, false, '')::text::timestamptz)":          "42501",
		"CALL lakesoul.cleanup('" + f.tag + "_sa.t', pg_read_file('/etc/hostname')::timestamptz)":                                                                    "42501",
		"CALL lakesoul.rollback('" + f.tag + "_sb.secret', version => 0)":                                                                                            "42P01",
	} {
		if _, err := f.alice.Exec(ctx, q); pgCode(err) != code {
			t.Errorf("alice: %s: %v, want %s", q, err, code)
		}
	}
	// Legitimate expressions still work: an interval from now, a cast.
	wantRows(t, "snapshot of now", queryStrings(t, ctx, f.alice,
		"SELECT v FROM lakesoul.snapshot('"+f.tag+"_sa.t', now() + interval '1 minute')"), []string{"mine"})
	wantRows(t, "snapshot by version", queryStrings(t, ctx, f.alice,
		"SELECT v FROM lakesoul.snapshot('"+f.tag+"_sa.t', version => 1 - 1)"), []string{"mine"})
	f.assertStillAlice(t)
}

// TestUserSettingsDoNotLeak: set_config(…, false) sets the user's session
// (as PostgreSQL's does), and nothing else: another user's session, and the
// catalog connections the user's statements run on, never see it.
func TestUserSettingsDoNotLeak(t *testing.T) {
	f := newPrivilegeFixture(t, "pv3")
	ctx := testCtx(t)
	mustExec(t, ctx, f.alice,
		"SELECT set_config('statement_timeout', '1h', false), set_config('search_path', 'pg_temp', false), set_config('priv.leak', 'yes', false)")
	for range 8 {
		wantRows(t, "alice's settings", queryStrings(t, ctx, f.alice,
			"SELECT current_setting('statement_timeout'), coalesce(current_setting('priv.leak', true), '')"), []string{"1h|yes"})
		wantRows(t, "bob's settings", queryStrings(t, ctx, f.bob,
			"SELECT current_setting('statement_timeout'), coalesce(current_setting('priv.leak', true), '')"), []string{"0|"})
		// A catalog query of bob's runs on a clean catalog session.
		wantRows(t, "bob's catalog session", queryStrings(t, ctx, f.bob,
			"SELECT count(*) FROM pg_settings WHERE name = 'priv.leak'"), []string{"0"})
	}
}

// TestCommitLocksAreTheServers: the advisory locks users take are not in
// the catalog database, where the commit protocol's are (so no key blocks
// another workspace's commits); users cannot call the server's lock
// wrappers nor take locks on the catalog database by other means; the
// catalog views that list tables follow row-level security.
func TestCommitLocksAreTheServers(t *testing.T) {
	f := newPrivilegeFixture(t, "pv4")
	ctx := testCtx(t)
	cat := f.s.catalogConn(t)
	mustExec(t, ctx, f.alice, "BEGIN",
		"SELECT pg_advisory_lock(7300120301), pg_advisory_lock_shared(hashtextextended('x', 0)), pg_advisory_xact_lock(1, 2), pg_try_advisory_xact_lock_shared(7)")
	wantRows(t, "alice's advisory locks by database", queryStrings(t, ctx, cat,
		"SELECT d.datname, count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database "+
			"WHERE l.locktype = 'advisory' AND (l.objid = 7300120301 % 4294967296 OR l.classid = 1 AND l.objid = 2 OR l.objid = 7) "+
			"GROUP BY 1 ORDER BY 1"), []string{"postgres|3"})
	mustExec(t, ctx, f.bob, "INSERT INTO "+f.tag+"_sb.secret VALUES (3, 'three')")
	mustExec(t, ctx, f.alice, "ROLLBACK", "SELECT pg_advisory_unlock_all()")
	for _, q := range []string{
		"SELECT lakesoul.xact_lock(1)",
		"SELECT lakesoul.partition_lock('" + f.bobTableID + "', '-5')",
		"SELECT query_to_xml('SELECT pg_advisory_lock(1)', true, false, '')",
	} {
		if _, err := f.alice.Exec(ctx, q); pgCode(err) != "42501" {
			t.Errorf("alice: %s: %v, want 42501", q, err)
		}
	}
	for _, q := range []string{
		"SELECT count(*) FROM lakesoul.table_oid WHERE table_id = $1",
		"SELECT count(*) FROM lakesoul.table_created WHERE table_id = $1",
		"SELECT count(*) FROM lakesoul.table_level_assets WHERE table_id = $1",
		"SELECT count(*) FROM lakesoul.partition_level_assets WHERE table_id = $1",
		"SELECT count(*) FROM lakesoul.namespace_oid WHERE namespace = '" + f.tag + "_sb' AND $1::text IS NOT NULL",
	} {
		wantRows(t, q, queryStrings(t, ctx, f.alice, q, f.bobTableID), []string{"0"})
		wantRows(t, q+" (bob)", queryStrings(t, ctx, f.bob, strings.Replace(q, "count(*)", "count(*) > 0", 1), f.bobTableID),
			[]string{"true"})
	}
	// The compaction queue is the workers' alone (migration 22): its jobs
	// name paths the workers delete.
	for _, c := range []*pgx.Conn{f.alice, f.bob} {
		if _, err := c.Exec(ctx, "SELECT count(*) FROM lakesoul.compaction_job WHERE table_id = $1", f.bobTableID); pgCode(err) != "42501" {
			t.Errorf("a workspace user reads the compaction queue: %v, want 42501", err)
		}
	}
	// Commits of both workspaces go on.
	mustExec(t, ctx, f.alice, "INSERT INTO "+f.tag+"_sa.t VALUES (2, 'two')")
	mustExec(t, ctx, f.bob, "INSERT INTO "+f.tag+"_sb.secret VALUES (2, 'two')")
}

// TestUserCannotHoldTheCatalog: a user's long catalog statements occupy only
// that user's connections; others log in and query meanwhile, and a cancel
// stops the statement on the catalog PostgreSQL, not only on the wire.
func TestUserCannotHoldTheCatalog(t *testing.T) {
	f := newPrivilegeFixture(t, "pv5")
	ctx := testCtx(t)
	cat := f.s.catalogConn(t)
	var wg sync.WaitGroup
	const sleepers = 12
	errs := make(chan error, sleepers)
	var conns []*pgx.Conn
	for range sleepers {
		c, err := pgx.Connect(ctx, f.s.dsn(f.tag+"_alice", "alice-pw", database))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(context.Background())
		conns = append(conns, c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := c.Exec(ctx, "SELECT pg_sleep(120), '"+f.tag+"_sleeper'")
			errs <- err
		}()
	}
	// Wait until alice's sleeps are running on the catalog.
	waitFor(t, "alice's sleeps on the catalog", func() bool {
		return countActive(t, cat, f.tag+"_sleeper") > 0
	})
	// Everyone else still logs in and reaches the catalog.
	for range 3 {
		c, err := pgx.Connect(ctx, f.s.dsn(f.tag+"_bob", "bob-pw", database))
		if err != nil {
			t.Fatalf("bob logs in while alice sleeps: %v", err)
		}
		wantRows(t, "bob's catalog query", queryStrings(t, ctx, c, "SELECT count(*) > 0 FROM pg_catalog.pg_namespace"), []string{"true"})
		c.Close(ctx)
	}
	// CancelRequest each (psql's Ctrl-C): the statement ends with 57014.
	for _, c := range conns {
		if err := c.PgConn().CancelRequest(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// The cancel reached the catalog: no sleeper is left running there,
	// long before pg_sleep(120) would have ended by itself.
	waitFor(t, "the catalog's sleeps to stop", func() bool {
		return countActive(t, cat, f.tag+"_sleeper") == 0
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		if pgCode(err) != "57014" {
			t.Errorf("a canceled sleep: %v, want 57014", err)
		}
	}
}

func countActive(t *testing.T, cat *pgx.Conn, marker string) int {
	t.Helper()
	var n int
	if err := cat.QueryRow(context.Background(),
		"SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%' || $1 || '%' AND pid <> pg_backend_pid()", marker).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// waitFor polls cond until it holds or a generous deadline passes (a
// correctness deadline, not a timing goal).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRelationNamesNeverNameFiles: a quoted identifier that is a file glob
// of another workspace's table is a relation name like any other — outside
// the scope of a CTE of that name it is looked up as a table and does not
// exist; DuckDB never gets to read it as files.
func TestRelationNamesNeverNameFiles(t *testing.T) {
	f := newPrivilegeFixture(t, "pv6")
	ctx := testCtx(t)
	dir := filepath.Join(f.s.dataDir, "warehouse", f.tag+"_sb", "secret")
	if files, _ := filepath.Glob(filepath.Join(dir, "*.parquet")); len(files) == 0 {
		t.Fatalf("no data files under %s (the attack needs a real glob)", dir)
	}
	for _, glob := range []string{dir + "/*.parquet", dir + "/**/*.parquet", filepath.Join(dir, "..", "secret") + "/*.parquet"} {
		id := `"` + glob + `"`
		for _, q := range []string{
			"SELECT * FROM " + id,
			"SELECT * FROM " + id + ", (WITH " + id + " AS (SELECT 1) SELECT * FROM " + id + ") s",
			"SELECT (SELECT count(*) FROM " + id + ") FROM (WITH " + id + " AS (SELECT 1 AS a) SELECT a FROM " + id + ") s",
			"WITH a AS (SELECT * FROM " + id + "), " + id + " AS (SELECT 1) SELECT * FROM a",
			"WITH x AS (SELECT 1) SELECT * FROM " + f.tag + "_sa.t, " + id,
			"INSERT INTO " + f.tag + "_sa.t SELECT 9, v::text FROM " + id + ", (WITH " + id + " AS (SELECT 1) SELECT 1) s",
		} {
			if _, err := f.alice.Exec(ctx, q); pgCode(err) != "42P01" {
				t.Errorf("alice: %s: %v, want 42P01", q, err)
			}
		}
		// A CTE of that name in scope is just a CTE.
		wantRows(t, "a glob-named CTE", queryStrings(t, ctx, f.alice,
			"WITH "+id+" AS (SELECT 1 AS a) SELECT "+id+".a FROM "+id), []string{"1"})
	}
	wantRows(t, "alice's table untouched", queryStrings(t, ctx, f.alice, "SELECT count(*) FROM "+f.tag+"_sa.t"), []string{"1"})
}

// TestPasswordsStayOutOfTheCatalogLog: create_user's password reaches the
// catalog only as its SCRAM verifier, so neither a failing call nor a
// successful one writes it to the PostgreSQL log; the user logs in with it.
func TestPasswordsStayOutOfTheCatalogLog(t *testing.T) {
	s := sharedServer(t)
	ctx := testCtx(t)
	admin := s.connect(t)
	const secret = "Never-In-The-Log-7731"
	mustExec(t, ctx, admin, "SELECT lakesoul.create_workspace('pwlog')")
	for _, q := range []string{
		"SELECT lakesoul.create_user('pwlog_u', '" + secret + "', 'pwlog_missing_ws')",
		"SELECT lakesoul.create_user('pwlog u', '" + secret + "', 'pwlog')",
		"SELECT lakesoul.create_user(p_name => 'pwlog_v', p_password => '" + secret + "', p_workspace => 'nope')",
	} {
		if _, err := admin.Exec(ctx, q); err == nil {
			t.Fatalf("%s succeeded", q)
		}
	}
	if _, err := admin.Exec(ctx, "SELECT lakesoul.create_user($1, $2, $3)", "pwlog_p", secret, "pwlog_missing_ws"); err == nil {
		t.Fatal("create_user with parameters into a missing workspace succeeded")
	}
	mustExec(t, ctx, admin, "SELECT lakesoul.create_user('pwlog_u', '"+secret+"', 'pwlog')")
	u, err := pgx.Connect(ctx, s.dsn("pwlog_u", secret, database))
	if err != nil {
		t.Fatalf("the new user logs in: %v", err)
	}
	wantRows(t, "the new user's catalog session", queryStrings(t, ctx, u, "SELECT current_user"), []string{"pwlog_u"})
	u.Close(ctx)
	log, err := os.ReadFile(filepath.Join(s.pgDir(), "postgresql.log"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(log), secret) {
		t.Fatalf("the password is in the catalog's log")
	}
	if !strings.Contains(string(log), "pwlog_missing_ws") {
		t.Fatalf("the failing calls are not in the catalog's log either; the test checks nothing")
	}
}

// TestDirectCatalogRowsStayInTheirDomain: a workspace user with a direct
// catalog connection (as LakeSoul's own clients have) writes only rows that
// belong to its domain: no table filed under another workspace's namespace,
// no version added to another workspace's table.
func TestDirectCatalogRowsStayInTheirDomain(t *testing.T) {
	f := newPrivilegeFixture(t, "pv7")
	ctx := testCtx(t)
	alice := f.s.catalogConnAs(t, f.tag+"_alice")
	var aliceTable string
	if err := alice.QueryRow(ctx, "SELECT table_id FROM public.table_info WHERE table_namespace = $1", f.tag+"_sa").Scan(&aliceTable); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"INSERT INTO public.table_info (table_id, table_namespace, table_name, table_path, table_schema, domain) " +
			"VALUES ('forged', '" + f.tag + "_sb', 'forged', 'file:///x', '{}', '" + f.tag + "_a')",
		"UPDATE public.table_info SET table_namespace = '" + f.tag + "_sb' WHERE table_id = '" + aliceTable + "'",
		"INSERT INTO public.table_name_id (table_name, table_id, table_namespace, domain) VALUES ('forged', 'forged', '" + f.tag + "_sb', '" + f.tag + "_a')",
		"INSERT INTO public.partition_info (table_id, partition_desc, version, commit_op, snapshot, domain) " +
			"VALUES ('" + f.bobTableID + "', '-5', 99, 'AppendCommit', '{}', '" + f.tag + "_a')",
		"INSERT INTO public.data_commit_info (table_id, partition_desc, commit_id, file_ops, commit_op, committed, domain) " +
			"VALUES ('" + f.bobTableID + "', '-5', gen_random_uuid(), '{}', 'AppendCommit', true, '" + f.tag + "_a')",
	} {
		if _, err := alice.Exec(ctx, q); pgCode(err) != "42501" {
			t.Errorf("alice on the catalog: %s: %v, want 42501", q, err)
		}
	}
	// Her own table's rows are still hers to write (LakeSoul's clients do).
	mustExec(t, ctx, alice, "UPDATE public.table_info SET properties = properties WHERE table_id = '"+aliceTable+"'")
	wantRows(t, "bob's table", queryStrings(t, ctx, f.bob, "SELECT count(*) FROM "+f.tag+"_sb.secret"), []string{"1"})
}

// TestCatalogBookkeepingIsClosed: the catalog's bookkeeping tables are
// closed to workspace users, over pgwire (query_to_xml on their catalog
// login) and with a direct catalog login as LakeSoul's clients have: alice
// neither reads bob's discarded-file rows nor files one under bob's table,
// cannot touch the migrations table or the compaction queue nor call the
// workers' functions; the discard row she may file (under her own table) naming bob's
// live file makes her VACUUM delete nothing of bob's.
func TestCatalogBookkeepingIsClosed(t *testing.T) {
	f := newPrivilegeFixture(t, "pv8")
	ctx := testCtx(t)
	cat := f.s.catalogConn(t)
	var bobPath, bobFile, alicePath, aliceTable string
	if err := cat.QueryRow(ctx, `SELECT t.table_path, (SELECT o.path FROM data_commit_info d, unnest(d.file_ops) o WHERE d.table_id = t.table_id LIMIT 1)
		FROM table_info t WHERE t.table_id = $1`, f.bobTableID).Scan(&bobPath, &bobFile); err != nil {
		t.Fatal(err)
	}
	if err := cat.QueryRow(ctx, "SELECT table_path, table_id FROM table_info WHERE table_namespace = $1", f.tag+"_sa").Scan(&alicePath, &aliceTable); err != nil {
		t.Fatal(err)
	}
	bobLocal, err := objstore.LocalPath(bobFile)
	if err != nil {
		t.Fatal(err)
	}
	// A row of bob's table, as his compactions leave them.
	mustExec(t, ctx, cat, "INSERT INTO discard_compressed_file_info (file_path, table_path, partition_desc, timestamp, t_date) "+
		"VALUES ('"+bobPath+"/part-bobs-old_0000.parquet', '"+bobPath+"', 'secret=bob', 0, '1970-01-01')")

	xml := queryStrings(t, ctx, f.alice, "SELECT query_to_xml('SELECT file_path, partition_desc FROM public.discard_compressed_file_info', true, false, '')::text")
	if strings.Contains(strings.Join(xml, ""), "bob") {
		t.Errorf("alice reads bob's discarded files: %s", xml)
	}

	alice := f.s.catalogConnAs(t, f.tag+"_alice")
	wantRows(t, "discard rows alice sees", queryStrings(t, ctx, alice,
		"SELECT count(*) FROM public.discard_compressed_file_info WHERE table_path = $1", bobPath), []string{"0"})
	for _, q := range []string{
		"INSERT INTO public.discard_compressed_file_info (file_path, table_path, partition_desc, timestamp) VALUES ('" + bobFile + "', '" + bobPath + "', '-5', 0)",
		"UPDATE public.lakesoul_go_migrations SET dirty = true",
		"DELETE FROM public.lakesoul_go_migrations",
		"SELECT count(*) FROM public.lakesoul_go_migrations",
		"INSERT INTO lakesoul.compaction_job (table_id, partition_desc) VALUES ('" + aliceTable + "', '-5')",
		"UPDATE lakesoul.compaction_job SET outputs = '{" + alicePath + "}'",
		"SELECT lakesoul.collect_discarded(0)",
		"SELECT lakesoul.compaction_claim('w', 1000)",
	} {
		if _, err := alice.Exec(ctx, q); pgCode(err) != "42501" {
			t.Errorf("alice on the catalog: %s: %v, want 42501", q, err)
		}
	}
	// Her own table's row naming bob's file: hers to file, and harmless.
	mustExec(t, ctx, alice, "INSERT INTO public.discard_compressed_file_info (file_path, table_path, partition_desc, timestamp) "+
		"VALUES ('"+bobFile+"', '"+alicePath+"', '-5', 0)")
	mustExec(t, ctx, f.alice, "VACUUM "+f.tag+"_sa.t")
	if _, err := os.Stat(bobLocal); err != nil {
		t.Fatalf("bob's live file after alice's VACUUM: %v", err)
	}
	wantRows(t, "bob's secret", queryStrings(t, ctx, f.bob, "SELECT v FROM "+f.tag+"_sb.secret"), []string{"bob only"})
	wantRows(t, "a clean migrations table", queryStrings(t, ctx, cat, "SELECT dirty FROM lakesoul_go_migrations"), []string{"false"})
}
