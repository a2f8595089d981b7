package tests

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestRenamePreparedPgx: pgx caches prepared statements. One prepared
// before a column rename fails once with 0A000 "cached plan must not
// change result type" (PostgreSQL's answer), after which pgx prepares it
// again and reads the new column names; one naming a renamed table fails
// with 42P01, as PostgreSQL's re-analysis of the statement does.
func TestRenamePreparedPgx(t *testing.T) {
	t.Parallel()
	s := sharedServer(t)
	ctx := testCtx(t)
	c := s.connect(t)
	mustExec(t, ctx, c, "CREATE SCHEMA surf_rn",
		"CREATE TABLE surf_rn.t (id bigint PRIMARY KEY, v text)",
		"INSERT INTO surf_rn.t VALUES (1, 'a'), (2, 'b')")
	const q = "SELECT * FROM surf_rn.t WHERE id >= $1 ORDER BY id"
	wantRows(t, "before", queryStrings(t, ctx, c, q, 1), []string{"1|a", "2|b"})
	other := s.connect(t)
	mustExec(t, ctx, other, "ALTER TABLE surf_rn.t RENAME COLUMN v TO w")
	if _, err := tryQueryStrings(ctx, c, q, 1); pgCode(err) != "0A000" || !strings.Contains(err.Error(), "cached plan must not change result type") {
		t.Fatalf("prepared before the rename: %v, want 0A000 cached plan must not change result type", err)
	}
	rows, err := c.Query(ctx, q, 1)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, fd := range rows.FieldDescriptions() {
		names = append(names, fd.Name)
	}
	rows.Close()
	wantRows(t, "columns after the rename", names, []string{"id", "w"})
	wantRows(t, "after", queryStrings(t, ctx, c, q, 2), []string{"2|b"})

	mustExec(t, ctx, other, "ALTER TABLE surf_rn.t RENAME TO u")
	if _, err := tryQueryStrings(ctx, c, q, 1); pgCode(err) != "42P01" {
		t.Fatalf("prepared before the table rename: %v, want 42P01", err)
	}
	wantRows(t, "renamed table", queryStrings(t, ctx, c, "SELECT w FROM surf_rn.u WHERE id = $1", 2), []string{"b"})
}

// TestRenamePsql: psql's \d and \dt show the new names at once.
func TestRenamePsql(t *testing.T) {
	t.Parallel()
	p := &psqlClient{t: t, path: psqlPath(t), srv: sharedServer(t)}
	ctx := testCtx(t)
	p.exec(ctx, "CREATE SCHEMA surf_rnp", "CREATE TABLE surf_rnp.t (id int PRIMARY KEY, v text)",
		"ALTER TABLE surf_rnp.t RENAME COLUMN v TO label", "ALTER TABLE surf_rnp.t RENAME TO items")
	out := p.exec(ctx, `\d surf_rnp.items`)
	if !strings.Contains(out, "\nlabel|text|") || strings.Contains(out, "\nv|") {
		t.Fatalf(`\d after the renames: %q`, out)
	}
	if out := p.exec(ctx, `\dt surf_rnp.*`); !strings.Contains(out, "surf_rnp|items|table") || strings.Contains(out, "|t|") {
		t.Fatalf(`\dt after the rename: %q`, out)
	}
}

// TestRenameWorkspaces: a workspace's users rename its tables; another
// workspace's user does not see them, so cannot rename them (42P01), and
// a name taken in the namespace stays taken (42P07).
func TestRenameWorkspaces(t *testing.T) {
	t.Parallel()
	s := sharedServer(t)
	ctx := testCtx(t)
	admin := s.connect(t)
	mustExec(t, ctx, admin,
		"SELECT lakesoul.create_workspace('rn_wa')",
		"SELECT lakesoul.create_workspace('rn_wb')",
		"SELECT lakesoul.create_user('rn_alice', 'alice-pw', 'rn_wa', admin => true)",
		"SELECT lakesoul.create_user('rn_bob', 'bob-pw', 'rn_wa')",
		"SELECT lakesoul.create_user('rn_carol', 'carol-pw', 'rn_wb', admin => true)")
	login := func(user, pw string) *pgx.Conn { return s.login(t, ctx, user, pw) }
	alice, bob, carol := login("rn_alice", "alice-pw"), login("rn_bob", "bob-pw"), login("rn_carol", "carol-pw")
	mustExec(t, ctx, alice, "CREATE SCHEMA rn_sa", "CREATE TABLE rn_sa.t (id int PRIMARY KEY, v text)",
		"INSERT INTO rn_sa.t VALUES (1, 'x')", "CREATE TABLE rn_sa.other (id int)")
	mustExec(t, ctx, carol, "CREATE SCHEMA rn_sb")
	for _, q := range []string{"ALTER TABLE rn_sa.t RENAME TO mine", "ALTER TABLE rn_sa.t RENAME COLUMN v TO w"} {
		if _, err := carol.Exec(ctx, q); pgCode(err) != "42P01" {
			t.Errorf("carol: %s: %v, want 42P01", q, err)
		}
	}
	if _, err := bob.Exec(ctx, "ALTER TABLE rn_sa.t RENAME TO other"); pgCode(err) != "42P07" {
		t.Errorf("bob renames onto a taken name: %v, want 42P07", err)
	}
	mustExec(t, ctx, bob, "ALTER TABLE rn_sa.t RENAME TO t2", "ALTER TABLE rn_sa.t2 RENAME COLUMN v TO w")
	wantRows(t, "alice reads the renamed table", queryStrings(t, ctx, alice, "SELECT id, w FROM rn_sa.t2"), []string{"1|x"})
	// The old name is free again in the workspace; its table gets its own
	// directory.
	mustExec(t, ctx, alice, "CREATE TABLE rn_sa.t (id int PRIMARY KEY, v text)", "INSERT INTO rn_sa.t VALUES (2, 'y')")
	wantRows(t, "new table of the old name", queryStrings(t, ctx, bob, "SELECT id, v FROM rn_sa.t"), []string{"2|y"})
	wantRows(t, "renamed table untouched", queryStrings(t, ctx, bob, "SELECT id, w FROM rn_sa.t2"), []string{"1|x"})
	if _, err := carol.Exec(ctx, "SELECT * FROM rn_sa.t2"); pgCode(err) != "42P01" {
		t.Errorf("carol reads the renamed table: %v, want 42P01", err)
	}
}
