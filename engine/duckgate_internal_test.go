package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// The engine's own DuckDB functions are listed from DuckDB, without
// DuckDB's built-ins or the scan function (which the gate admits only
// with the session's handles).
func TestEngineFunctionsListed(t *testing.T) {
	s, _ := newInternalSession(t)
	f := s.e.engineFuncs
	for _, name := range []string{"l2_distance", "lakesoul_json_field", "lakesoul_divisor"} {
		if !f[name] {
			t.Errorf("%s is not listed as an engine function", name)
		}
	}
	for _, name := range []string{scanFunctionName, "read_parquet", "glob", "current_setting", "lower", "sum"} {
		if f[name] {
			t.Errorf("%s is listed as an engine function", name)
		}
	}
}

// TestEngineFunctionsAreNotTheClients: every function the engine created in
// DuckDB for its rewrites, written by a client at a clause of a query over a
// lake table or of one without, is PostgreSQL's 42883 — not a value, not
// DuckDB's binder error — while a query whose rewrite calls them runs. lakesoul_scan in FROM of a statement without lake
// tables is 42883 too (it was a nil dereference while typing).
func TestEngineFunctionsAreNotTheClients(t *testing.T) {
	ctx := context.Background()
	s, exec := newInternalSession(t)
	exec("CREATE TABLE gate_t (id int PRIMARY KEY, v text)")
	exec(`INSERT INTO gate_t VALUES (1, '{"a": 1}')`)
	run := func(q string) error {
		t.Helper()
		stmts, err := s.Parse(ctx, q, nil)
		if err != nil {
			return err
		}
		for _, st := range stmts {
			p, err := st.Bind(ctx, nil)
			if err != nil {
				return err
			}
			_, _, err = p.Execute(ctx, 0, discard{})
			p.Close()
			if err != nil {
				return err
			}
		}
		return nil
	}
	n := 0
	for name := range s.e.engineFuncs {
		if !strings.HasPrefix(name, internalFuncPrefix) {
			continue // PostgreSQL's or pgvector's name: callable (TestDifferential, vector tests)
		}
		n++
		for _, q := range []string{
			"SELECT " + name + "(v) FROM gate_t",
			"SELECT id FROM gate_t WHERE " + name + "(v, v) IS NOT NULL",
			"SELECT id FROM gate_t ORDER BY pg_catalog." + name + "(v)",
			"SELECT " + name + "('1', '2')",
			"INSERT INTO gate_t VALUES (2, " + name + "('x'))",
		} {
			if err := run(q); sqlerr.Code(err) != sqlerr.UndefinedFunction {
				t.Errorf("%s: %v, want 42883", q, err)
			}
		}
	}
	if n == 0 {
		t.Fatal("the engine registered no functions of its own")
	}
	if err := run("SELECT * FROM lakesoul_scan('x')"); sqlerr.Code(err) != sqlerr.UndefinedFunction {
		t.Errorf("lakesoul_scan without lake tables: %v, want 42883", err)
	}
	if err := run("SELECT repeat(v, 2), count(*) OVER () FROM gate_t WHERE v::jsonb = '{\"a\":1}'::jsonb"); err != nil {
		t.Errorf("a query whose rewrite calls the engine's functions: %v", err)
	}
}
