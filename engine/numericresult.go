package engine

import (
	"fmt"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
)

// Numeric results whose display scale PostgreSQL picks per value.
//
// A PostgreSQL numeric value carries its own display scale; DuckDB's
// DECIMAL has one scale per column and divides decimals, and averages
// them, as doubles. Where PostgreSQL's scale is the same for every value
// (a numeric(p,s) column, a literal, + - * % of those, sum, round(x, n))
// the engine's types know it (pgType.scale) and DuckDB's DECIMAL shows it.
// A division involving numeric, avg of integers or numeric, and + - * over
// those are numeric whose scale PostgreSQL chooses for each value
// (select_div_scale: at least 16 significant digits): the result columns
// of the statement's outermost query that are such expressions are
// computed as PostgreSQL's text of the value by the engine's functions
// lakesoul_numeric_add/sub/mul/div (package pgnumeric, exact and of
// unbounded precision), fed with the text of their operands (DuckDB's
// DECIMAL at the operand's known scale, integers, and sum / count for
// avg), and described as numeric (resultcols.go) — text in the text
// format, PostgreSQL's numeric with that display scale in binary, a string
// over Flight SQL (numeric without a typmod, arrowresult.go). ORDER BY
// naming such a column by its name or position sorts by the expression's
// value, not its text.
//
// Elsewhere (a WHERE, a subquery's column, the argument of another
// function) the value stays DuckDB's (a double for a division), and a
// result column over such a value whose text the engine cannot build
// (min/max, CASE or a subquery column of such a value) stays double
// precision.

// numericResults renders the outermost query's result columns of
// per-value numeric scale as PostgreSQL's text.
func (rw *pgRewriter) numericResults(stmt *pg_query.Node) {
	sel := stmt.GetSelectStmt()
	if sel == nil || sel.Op != pg_query.SetOperation_SETOP_NONE || len(sel.ValuesLists) > 0 ||
		len(sel.DistinctClause) > 0 && len(sel.SortClause) > 0 {
		// (DuckDB sorts a DISTINCT query only by its result columns.)
		return
	}
	values := map[int]*pg_query.Node{} // 1-based position → the value before rendering
	names := map[string]*pg_query.Node{}
	for i, t := range sel.TargetList {
		rt := t.GetResTarget()
		if rt == nil || rt.Val == nil || !rw.ti.typeAt(rt.Val).rowScale {
			continue
		}
		text, ok := rw.numericText(rt.Val)
		if !ok {
			continue
		}
		name := rt.Name
		if name == "" {
			name = outputName(rt.Val)
			rt.Name = name // the column keeps PostgreSQL's name for the expression
		}
		values[i+1] = proto.Clone(rt.Val).(*pg_query.Node)
		names[name] = values[i+1]
		rt.Val = text
	}
	for _, s := range sel.SortClause {
		sb := s.GetSortBy()
		if sb == nil {
			continue
		}
		if k, ok := intConst(sb.Node); ok && values[int(k)] != nil {
			sb.Node = proto.Clone(values[int(k)]).(*pg_query.Node)
		} else if cr := sb.Node.GetColumnRef(); cr != nil && len(cr.Fields) == 1 && cr.Fields[0].GetString_() != nil &&
			names[cr.Fields[0].GetString_().Sval] != nil {
			sb.Node = proto.Clone(names[cr.Fields[0].GetString_().Sval]).(*pg_query.Node)
		}
	}
}

// numericText is n, a numeric or integer expression, as PostgreSQL's text
// of its value with its display scale; false where that is not built.
func (rw *pgRewriter) numericText(n *pg_query.Node) (*pg_query.Node, bool) {
	t := rw.ti.typeAt(n)
	if t.isInteger() {
		return makeCast(n, "text"), true
	}
	if s, ok := t.scale(); ok {
		if s > 37 {
			return nil, false
		}
		return makeCast(makeCast(n, fmt.Sprintf("numeric(38,%d)", s)), "text"), true
	}
	if !t.rowScale {
		return nil, false
	}
	switch x := n.Node.(type) {
	case *pg_query.Node_AExpr:
		a := x.AExpr
		if a.Kind != pg_query.A_Expr_Kind_AEXPR_OP || a.Rexpr == nil {
			return nil, false
		}
		fn := map[string]string{"+": "lakesoul_numeric_add", "-": "lakesoul_numeric_sub", "*": "lakesoul_numeric_mul",
			"/": "lakesoul_numeric_div"}[operatorName(a)]
		if fn == "" {
			return nil, false
		}
		var l *pg_query.Node
		if a.Lexpr == nil { // -x is 0 - x: the scale of x
			if fn != "lakesoul_numeric_sub" {
				return nil, false
			}
			l = pg_query.MakeAConstStrNode("0", -1)
		} else {
			var ok bool
			if l, ok = rw.numericText(a.Lexpr); !ok {
				return nil, false
			}
		}
		r, ok := rw.numericText(a.Rexpr)
		if !ok {
			return nil, false
		}
		return makeCall(fn, l, r), true
	case *pg_query.Node_FuncCall:
		fc := x.FuncCall
		if funcName(fc) != "avg" || len(fc.Args) != 1 || fc.AggStar || fc.FuncVariadic {
			return nil, false
		}
		arg := rw.ti.typeAt(fc.Args[0])
		s, ok := operandScale(arg)
		if !ok || s > 37 {
			return nil, false
		}
		// avg(x) is sum(x) / count(x), PostgreSQL's numeric_avg and int8_avg.
		sum := proto.Clone(n).(*pg_query.Node)
		sum.GetFuncCall().Funcname = []*pg_query.Node{pg_query.MakeStrNode("sum")}
		count := proto.Clone(n).(*pg_query.Node)
		count.GetFuncCall().Funcname = []*pg_query.Node{pg_query.MakeStrNode("count")}
		return makeCall("lakesoul_numeric_div", makeCast(makeCast(sum, fmt.Sprintf("numeric(38,%d)", s)), "text"),
			makeCast(count, "text")), true
	}
	return nil, false
}
