package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// A query run again reuses its plan, and only while its tables resolve to
// what it was planned with: after ALTER TABLE, DROP and CREATE, a changed
// search_path or SET, it is planned again and reads the table as it is.
func TestPlanCacheNeverStale(t *testing.T) {
	ctx := context.Background()
	s, exec := newInternalSession(t)
	exec("CREATE SCHEMA a; CREATE SCHEMA b")
	exec("CREATE TABLE a.t (id bigint PRIMARY KEY, v text); INSERT INTO a.t VALUES (1, 'a1')")
	exec("CREATE TABLE b.t (id bigint PRIMARY KEY, v text); INSERT INTO b.t VALUES (1, 'b1')")
	plan := func(q string) *duckQuery {
		t.Helper()
		stmts, err := s.Parse(ctx, q, nil)
		if err != nil {
			t.Fatal(err)
		}
		switch st := stmts[0].(*trackedStmt).Statement.(type) {
		case *duckQuery:
			return st
		case *literalStmt:
			return st.q
		}
		return nil
	}
	rows := func(q string) string {
		t.Helper()
		stmts, err := s.Parse(ctx, q, nil)
		if err != nil {
			t.Fatal(err)
		}
		p, err := stmts[0].Bind(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		var out []string
		w := rowFunc(func(vals []any) error { out = append(out, fmt.Sprint(vals...)); return nil })
		if _, _, err := p.Execute(ctx, 0, w); err != nil {
			t.Fatal(err)
		}
		return strings.Join(out, ",")
	}
	const q = "SELECT * FROM a.t WHERE id = 1"
	first := plan(q)
	if first == nil || plan(q) != first {
		t.Fatal("a query run again was planned again")
	}
	if plan("SELECT * FROM a.t WHERE id = 2") != first {
		t.Fatal("a text that differs in a compared literal was planned again (literalplan.go)")
	}
	if plan("SELECT * FROM a.t WHERE id = 2 LIMIT 1") == first || plan("SELECT v FROM a.t WHERE id = 1") == first {
		t.Fatal("another text reused the plan")
	}
	exec("ALTER TABLE a.t ADD COLUMN w int")
	if got := rows(q); got != "1a1<nil>" {
		t.Fatalf("after ADD COLUMN: %q", got)
	}
	exec("DROP TABLE a.t; CREATE TABLE a.t (id bigint PRIMARY KEY, z text); INSERT INTO a.t VALUES (1, 'new')")
	if got := rows(q); got != "1new" {
		t.Fatalf("after DROP and CREATE: %q", got)
	}
	// Unqualified names follow the search path.
	exec("SET search_path = a")
	if got := rows("SELECT * FROM t WHERE id = 1"); got != "1new" {
		t.Fatalf("search_path a: %q", got)
	}
	exec("SET search_path = b")
	if got := rows("SELECT * FROM t WHERE id = 1"); got != "1b1" {
		t.Fatalf("search_path b: %q", got)
	}
}

type rowFunc func([]any) error

func (f rowFunc) WriteRow(v []any) error { return f(v) }
