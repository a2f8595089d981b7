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
// A division involving numeric, avg and the variance and standard
// deviation aggregates of integers or numeric, and + - * over those are
// numeric whose scale PostgreSQL chooses for each value (select_div_scale:
// at least 16 significant digits): the result columns
// of the statement's outermost query that are such expressions are
// computed as PostgreSQL's text of the value by the engine's functions
// lakesoul_numeric_add/sub/mul/div (package pgnumeric, exact and of
// unbounded precision) and lakesoul_numeric_variance, fed with the text of
// their operands (DuckDB's DECIMAL at the operand's known scale, integers;
// sum / count for avg; count, sum and sum of squares for the variances,
// summed by DuckDB as DECIMAL(38, s): a sum beyond 38 digits fails with
// 22003 where PostgreSQL's numeric would go on), and described as numeric (resultcols.go) — text in the text
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
	case *pg_query.Node_CaseExpr:
		c := proto.Clone(n).(*pg_query.Node)
		ce := c.GetCaseExpr()
		orig := x.CaseExpr
		for i, w := range orig.Args {
			r, ok := rw.branchText(w.GetCaseWhen().Result)
			if !ok {
				return nil, false
			}
			ce.Args[i].GetCaseWhen().Result = r
		}
		if orig.Defresult != nil {
			r, ok := rw.branchText(orig.Defresult)
			if !ok {
				return nil, false
			}
			ce.Defresult = r
		}
		return c, true
	case *pg_query.Node_CoalesceExpr:
		var args []*pg_query.Node
		for _, a := range x.CoalesceExpr.Args {
			r, ok := rw.branchText(a)
			if !ok {
				return nil, false
			}
			args = append(args, r)
		}
		return coalesce(args...), true
	case *pg_query.Node_FuncCall:
		fc := x.FuncCall
		if len(fc.Args) != 1 || fc.AggStar || fc.FuncVariadic {
			return nil, false
		}
		name := funcName(fc)
		if arg := rw.ti.typeAt(fc.Args[0]); arg.rowScale && (name == "sum" || name == "avg") && !fc.AggDistinct {
			// The values' scales differ (CASE, COALESCE): a sum has the
			// largest of them.
			sum, ok := rw.mixedSumText(n, fc.Args[0])
			if !ok {
				return nil, false
			}
			if name == "sum" {
				return sum, true
			}
			return makeCall("lakesoul_numeric_div", sum, makeCast(renamedAggregate(n, "count"), "text")), true
		}
		s, ok := operandScale(rw.ti.typeAt(fc.Args[0]))
		if !ok {
			return nil, false
		}
		switch name {
		case "avg":
			if s > 37 {
				return nil, false
			}
			// avg(x) is sum(x) / count(x), PostgreSQL's numeric_avg and int8_avg.
			return makeCall("lakesoul_numeric_div", sumText(n, nil, s), makeCast(renamedAggregate(n, "count"), "text")), true
		case "stddev", "stddev_samp", "stddev_pop", "variance", "var_samp", "var_pop":
			if 2*s > 37 || fc.AggDistinct { // (the squares of distinct values are not distinct)
				return nil, false
			}
			// From count(x), sum(x) and sum(x·x), as numeric_stddev_internal.
			kind := map[string]string{"stddev": "stddev_samp", "variance": "var_samp"}[name]
			if kind == "" {
				kind = name
			}
			decimal := func() *pg_query.Node {
				return makeCast(proto.Clone(fc.Args[0]).(*pg_query.Node), fmt.Sprintf("numeric(38,%d)", s))
			}
			square := pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode("*")},
				decimal(), decimal(), -1)
			return makeCall("lakesoul_numeric_variance", sumText(n, nil, s), sumText(n, square, 2*s),
				renamedAggregate(n, "count"), pg_query.MakeAConstStrNode(kind, -1)), true
		}
	}
	return nil, false
}

// renamedAggregate is a copy of the aggregate call n (its arguments,
// DISTINCT, FILTER and window) calling name instead.
func renamedAggregate(n *pg_query.Node, name string) *pg_query.Node {
	c := proto.Clone(n).(*pg_query.Node)
	c.GetFuncCall().Funcname = []*pg_query.Node{pg_query.MakeStrNode(name)}
	return c
}

// sumText is PostgreSQL's text of sum(arg) for the aggregate call n (of
// arg, or of its own argument when arg is nil), whose values have display
// scale s.
func sumText(n, arg *pg_query.Node, s int) *pg_query.Node {
	sum := renamedAggregate(n, "sum")
	if arg != nil {
		sum.GetFuncCall().Args = []*pg_query.Node{arg}
	}
	return makeCast(makeCast(sum, fmt.Sprintf("numeric(38,%d)", s)), "text")
}

// branchText is numericText of a CASE or COALESCE branch; NULL stays NULL.
func (rw *pgRewriter) branchText(n *pg_query.Node) (*pg_query.Node, bool) {
	if c := n.GetAConst(); c != nil && c.Isnull {
		return n, true
	}
	return rw.numericText(n)
}

// mixedSumText is PostgreSQL's text of the aggregate n, a sum of arg
// (whose values' scales differ by row, as those of a CASE between a
// numeric and an integer): DuckDB's sum at the largest scale any value
// can have, shown at the largest scale of the values summed (max of their
// scales over the same rows).
func (rw *pgRewriter) mixedSumText(n, arg *pg_query.Node) (*pg_query.Node, bool) {
	scale, most, ok := rw.scaleOf(arg)
	if !ok || most > 37 {
		return nil, false
	}
	sum := renamedAggregate(n, "sum")
	sum.GetFuncCall().Args = []*pg_query.Node{makeCast(proto.Clone(arg).(*pg_query.Node), fmt.Sprintf("numeric(38,%d)", most))}
	largest := renamedAggregate(n, "max")
	largest.GetFuncCall().Args = []*pg_query.Node{scale}
	return makeCall("lakesoul_numeric_rescale", makeCast(makeCast(sum, fmt.Sprintf("numeric(38,%d)", most)), "text"),
		makeCast(largest, "int4")), true
}

// scaleOf is an expression of n's display scale in each row, and the
// largest it can be: a constant where the type knows it, the scale of the
// branch taken for CASE and COALESCE. false for other values (a
// division's scale has no bound), and where repeating a CASE's conditions
// could change their answer (volatile functions).
func (rw *pgRewriter) scaleOf(n *pg_query.Node) (*pg_query.Node, int, bool) {
	if c := n.GetAConst(); c != nil && c.Isnull {
		return n, 0, true
	}
	if s, ok := operandScale(rw.ti.typeAt(n)); ok {
		return pg_query.MakeAConstIntNode(int64(s), -1), s, true
	}
	switch x := n.Node.(type) {
	case *pg_query.Node_CaseExpr:
		if volatileCalls(n) {
			return nil, 0, false
		}
		c := proto.Clone(n).(*pg_query.Node)
		ce := c.GetCaseExpr()
		most := 0
		for i, w := range x.CaseExpr.Args {
			r, m, ok := rw.scaleOf(w.GetCaseWhen().Result)
			if !ok {
				return nil, 0, false
			}
			ce.Args[i].GetCaseWhen().Result, most = r, max(most, m)
		}
		if x.CaseExpr.Defresult != nil {
			r, m, ok := rw.scaleOf(x.CaseExpr.Defresult)
			if !ok {
				return nil, 0, false
			}
			ce.Defresult, most = r, max(most, m)
		}
		return c, most, true
	case *pg_query.Node_CoalesceExpr:
		// the scale of the first argument that is not NULL
		if volatileCalls(n) {
			return nil, 0, false
		}
		ce := &pg_query.CaseExpr{Location: -1}
		most := 0
		for _, a := range x.CoalesceExpr.Args {
			r, m, ok := rw.scaleOf(a)
			if !ok {
				return nil, 0, false
			}
			test := &pg_query.Node{Node: &pg_query.Node_NullTest{NullTest: &pg_query.NullTest{
				Arg: proto.Clone(a).(*pg_query.Node), Nulltesttype: pg_query.NullTestType_IS_NOT_NULL, Location: -1}}}
			ce.Args = append(ce.Args, &pg_query.Node{Node: &pg_query.Node_CaseWhen{CaseWhen: &pg_query.CaseWhen{
				Expr: test, Result: r, Location: -1}}})
			most = max(most, m)
		}
		return &pg_query.Node{Node: &pg_query.Node_CaseExpr{CaseExpr: ce}}, most, true
	}
	return nil, 0, false
}

// volatileFunctions are DuckDB's functions that answer differently each
// time they are called; the engine's own are marked volatile
// (duckScalar.volatile).
var volatileFunctions = setOf("random", "setseed", "gen_random_uuid", "uuid", "clock_timestamp", "timeofday")

// volatileCalls reports whether n calls a volatile function.
func volatileCalls(n *pg_query.Node) bool {
	found := false
	walk(n, func(x *pg_query.Node) {
		if fc := x.GetFuncCall(); fc != nil && (volatileFunctions[funcName(fc)] || duckFunctions[funcName(fc)].volatile) {
			found = true
		}
	})
	return found
}
