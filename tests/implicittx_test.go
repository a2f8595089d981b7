package tests

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// The statements of one simple Query are one implicit transaction, as in
// PostgreSQL (protocol, "Multiple Statements in a Simple Query"; issue 32,
// item 4). Every query below is sent as one Query message (pgconn.Exec).

// simpleQuery sends text as one Query message and returns its error; the
// ReadyForQuery status after it must be wantStatus.
func simpleQuery(t *testing.T, ctx context.Context, c *pgx.Conn, text string, wantStatus byte) error {
	t.Helper()
	_, err := c.PgConn().Exec(ctx, text).ReadAll()
	if got := c.PgConn().TxStatus(); got != wantStatus {
		t.Errorf("%s: ReadyForQuery %c, want %c", text, got, wantStatus)
	}
	return err
}

// ids are the ids of itx.t (or another table) in order.
func ids(t *testing.T, ctx context.Context, c *pgx.Conn, table string) string {
	t.Helper()
	return strings.Join(queryStrings(t, ctx, c, "SELECT id FROM "+table+" ORDER BY id"), ",")
}

// The example: a failing statement rolls back the string's writes
// and DDL; nothing is left half applied.
func TestImplicitTransactionRollsBackWritesAndDDL(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := srv.connect(t)
	mustExec(t, ctx, c, "CREATE SCHEMA itx", "CREATE TABLE itx.t (id int PRIMARY KEY, v text)")

	err := simpleQuery(t, ctx, c, "INSERT INTO itx.t VALUES (1,'a'); ALTER TABLE itx.t ADD COLUMN c int; SELECT 1/0;", 'I')
	if pgCode(err) != "22012" {
		t.Fatalf("the string: %v, want 22012", err)
	}
	if got := ids(t, ctx, c, "itx.t"); got != "" {
		t.Errorf("rows after the failed string: %q, want none", got)
	}
	if _, err := c.Exec(ctx, "SELECT c FROM itx.t"); pgCode(err) != "42703" {
		t.Errorf("column c after the failed string: %v, want 42703", err)
	}
	// A table the string created, its rows, a view and a schema: gone.
	err = simpleQuery(t, ctx, c, "CREATE SCHEMA itx2; CREATE TABLE itx.n (id int); INSERT INTO itx.n VALUES (1); "+
		"CREATE VIEW itx.nv AS SELECT * FROM itx.n; UPDATE itx.t SET v = 'x'; SELECT * FROM itx.missing", 'I')
	if pgCode(err) != "42P01" {
		t.Fatalf("second string: %v, want 42P01", err)
	}
	for _, q := range []string{"SELECT * FROM itx.n", "SELECT * FROM itx.nv"} {
		if _, err := c.Exec(ctx, q); pgCode(err) != "42P01" {
			t.Errorf("%s after the failed string: %v, want 42P01", q, err)
		}
	}
	if got := queryStrings(t, ctx, c, "SELECT count(*) FROM information_schema.schemata WHERE schema_name = 'itx2'"); got[0] != "0" {
		t.Errorf("schema itx2 exists after the failed string")
	}
	// The same string without the error keeps everything, and its later
	// statements see the earlier ones.
	if err := simpleQuery(t, ctx, c, "INSERT INTO itx.t VALUES (1,'a'); ALTER TABLE itx.t ADD COLUMN c int; "+
		"UPDATE itx.t SET c = 7; SELECT c FROM itx.t", 'I'); err != nil {
		t.Fatal(err)
	}
	wantRows(t, "committed string", queryStrings(t, ctx, c, "SELECT id, v, c FROM itx.t"), []string{"1|a|7"})
}

// BEGIN, COMMIT and ROLLBACK inside a string, as PostgreSQL defines them.
func TestImplicitTransactionWithTransactionControl(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	var notices []string
	pw, err := srv.adminPassword()
	if err != nil {
		t.Fatal(err)
	}
	c := connectAs(t, srv, adminRole, pw, "itx-control", &notices)
	mustExec(t, ctx, c, "CREATE SCHEMA itxc", "CREATE TABLE itxc.t (id int PRIMARY KEY)")

	// An explicit block inside the string commits; what follows COMMIT is
	// a new implicit transaction, which the error rolls back.
	err = simpleQuery(t, ctx, c, "BEGIN; INSERT INTO itxc.t VALUES (1); COMMIT; INSERT INTO itxc.t VALUES (2); SELECT 1/0", 'I')
	if pgCode(err) != "22012" {
		t.Fatalf("BEGIN … COMMIT; …: %v", err)
	}
	if got := ids(t, ctx, c, "itxc.t"); got != "1" {
		t.Errorf("after BEGIN … COMMIT; INSERT; error: %q, want 1", got)
	}
	// COMMIT in the middle of an implicit transaction commits what came
	// before it (with PostgreSQL's WARNING); the error after it rolls back
	// only the rest.
	notices = nil
	err = simpleQuery(t, ctx, c, "INSERT INTO itxc.t VALUES (3); COMMIT; INSERT INTO itxc.t VALUES (4); SELECT 1/0", 'I')
	if pgCode(err) != "22012" {
		t.Fatalf("…; COMMIT; …: %v", err)
	}
	if got := ids(t, ctx, c, "itxc.t"); got != "1,3" {
		t.Errorf("after INSERT; COMMIT; INSERT; error: %q, want 1,3", got)
	}
	if !slices.Contains(notices, "WARNING 25P01 there is no transaction in progress") {
		t.Errorf("COMMIT in an implicit transaction: notices %q", notices)
	}
	// ROLLBACK in the middle discards what came before it.
	if err := simpleQuery(t, ctx, c, "INSERT INTO itxc.t VALUES (5); ROLLBACK; INSERT INTO itxc.t VALUES (6)", 'I'); err != nil {
		t.Fatal(err)
	}
	if got := ids(t, ctx, c, "itxc.t"); got != "1,3,6" {
		t.Errorf("after INSERT; ROLLBACK; INSERT: %q, want 1,3,6", got)
	}
	// BEGIN makes the statements before it part of the block it opens,
	// which the end of the string leaves open ('T'); ROLLBACK undoes them.
	if err := simpleQuery(t, ctx, c, "INSERT INTO itxc.t VALUES (7); BEGIN; INSERT INTO itxc.t VALUES (8)", 'T'); err != nil {
		t.Fatal(err)
	}
	if got := ids(t, ctx, c, "itxc.t"); got != "1,3,6,7,8" {
		t.Errorf("inside the block: %q, want 1,3,6,7,8", got)
	}
	if err := simpleQuery(t, ctx, c, "ROLLBACK", 'I'); err != nil {
		t.Fatal(err)
	}
	if got := ids(t, ctx, c, "itxc.t"); got != "1,3,6" {
		t.Errorf("after ROLLBACK of a block begun mid-string: %q, want 1,3,6", got)
	}
	// An error inside an explicit block leaves it failed ('E'), not ended.
	if err := simpleQuery(t, ctx, c, "BEGIN; INSERT INTO itxc.t VALUES (9); SELECT 1/0; INSERT INTO itxc.t VALUES (10)", 'E'); pgCode(err) != "22012" {
		t.Fatalf("error in an explicit block: %v", err)
	}
	if err := simpleQuery(t, ctx, c, "SELECT 1", 'E'); pgCode(err) != "25P02" {
		t.Errorf("statement in the failed block: %v, want 25P02", err)
	}
	if err := simpleQuery(t, ctx, c, "ROLLBACK; INSERT INTO itxc.t VALUES (11)", 'I'); err != nil {
		t.Fatal(err)
	}
	if got := ids(t, ctx, c, "itxc.t"); got != "1,3,6,11" {
		t.Errorf("after the failed block: %q, want 1,3,6,11", got)
	}
	// A string inside an open block continues it.
	if err := simpleQuery(t, ctx, c, "BEGIN", 'T'); err != nil {
		t.Fatal(err)
	}
	if err := simpleQuery(t, ctx, c, "INSERT INTO itxc.t VALUES (12); INSERT INTO itxc.t VALUES (13)", 'T'); err != nil {
		t.Fatal(err)
	}
	if err := simpleQuery(t, ctx, c, "ROLLBACK", 'I'); err != nil {
		t.Fatal(err)
	}
	if got := ids(t, ctx, c, "itxc.t"); got != "1,3,6,11" {
		t.Errorf("after a string inside a rolled-back block: %q, want 1,3,6,11", got)
	}
	// SAVEPOINT needs an explicit block, as in PostgreSQL.
	if err := simpleQuery(t, ctx, c, "INSERT INTO itxc.t VALUES (14); SAVEPOINT a", 'I'); pgCode(err) != "25P01" {
		t.Errorf("SAVEPOINT in an implicit transaction: %v, want 25P01", err)
	}
	if got := ids(t, ctx, c, "itxc.t"); got != "1,3,6,11" {
		t.Errorf("after the refused SAVEPOINT: %q, want 1,3,6,11", got)
	}
}

// Statements that cannot run inside a transaction block fail with 25001 in
// a string of several statements (PostgreSQL's wording) and run alone.
func TestImplicitTransactionRefusesBlockOnlyStatements(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := srv.connect(t)
	mustExec(t, ctx, c, "CREATE SCHEMA itxr", "CREATE TABLE itxr.t (id int PRIMARY KEY)")
	for _, stmt := range []string{"VACUUM itxr.t", "CALL lakesoul.compact('itxr.t')", "DISCARD ALL"} {
		err := simpleQuery(t, ctx, c, "INSERT INTO itxr.t VALUES (1); "+stmt, 'I')
		if pgCode(err) != "25001" || !strings.Contains(err.Error(), "cannot run inside a transaction block") {
			t.Errorf("%s after another statement: %v, want 25001", stmt, err)
		}
		if err := simpleQuery(t, ctx, c, stmt+"; SELECT 1", 'I'); pgCode(err) != "25001" {
			t.Errorf("%s before another statement: %v, want 25001", stmt, err)
		}
		if got := ids(t, ctx, c, "itxr.t"); got != "" {
			t.Errorf("%s: the string's INSERT stayed: %q", stmt, got)
		}
		if err := simpleQuery(t, ctx, c, stmt, 'I'); err != nil {
			t.Errorf("%s alone: %v", stmt, err)
		}
	}
}

// SET inside an implicit transaction is undone by its rollback; SET LOCAL
// lasts until it ends; both are PostgreSQL's rules, reported to the client
// through ParameterStatus.
func TestImplicitTransactionSettings(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	var notices []string
	pw, err := srv.adminPassword()
	if err != nil {
		t.Fatal(err)
	}
	c := connectAs(t, srv, adminRole, pw, "itx-set", &notices)
	show := func(name string) string {
		t.Helper()
		return queryStrings(t, ctx, c, "SHOW "+name)[0]
	}
	tz := show("TimeZone")
	if err := simpleQuery(t, ctx, c, "SET TimeZone = 'Asia/Tokyo'; SET search_path = elsewhere; SELECT 1/0", 'I'); pgCode(err) != "22012" {
		t.Fatalf("SET; error: %v", err)
	}
	if got := show("TimeZone"); got != tz {
		t.Errorf("TimeZone after the rolled-back SET: %q, want %q", got, tz)
	}
	if got := c.PgConn().ParameterStatus("TimeZone"); got != tz {
		t.Errorf("TimeZone as reported to the client after the rollback: %q, want %q", got, tz)
	}
	if got := show("search_path"); got == "elsewhere" {
		t.Errorf("search_path after the rolled-back SET: %q", got)
	}
	// SET LOCAL holds inside the string (no WARNING: it is a block) and
	// ends with it; SET outlasts it.
	notices = nil
	res, err := c.PgConn().Exec(ctx, "SET LOCAL statement_timeout = '7s'; SET extra_float_digits = 2; SHOW statement_timeout").ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res[2].Rows[0][0]); got != "7s" {
		t.Errorf("SET LOCAL inside the string: SHOW says %q", got)
	}
	if got := show("statement_timeout"); got != "0" {
		t.Errorf("statement_timeout after the string: %q, want 0", got)
	}
	if got := show("extra_float_digits"); got != "2" {
		t.Errorf("extra_float_digits after the string: %q, want 2", got)
	}
	if len(notices) != 0 {
		t.Errorf("SET LOCAL in an implicit transaction warned: %q", notices)
	}
	// Alone, SET LOCAL has no effect and warns.
	mustExec(t, ctx, c, "SET LOCAL statement_timeout = '9s'")
	if got := show("statement_timeout"); got != "0" {
		t.Errorf("statement_timeout after a lone SET LOCAL: %q, want 0", got)
	}
	if !slices.Contains(notices, "WARNING 25P01 SET LOCAL can only be used in transaction blocks") {
		t.Errorf("lone SET LOCAL: notices %q", notices)
	}
	// Explicit blocks follow the same rules.
	mustExec(t, ctx, c, "BEGIN", "SET TimeZone = 'Asia/Tokyo'", "ROLLBACK")
	if got := show("TimeZone"); got != tz {
		t.Errorf("TimeZone after ROLLBACK: %q, want %q", got, tz)
	}
	mustExec(t, ctx, c, "BEGIN", "SET TimeZone = 'Asia/Tokyo'", "SET LOCAL TimeZone = 'Europe/Paris'", "COMMIT")
	if got := show("TimeZone"); got != "Asia/Tokyo" {
		t.Errorf("TimeZone after SET, SET LOCAL, COMMIT: %q, want Asia/Tokyo", got)
	}
}

// A single statement is not wrapped: it commits as it executes, and a
// statement that refuses blocks runs.
func TestSingleStatementQueryUnchanged(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := srv.connect(t)
	mustExec(t, ctx, c, "CREATE SCHEMA itxs", "CREATE TABLE itxs.t (id int PRIMARY KEY)")
	if err := simpleQuery(t, ctx, c, "INSERT INTO itxs.t VALUES (1)", 'I'); err != nil {
		t.Fatal(err)
	}
	if err := simpleQuery(t, ctx, c, "SELECT 1/0", 'I'); pgCode(err) != "22012" {
		t.Fatal(err)
	}
	if got := ids(t, ctx, c, "itxs.t"); got != "1" {
		t.Errorf("rows: %q, want 1", got)
	}
	if err := simpleQuery(t, ctx, c, "VACUUM itxs.t", 'I'); err != nil {
		t.Errorf("VACUUM alone: %v", err)
	}
}

// psql -c sends its text as one Query: a failing string changes nothing.
func TestImplicitTransactionPsql(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	p := &psqlClient{t: t, path: psqlPath(t), srv: srv}
	ctx := testCtx(t)
	c := srv.connect(t)
	mustExec(t, ctx, c, "CREATE SCHEMA itxp", "CREATE TABLE itxp.t (id int PRIMARY KEY)")
	_, stderr, err := p.run(ctx, nil, "INSERT INTO itxp.t VALUES (1); CREATE TABLE itxp.u (x int); SELECT 1/0")
	if err == nil || !strings.Contains(stderr, "division by zero") {
		t.Fatalf("psql: %v %s", err, stderr)
	}
	if got := ids(t, ctx, c, "itxp.t"); got != "" {
		t.Errorf("rows after psql's failed string: %q", got)
	}
	if _, err := c.Exec(ctx, "SELECT * FROM itxp.u"); pgCode(err) != "42P01" {
		t.Errorf("table of psql's failed string: %v, want 42P01", err)
	}
	if _, stderr, err := p.run(ctx, nil, "INSERT INTO itxp.t VALUES (1); INSERT INTO itxp.t VALUES (2)"); err != nil {
		t.Fatalf("psql: %v %s", err, stderr)
	}
	if got := ids(t, ctx, c, "itxp.t"); got != "1,2" {
		t.Errorf("rows after psql's string: %q, want 1,2", got)
	}
}
