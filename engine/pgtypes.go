package engine

import (
	"math"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/lakesoul-go/lakesoul/schema"
)

// PostgreSQL types of expressions. DuckDB decides the types of a query over
// lake tables, but some answers depend on the type PostgreSQL would give an
// expression where DuckDB's differs or is the same for two PostgreSQL types
// (numeric and double precision after avg, json and jsonb, text and
// varchar), or where PostgreSQL resolves an untyped literal by its context
// (a uuid literal in a VALUES column of uuids, a timestamptz literal
// compared with a timestamptz column). inferTypes derives those types from
// what the statement shows: the lake tables' declared column types,
// literals, casts, operators and the functions it knows. Where it cannot
// tell, the type is unknown (oid 0) and the rewrites that consult it leave
// the expression to DuckDB.

// pgType is an expression's PostgreSQL type.
type pgType struct {
	oid    uint32 // 0: not known
	typmod int32
	// literal marks an untyped string literal, NULL or a parameter without
	// a type: PostgreSQL's "unknown", which takes the type its context
	// calls for.
	literal bool
	// dscale is, for numeric, the display scale every value has plus one
	// (0: not known, or the typmod's scale); see scale.
	dscale int32
	// rowScale marks a numeric whose display scale PostgreSQL picks per
	// value: a division, avg, and arithmetic over them
	// (numericresult.go).
	rowScale bool
}

// scale is the display scale every value of numeric type t has, when the
// statement shows it: a declared numeric(p,s), a literal's digits, and
// PostgreSQL's rules for + - * and the functions that keep or set a scale.
func (t pgType) scale() (int, bool) {
	switch {
	case !t.isNumeric() || t.rowScale:
		return 0, false
	case t.dscale > 0:
		return int(t.dscale - 1), true
	case t.typmod >= 4:
		return int((t.typmod - 4) & 0xffff), true
	}
	return 0, false
}

// numericScaled is numeric with display scale s.
func numericScaled(s int) pgType {
	t := typeOf(schema.OIDNumeric)
	t.dscale = int32(s) + 1
	return t
}

// numericRowScaled is numeric whose display scale varies by value.
func numericRowScaled() pgType {
	t := typeOf(schema.OIDNumeric)
	t.rowScale = true
	return t
}

// operandScale is the display scale of t as an operand of numeric
// arithmetic: an integer's is 0.
func operandScale(t pgType) (int, bool) {
	if t.isInteger() {
		return 0, true
	}
	return t.scale()
}

var unknownType = pgType{typmod: -1}

func typeOf(oid uint32) pgType { return pgType{oid: oid, typmod: -1} }

func (t pgType) known() bool { return t.oid != 0 }

// isInteger, isNumeric, isFloat and isText classify a known type.
func (t pgType) isInteger() bool {
	return t.oid == schema.OIDInt2 || t.oid == schema.OIDInt4 || t.oid == schema.OIDInt8
}
func (t pgType) isFloat() bool   { return t.oid == schema.OIDFloat4 || t.oid == schema.OIDFloat8 }
func (t pgType) isNumeric() bool { return t.oid == schema.OIDNumeric }
func (t pgType) isText() bool {
	return t.oid == schema.OIDText || t.oid == schema.OIDVarchar || t.oid == schema.OIDBPChar
}
func (t pgType) isJSON() bool { return t.oid == schema.OIDJSON || t.oid == schema.OIDJSONB }

// namedType is a column of a relation or a result.
type namedType struct {
	name string
	t    pgType
}

// typeRel is a FROM item as name resolution sees it.
type typeRel struct {
	name string
	cols []namedType
	// scalar marks a function returning a base type: the relation's name
	// alone is its one column's value.
	scalar bool
}

// typeScope holds the FROM items of one query level.
type typeScope struct {
	parent *typeScope
	rels   []typeRel
}

// typeInfo is what inferTypes learned about a statement.
type typeInfo struct {
	// of holds the type of every expression node inferTypes visited.
	of map[*pg_query.Node]pgType
	// output are the top-level result columns, when they could be told.
	output []namedType
	// rowScale: some expression is numeric of per-value display scale
	// (numericresult.go has columns to render).
	rowScale bool
	// coerce are the string literals of VALUES columns and set-operation
	// branches that take their column's type, mismatch the first column
	// whose values' types cannot be matched (setoptypes.go).
	coerce   map[*pg_query.Node]pgType
	mismatch error
}

// typeAt returns the type of an expression node (unknown if never seen).
func (ti *typeInfo) typeAt(n *pg_query.Node) pgType {
	if t, ok := ti.of[n]; ok {
		return t
	}
	return unknownType
}

type typer struct {
	s    *Session
	info *typeInfo
	ctes map[string]*pg_query.CommonTableExpr
	// cteCols caches CTE outputs; a CTE being typed maps to nil (a
	// recursive reference reads its non-recursive term only).
	cteCols map[string][]namedType
}

// inferTypes types every expression of stmt, a statement whose lake tables
// are bound (lakesoul_scan calls) and whose CTEs have unique names.
func (s *Session) inferTypes(stmt *pg_query.Node) *typeInfo {
	ty := &typer{s: s, info: &typeInfo{of: map[*pg_query.Node]pgType{}}, ctes: map[string]*pg_query.CommonTableExpr{},
		cteCols: map[string][]namedType{}}
	walk(stmt, func(n *pg_query.Node) {
		if c := n.GetCommonTableExpr(); c != nil {
			ty.ctes[c.Ctename] = c
		}
	})
	if sel := stmt.GetSelectStmt(); sel != nil {
		ty.info.output = ty.selectOutput(sel, nil)
	} else {
		ty.children(stmt.ProtoReflect(), nil)
	}
	return ty.info
}

// selectOutput types a query and returns its result columns (nil when it
// cannot tell them).
func (ty *typer) selectOutput(sel *pg_query.SelectStmt, parent *typeScope) []namedType {
	if sel.WithClause != nil {
		for _, c := range sel.WithClause.Ctes {
			if cte := c.GetCommonTableExpr(); cte != nil {
				ty.cteOutput(cte.Ctename)
			}
		}
	}
	if sel.Op != pg_query.SetOperation_SETOP_NONE {
		var l, r []namedType
		if sel.Larg != nil {
			l = ty.selectOutput(sel.Larg, parent)
		}
		if sel.Rarg != nil {
			r = ty.selectOutput(sel.Rarg, parent)
		}
		ty.clauses(sel, &typeScope{parent: parent})
		if len(l) != len(r) {
			return nil
		}
		out := make([]namedType, len(l))
		for i := range l {
			out[i] = namedType{l[i].name, commonType([]pgType{l[i].t, r[i].t})}
			ty.info.resolveColumn(setOpName(sel.Op), []*pg_query.Node{branchItem(sel.Larg, i), branchItem(sel.Rarg, i)},
				[]pgType{l[i].t, r[i].t}) // setoptypes.go
		}
		return out
	}
	if len(sel.ValuesLists) > 0 {
		var cols [][]pgType
		var nodes [][]*pg_query.Node
		for _, row := range sel.ValuesLists {
			items := row.GetList().GetItems()
			for i, it := range items {
				if i >= len(cols) {
					cols = append(cols, nil)
					nodes = append(nodes, nil)
				}
				cols[i] = append(cols[i], ty.expr(it, parent))
				nodes[i] = append(nodes[i], it)
			}
		}
		out := make([]namedType, len(cols))
		for i, c := range cols {
			out[i] = namedType{"column" + strconv.Itoa(i+1), commonType(c)}
			ty.info.resolveColumn("VALUES", nodes[i], c) // setoptypes.go
		}
		return out
	}
	sc := &typeScope{parent: parent}
	for _, f := range sel.FromClause {
		sc.rels = append(sc.rels, ty.fromItem(f, sc)...)
	}
	ty.clauses(sel, sc)
	var out []namedType
	for _, t := range sel.TargetList {
		rt := t.GetResTarget()
		if rt == nil || rt.Val == nil {
			return nil
		}
		if cr := rt.Val.GetColumnRef(); cr != nil && isStar(cr) {
			cols, ok := sc.star(cr)
			if !ok {
				return nil
			}
			out = append(out, cols...)
			continue
		}
		name := rt.Name
		if name == "" {
			name = outputName(rt.Val)
		}
		out = append(out, namedType{name, ty.info.typeAt(rt.Val)})
	}
	return out
}

// clauses types the expressions of one query level in scope sc.
func (ty *typer) clauses(sel *pg_query.SelectStmt, sc *typeScope) {
	for _, t := range sel.TargetList {
		if rt := t.GetResTarget(); rt != nil && rt.Val != nil {
			ty.expr(rt.Val, sc)
		}
	}
	for _, n := range []*pg_query.Node{sel.WhereClause, sel.HavingClause, sel.LimitCount, sel.LimitOffset} {
		ty.expr(n, sc)
	}
	for _, list := range [][]*pg_query.Node{sel.GroupClause, sel.SortClause, sel.DistinctClause, sel.WindowClause} {
		for _, n := range list {
			ty.expr(n, sc)
		}
	}
}

// cteOutput types a CTE's query once.
func (ty *typer) cteOutput(name string) []namedType {
	if cols, ok := ty.cteCols[name]; ok {
		return cols
	}
	c := ty.ctes[name]
	if c == nil {
		return nil
	}
	ty.cteCols[name] = nil
	sel := c.Ctequery.GetSelectStmt()
	if sel == nil {
		return nil
	}
	var cols []namedType
	if c.Cterecursive && sel.Op == pg_query.SetOperation_SETOP_UNION && sel.Larg != nil {
		cols = ty.selectOutput(sel.Larg, nil)
		ty.cteCols[name] = cols
		ty.selectOutput(sel.Rarg, nil)
	} else {
		cols = ty.selectOutput(sel, nil)
	}
	cols = renameCols(cols, c.Aliascolnames)
	ty.cteCols[name] = cols
	return cols
}

// renameCols applies a column alias list.
func renameCols(cols []namedType, aliases []*pg_query.Node) []namedType {
	if len(aliases) == 0 {
		return cols
	}
	out := append([]namedType(nil), cols...)
	for i, a := range aliases {
		if i < len(out) {
			out[i].name = a.GetString_().GetSval()
		}
	}
	return out
}

// fromItem returns the relations a FROM item contributes to scope sc.
func (ty *typer) fromItem(n *pg_query.Node, sc *typeScope) []typeRel {
	switch {
	case n.GetRangeVar() != nil:
		rv := n.GetRangeVar()
		rel := typeRel{name: rv.Relname}
		if rv.Schemaname == "" {
			rel.cols = ty.cteOutput(rv.Relname)
		}
		return []typeRel{aliased(rel, rv.Alias)}
	case n.GetRangeSubselect() != nil:
		rs := n.GetRangeSubselect()
		var cols []namedType
		if sel := rs.Subquery.GetSelectStmt(); sel != nil {
			parent := sc.parent
			if rs.Lateral {
				parent = sc
			}
			cols = ty.selectOutput(sel, parent)
		}
		return []typeRel{aliased(typeRel{cols: cols}, rs.Alias)}
	case n.GetRangeFunction() != nil:
		return []typeRel{ty.functionRel(n.GetRangeFunction(), sc)}
	case n.GetJoinExpr() != nil:
		j := n.GetJoinExpr()
		rels := append(ty.fromItem(j.Larg, sc), ty.fromItem(j.Rarg, sc)...)
		inner := &typeScope{parent: sc.parent, rels: append(append([]typeRel(nil), sc.rels...), rels...)}
		ty.expr(j.Quals, inner)
		if j.Alias != nil {
			var all []namedType
			for _, r := range rels {
				all = append(all, r.cols...)
			}
			return []typeRel{aliased(typeRel{cols: all}, j.Alias)}
		}
		return rels
	}
	return nil
}

func aliased(rel typeRel, a *pg_query.Alias) typeRel {
	if a == nil {
		return rel
	}
	rel.name = a.Aliasname
	rel.cols = renameCols(rel.cols, a.Colnames)
	return rel
}

// scalarTableFunctions return a base type: an alias without a column list
// names their one column (PostgreSQL), and the alias alone is the value.
var scalarTableFunctions = map[string]bool{
	"generate_series": true, "unnest": true, "generate_subscripts": true, "regexp_split_to_table": true,
	"json_array_elements": true, "jsonb_array_elements": true, "json_array_elements_text": true,
	"jsonb_array_elements_text": true, "json_object_keys": true, "jsonb_object_keys": true,
}

// functionRel types a function in FROM.
func (ty *typer) functionRel(rf *pg_query.RangeFunction, sc *typeScope) typeRel {
	// A function's arguments may refer to earlier FROM items (LATERAL is
	// implied), so they are typed in sc itself.
	var fc *pg_query.FuncCall
	for _, f := range rf.Functions {
		items := f.GetList().GetItems()
		if len(items) == 0 {
			continue
		}
		ty.expr(items[0], sc)
		fc = items[0].GetFuncCall()
	}
	if fc == nil || len(rf.Functions) != 1 {
		return aliased(typeRel{}, rf.Alias)
	}
	name := funcName(fc)
	if name == scanFunctionName {
		return aliased(ty.scanRel(fc), rf.Alias)
	}
	if !scalarTableFunctions[name] {
		return aliased(typeRel{name: name}, rf.Alias)
	}
	t := unknownType
	switch name {
	case "generate_series":
		t = seriesType(ty.argTypes(fc))
	case "unnest":
		if len(fc.Args) == 1 {
			t = typeOf(schema.ElemOID(ty.info.typeAt(fc.Args[0]).oid))
			if !t.known() {
				t = unknownType
			}
		}
	case "generate_subscripts":
		t = typeOf(schema.OIDInt4)
	case "regexp_split_to_table":
		t = typeOf(schema.OIDText)
	default:
		t = typeOf(jsonSetTypes[name]) // jsonfuncs.go
	}
	col := name
	if rf.Alias != nil {
		col = rf.Alias.Aliasname
	}
	rel := typeRel{name: name, cols: []namedType{{col, t}}, scalar: true}
	if rf.Ordinality {
		rel.cols = append(rel.cols, namedType{"ordinality", typeOf(schema.OIDInt8)})
		rel.scalar = false
	}
	return aliased(rel, rf.Alias)
}

// seriesType is the element type of generate_series over args.
func seriesType(args []pgType) pgType {
	if len(args) < 2 {
		return unknownType
	}
	switch t := commonType(args[:2]); {
	case t.isInteger(), t.isNumeric():
		return t
	case t.oid == schema.OIDTimestamp, t.oid == schema.OIDTimestamptz:
		return t
	}
	return unknownType
}

// scanRel types lakesoul_scan('<handle>'): its table's declared columns.
func (ty *typer) scanRel(fc *pg_query.FuncCall) typeRel {
	if len(fc.Args) != 1 || ty.s == nil {
		// Typed without a session (a statement without lake tables): no
		// handle is the session's, and the gate refuses the call.
		return typeRel{}
	}
	handle, ok := stringValue(fc.Args[0])
	if !ok {
		return typeRel{}
	}
	e, ok := ty.s.e.scans.get(handle)
	if !ok {
		return typeRel{}
	}
	rel := typeRel{name: e.table.Name}
	for _, f := range e.table.Schema.Fields() {
		oid, mod := schema.PGTypeOf(f)
		rel.cols = append(rel.cols, namedType{f.Name, pgType{oid: oid, typmod: mod}})
	}
	return rel
}

func isStar(cr *pg_query.ColumnRef) bool {
	return len(cr.Fields) > 0 && cr.Fields[len(cr.Fields)-1].GetAStar() != nil
}

// star expands `*` or `rel.*` at this level.
func (sc *typeScope) star(cr *pg_query.ColumnRef) ([]namedType, bool) {
	var out []namedType
	if len(cr.Fields) == 1 {
		for _, r := range sc.rels {
			if r.cols == nil {
				return nil, false
			}
			out = append(out, r.cols...)
		}
		return out, true
	}
	if len(cr.Fields) != 2 {
		return nil, false
	}
	name := cr.Fields[0].GetString_().GetSval()
	for s := sc; s != nil; s = s.parent {
		for _, r := range s.rels {
			if r.name == name {
				return r.cols, r.cols != nil
			}
		}
	}
	return nil, false
}

// column resolves a column reference.
func (sc *typeScope) column(cr *pg_query.ColumnRef) pgType {
	var names []string
	for _, f := range cr.Fields {
		s := f.GetString_()
		if s == nil {
			return unknownType
		}
		names = append(names, s.Sval)
	}
	switch len(names) {
	case 1:
		for s := sc; s != nil; s = s.parent {
			var found []pgType
			for _, r := range s.rels {
				for _, c := range r.cols {
					if c.name == names[0] {
						found = append(found, c.t)
					}
				}
				if r.scalar && r.name == names[0] && len(r.cols) == 1 && r.cols[0].name != names[0] {
					found = append(found, r.cols[0].t)
				}
			}
			if len(found) > 0 {
				if allSame(found) {
					return found[0]
				}
				return unknownType
			}
			for _, r := range s.rels {
				if r.name == names[0] {
					return typeOf(schema.OIDRecord) // a whole row
				}
			}
		}
	case 2:
		for s := sc; s != nil; s = s.parent {
			for _, r := range s.rels {
				if r.name != names[0] {
					continue
				}
				for _, c := range r.cols {
					if c.name == names[1] {
						return c.t
					}
				}
				return unknownType
			}
		}
	}
	return unknownType
}

func allSame(ts []pgType) bool {
	for _, t := range ts[1:] {
		if t.oid != ts[0].oid {
			return false
		}
	}
	return true
}

// outputName is the column name PostgreSQL gives an unnamed target.
func outputName(n *pg_query.Node) string {
	if cr := n.GetColumnRef(); cr != nil {
		if s := cr.Fields[len(cr.Fields)-1].GetString_(); s != nil {
			return s.Sval
		}
	}
	return pgColumnName(n)
}

// expr types an expression node (and every node inside it) in scope sc.
func (ty *typer) expr(n *pg_query.Node, sc *typeScope) pgType {
	if n == nil || n.Node == nil {
		return unknownType
	}
	if t, ok := ty.info.of[n]; ok {
		return t
	}
	t := ty.exprUncached(n, sc)
	ty.info.of[n] = t
	ty.info.rowScale = ty.info.rowScale || t.rowScale
	return t
}

func (ty *typer) exprUncached(n *pg_query.Node, sc *typeScope) pgType {
	switch x := n.Node.(type) {
	case *pg_query.Node_AConst:
		c := x.AConst
		switch {
		case c.Isnull, c.GetSval() != nil:
			return pgType{typmod: -1, literal: true}
		case c.GetIval() != nil:
			return typeOf(schema.OIDInt4)
		case c.GetFval() != nil:
			// PostgreSQL's make_const: an integer literal too large for
			// the lexer's int4 is int8 (int4 again if it fits once negated,
			// -2147483648), else numeric.
			if v, err := strconv.ParseInt(c.GetFval().Fval, 10, 64); err == nil {
				if v >= math.MinInt32 && v <= math.MaxInt32 {
					return typeOf(schema.OIDInt4)
				}
				return typeOf(schema.OIDInt8)
			}
			if plain, ok, _ := plainNumericText(c.GetFval().Fval); ok {
				return digitsScaled(plain)
			}
			return typeOf(schema.OIDNumeric)
		case c.GetBoolval() != nil:
			return typeOf(schema.OIDBool)
		}
		return unknownType
	case *pg_query.Node_ParamRef:
		// A parameter the client sent without a type (declared ones are
		// casts by now, castDeclaredParams): PostgreSQL's unknown, which
		// takes the type of its context as an untyped literal does.
		return pgType{typmod: -1, literal: true}
	case *pg_query.Node_TypeCast:
		arg := ty.expr(x.TypeCast.Arg, sc)
		t := typeNameType(x.TypeCast.TypeName)
		if t.isNumeric() && len(x.TypeCast.TypeName.Typmods) == 0 && len(x.TypeCast.TypeName.ArrayBounds) == 0 {
			// numeric without a typmod keeps the value's scale
			// (bareNumeric): an integer's 0, a numeric's own, a
			// string's digits.
			switch {
			case arg.isInteger():
				return numericScaled(0)
			case arg.isNumeric():
				if s, ok := arg.scale(); ok {
					return numericScaled(s) // no typmod, the values' scale
				}
				arg.typmod = -1
				return arg
			case arg.literal:
				return literalNumeric(x.TypeCast.Arg)
			}
		}
		return t
	case *pg_query.Node_ColumnRef:
		return sc.column(x.ColumnRef)
	case *pg_query.Node_AExpr:
		return ty.operator(x.AExpr, sc)
	case *pg_query.Node_BoolExpr, *pg_query.Node_NullTest, *pg_query.Node_BooleanTest:
		ty.children(n.ProtoReflect(), sc)
		return typeOf(schema.OIDBool)
	case *pg_query.Node_FuncCall:
		return ty.function(x.FuncCall, sc)
	case *pg_query.Node_CaseExpr:
		ce := x.CaseExpr
		ty.expr(ce.Arg, sc)
		var results []pgType
		for _, w := range ce.Args {
			if cw := w.GetCaseWhen(); cw != nil {
				ty.expr(cw.Expr, sc)
				results = append(results, ty.expr(cw.Result, sc))
			}
		}
		if ce.Defresult != nil {
			results = append(results, ty.expr(ce.Defresult, sc))
		}
		return commonType(results)
	case *pg_query.Node_CoalesceExpr:
		return commonType(ty.exprs(x.CoalesceExpr.Args, sc))
	case *pg_query.Node_MinMaxExpr:
		return commonType(ty.exprs(x.MinMaxExpr.Args, sc))
	case *pg_query.Node_AArrayExpr:
		elem := commonType(ty.exprs(x.AArrayExpr.Elements, sc))
		if elem.literal {
			elem = typeOf(schema.OIDText)
		}
		if a := schema.ArrayOID(elem.oid); a != 0 {
			return typeOf(a)
		}
		if e := schema.ElemOID(elem.oid); e != 0 {
			return elem // ARRAY[ARRAY[…]] is a two-dimensional array of the same type
		}
		return unknownType
	case *pg_query.Node_SubLink:
		sl := x.SubLink
		ty.expr(sl.Testexpr, sc)
		var cols []namedType
		if sel := sl.Subselect.GetSelectStmt(); sel != nil {
			cols = ty.selectOutput(sel, sc)
		}
		switch sl.SubLinkType {
		case pg_query.SubLinkType_EXPR_SUBLINK:
			if len(cols) == 1 {
				return cols[0].t
			}
		case pg_query.SubLinkType_ARRAY_SUBLINK:
			if len(cols) == 1 && schema.ArrayOID(cols[0].t.oid) != 0 {
				return typeOf(schema.ArrayOID(cols[0].t.oid))
			}
		case pg_query.SubLinkType_EXISTS_SUBLINK, pg_query.SubLinkType_ANY_SUBLINK, pg_query.SubLinkType_ALL_SUBLINK:
			return typeOf(schema.OIDBool)
		}
		return unknownType
	case *pg_query.Node_AIndirection:
		arg := ty.expr(x.AIndirection.Arg, sc)
		ty.exprs(x.AIndirection.Indirection, sc)
		if len(x.AIndirection.Indirection) > 0 && x.AIndirection.Indirection[0].GetAIndices() != nil &&
			!x.AIndirection.Indirection[0].GetAIndices().IsSlice {
			return typeOf(schema.ElemOID(arg.oid))
		}
		return unknownType
	case *pg_query.Node_CollateClause:
		return ty.expr(x.CollateClause.Arg, sc)
	case *pg_query.Node_SqlvalueFunction:
		switch x.SqlvalueFunction.Op {
		case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_DATE:
			return typeOf(schema.OIDDate)
		case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP, pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N:
			return typeOf(schema.OIDTimestamptz)
		case pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP, pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:
			return typeOf(schema.OIDTimestamp)
		}
		return unknownType
	case *pg_query.Node_SelectStmt:
		ty.selectOutput(x.SelectStmt, sc)
		return unknownType
	}
	ty.children(n.ProtoReflect(), sc)
	return unknownType
}

func (ty *typer) exprs(ns []*pg_query.Node, sc *typeScope) []pgType {
	out := make([]pgType, len(ns))
	for i, n := range ns {
		out[i] = ty.expr(n, sc)
	}
	return out
}

// children types the expression nodes directly inside m.
func (ty *typer) children(m protoreflect.Message, sc *typeScope) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Message() == nil || fd.IsMap() {
			return true
		}
		visit := func(cm protoreflect.Message) {
			switch x := cm.Interface().(type) {
			case *pg_query.Node:
				ty.expr(x, sc)
			case *pg_query.SelectStmt:
				ty.selectOutput(x, sc)
			default:
				ty.children(cm, sc)
			}
		}
		if fd.IsList() {
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				visit(l.Get(i).Message())
			}
			return true
		}
		visit(v.Message())
		return true
	})
}

// operator types an operator expression.
func (ty *typer) operator(a *pg_query.A_Expr, sc *typeScope) pgType {
	l, r := ty.expr(a.Lexpr, sc), ty.expr(a.Rexpr, sc)
	switch a.Kind {
	case pg_query.A_Expr_Kind_AEXPR_NULLIF:
		if l.rowScale {
			return typeOf(schema.OIDNumeric)
		}
		return l
	case pg_query.A_Expr_Kind_AEXPR_OP:
	default:
		return typeOf(schema.OIDBool) // IN, LIKE, BETWEEN, DISTINCT, ANY/ALL …
	}
	op := operatorName(a)
	switch op {
	case "=", "<>", "!=", "<", ">", "<=", ">=", "~", "~*", "!~", "!~*", "@>", "<@", "?", "?|", "?&", "&&":
		return typeOf(schema.OIDBool)
	case "->", "#>":
		if l.isJSON() {
			return l
		}
		return unknownType
	case "->>", "#>>":
		return typeOf(schema.OIDText)
	case "||":
		switch {
		case l.oid == schema.OIDJSONB && (r.oid == schema.OIDJSONB || r.literal):
			return l
		case l.literal && r.oid == schema.OIDJSONB:
			return r
		case schema.ElemOID(l.oid) != 0:
			return l
		case schema.ElemOID(r.oid) != 0:
			return r
		case l.isText() || r.isText() || l.literal || r.literal:
			return typeOf(schema.OIDText)
		}
		return unknownType
	case "+", "-", "*", "/", "%":
		if a.Lexpr == nil { // unary
			return r
		}
		if op == "-" && l.oid == schema.OIDJSONB {
			return l // jsonb - key, jsonb - index
		}
		// An untyped literal of numeric arithmetic is numeric with its
		// own digits (coerceOperand).
		if l.literal && r.isNumeric() {
			l = literalNumeric(a.Lexpr)
		}
		if r.literal && l.isNumeric() {
			r = literalNumeric(a.Rexpr)
		}
		return arithmeticType(op, l, r)
	}
	return unknownType
}

// literalNumeric is the type of an untyped operand of numeric arithmetic:
// numeric with the digits of a string literal, of unknown scale for a
// parameter.
func literalNumeric(n *pg_query.Node) pgType {
	if sv := n.GetAConst().GetSval(); sv != nil {
		if plain, ok, _ := plainNumeric(sv.Sval); ok {
			return digitsScaled(plain)
		}
	}
	return typeOf(schema.OIDNumeric)
}

// digitsScaled is numeric with the display scale of plain, a numeric's
// plain spelling (plainNumeric): its digits after the point.
func digitsScaled(plain string) pgType {
	_, frac, _ := strings.Cut(plain, ".")
	return numericScaled(len(frac))
}

// operatorName is an operator's name without its schema.
func operatorName(a *pg_query.A_Expr) string {
	if len(a.Name) == 0 {
		return ""
	}
	return a.Name[len(a.Name)-1].GetString_().GetSval()
}

// arithmeticType follows PostgreSQL's operators for numbers, dates and times.
func arithmeticType(op string, l, r pgType) pgType {
	if l.literal {
		l = r
	}
	if r.literal {
		r = l
	}
	switch {
	case (l.isInteger() || l.isNumeric() || l.isFloat()) && (r.isInteger() || r.isNumeric() || r.isFloat()):
		t := commonType([]pgType{l, r})
		if t.isNumeric() {
			return numericResult(op, l, r)
		}
		return t
	case l.oid == schema.OIDDate && r.isInteger() && (op == "+" || op == "-"):
		return l
	case l.oid == schema.OIDDate && r.oid == schema.OIDDate && op == "-":
		return typeOf(schema.OIDInt4)
	case (l.oid == schema.OIDTimestamp || l.oid == schema.OIDTimestamptz) && r.oid == schema.OIDInterval:
		return l
	case l.oid == schema.OIDDate && r.oid == schema.OIDInterval:
		return typeOf(schema.OIDTimestamp)
	case (l.oid == schema.OIDTimestamp || l.oid == schema.OIDTimestamptz) && l.oid == r.oid && op == "-":
		return typeOf(schema.OIDInterval)
	case l.oid == schema.OIDInterval && (r.oid == schema.OIDInterval || r.isInteger() || r.isFloat() || r.isNumeric()):
		return l
	}
	return unknownType
}

// numericResult is the type of numeric arithmetic l op r (one of them
// numeric, neither a float): a division's scale varies by value, and so
// does that of arithmetic over such values; + and - have the larger
// scale of their operands, * the sum, % the larger (PostgreSQL's add_var,
// mul_var, mod_var).
func numericResult(op string, l, r pgType) pgType {
	if op == "/" {
		return numericRowScaled()
	}
	if l.rowScale || r.rowScale {
		if op == "%" {
			return typeOf(schema.OIDNumeric)
		}
		return numericRowScaled()
	}
	ls, lok := operandScale(l)
	rs, rok := operandScale(r)
	if !lok || !rok {
		return typeOf(schema.OIDNumeric)
	}
	// The typmod of numeric(p,s) operands of one type stays (as the
	// engine has described such columns, and CREATE TABLE AS declares
	// them).
	t := typeOf(schema.OIDNumeric)
	switch {
	case l.isNumeric() && r.isNumeric():
		if l.typmod == r.typmod {
			t.typmod = l.typmod
		}
	case l.isNumeric():
		t.typmod = l.typmod
	default:
		t.typmod = r.typmod
	}
	if op == "*" {
		t.dscale = int32(ls+rs) + 1
	} else {
		t.dscale = int32(max(ls, rs)) + 1
	}
	return t
}

// numericRank orders the numeric types by PostgreSQL's implicit casts.
var numericRank = map[uint32]int{schema.OIDInt2: 1, schema.OIDInt4: 2, schema.OIDInt8: 3, schema.OIDNumeric: 4,
	schema.OIDFloat4: 5, schema.OIDFloat8: 6}

// commonType resolves the type of values that must share one (CASE
// results, VALUES columns, UNION branches), as PostgreSQL's
// select_common_type does for the cases it knows: literals take the known
// type, numbers widen, otherwise every known type must agree.
func commonType(ts []pgType) pgType {
	out := pgType{typmod: -1, literal: true}
	for _, t := range ts {
		switch {
		case t.literal:
		case !t.known():
			return unknownType
		case out.literal:
			out = t
		case out.oid == t.oid:
			if out.typmod != t.typmod {
				out.typmod = -1
			}
		case numericRank[out.oid] > 0 && numericRank[t.oid] > 0:
			if numericRank[t.oid] > numericRank[out.oid] {
				out = typeOf(t.oid)
			}
		case out.isText() && t.isText():
			out = typeOf(schema.OIDText)
		default:
			return unknownType
		}
	}
	if out.isNumeric() {
		// One display scale where every value has the same one; the scale
		// of the value chosen where they are known but differ.
		scale, same, known := -1, true, true
		for _, t := range ts {
			if t.literal {
				continue
			}
			s, ok := operandScale(t)
			switch {
			case !ok && !t.rowScale:
				known = false
			case !ok || scale >= 0 && s != scale:
				same = false
			default:
				scale = s
			}
		}
		out.rowScale = false
		switch {
		case !known:
			out.dscale, out.typmod = 0, -1
		case same && scale >= 0:
			out.dscale = int32(scale) + 1
		default:
			out.dscale, out.rowScale = 0, true // (the typmod as before: CREATE TABLE AS declares it)
		}
	}
	return out
}

// typeNameOIDs maps PostgreSQL type names (as the parser spells them) to OIDs.
var typeNameOIDs = map[string]uint32{
	"bool": schema.OIDBool, "boolean": schema.OIDBool, "bytea": schema.OIDBytea, "int2": schema.OIDInt2,
	"smallint": schema.OIDInt2, "int4": schema.OIDInt4, "int": schema.OIDInt4, "integer": schema.OIDInt4,
	"int8": schema.OIDInt8, "bigint": schema.OIDInt8, "float4": schema.OIDFloat4, "real": schema.OIDFloat4,
	"float8": schema.OIDFloat8, "numeric": schema.OIDNumeric, "decimal": schema.OIDNumeric, "text": schema.OIDText,
	"varchar": schema.OIDVarchar, "bpchar": schema.OIDBPChar, "char": schema.OIDBPChar, "date": schema.OIDDate,
	"time": schema.OIDTime, "timetz": schema.OIDTimeTZ, "timestamp": schema.OIDTimestamp,
	"timestamptz": schema.OIDTimestamptz, "interval": schema.OIDInterval, "uuid": schema.OIDUUID,
	"json": schema.OIDJSON, "jsonb": schema.OIDJSONB,
}

// typeNameType is the type a TypeName names.
func typeNameType(tn *pg_query.TypeName) pgType {
	if tn == nil {
		return unknownType
	}
	oid := typeNameOIDs[strings.ToLower(typeNameString(tn))]
	if strings.ToLower(typeNameString(tn)) == "vector" {
		oid = schema.VectorOID()
	}
	if e := duckEnumOID(typeNameString(tn)); e != 0 && len(tn.ArrayBounds) == 0 { // enum.go
		return typeOf(e)
	}
	if oid == 0 {
		return unknownType
	}
	if len(tn.ArrayBounds) > 0 {
		return typeOf(schema.ArrayOID(oid))
	}
	t := typeOf(oid)
	if mods, err := typeMods(tn); err == nil && len(mods) > 0 {
		switch oid {
		case schema.OIDVarchar, schema.OIDBPChar:
			t.typmod = mods[0] + 4
		case schema.VectorOID():
			t.typmod = mods[0]
		case schema.OIDNumeric:
			s := int32(0)
			if len(mods) > 1 {
				s = mods[1]
			}
			t.typmod = (mods[0]<<16 | s) + 4
		}
	}
	return t
}

func (ty *typer) argTypes(fc *pg_query.FuncCall) []pgType {
	out := make([]pgType, len(fc.Args))
	for i, a := range fc.Args {
		out[i] = ty.info.typeAt(a)
	}
	return out
}

// Result types of functions by name: a fixed type, or the type of the
// first argument.
var (
	funcResultOIDs = map[string]uint32{
		"count": schema.OIDInt8, "row_number": schema.OIDInt8, "rank": schema.OIDInt8, "dense_rank": schema.OIDInt8,
		"ntile": schema.OIDInt4, "cume_dist": schema.OIDFloat8, "percent_rank": schema.OIDFloat8,
		"length": schema.OIDInt4, "char_length": schema.OIDInt4, "character_length": schema.OIDInt4,
		"octet_length": schema.OIDInt4, "strpos": schema.OIDInt4, "ascii": schema.OIDInt4,
		"array_length": schema.OIDInt4, "cardinality": schema.OIDInt4, "json_array_length": schema.OIDInt4,
		"jsonb_array_length": schema.OIDInt4, "upper": schema.OIDText, "lower": schema.OIDText,
		"initcap": schema.OIDText, "substr": schema.OIDText, "substring": schema.OIDText, "replace": schema.OIDText,
		"btrim": schema.OIDText, "ltrim": schema.OIDText, "rtrim": schema.OIDText, "lpad": schema.OIDText,
		"rpad": schema.OIDText, "concat": schema.OIDText, "concat_ws": schema.OIDText, "left": schema.OIDText,
		"right": schema.OIDText, "repeat": schema.OIDText, "reverse": schema.OIDText, "md5": schema.OIDText,
		"to_char": schema.OIDText, "format": schema.OIDText, "quote_ident": schema.OIDText,
		"quote_literal": schema.OIDText, "split_part": schema.OIDText, "translate": schema.OIDText,
		"chr": schema.OIDText, "string_agg": schema.OIDText, "regexp_replace": schema.OIDText,
		"encode": schema.OIDText, "json_typeof": schema.OIDText, "jsonb_typeof": schema.OIDText,
		"jsonb_pretty": schema.OIDText, "json_array_elements": schema.OIDJSON, "jsonb_array_elements": schema.OIDJSONB,
		"json_array_elements_text": schema.OIDText, "jsonb_array_elements_text": schema.OIDText,
		"json_object_keys": schema.OIDText, "jsonb_object_keys": schema.OIDText, "decode": schema.OIDBytea, "bool_and": schema.OIDBool,
		"bool_or": schema.OIDBool, "every": schema.OIDBool, "now": schema.OIDTimestamptz,
		"statement_timestamp": schema.OIDTimestamptz, "clock_timestamp": schema.OIDTimestamptz,
		"transaction_timestamp": schema.OIDTimestamptz, "to_timestamp": schema.OIDTimestamptz,
		"to_date": schema.OIDDate, "make_date": schema.OIDDate, "age": schema.OIDInterval,
		"date_part": schema.OIDFloat8, "extract": schema.OIDNumeric, "random": schema.OIDFloat8,
		"gen_random_uuid": schema.OIDUUID, "to_json": schema.OIDJSON, "json_build_object": schema.OIDJSON,
		"json_build_array": schema.OIDJSON, "json_agg": schema.OIDJSON, "row_to_json": schema.OIDJSON,
		"array_to_json": schema.OIDJSON, "json_object_agg": schema.OIDJSON, "to_jsonb": schema.OIDJSONB,
		"jsonb_build_object": schema.OIDJSONB, "jsonb_build_array": schema.OIDJSONB, "jsonb_agg": schema.OIDJSONB,
		"jsonb_object_agg": schema.OIDJSONB, "jsonb_set": schema.OIDJSONB, "jsonb_strip_nulls": schema.OIDJSONB,
		"corr": schema.OIDFloat8, "covar_pop": schema.OIDFloat8, "covar_samp": schema.OIDFloat8,
		"regr_slope": schema.OIDFloat8, "regr_intercept": schema.OIDFloat8, "regr_r2": schema.OIDFloat8,
		"percentile_cont": schema.OIDFloat8, "pi": schema.OIDFloat8, "starts_with": schema.OIDBool,
	}
	funcArgTyped = map[string]bool{
		"min": true, "max": true, "any_value": true, "abs": true, "lag": true, "lead": true, "first_value": true,
		"last_value": true, "nth_value": true, "nullif": true, "mode": true,
	}
)

// function types a function call.
func (ty *typer) function(fc *pg_query.FuncCall, sc *typeScope) pgType {
	args := ty.exprs(fc.Args, sc)
	for _, n := range fc.AggOrder {
		ty.expr(n, sc)
	}
	ty.expr(fc.AggFilter, sc)
	if fc.Over != nil {
		ty.exprs(fc.Over.PartitionClause, sc)
		ty.exprs(fc.Over.OrderClause, sc)
	}
	name := funcName(fc)
	if oid, ok := funcResultOIDs[name]; ok {
		return typeOf(oid)
	}
	if name == "l2_normalize" {
		return typeOf(schema.VectorOID())
	}
	if funcArgTyped[name] && len(args) > 0 {
		if args[0].rowScale {
			if name == "min" || name == "max" || name == "abs" {
				return numericRowScaled() // the value chosen, with its scale (numericText)
			}
			return typeOf(schema.OIDNumeric) // scales by value numericText does not render
		}
		return args[0]
	}
	var a0 pgType
	if len(args) > 0 {
		a0 = args[0]
	}
	switch name {
	case "sum":
		switch {
		case a0.oid == schema.OIDInt2, a0.oid == schema.OIDInt4:
			return typeOf(schema.OIDInt8)
		case a0.oid == schema.OIDInt8:
			return numericScaled(0)
		case a0.isNumeric():
			if s, ok := a0.scale(); ok {
				return numericScaled(s) // the largest scale of the values added
			}
			if a0.rowScale {
				return numericRowScaled()
			}
			return typeOf(schema.OIDNumeric)
		case a0.isFloat(), a0.oid == schema.OIDInterval:
			return a0
		}
	case "avg":
		switch {
		case a0.isInteger(), a0.isNumeric():
			if _, ok := operandScale(a0); !ok && !a0.rowScale {
				return typeOf(schema.OIDNumeric)
			}
			return numericRowScaled() // sum / count (numericresult.go)
		case a0.isFloat():
			return typeOf(schema.OIDFloat8)
		case a0.oid == schema.OIDInterval:
			return a0
		}
	case "stddev", "stddev_samp", "stddev_pop", "variance", "var_samp", "var_pop":
		switch {
		case a0.isInteger(), a0.isNumeric() && !a0.rowScale:
			return numericRowScaled() // numericresult.go
		case a0.isNumeric():
			return typeOf(schema.OIDNumeric)
		case a0.isFloat():
			return typeOf(schema.OIDFloat8)
		}
	case "round", "trunc":
		switch {
		case len(args) == 2:
			if d, ok := intConst(fc.Args[1]); ok && name == "round" {
				return numericScaled(int(max(d, 0)))
			}
			return typeOf(schema.OIDNumeric)
		case a0.isNumeric():
			if name == "round" {
				return numericScaled(0)
			}
			return typeOf(schema.OIDNumeric)
		case a0.isFloat():
			return typeOf(schema.OIDFloat8)
		}
	case "ceil", "ceiling", "floor", "sign":
		if a0.isNumeric() {
			return numericScaled(0)
		}
		if a0.isFloat() {
			return a0
		}
	case "sqrt", "exp", "ln", "log10", "cbrt":
		if a0.isNumeric() {
			return typeOf(schema.OIDNumeric) // a scale by value
		}
		if a0.isFloat() {
			return a0
		}
	case "mod":
		if len(args) == 2 {
			return commonType(args)
		}
	case "date_trunc":
		if len(args) >= 2 {
			return args[1]
		}
	case "array_agg":
		if a := schema.ArrayOID(a0.oid); a != 0 {
			return typeOf(a)
		}
	case "unnest":
		if e := schema.ElemOID(a0.oid); e != 0 && len(args) == 1 {
			return typeOf(e)
		}
	case "coalesce", "greatest", "least":
		return commonType(args)
	}
	return unknownType
}
