package engine

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Types of VALUES columns and set-operation branches.
//
// PostgreSQL gives each VALUES column, and each column of UNION, INTERSECT
// and EXCEPT, one type from the values' own types (select_common_type):
// untyped string literals take the type the others have ('2' beside 1 is
// the integer 2, 'x' is 22P02), and types of different categories are an
// error (42804 "VALUES types integer and boolean cannot be matched").
// DuckDB resolves them its own way (a string literal beside an integer in a
// UNION makes the column VARCHAR; true beside 1 becomes 1; integer and text
// are its "Not implemented Error"). So inferTypes notes, where the
// values' types are known, the literals to cast (typeInfo.coerce) and the
// first mismatch (typeInfo.mismatch); rewritePGSemantics fails with the
// mismatch and casts the literals (setTypes) before DuckDB sees the
// statement. typeCategory (pgsemantics.go) has the categories; types
// outside them are left to DuckDB.

// resolveColumn applies the rule to one column whose values (in order)
// are items with types ts, in context ("VALUES", "UNION", …): a mismatch
// is noted, and when the column has a known type the string literals
// among items are noted to take it. An item may be nil (a value that is
// not a node of its own, such as a branch's column that is no literal).
func (ti *typeInfo) resolveColumn(context string, items []*pg_query.Node, ts []pgType) {
	var first pgType
	for _, t := range ts {
		if t.literal || !t.known() {
			continue
		}
		if !first.known() {
			first = t
			continue
		}
		a, b := typeCategory(first), typeCategory(t)
		switch {
		case a != "" && b != "" && a != b:
			if ti.mismatch == nil {
				ti.mismatch = sqlerr.New(sqlerr.DatatypeMismatch, "%s types %s and %s cannot be matched",
					context, typeDisplayName(first), typeDisplayName(t))
			}
		case a != "" && a == b:
			first = commonType([]pgType{first, t}) // as resolved so far: integer and numeric are numeric
		}
	}
	common := commonType(ts)
	if common.literal || typeCategory(common) == "" {
		return
	}
	for i, it := range items {
		if it != nil && ts[i].literal && it.GetAConst().GetSval() != nil {
			if ti.coerce == nil {
				ti.coerce = map[*pg_query.Node]pgType{}
			}
			ti.coerce[it] = common
		}
	}
}

// branchItem is column i of a set operation's branch when it is a node of
// its own that may be a literal: a target of a plain SELECT, or nil.
func branchItem(sel *pg_query.SelectStmt, i int) *pg_query.Node {
	if sel == nil || sel.Op != pg_query.SetOperation_SETOP_NONE || len(sel.ValuesLists) > 0 || i >= len(sel.TargetList) {
		return nil
	}
	return sel.TargetList[i].GetResTarget().GetVal()
}

// setOpName is the keyword of a set operation, as PostgreSQL's messages
// name it.
func setOpName(op pg_query.SetOperation) string {
	return strings.TrimPrefix(op.String(), "SETOP_")
}

// setTypes casts the string literals inferTypes noted to their column's
// type, as comparisons' literals are (coerceLiteral: malformed text is
// PostgreSQL's 22P02).
func (rw *pgRewriter) setTypes() error {
	for n, t := range rw.ti.coerce {
		if err := rw.coerceLiteral(n, t); err != nil {
			return err
		}
	}
	return nil
}
