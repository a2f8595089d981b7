package engine

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// parseStoredExpr parses text kept in the catalog as one PostgreSQL
// expression (a column DEFAULT, a CHECK condition). Invariant: the result
// is a single expression node; text that is anything more (a second target,
// a FROM, a second statement, a parenthesis closing early) is refused with
// 42601 naming what, so stored text can never widen the query it is placed
// in.
func parseStoredExpr(text, what string) (*pg_query.Node, error) {
	tree, err := parseSQL("SELECT " + text)
	if err != nil {
		return nil, sqlerr.Wrap(sqlerr.SyntaxError, err, what)
	}
	var sel *pg_query.SelectStmt
	if len(tree.Stmts) == 1 {
		sel = tree.Stmts[0].Stmt.GetSelectStmt()
	}
	if sel == nil || len(sel.TargetList) != 1 || len(sel.FromClause) > 0 || sel.WhereClause != nil ||
		len(sel.GroupClause) > 0 || sel.HavingClause != nil || len(sel.WindowClause) > 0 ||
		len(sel.SortClause) > 0 || sel.LimitCount != nil || sel.LimitOffset != nil ||
		sel.WithClause != nil || sel.IntoClause != nil || len(sel.DistinctClause) > 0 ||
		len(sel.LockingClause) > 0 || sel.Op != pg_query.SetOperation_SETOP_NONE {
		return nil, sqlerr.New(sqlerr.SyntaxError, "%s: %q is not one expression", what, text)
	}
	rt := sel.TargetList[0].GetResTarget()
	if rt == nil || rt.Name != "" || rt.Val == nil {
		return nil, sqlerr.New(sqlerr.SyntaxError, "%s: %q is not one expression", what, text)
	}
	return rt.Val, nil
}
