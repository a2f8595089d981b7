package engine

import (
	"context"
	"database/sql/driver"
	"testing"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// The engine's implementations answer as PostgreSQL's functions do (the
// results of PostgreSQL's documentation and edge cases), and size each
// result exactly before building it.
func TestBudgetFunctions(t *testing.T) {
	for _, c := range []struct {
		name string
		args []driver.Value
		want any
	}{
		{"repeat", []driver.Value{"Pg", int64(4)}, "PgPgPgPg"},
		{"repeat", []driver.Value{"x", int64(-1)}, ""},
		{"lpad", []driver.Value{"hi", int64(5), "xy"}, "xyxhi"},
		{"lpad", []driver.Value{"hello", int64(3), " "}, "hel"},
		{"lpad", []driver.Value{"hi", int64(5), ""}, "hi"},
		{"lpad", []driver.Value{"héllo", int64(7), "é"}, "ééhéllo"},
		{"lpad", []driver.Value{"hi", int64(-2), "x"}, ""},
		{"rpad", []driver.Value{"hi", int64(5), "xy"}, "hixyx"},
		{"rpad", []driver.Value{"hé", int64(4), "üa"}, "héüa"},
		{"||", []driver.Value{"ab", "cd"}, "abcd"},
		{"replace", []driver.Value{"abcdefabcdef", "cd", "XX"}, "abXXefabXXef"},
		{"replace", []driver.Value{"aaa", "aa", "b"}, "ba"},
		{"replace", []driver.Value{"abc", "", "x"}, "abc"},
		{"concat", []driver.Value{"abcde", nil, "22"}, "abcde22"},
		{"concat_ws", []driver.Value{",", "abcde", nil, "22"}, "abcde,22"},
		{"concat_ws", []driver.Value{nil, "a", "b"}, nil},
	} {
		f := budgetFunctions[c.name]
		got := f.build(c.args)
		if got != c.want {
			t.Errorf("%s%v = %q, want %q", c.name, c.args, got, c.want)
		}
		n, ok := f.size(c.args)
		if s, _ := got.(string); !ok || n != int64(len(s)) {
			t.Errorf("%s%v: size %d (%v), built %d bytes", c.name, c.args, n, ok, len(s))
		}
	}
	if _, ok := budgetFunctions["repeat"].size([]driver.Value{"ab", int64(1 << 62)}); ok {
		t.Error("repeat's size overflowed instead of refusing")
	}
}

// Over lake tables too, a value whose size an argument chooses is built
// within the value budget: beyond it the statement fails with 54000 before
// DuckDB holds the value.
func TestValueBudget(t *testing.T) {
	ctx := context.Background()
	s, exec := newInternalSession(t)
	exec("CREATE SCHEMA vb; CREATE TABLE vb.t (id int, v text); INSERT INTO vb.t VALUES (1, 'ab'), (2, 'cd')")
	for _, q := range []string{
		"SELECT length(repeat(v, 400000000)) FROM vb.t",
		"SELECT length(lpad(v, 1000000000, 'xy')) FROM vb.t",
	} {
		stmts, err := s.Parse(ctx, q, nil)
		if err == nil {
			p, berr := stmts[0].Bind(ctx, nil)
			if berr != nil {
				t.Fatal(berr)
			}
			_, _, err = p.Execute(ctx, 0, discard{})
			p.Close()
		}
		if sqlerr.Code(err) != sqlerr.ProgramLimitExceeded {
			t.Errorf("%s: %v, want 54000", q, err)
		}
	}
	stmts, err := s.Parse(ctx, "SELECT repeat(v, 3) || '!' FROM vb.t ORDER BY id", nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := stmts[0].Bind(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var rows []any
	if _, _, err := p.Execute(ctx, 0, rowFunc(func(v []any) error { rows = append(rows, v[0]); return nil })); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0] != "ababab!" || rows[1] != "cdcdcd!" {
		t.Errorf("rows %q", rows)
	}
}
