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
