package engine

import (
	"fmt"
	"slices"

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
// deviation aggregates of integers or numeric, sums over values of
// different scales (CASE, COALESCE), and + - * over those are numeric
// whose scale PostgreSQL chooses for each value (select_div_scale: at
// least 16 significant digits). Such result columns — of the outermost
// query, and of the subqueries, CTEs and views whose columns the statement
// only passes through to its result (passThrough) — are computed as
// PostgreSQL's text of the value by the engine's functions
// lakesoul_numeric_add/sub/mul/div/rescale/variance (package pgnumeric,
// exact and of unbounded precision), fed with the text of their operands:
// DuckDB's DECIMAL at the operand's known scale, integers; sum / count for
// avg; count, sum and sum of squares for the variances; a sum of values of
// different scales at the largest, shown at the largest scale of the
// values summed. DuckDB sums as DECIMAL(38, s): a sum beyond 38 digits
// fails with 22003 where PostgreSQL's numeric would go on. The columns are
// described as numeric (resultcols.go): text in the text format,
// PostgreSQL's numeric_send form in binary (pgwire), a string over Flight
// SQL (numeric without a typmod, arrowresult.go). ORDER BY naming such a
// column by its name or position sorts by the expression's value, not its
// text.
//
// min, max and abs of such a value keep the scale of the value chosen.
// Elsewhere (a WHERE, HAVING, JOIN condition, GROUP BY, ORDER BY, window,
// FILTER, the argument of another function, a subquery column the query
// computes with) numericValues hands DuckDB the same value as
// DECIMAL(38, innerNumericScale), exactly or 0A000; a result column over a
// subquery's such column shows that DECIMAL's scale.

// numericResults renders the result columns of per-value numeric scale
// as PostgreSQL's text: those of the outermost query, and those of the
// subqueries, CTEs and views whose columns the statement only passes
// through to its result (passThrough).
func (rw *pgRewriter) numericResults(stmt *pg_query.Node) {
	top := stmt.GetSelectStmt()
	if top == nil || !rw.ti.rowScale { // nothing to render: no walks
		return
	}
	inner, ok := rw.passThrough(stmt, top)
	rw.renderTargets(top, nil)
	if ok {
		for sel, names := range inner {
			rw.renderTargets(sel, names)
		}
	}
}

// renderTargets renders the targets of sel of per-value numeric scale
// (only those named in names, when names is not nil).
func (rw *pgRewriter) renderTargets(sel *pg_query.SelectStmt, names map[string]bool) {
	if sel.Op != pg_query.SetOperation_SETOP_NONE || len(sel.ValuesLists) > 0 ||
		len(sel.DistinctClause) > 0 && len(sel.SortClause) > 0 {
		// (DuckDB sorts a DISTINCT query only by its result columns.)
		return
	}
	values := map[int]*pg_query.Node{} // 1-based position → the value before rendering
	byName := map[string]*pg_query.Node{}
	for i, t := range sel.TargetList {
		rt := t.GetResTarget()
		if rt == nil || rt.Val == nil || !rw.ti.typeAt(rt.Val).rowScale {
			continue
		}
		name := rt.Name
		if name == "" {
			name = outputName(rt.Val)
		}
		if names != nil && !names[name] {
			continue
		}
		text, ok := rw.numericText(rt.Val)
		if !ok {
			continue
		}
		rt.Name = name // the column keeps PostgreSQL's name for the expression
		values[i+1] = proto.Clone(rt.Val).(*pg_query.Node)
		byName[name] = values[i+1]
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
			byName[cr.Fields[0].GetString_().Sval] != nil {
			sb.Node = proto.Clone(byName[cr.Fields[0].GetString_().Sval]).(*pg_query.Node)
		}
	}
}

// passThrough finds the subqueries, CTEs and views (subqueries by now)
// whose columns reach the result of stmt (outermost query top) unchanged:
// FROM items of the outermost query, and of those, whose columns are named
// only as plain result columns (c, s.c, s.*, *) of queries whose result is
// the statement's. For each it returns the names of columns that may be
// rendered as text: those no other reference anywhere in the statement
// could mean — by name, so a column compared, computed with, grouped or
// sorted by (also by position), or a whole-row reference, keeps the
// subquery's value. false when a * elsewhere could reach any of them.
func (rw *pgRewriter) passThrough(stmt *pg_query.Node, top *pg_query.SelectStmt) (map[*pg_query.SelectStmt]map[string]bool, bool) {
	ctes := map[string]*pg_query.SelectStmt{}
	walk(stmt, func(n *pg_query.Node) {
		if c := n.GetCommonTableExpr(); c != nil && c.Ctequery.GetSelectStmt() != nil && len(c.Aliascolnames) == 0 {
			ctes[c.Ctename] = c.Ctequery.GetSelectStmt()
		}
	})
	visible := map[*pg_query.SelectStmt]bool{top: true}
	aliases := map[*pg_query.SelectStmt][]string{}
	renamed := map[*pg_query.SelectStmt][]*pg_query.Node{} // a FROM alias's column names (views have them)
	allowed := map[*pg_query.Node]bool{}                   // ColumnRefs that only pass a column through
	blocked := map[string]bool{}
	queue := []*pg_query.SelectStmt{top}
	var from func(n *pg_query.Node)
	from = func(n *pg_query.Node) {
		var sub *pg_query.SelectStmt
		alias := ""
		switch {
		case n.GetJoinExpr() != nil:
			from(n.GetJoinExpr().Larg)
			from(n.GetJoinExpr().Rarg)
			if n.GetJoinExpr().Alias != nil || len(n.GetJoinExpr().UsingClause) > 0 || n.GetJoinExpr().IsNatural {
				blocked["*"] = true // renamed or merged columns: not followed
			}
			return
		case n.GetRangeSubselect() != nil:
			rs := n.GetRangeSubselect()
			sub = rs.Subquery.GetSelectStmt()
			if rs.Alias == nil || sub == nil {
				return
			}
			alias = rs.Alias.Aliasname
			renamed[sub] = rs.Alias.Colnames
		case n.GetRangeVar() != nil && n.GetRangeVar().Schemaname == "":
			rv := n.GetRangeVar()
			sub = ctes[rv.Relname]
			alias = rv.Relname
			if rv.Alias != nil {
				if len(rv.Alias.Colnames) > 0 {
					return
				}
				alias = rv.Alias.Aliasname
			}
		}
		if sub == nil {
			return
		}
		if !visible[sub] {
			visible[sub] = true
			queue = append(queue, sub)
		}
		aliases[sub] = append(aliases[sub], alias)
	}
	for len(queue) > 0 {
		sel := queue[0]
		queue = queue[1:]
		if sel.Op != pg_query.SetOperation_SETOP_NONE {
			continue
		}
		for _, f := range sel.FromClause {
			from(f)
		}
		var cols []*pg_query.ColumnRef
		for _, t := range sel.TargetList {
			rt := t.GetResTarget()
			if rt == nil || rt.Val.GetColumnRef() == nil {
				cols = append(cols, nil)
				continue
			}
			cr := rt.Val.GetColumnRef()
			if rt.Name != "" && !isStar(cr) {
				// renamed: the inner name must not be rendered for another
				blocked[lastField(cr)] = true
			}
			allowed[rt.Val] = true
			cols = append(cols, cr)
		}
		// Positions in ORDER BY, GROUP BY and DISTINCT ON use the value.
		for _, list := range [][]*pg_query.Node{sel.SortClause, sel.GroupClause, sel.DistinctClause} {
			for _, item := range list {
				if sb := item.GetSortBy(); sb != nil {
					item = sb.Node
				}
				k, ok := intConst(item)
				if !ok {
					continue
				}
				if sel == top && int(k) >= 1 && int(k) <= len(rw.ti.output) {
					blocked[rw.ti.output[k-1].name] = true // the result column, * expanded
					continue
				}
				for i := 0; i < int(k) && i < len(cols); i++ {
					switch {
					case cols[i] == nil:
					case isStar(cols[i]):
						blocked["*"] = true
					case i == int(k)-1:
						blocked[lastField(cols[i])] = true
					}
				}
			}
		}
	}
	walk(stmt, func(n *pg_query.Node) {
		cr := n.GetColumnRef()
		if cr == nil || allowed[n] {
			return
		}
		if isStar(cr) {
			blocked["*"] = true
			return
		}
		for _, f := range cr.Fields {
			if s := f.GetString_(); s != nil {
				blocked[s.Sval] = true // a column, or a whole row by its alias
			}
		}
	})
	if blocked["*"] {
		return nil, false
	}
	out := map[*pg_query.SelectStmt]map[string]bool{}
	for sel := range visible {
		if sel == top || slices.ContainsFunc(aliases[sel], func(a string) bool { return blocked[a] }) {
			continue
		}
		names := map[string]bool{}
		cols := renamed[sel]
		for i, t := range sel.TargetList {
			rt := t.GetResTarget()
			if rt == nil || rt.Val == nil {
				continue
			}
			if cr := rt.Val.GetColumnRef(); cr != nil && isStar(cr) && len(cols) > 0 {
				break // the alias's names no longer line up with the targets
			}
			name := rt.Name
			if name == "" {
				name = outputName(rt.Val)
			}
			outer := name // the name the enclosing query knows it by
			if i < len(cols) {
				outer = cols[i].GetString_().GetSval()
			}
			if !blocked[outer] {
				names[name] = true
			}
		}
		out[sel] = names
	}
	return out, true
}

// lastField is the column name of a column reference.
func lastField(cr *pg_query.ColumnRef) string {
	return cr.Fields[len(cr.Fields)-1].GetString_().GetSval()
}

// numericText is n, a numeric or integer expression, as PostgreSQL's text
// of its value with its display scale; false where that is not built.
func (rw *pgRewriter) numericText(n *pg_query.Node) (*pg_query.Node, bool) {
	t := rw.ti.typeAt(n)
	if !t.rowScale {
		// n is embedded whole: what it computes with is PostgreSQL's value
		for _, c := range rw.rowScaleRoots(n, true) {
			rw.exactValue(c, nil)
		}
	}
	if t.isInteger() {
		return makeCast(n, "text"), true
	}
	if fv := n.GetAConst().GetFval(); fv != nil && t.isNumeric() {
		// a literal's own digits, which DuckDB's DECIMAL may not hold
		if plain, ok, _ := plainNumericText(fv.Fval); ok {
			return pg_query.MakeAConstStrNode(plain, -1), true
		}
	}
	if s, ok := t.scale(); ok {
		if s > 37 {
			return nil, false
		}
		text := makeCast(makeCast(n, fmt.Sprintf("numeric(38,%d)", s)), "text")
		if fc := n.GetFuncCall(); fc != nil && funcName(fc) == "sum" && len(fc.Args) == 1 && !fc.AggStar {
			text = checkedSum(n, fc.Args[0], text) // an operand that is a sum
		}
		return text, true
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
		rw.exactRoots(x.CaseExpr.Arg) // (copied below with the conditions)
		for _, w := range x.CaseExpr.Args {
			rw.exactRoots(w.GetCaseWhen().GetExpr())
		}
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
		// (a FILTER and a window are copied with the call below)
		rw.exactRoots(fc.AggFilter)
		if fc.Over != nil {
			for _, e := range append(slices.Clone(fc.Over.PartitionClause), fc.Over.OrderClause...) {
				rw.exactRoots(e)
			}
		}
		if arg := rw.ti.typeAt(fc.Args[0]); arg.rowScale && (name == "abs" || name == "min" || name == "max") {
			text, ok := rw.numericText(fc.Args[0])
			if !ok {
				return nil, false
			}
			if name == "abs" {
				return makeCall("ltrim", text, pg_query.MakeAConstStrNode("-", -1)), true
			}
			// The value chosen keeps its own scale: its text at the
			// least (greatest) exact value.
			exact := makeCast(makeCall("lakesoul_numeric_exact", proto.Clone(text).(*pg_query.Node)),
				fmt.Sprintf("numeric(38,%d)", innerNumericScale))
			c := renamedAggregate(n, "arg_"+name)
			c.GetFuncCall().Args = []*pg_query.Node{text, exact}
			return c, true
		}
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
	return checkedSum(n, sum.GetFuncCall().Args[0], makeCast(makeCast(sum, fmt.Sprintf("numeric(38,%d)", s)), "text"))
}

// checkedSum is text, the text of DuckDB's sum of arg for the aggregate
// call n, or an error (22003) where that sum went past DuckDB's 128 bits:
// DuckDB's DECIMAL sum wraps around silently there, which the same sum in
// double precision shows (lakesoul_numeric_checked_sum).
func checkedSum(n, arg, text *pg_query.Node) *pg_query.Node {
	approx := renamedAggregate(n, "sum")
	approx.GetFuncCall().Args = []*pg_query.Node{makeCast(proto.Clone(arg).(*pg_query.Node), "float8")}
	return makeCall("lakesoul_numeric_checked_sum", text, approx)
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
	var summand *pg_query.Node
	switch {
	case ok && most <= 37:
		summand = makeCast(proto.Clone(arg).(*pg_query.Node), fmt.Sprintf("numeric(38,%d)", most))
	case !ok && rw.ti.typeAt(arg).rowScale:
		// Values of any scale (divisions): each exact in DuckDB's
		// DECIMAL(38, innerNumericScale) or 0A000, the scale of each read
		// from its text.
		text, ok := rw.numericText(arg)
		if !ok {
			return nil, false
		}
		most, scale = innerNumericScale, textScale(proto.Clone(text).(*pg_query.Node))
		summand = makeCast(makeCall("lakesoul_numeric_exact", text), fmt.Sprintf("numeric(38,%d)", most))
	default:
		return nil, false
	}
	sum := renamedAggregate(n, "sum")
	sum.GetFuncCall().Args = []*pg_query.Node{summand}
	largest := renamedAggregate(n, "max")
	largest.GetFuncCall().Args = []*pg_query.Node{scale}
	text := checkedSum(n, sum.GetFuncCall().Args[0], makeCast(makeCast(sum, fmt.Sprintf("numeric(38,%d)", most)), "text"))
	return makeCall("lakesoul_numeric_rescale", text, makeCast(largest, "int4")), true
}

// textScale is the display scale of text, PostgreSQL's text of a numeric
// value: the number of digits after its point.
func textScale(text *pg_query.Node) *pg_query.Node {
	point := makeCall("strpos", text, pg_query.MakeAConstStrNode(".", -1))
	frac := pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode("-")},
		makeCall("length", proto.Clone(text).(*pg_query.Node)), proto.Clone(point).(*pg_query.Node), -1)
	none := pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode("=")},
		point, pg_query.MakeAConstIntNode(0, -1), -1)
	return &pg_query.Node{Node: &pg_query.Node_CaseExpr{CaseExpr: &pg_query.CaseExpr{Location: -1,
		Args: []*pg_query.Node{{Node: &pg_query.Node_CaseWhen{CaseWhen: &pg_query.CaseWhen{
			Expr: none, Result: pg_query.MakeAConstIntNode(0, -1), Location: -1}}}},
		Defresult: frac}}}
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

// innerNumericScale is the scale of DuckDB's DECIMAL that carries numeric
// values of per-value display scale inside a query (numericValues): 20
// fractional digits hold every quotient PostgreSQL gives of magnitude
// 10^-4 or more (select_div_scale: 16 significant digits), and 18 whole
// digits leave room for the sums and products of such values.
const innerNumericScale = 20

// numericValues makes the numeric expressions of per-value display scale
// that are not result columns (those numericResults renders) PostgreSQL's
// values: every outermost such expression — in a WHERE, HAVING, JOIN
// condition, GROUP BY, ORDER BY, window, function argument, or a column of
// a subquery the query computes with — is computed by the engine's
// functions as PostgreSQL's text (numericText) and handed to DuckDB as
// DECIMAL(38, innerNumericScale), exactly that value or 0A000
// (lakesoul_numeric_exact), never DuckDB's double. Under a cast to text,
// to a numeric with a typmod or to a float, the cast reads PostgreSQL's
// text of the value instead, so it rounds the exact value once, as
// PostgreSQL does. A target of a SELECT list is left for numericResults
// when results is true (numericValues runs again after it, results
// false, for those it could not render).
func (rw *pgRewriter) numericValues(stmt *pg_query.Node, results bool) {
	if !rw.ti.rowScale {
		return
	}
	targets := assignedValues(stmt)
	casts := map[*pg_query.Node]*pg_query.TypeCast{}
	walk(stmt, func(n *pg_query.Node) {
		if sel := n.GetSelectStmt(); sel != nil && results {
			for _, t := range sel.TargetList {
				if rt := t.GetResTarget(); rt != nil && rt.Val != nil {
					targets[rt.Val] = true
				}
			}
		}
		if tc := n.GetTypeCast(); tc != nil && tc.Arg != nil {
			casts[tc.Arg] = tc
		}
	})
	for _, n := range rw.rowScaleRoots(stmt, false) {
		if !targets[n] {
			rw.exactValue(n, casts[n])
		}
	}
}

// exactRoots makes the outermost numeric expressions of per-value scale
// within n (nil: none) PostgreSQL's values (exactValue).
func (rw *pgRewriter) exactRoots(n *pg_query.Node) {
	if n == nil {
		return
	}
	for _, c := range rw.rowScaleRoots(n, false) {
		rw.exactValue(c, nil)
	}
}

// assignedValues are the values stmt writes to columns: an INSERT's VALUES
// or SELECT list, the SET values of UPDATE, ON CONFLICT DO UPDATE and
// MERGE, a MERGE's INSERT VALUES, and the rows of a VALUES statement (an
// INSERT's source reaches the engine as one). PostgreSQL rounds those to
// the column's type, which may hold digits DECIMAL(38,
// innerNumericScale) does not, so numericValues leaves them to the
// write's coercion (DuckDB's value).
func assignedValues(stmt *pg_query.Node) map[*pg_query.Node]bool {
	out := map[*pg_query.Node]bool{}
	targets := func(list []*pg_query.Node) {
		for _, t := range list {
			if rt := t.GetResTarget(); rt != nil && rt.Val != nil {
				out[rt.Val] = true
			}
		}
	}
	values := func(lists []*pg_query.Node) {
		for _, l := range lists {
			for _, v := range l.GetList().GetItems() {
				out[v] = true
			}
		}
	}
	switch {
	case stmt.GetSelectStmt() != nil:
		values(stmt.GetSelectStmt().ValuesLists)
	case stmt.GetInsertStmt() != nil:
		ins := stmt.GetInsertStmt()
		if sel := ins.SelectStmt.GetSelectStmt(); sel != nil {
			targets(sel.TargetList)
			values(sel.ValuesLists)
		}
		if oc := ins.OnConflictClause; oc != nil {
			targets(oc.TargetList)
		}
	case stmt.GetUpdateStmt() != nil:
		targets(stmt.GetUpdateStmt().TargetList)
	case stmt.GetMergeStmt() != nil:
		for _, w := range stmt.GetMergeStmt().MergeWhenClauses {
			if mw := w.GetMergeWhenClause(); mw != nil {
				targets(mw.TargetList)
				for _, v := range mw.Values {
					out[v] = true
				}
			}
		}
	}
	return out
}

// rowScaleRoots are the outermost expressions under n (n itself included
// unless within) whose type is numeric of per-value display scale.
func (rw *pgRewriter) rowScaleRoots(n *pg_query.Node, within bool) []*pg_query.Node {
	var all []*pg_query.Node
	walk(n, func(x *pg_query.Node) {
		if rw.ti.typeAt(x).rowScale && !(within && x == n) {
			all = append(all, x)
		}
	})
	inner := map[*pg_query.Node]bool{}
	var roots []*pg_query.Node
	for _, x := range all { // (walk visits a node before what it contains)
		if inner[x] {
			continue
		}
		if !rw.exact[x] { // (one made exact already is PostgreSQL's value)
			roots = append(roots, x)
		}
		walk(x, func(c *pg_query.Node) {
			if c != x {
				inner[c] = true
			}
		})
	}
	return roots
}

// exactValue rewrites n, numeric of per-value display scale, in place to
// PostgreSQL's value: its text where cast reads text (a cast to text, to a
// numeric with a typmod, to a float), DECIMAL(38, innerNumericScale)
// elsewhere. Where numericText cannot build n's text, the outermost such
// expressions inside n are made exact instead, and DuckDB computes n from
// them.
func (rw *pgRewriter) exactValue(n *pg_query.Node, cast *pg_query.TypeCast) {
	if rw.exact == nil {
		rw.exact = map[*pg_query.Node]bool{}
	}
	rw.exact[n] = true
	text, ok := rw.numericText(n)
	if !ok {
		for _, c := range rw.rowScaleRoots(n, true) {
			rw.exactValue(c, nil)
		}
		return
	}
	if cast != nil {
		switch t := typeNameType(cast.TypeName); {
		case len(cast.TypeName.ArrayBounds) > 0:
		case t.isText() && len(cast.TypeName.Typmods) == 0, t.isFloat(), t.isNumeric() && len(cast.TypeName.Typmods) > 0:
			n.Node = text.Node
			return
		}
	}
	n.Node = makeCast(makeCall("lakesoul_numeric_exact", text), fmt.Sprintf("numeric(38,%d)", innerNumericScale)).Node
}
