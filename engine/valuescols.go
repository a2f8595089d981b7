package engine

import (
	"fmt"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// nameValuesRelations gives VALUES lists used as relations (a subquery in
// FROM, a CTE) PostgreSQL's column names, column1, column2, …, where the
// alias does not name them: DuckDB names them col0, col1, …, so a query
// reading v.column1 failed with DuckDB's binder error. An alias's own
// names stay (v(x) renames the first column only, as in PostgreSQL).
// A VALUES list that is the whole query is nameValuesColumns' (nolake.go).
func nameValuesRelations(stmt *pg_query.Node) {
	width := func(q *pg_query.Node) int {
		sel := q.GetSelectStmt()
		if sel == nil || sel.Op != pg_query.SetOperation_SETOP_NONE || len(sel.ValuesLists) == 0 {
			return 0
		}
		return len(sel.ValuesLists[0].GetList().GetItems())
	}
	named := func(names []*pg_query.Node, n int) []*pg_query.Node {
		for i := len(names); i < n; i++ {
			names = append(names, pg_query.MakeStrNode(fmt.Sprintf("column%d", i+1)))
		}
		return names
	}
	walk(stmt, func(n *pg_query.Node) {
		if n == nil {
			return
		}
		switch x := n.Node.(type) {
		case *pg_query.Node_RangeSubselect:
			if w := width(x.RangeSubselect.Subquery); w > 0 && x.RangeSubselect.Alias != nil {
				x.RangeSubselect.Alias.Colnames = named(x.RangeSubselect.Alias.Colnames, w)
			}
		case *pg_query.Node_CommonTableExpr:
			if w := width(x.CommonTableExpr.Ctequery); w > 0 {
				x.CommonTableExpr.Aliascolnames = named(x.CommonTableExpr.Aliascolnames, w)
			}
		}
	})
}
