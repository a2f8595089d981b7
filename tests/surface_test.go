package tests

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestCopyDefaultsAndChecks: COPY (pgx's binary CopyFrom and text COPY)
// fills the columns it leaves out with their defaults — a bigserial key
// numbered by its sequence, a constant — and a row breaking a CHECK
// constraint fails the whole COPY with 23514, nothing of it visible.
func TestCopyDefaultsAndChecks(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := srv.connect(t)
	mustExec(t, ctx, c, "CREATE SCHEMA surf_copy",
		"CREATE TABLE surf_copy.t (id bigserial PRIMARY KEY, name text NOT NULL, qty int DEFAULT 4 CHECK (qty > 0))")
	n, err := c.CopyFrom(ctx, pgx.Identifier{"surf_copy", "t"}, []string{"name"}, pgx.CopyFromRows([][]any{{"a"}, {"b"}}))
	if err != nil || n != 2 {
		t.Fatalf("CopyFrom: %d, %v", n, err)
	}
	_, err = c.CopyFrom(ctx, pgx.Identifier{"surf_copy", "t"}, []string{"name", "qty"}, pgx.CopyFromRows([][]any{{"c", int32(1)}, {"d", int32(0)}}))
	if pgCode(err) != "23514" {
		t.Fatalf("binary COPY breaking a CHECK: %v, want 23514", err)
	}
	_, err = c.PgConn().CopyFrom(ctx, strings.NewReader("e\t2\nf\t-1\n"), "COPY surf_copy.t (name, qty) FROM STDIN")
	if pgCode(err) != "23514" {
		t.Fatalf("text COPY breaking a CHECK: %v, want 23514", err)
	}
	if _, err := c.PgConn().CopyFrom(ctx, strings.NewReader("g\t7\n"), "COPY surf_copy.t (name, qty) FROM STDIN"); err != nil {
		t.Fatal(err)
	}
	rows, err := c.Query(ctx, "SELECT id, name, qty FROM surf_copy.t ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var id int64
		var name string
		var qty int32
		err := r.Scan(&id, &name, &qty)
		return fmt.Sprintf("%s:%d:%d", name, id, qty), err
	})
	if err != nil {
		t.Fatal(err)
	}
	// The failed COPYs wrote nothing (they consumed sequence values, as
	// PostgreSQL's do).
	if len(got) != 3 || got[0] != "a:1:4" || got[1] != "b:2:4" || !strings.HasPrefix(got[2], "g:") || !strings.HasSuffix(got[2], ":7") {
		t.Fatalf("rows %v", got)
	}
}

// TestViewsAndSequencesFollowWorkspaces: a view and a sequence of one
// workspace's namespace do not exist for another workspace's user (42P01,
// absent from pg_views), who can neither read through the view, advance or
// set the sequence, nor drop either; the owner's workspace uses both.
func TestViewsAndSequencesFollowWorkspaces(t *testing.T) {
	t.Parallel()
	s := sharedServer(t)
	ctx := testCtx(t)
	admin := s.connect(t)
	mustExec(t, ctx, admin,
		"SELECT lakesoul.create_workspace('surf_w1')",
		"SELECT lakesoul.create_workspace('surf_w2')",
		"SELECT lakesoul.create_user('surf_ann', 'ann-pw', 'surf_w1', admin => true)",
		"SELECT lakesoul.create_user('surf_ben', 'ben-pw', 'surf_w2', admin => true)")
	ann, err := pgx.Connect(ctx, s.dsn("surf_ann", "ann-pw", database))
	if err != nil {
		t.Fatal(err)
	}
	defer ann.Close(ctx)
	mustExec(t, ctx, ann, "CREATE SCHEMA surf_ws", "CREATE TABLE surf_ws.t (id serial PRIMARY KEY, v text)",
		"INSERT INTO surf_ws.t (v) VALUES ('secret')", "CREATE VIEW surf_ws.v AS SELECT id, v FROM surf_ws.t",
		"CREATE SEQUENCE surf_ws.q")
	wantRows(t, "ann's view", queryStrings(t, ctx, ann, "SELECT v FROM surf_ws.v"), []string{"secret"})
	wantRows(t, "ann's sequence", queryStrings(t, ctx, ann, "SELECT nextval('surf_ws.q')"), []string{"1"})
	ben, err := pgx.Connect(ctx, s.dsn("surf_ben", "ben-pw", database))
	if err != nil {
		t.Fatal(err)
	}
	defer ben.Close(ctx)
	for _, q := range []string{"SELECT * FROM surf_ws.v", "SELECT nextval('surf_ws.q')", "SELECT setval('surf_ws.q', 100)",
		"SELECT nextval('surf_ws.t_id_seq')", "DROP VIEW surf_ws.v", "DROP SEQUENCE surf_ws.q"} {
		if _, err := ben.Exec(ctx, q); pgCode(err) != "42P01" {
			t.Errorf("ben: %s: %v, want 42P01", q, err)
		}
	}
	wantRows(t, "ben's pg_views", queryStrings(t, ctx, ben, "SELECT count(*) FROM pg_views WHERE schemaname = 'surf_ws'"), []string{"0"})
	wantRows(t, "ann's pg_views", queryStrings(t, ctx, ann, "SELECT viewname FROM pg_views WHERE schemaname = 'surf_ws'"), []string{"v"})
	wantRows(t, "sequence untouched", queryStrings(t, ctx, ann, "SELECT nextval('surf_ws.q')"), []string{"2"})
	// The catalog's own check: ben's login cannot use the sequence object
	// directly either (PostgreSQL's grant, not only the registry's RLS).
	cat := s.catalogConn(t)
	var obj string
	if err := cat.QueryRow(ctx, "SELECT 'lakesoul_seq.s' || id FROM lakesoul.sequence WHERE namespace = 'surf_ws' AND name = 'q'").Scan(&obj); err != nil {
		t.Fatal(err)
	}
	var allowed bool
	if err := cat.QueryRow(ctx, "SELECT has_sequence_privilege('surf_ben', $1, 'USAGE')", obj).Scan(&allowed); err != nil || allowed {
		t.Fatalf("surf_ben USAGE on %s: %v, %v", obj, allowed, err)
	}
	if err := cat.QueryRow(ctx, "SELECT has_sequence_privilege('surf_ann', $1, 'USAGE')", obj).Scan(&allowed); err != nil || !allowed {
		t.Fatalf("surf_ann USAGE on %s: %v, %v", obj, allowed, err)
	}
}
