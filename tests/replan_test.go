package tests

import (
	"strings"
	"testing"
)

// TestPreparedReplanPgx: statements pgx prepared and cached, and ones
// prepared by hand (Parse, then Bind/Execute), bind against the catalog of
// the moment after another connection drops their table and creates it
// again, as PostgreSQL re-plans its cached plans: reads see the new table,
// writes land in it (they used to fail with 42P01 naming the dropped
// table's internal id, or to change the dropped table). A result that
// changed type is PostgreSQL's 0A000 "cached plan must not change result
// type".
func TestPreparedReplanPgx(t *testing.T) {
	t.Parallel()
	s := sharedServer(t)
	ctx := testCtx(t)
	c, other := s.connect(t), s.connect(t)
	mustExec(t, ctx, other, "CREATE SCHEMA surf_rp",
		"CREATE TABLE surf_rp.t (id bigint PRIMARY KEY, v text)", "INSERT INTO surf_rp.t VALUES (1, 'old')")
	const (
		sel = "SELECT v FROM surf_rp.t WHERE id = $1"
		ins = "INSERT INTO surf_rp.t VALUES ($1, $2)"
		upd = "UPDATE surf_rp.t SET v = $2 WHERE id = $1"
	)
	wantRows(t, "before", queryStrings(t, ctx, c, sel, 1), []string{"old"})
	mustExec(t, ctx, c, "SELECT 1") // pgx caches ins and upd below
	if _, err := c.Exec(ctx, ins, 2, "two"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, upd, 2, "deux"); err != nil {
		t.Fatal(err)
	}
	byHand := "SELECT id, v FROM surf_rp.t WHERE id >= $1 ORDER BY id"
	if _, err := c.PgConn().Prepare(ctx, "by_hand", byHand, nil); err != nil {
		t.Fatal(err)
	}

	recreate := func(v string) {
		mustExec(t, ctx, other, "DROP TABLE surf_rp.t",
			"CREATE TABLE surf_rp.t (id bigint PRIMARY KEY, v "+v+")", "INSERT INTO surf_rp.t VALUES (1, '1')")
	}
	recreate("text")
	wantRows(t, "cached SELECT after DROP and CREATE", queryStrings(t, ctx, c, sel, 1), []string{"1"})
	if _, err := c.Exec(ctx, ins, 2, "two"); err != nil {
		t.Fatalf("cached INSERT after DROP and CREATE: %v", err)
	}
	if _, err := c.Exec(ctx, upd, 1, "one"); err != nil {
		t.Fatalf("cached UPDATE after DROP and CREATE: %v", err)
	}
	wantRows(t, "the new table", queryStrings(t, ctx, other, "SELECT id, v FROM surf_rp.t ORDER BY id"), []string{"1|one", "2|two"})
	res := c.PgConn().ExecPrepared(ctx, "by_hand", [][]byte{[]byte("1")}, nil, nil).Read()
	if res.Err != nil {
		t.Fatalf("Bind/Execute by hand after DROP and CREATE: %v", res.Err)
	}
	var got []string
	for _, r := range res.Rows {
		got = append(got, string(r[0])+"|"+string(r[1]))
	}
	wantRows(t, "by hand", got, []string{"1|one", "2|two"})

	// v retyped: the statement prepared by hand would change its result.
	recreate("bigint")
	res = c.PgConn().ExecPrepared(ctx, "by_hand", [][]byte{[]byte("1")}, nil, nil).Read()
	if pgCode(res.Err) != "0A000" || !strings.Contains(res.Err.Error(), "cached plan must not change result type") {
		t.Fatalf("by hand after v retyped: %v, want 0A000 cached plan must not change result type", res.Err)
	}
	// pgx prepares again on that error and reads the new type.
	if _, err := tryQueryStrings(ctx, c, sel, 1); pgCode(err) != "0A000" {
		t.Fatalf("cached SELECT after v retyped: %v, want 0A000 once", err)
	}
	wantRows(t, "cached SELECT prepared again", queryStrings(t, ctx, c, sel, 1), []string{"1"})
}
