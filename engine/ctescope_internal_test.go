package engine

import (
	"sort"
	"strings"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// TestCTEScoping: which relation references are CTEs follows PostgreSQL's
// scoping; everything else is a table the engine must bind.
func TestCTEScoping(t *testing.T) {
	for _, tc := range []struct {
		sql string
		// ctes lists "name->definition#" for each CTE reference, tables the
		// other unqualified names, both sorted.
		ctes, tables string
	}{
		{"WITH x AS (SELECT 1) SELECT * FROM x", "x->1", ""},
		{`SELECT * FROM "g", (WITH "g" AS (SELECT 1) SELECT * FROM "g") s`, "g->1", "g"},
		{"WITH a AS (SELECT * FROM b), b AS (SELECT 2) SELECT * FROM a, b", "a->9 b->2", "b"},
		{"WITH RECURSIVE a AS (SELECT * FROM b), b AS (SELECT 2) SELECT * FROM a", "a->9 b->2", ""},
		{"WITH x AS (SELECT 1) SELECT * FROM (WITH x AS (SELECT 2) SELECT * FROM x) s, x", "x->1 x->2", ""},
		// (the INSERT target is no Node, so the test's walk does not list it)
		{"WITH x AS (SELECT 1) INSERT INTO x SELECT * FROM x", "x->1", ""},
		{"WITH x AS (SELECT 1) SELECT * FROM s.x, x", "x->1", ""},
		{"SELECT * FROM t WHERE id IN (WITH t AS (SELECT 1) SELECT * FROM t)", "t->1", "t"},
		{"WITH x AS (SELECT 1) SELECT * FROM t UNION SELECT * FROM x", "x->1", "t"},
		{"(WITH x AS (SELECT 1) SELECT * FROM x) UNION SELECT * FROM x", "x->1", "x"},
	} {
		tree, err := pg_query.Parse(tc.sql)
		if err != nil {
			t.Fatal(err)
		}
		stmt := tree.Stmts[0].Stmt
		// A definition is known by the constant it selects (SELECT 1 is #1).
		defs := map[*pg_query.CommonTableExpr]int{}
		walk(stmt, func(n *pg_query.Node) {
			if c := n.GetCommonTableExpr(); c != nil {
				defs[c] = 9
				if v := c.GetCtequery().GetSelectStmt().GetTargetList(); len(v) == 1 {
					if k := v[0].GetResTarget().GetVal().GetAConst().GetIval(); k != nil {
						defs[c] = int(k.Ival)
					}
				}
			}
		})
		refs := cteRefs(stmt)
		var ctes, tables []string
		walk(stmt, func(n *pg_query.Node) {
			rv := n.GetRangeVar()
			if rv == nil || rv.Schemaname != "" {
				return
			}
			if c := refs[rv]; c != nil {
				ctes = append(ctes, rv.Relname+"->"+string(rune('0'+defs[c])))
			} else {
				tables = append(tables, rv.Relname)
			}
		})
		sort.Strings(tables)
		sort.Strings(ctes)
		if got := strings.Join(ctes, " "); got != tc.ctes {
			t.Errorf("%s: CTE references %q, want %q", tc.sql, got, tc.ctes)
		}
		if got := strings.Join(tables, " "); got != tc.tables {
			t.Errorf("%s: tables %q, want %q", tc.sql, got, tc.tables)
		}
		// After renaming, no reference carries a name the query wrote.
		renameCTEs(stmt, refs)
		for rv := range refs {
			if !strings.HasPrefix(rv.Relname, "lakesoul_cte_") || rv.Alias == nil {
				t.Errorf("%s: reference left as %q", tc.sql, rv.Relname)
			}
		}
	}
}
