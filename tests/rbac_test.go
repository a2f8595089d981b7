package tests

import (
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Workspaces (acceptance scenarios 48–50): users log in with their own
// passwords; another workspace's schemas and tables do not exist for them;
// workspace users read, write, create and drop tables but not schemas;
// namespaces take the creator's workspace and tables their namespace's.
func TestWorkspacesAndRowLevelSecurity(t *testing.T) {
	s := sharedServer(t)
	ctx := testCtx(t)
	admin := s.connect(t)
	mustExec(t, ctx, admin,
		"SELECT lakesoul.create_workspace('rbac_a')",
		"SELECT lakesoul.create_workspace('rbac_b')",
		"SELECT lakesoul.create_user('alice', 'alice-pw', 'rbac_a', admin => true)",
		"SELECT lakesoul.create_user('bob', 'bob-pw', 'rbac_a')",
		"SELECT lakesoul.create_user('carol', 'carol-pw', 'rbac_b', admin => true)",
		"CREATE SCHEMA rbac_pub",
		"CREATE TABLE rbac_pub.shared (id int PRIMARY KEY, v text)",
		"INSERT INTO rbac_pub.shared VALUES (1, 'for everyone')")
	login := func(user, pw string) *pgx.Conn { return s.login(t, ctx, user, pw) }
	if _, err := pgx.Connect(ctx, s.dsn("alice", "wrong", database)); pgCode(err) != "28P01" {
		t.Fatalf("wrong password: %v", err)
	}
	alice := login("alice", "alice-pw")
	bob := login("bob", "bob-pw")
	carol := login("carol", "carol-pw")

	// Scenario 50: alice's namespace takes her workspace; its tables too.
	mustExec(t, ctx, alice,
		"CREATE SCHEMA rbac_sa",
		"CREATE TABLE rbac_sa.t (id int PRIMARY KEY, v text)",
		"INSERT INTO rbac_sa.t VALUES (1, 'a'), (2, 'b')")
	cat := s.catalogConn(t)
	wantRows(t, "namespace domain", queryStrings(t, ctx, cat, "SELECT domain FROM namespace WHERE namespace = 'rbac_sa'"), []string{"rbac_a"})
	wantRows(t, "table domain", queryStrings(t, ctx, cat, "SELECT domain FROM table_info WHERE table_namespace = 'rbac_sa'"), []string{"rbac_a"})
	wantRows(t, "partition domain", queryStrings(t, ctx, cat,
		"SELECT DISTINCT p.domain FROM partition_info p JOIN table_info t USING (table_id) WHERE t.table_namespace = 'rbac_sa'"), []string{"rbac_a"})

	// Scenario 49: bob (a user of rbac_a) reads, writes, creates and drops
	// tables, but cannot create or drop namespaces.
	wantRows(t, "bob reads", queryStrings(t, ctx, bob, "SELECT v FROM rbac_sa.t ORDER BY id"), []string{"a", "b"})
	mustExec(t, ctx, bob,
		"INSERT INTO rbac_sa.t VALUES (3, 'c')",
		"CREATE TABLE rbac_sa.bobs (x int)",
		"DROP TABLE rbac_sa.bobs")
	for _, q := range []string{"CREATE SCHEMA rbac_bob", "DROP SCHEMA rbac_sa CASCADE"} {
		if _, err := bob.Exec(ctx, q); pgCode(err) != "42501" {
			t.Errorf("bob: %s: %v, want 42501", q, err)
		}
	}
	// In PostgreSQL's words, not the catalog's (issue 35, item 11).
	if _, err := bob.Exec(ctx, "CREATE SCHEMA rbac_bob"); err == nil || !strings.Contains(err.Error(), "permission denied for database lakesoul") {
		t.Errorf("bob: CREATE SCHEMA: %v, want permission denied for database lakesoul", err)
	}

	// Scenario 48: for carol (rbac_b) rbac_a's objects do not exist.
	for q, code := range map[string]string{
		"SELECT * FROM rbac_sa.t":               "42P01",
		"INSERT INTO rbac_sa.t VALUES (9, 'x')": "42P01",
		"DROP TABLE rbac_sa.t":                  "42P01",
		"CREATE TABLE rbac_sa.intruder (x int)": "3F000",
		"DROP SCHEMA rbac_sa CASCADE":           "3F000",
		"SELECT * FROM public.table_info":       "42P01",
	} {
		if _, err := carol.Exec(ctx, q); pgCode(err) != code {
			t.Errorf("carol: %s: %v, want %s", q, err, code)
		}
	}
	wantRows(t, "carol's pg_catalog view of rbac_sa", queryStrings(t, ctx, carol,
		"SELECT count(*) FROM pg_catalog.pg_namespace WHERE nspname = 'rbac_sa'"), []string{"0"})
	wantRows(t, "carol sees public", queryStrings(t, ctx, carol, "SELECT v FROM rbac_pub.shared"), []string{"for everyone"})
	// Sessions keep the role they logged in with.
	for _, q := range []string{"SET ROLE alice", "SET SESSION AUTHORIZATION alice"} {
		if _, err := carol.Exec(ctx, q); pgCode(err) != "42501" {
			t.Errorf("carol: %s: %v, want 42501", q, err)
		}
	}
	// Only administrators create workspaces and users.
	if _, err := alice.Exec(ctx, "SELECT lakesoul.create_workspace('rbac_c')"); pgCode(err) != "42501" {
		t.Errorf("alice creates a workspace: %v, want 42501", err)
	}
	wantRows(t, "rows after all attempts", queryStrings(t, ctx, alice, "SELECT count(*) FROM rbac_sa.t"), []string{"3"})
}

// Workspace membership is granted and revoked with SQL by the admin.
func TestGrantWorkspaceMembership(t *testing.T) {
	s := sharedServer(t)
	ctx := testCtx(t)
	admin := s.connect(t)
	mustExec(t, ctx, admin,
		"SELECT lakesoul.create_workspace('rbac_g')",
		"SELECT lakesoul.create_user('gina', 'gina-pw', 'rbac_g', admin => true)",
		"SELECT lakesoul.create_workspace('rbac_h')",
		"SELECT lakesoul.create_user('hank', 'hank-pw', 'rbac_h')")
	gina, err := pgx.Connect(ctx, s.dsn("gina", "gina-pw", database))
	if err != nil {
		t.Fatal(err)
	}
	defer gina.Close(ctx)
	mustExec(t, ctx, gina, "CREATE SCHEMA rbac_gs", "CREATE TABLE rbac_gs.t (x int)", "INSERT INTO rbac_gs.t VALUES (1)")
	hank, err := pgx.Connect(ctx, s.dsn("hank", "hank-pw", database))
	if err != nil {
		t.Fatal(err)
	}
	defer hank.Close(ctx)
	if _, err := hank.Exec(ctx, "SELECT * FROM rbac_gs.t"); pgCode(err) != "42P01" {
		t.Fatalf("hank before the grant: %v", err)
	}
	if _, err := hank.Exec(ctx, "GRANT rbac_g_users TO hank"); pgCode(err) != "42501" {
		t.Fatalf("hank grants himself: %v, want 42501", err)
	}
	mustExec(t, ctx, admin, "GRANT rbac_g, rbac_g_users TO hank")
	wantRows(t, "hank after the grant", queryStrings(t, ctx, hank, "SELECT x FROM rbac_gs.t"), []string{"1"})
	mustExec(t, ctx, admin, "REVOKE rbac_g, rbac_g_users FROM hank")
	if _, err := hank.Exec(ctx, "SELECT * FROM rbac_gs.t"); pgCode(err) != "42P01" {
		t.Fatalf("hank after the revoke: %v", err)
	}
	if _, err := admin.Exec(ctx, "GRANT base_super_admin_role TO hank"); pgCode(err) != "42501" {
		t.Fatalf("granting a base role: %v, want 42501", err)
	}
}

// TestGrantUsersRoleAddsAMember: GRANT <ws>_users TO carol — the README's
// way to add a member, without granting <ws> itself — makes the workspace
// carol's: she sees its schema and tables, reads and writes them, uses its
// sequences and receives its commit notices. REVOKE takes it all back.
func TestGrantUsersRoleAddsAMember(t *testing.T) {
	s := sharedServer(t)
	ctx := testCtx(t)
	admin := s.connect(t)
	mustExec(t, ctx, admin,
		"SELECT lakesoul.create_workspace('gu_b')",
		"SELECT lakesoul.create_user('gu_dora', 'dora-pw', 'gu_b', admin => true)",
		"SELECT lakesoul.create_workspace('gu_c')",
		"SELECT lakesoul.create_user('gu_carol', 'carol-pw', 'gu_c')")
	dora := s.login(t, ctx, "gu_dora", "dora-pw")
	mustExec(t, ctx, dora, "CREATE SCHEMA gu_bs", "CREATE TABLE gu_bs.t (id bigint PRIMARY KEY, v text)",
		"INSERT INTO gu_bs.t VALUES (1, 'dora')", "CREATE SEQUENCE gu_bs.seq")
	carol := s.login(t, ctx, "gu_carol", "carol-pw")
	outside := func(when string) {
		t.Helper()
		for q, code := range map[string]string{
			"SELECT v FROM gu_bs.t":                "42P01",
			"INSERT INTO gu_bs.t VALUES (9, 'no')": "42P01",
			"SELECT nextval('gu_bs.seq')":          "42P01",
			"CREATE TABLE gu_bs.mine (x int)":      "3F000",
		} {
			if _, err := carol.Exec(ctx, q); pgCode(err) != code {
				t.Errorf("carol %s: %s: %v, want %s", when, q, err, code)
			}
		}
		wantRows(t, "carol's lakesoul.tables "+when, queryStrings(t, ctx, carol,
			"SELECT count(*) FROM lakesoul.tables WHERE table_schema = 'gu_bs'"), []string{"0"})
	}
	outside("before the grant")

	mustExec(t, ctx, admin, "GRANT gu_b_users TO gu_carol")
	wantRows(t, "carol's lakesoul.tables", queryStrings(t, ctx, carol,
		"SELECT table_name FROM lakesoul.tables WHERE table_schema = 'gu_bs'"), []string{"t"})
	wantRows(t, "carol's pg_namespace", queryStrings(t, ctx, carol,
		"SELECT count(*) FROM pg_catalog.pg_namespace WHERE nspname = 'gu_bs'"), []string{"1"})
	mustExec(t, ctx, carol, "INSERT INTO gu_bs.t VALUES (2, 'carol')", "UPDATE gu_bs.t SET v = 'dora!' WHERE id = 1",
		"CREATE TABLE gu_bs.carols (x int)", "SELECT nextval('gu_bs.seq')")
	wantRows(t, "carol reads", queryStrings(t, ctx, carol, "SELECT id, v FROM gu_bs.t ORDER BY id"), []string{"1|dora!", "2|carol"})
	mustExec(t, ctx, carol, "LISTEN lakesoul_commits")
	mustExec(t, ctx, dora, "INSERT INTO gu_bs.t VALUES (3, 'notice')")
	if _, _, ok := nextCommit(t, ctx, carol, "gu_bs.t", 30*time.Second); !ok {
		t.Error("carol got no commit notice of her workspace's table")
	}
	mustExec(t, ctx, carol, "UNLISTEN *", "DROP TABLE gu_bs.carols")

	mustExec(t, ctx, admin, "REVOKE gu_b_users FROM gu_carol")
	outside("after the revoke")
	wantRows(t, "dora's rows", queryStrings(t, ctx, dora, "SELECT id, v FROM gu_bs.t ORDER BY id"),
		[]string{"1|dora!", "2|carol", "3|notice"})
}

// User SQL that reaches the catalog runs with the user's own rights: role
// switches, superuser functions, administration calls in disguise and the
// server's internal functions are refused by PostgreSQL itself.
func TestCatalogFunctionsAreGuarded(t *testing.T) {
	s := sharedServer(t)
	ctx := testCtx(t)
	admin := s.connect(t)
	mustExec(t, ctx, admin,
		"SELECT lakesoul.create_workspace('rbac_e')",
		"SELECT lakesoul.create_user('eve', 'eve-pw', 'rbac_e')")
	eve, err := pgx.Connect(ctx, s.dsn("eve", "eve-pw", database))
	if err != nil {
		t.Fatal(err)
	}
	defer eve.Close(ctx)
	for q, code := range map[string]string{
		"SELECT set_config('role', 'lakesoul', true), current_user": "42501",
		// An administration function may only be called on its own.
		"SELECT k.* FROM (SELECT set_config('role','lakesoul',true) AS r OFFSET 0) s, LATERAL (SELECT * FROM lakesoul.create_access_key() WHERE s.r IS NOT NULL) k": "0A000",
		"SELECT pg_catalog.set_config('session_authorization', 'lakesoul', true)":                                                                                   "42501",
		"SELECT pg_read_file('/etc/passwd')": "42501",
		// Internal functions: user queries run in read-only transactions.
		"SELECT lakesoul.drop_table_by_id('x')": "25006",
	} {
		if _, err := eve.Exec(ctx, q); pgCode(err) != code {
			t.Errorf("eve: %s: %v, want %s", q, err, code)
		}
	}
	wantRows(t, "eve is still eve", queryStrings(t, ctx, eve, "SELECT current_user"), []string{"eve"})
}

// lakesoul.tables lists what the user may see, no more.
func TestLakesoulTablesFollowsWorkspaces(t *testing.T) {
	s := sharedServer(t)
	ctx := testCtx(t)
	admin := s.connect(t)
	mustExec(t, ctx, admin,
		"SELECT lakesoul.create_workspace('rbac_t1')",
		"SELECT lakesoul.create_workspace('rbac_t2')",
		"SELECT lakesoul.create_user('tina', 'tina-pw', 'rbac_t1', admin => true)",
		"SELECT lakesoul.create_user('tom', 'tom-pw', 'rbac_t2', admin => true)")
	tina, err := pgx.Connect(ctx, s.dsn("tina", "tina-pw", database))
	if err != nil {
		t.Fatal(err)
	}
	defer tina.Close(ctx)
	mustExec(t, ctx, tina, "CREATE SCHEMA rbac_ts", "CREATE TABLE rbac_ts.secret (x int)")
	tom, err := pgx.Connect(ctx, s.dsn("tom", "tom-pw", database))
	if err != nil {
		t.Fatal(err)
	}
	defer tom.Close(ctx)
	wantRows(t, "tina's list", queryStrings(t, ctx, tina,
		"SELECT table_name FROM lakesoul.tables WHERE table_schema = 'rbac_ts'"), []string{"secret"})
	wantRows(t, "tom's list", queryStrings(t, ctx, tom,
		"SELECT count(*) FROM lakesoul.tables WHERE table_schema = 'rbac_ts'"), []string{"0"})
}

// SQL injection through identifiers, options and administration arguments
// is inert: names are data, never SQL.
func TestInjectionIsInert(t *testing.T) {
	s := sharedServer(t)
	ctx := testCtx(t)
	admin := s.connect(t)
	for q, code := range map[string]string{
		`SELECT lakesoul.create_workspace('x''; DROP TABLE namespace; --')`:           "22023",
		`SELECT lakesoul.create_user('bob"; DROP ROLE lakesoul; --', 'pw', 'rbac_a')`: "22023",
		`SELECT lakesoul.create_user('mallory', 'pw', 'nope''; --')`:                  "42704",
	} {
		if _, err := admin.Exec(ctx, q); pgCode(err) != code {
			t.Errorf("%s: %v, want %s", q, err, code)
		}
	}
	mustExec(t, ctx, admin,
		`CREATE SCHEMA "inj'; DROP SCHEMA x; --"`,
		`CREATE TABLE "inj'; DROP SCHEMA x; --"."t""; DROP TABLE table_info; --" ("c'ol" int PRIMARY KEY, "v""x" text) WITH (merge_op."v""x" = 'UseLastNotNull', note = 'it''s; DROP TABLE x')`,
		`INSERT INTO "inj'; DROP SCHEMA x; --"."t""; DROP TABLE table_info; --" VALUES (1, 'a''b')`)
	wantRows(t, "weird names round-trip", queryStrings(t, ctx, admin,
		`SELECT "c'ol", "v""x" FROM "inj'; DROP SCHEMA x; --"."t""; DROP TABLE table_info; --"`), []string{"1|a'b"})
	cat := s.catalogConn(t)
	wantRows(t, "catalog intact", queryStrings(t, ctx, cat,
		"SELECT count(*) > 0 FROM table_info WHERE table_name = 't\"; DROP TABLE table_info; --'"), []string{"true"})
	wantRows(t, "options stored as data", queryStrings(t, ctx, cat,
		"SELECT properties->>'note' FROM table_info WHERE table_name = 't\"; DROP TABLE table_info; --'"), []string{"it's; DROP TABLE x"})
}
