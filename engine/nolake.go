package engine

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/lakesoul-go/lakesoul/internal/pgtree"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/schema"
)

// Statements that read no relation.
//
// A query that reads no relation at all (SELECT 1, SELECT repeat('a', 3),
// VALUES …, generate_series in FROM) has no business on the shared catalog
// PostgreSQL: one such statement can make a catalog backend allocate
// without bound, and an out-of-memory kill there restarts the catalog for
// every user. It runs on the engine's DuckDB, under its memory limit and the
// value budget (valuebudget.go), whenever the DuckDB route answers it exactly
// as PostgreSQL does. That is decided by construction, on the parse tree
// (duckAnswers): every node is of a kind the route translates, every
// function is one of pgDuckFunctions called with arguments of the types one
// of its signatures lists, every operator one of pgDuckOperators on the
// types listed, every cast one of pgDuckCasts, and the engine knows the
// PostgreSQL type of every expression (pgtypes.go). Anything else keeps the
// statement on the catalog (catalogquery.go), on the user's own login and
// under the catalog's limits (catalogtx.go): a function whose answer comes
// from the catalog or the session (version(), current_user, now(),
// current_setting, pg_*, has_*_privilege, to_regclass, txid_current, …)
// is simply not in the table, and neither is a parameter, a row lock, a
// window or a function whose PostgreSQL semantics the route does not
// reproduce (lower/upper follow the catalog's locale; LIKE its escape
// character; avg its numeric scale).
//
// The table grows only with proof: TestNoRelationCorpus (engine) requires
// every entry, operator and cast to be used by a query of
// tests/testdata/norelation.sql that takes this route, and TestDifferential
// (tests) compares each of those queries with PostgreSQL — values, result
// types and error SQLSTATEs.

// argClass is a set of PostgreSQL types an argument position accepts.
type argClass uint32

const (
	aText      argClass = 1 << iota // text, varchar, bpchar and untyped string literals
	aInt4                           // smallint, integer (implicitly integer in PostgreSQL)
	aInt8                           // bigint
	aNumeric                        // numeric
	aFloat                          // real, double precision
	aBool                           // boolean
	aDate                           // date
	aTimestamp                      // timestamp without time zone
	aInterval                       // interval
	aJSON                           // json
	aJSONB                          // jsonb
	aBytea                          // bytea
	aUUID                           // uuid
	aArray                          // a one-dimensional array of a type the server knows

	aInt    = aInt4 | aInt8
	aExact  = aInt | aNumeric
	aNumber = aExact | aFloat
)

// classOf is the class of a known type; 0 for types outside the route
// (timestamptz and time depend on the session's TimeZone, which DuckDB's
// functions do not follow).
func classOf(t pgType) argClass {
	if t.literal {
		return aText
	}
	switch t.oid {
	case schema.OIDText, schema.OIDVarchar, schema.OIDBPChar:
		return aText
	case schema.OIDInt2, schema.OIDInt4:
		return aInt4
	case schema.OIDInt8:
		return aInt8
	case schema.OIDNumeric:
		return aNumeric
	case schema.OIDFloat4, schema.OIDFloat8:
		return aFloat
	case schema.OIDBool:
		return aBool
	case schema.OIDDate:
		return aDate
	case schema.OIDTimestamp:
		return aTimestamp
	case schema.OIDInterval:
		return aInterval
	case schema.OIDJSON:
		return aJSON
	case schema.OIDJSONB:
		return aJSONB
	case schema.OIDBytea:
		return aBytea
	case schema.OIDUUID:
		return aUUID
	}
	if schema.ElemOID(t.oid) != 0 {
		return aArray
	}
	return 0
}

// pgDuckFunc describes a function of pgDuckFunctions.
type pgDuckFunc struct {
	// sigs are the argument lists it may be called with; a NULL literal
	// fits every class.
	sigs [][]argClass
	// variadic: the last class of a signature repeats (zero or more times).
	variadic bool
	// agg: an aggregate (DISTINCT, ORDER BY and FILTER of its call are
	// allowed; OVER is not).
	agg bool
	// from: a set-returning function, only as a FROM item; inFROM: also
	// allowed there.
	from, inFROM bool
	// star: count(*).
	star bool
}

func sigs(lists ...[]argClass) [][]argClass { return lists }

// pgDuckFunctions are the PostgreSQL functions the DuckDB route computes as
// PostgreSQL does: by DuckDB's function of the same name and meaning, by a
// rewrite (pgsemantics.go, pgfuncs.go, jsonfuncs.go) or by the engine's own
// implementation under the value budget (valuebudget.go: repeat, lpad, rpad,
// concat, concat_ws, replace).
var pgDuckFunctions = map[string]pgDuckFunc{
	// text
	"length":           {sigs: sigs([]argClass{aText})},
	"char_length":      {sigs: sigs([]argClass{aText})},
	"character_length": {sigs: sigs([]argClass{aText})},
	"strpos":           {sigs: sigs([]argClass{aText, aText})},
	"ascii":            {sigs: sigs([]argClass{aText})},
	"md5":              {sigs: sigs([]argClass{aText})},
	"reverse":          {sigs: sigs([]argClass{aText})},
	"btrim":            {sigs: sigs([]argClass{aText}, []argClass{aText, aText})},
	"ltrim":            {sigs: sigs([]argClass{aText}, []argClass{aText, aText})},
	"rtrim":            {sigs: sigs([]argClass{aText}, []argClass{aText, aText})},
	"starts_with":      {sigs: sigs([]argClass{aText, aText})},
	"repeat":           {sigs: sigs([]argClass{aText, aInt4})},
	"lpad":             {sigs: sigs([]argClass{aText, aInt4}, []argClass{aText, aInt4, aText})},
	"rpad":             {sigs: sigs([]argClass{aText, aInt4}, []argClass{aText, aInt4, aText})},
	"replace":          {sigs: sigs([]argClass{aText, aText, aText})},
	"concat":           {sigs: sigs([]argClass{aText}), variadic: true},
	"concat_ws":        {sigs: sigs([]argClass{aText, aText}), variadic: true},
	// numbers
	"abs":     {sigs: sigs([]argClass{aNumber})},
	"ceil":    {sigs: sigs([]argClass{aNumeric}, []argClass{aFloat})},
	"ceiling": {sigs: sigs([]argClass{aNumeric}, []argClass{aFloat})},
	"floor":   {sigs: sigs([]argClass{aNumeric}, []argClass{aFloat})},
	"round":   {sigs: sigs([]argClass{aNumeric}, []argClass{aFloat}, []argClass{aNumeric, aInt4})},
	"mod":     {sigs: sigs([]argClass{aInt, aInt})},
	"sqrt":    {sigs: sigs([]argClass{aFloat})},
	"pi":      {sigs: sigs([]argClass{})},
	// date and time
	"date_trunc": {sigs: sigs([]argClass{aText, aTimestamp})},
	"to_char":    {sigs: sigs([]argClass{aTimestamp, aText}, []argClass{aDate, aText})},
	"extract":    {sigs: sigs([]argClass{aText, aDate | aTimestamp | aInterval})},
	// json
	"jsonb_typeof": {sigs: sigs([]argClass{aJSONB})},
	"json_typeof":  {sigs: sigs([]argClass{aJSON})},
	// arrays
	"array_length": {sigs: sigs([]argClass{aArray, aInt4})},
	"cardinality":  {sigs: sigs([]argClass{aArray})},
	"unnest":       {sigs: sigs([]argClass{aArray}), inFROM: true},
	// sets
	"generate_series": {sigs: sigs([]argClass{aInt4, aInt4}, []argClass{aInt4, aInt4, aInt4},
		[]argClass{aInt8, aInt8}, []argClass{aInt8, aInt8, aInt8}), from: true},
	// aggregates
	"count": {sigs: sigs([]argClass{aNumber | aText | aBool | aDate | aTimestamp | aInterval}), agg: true, star: true},
	"sum":   {sigs: sigs([]argClass{aInt4}), agg: true},
	"min":   {sigs: sigs([]argClass{aNumber | aText | aDate | aTimestamp}), agg: true},
	"max":   {sigs: sigs([]argClass{aNumber | aText | aDate | aTimestamp}), agg: true},
}

// opSig is an operator's operand classes; a nil left is a prefix operator.
type opSig struct{ l, r argClass }

// pgDuckOperators are the operators (by name) the route computes as
// PostgreSQL does, on the operand classes listed. Comparisons of a class
// with itself are in comparableGroups.
var pgDuckOperators = map[string][]opSig{
	"+":   {{aExact, aExact}, {aFloat, aNumber}, {aNumber, aFloat}, {aDate, aInt4}, {aTimestamp, aInterval}, {aInterval, aInterval}, {0, aNumber}},
	"-":   {{aExact, aExact}, {aFloat, aNumber}, {aNumber, aFloat}, {aDate, aInt4}, {aDate, aDate}, {aTimestamp, aTimestamp}, {aTimestamp, aInterval}, {aInterval, aInterval}, {0, aNumber}},
	"*":   {{aExact, aExact}, {aFloat, aNumber}, {aNumber, aFloat}, {aInterval, aInt}},
	"/":   {{aInt, aInt}, {aFloat, aFloat}},
	"%":   {{aInt, aInt}},
	"||":  {{aText, aText}},
	"->":  {{aJSONB, aText}, {aJSONB, aInt4}, {aJSON, aText}, {aJSON, aInt4}},
	"->>": {{aJSONB, aText}, {aJSONB, aInt4}, {aJSON, aText}, {aJSON, aInt4}},
}

// comparisonOps compare two values of one comparable group (the parser
// spells != as <>).
var comparisonOps = map[string]bool{"=": true, "<>": true, "<": true, ">": true, "<=": true, ">=": true}

// comparableGroups are the groups of classes whose values compare with each
// other as PostgreSQL compares them (text in the catalog's C collation is
// byte order, as in DuckDB).
var comparableGroups = []argClass{aNumber, aText, aBool, aDate | aTimestamp, aInterval, aUUID}

// pgDuckCasts are the casts the route performs as PostgreSQL does, by target
// type name: the classes a value may have (a string literal is aText).
var pgDuckCasts = map[string]argClass{
	"int2": aText | aNumber, "int4": aText | aNumber | aBool, "int8": aText | aNumber,
	"numeric": aText | aExact, "float8": aText | aNumber,
	"text": aText | aNumber | aBool | aDate | aTimestamp, "bool": aText | aInt4 | aBool,
	"date": aText | aDate | aTimestamp, "timestamp": aText | aDate | aTimestamp,
	"jsonb": aText, "json": aText, "uuid": aText | aUUID, "bytea": aText,
}

// castTargetName is the pgDuckCasts key of a cast's type name (pg_catalog.
// prefix and the parser's internal spellings resolved); "" when the cast
// has array bounds, a non-trivial modifier or names another type.
func castTargetName(tn *pg_query.TypeName) string {
	if tn == nil || len(tn.ArrayBounds) > 0 || tn.Setof || tn.PctType {
		return ""
	}
	name := strings.ToLower(typeNameString(tn))
	switch name {
	case "integer", "int":
		name = "int4"
	case "smallint":
		name = "int2"
	case "bigint":
		name = "int8"
	case "boolean":
		name = "bool"
	case "decimal":
		name = "numeric"
	case "varchar":
		name = "text" // without a length only
	}
	if len(tn.Typmods) > 0 && name != "numeric" {
		return "" // varchar(n), timestamp(p), interval fields: not checked
	}
	if _, ok := pgDuckCasts[name]; !ok {
		return ""
	}
	return name
}

// fits reports whether an argument of type t fits class c (NULL fits any).
func fits(t pgType, c argClass, isNull bool) bool {
	if isNull {
		return true
	}
	return classOf(t)&c != 0
}

func isNullConst(n *pg_query.Node) bool {
	c := n.GetAConst()
	return c != nil && c.Isnull
}

// duckAnswers reports whether stmt, a query that reads no relation, is one
// the DuckDB route answers exactly as PostgreSQL does (the header's rules),
// with the statement's PostgreSQL types. stmt is not changed.
func duckAnswers(stmt *pg_query.Node) (*typeInfo, bool) {
	sel := stmt.GetSelectStmt()
	if sel == nil {
		return nil, false
	}
	var nilSession *Session // typing a statement without lake tables needs no session
	ti := nilSession.inferTypes(stmt)
	ctes := cteRefs(stmt)
	fromCalls := map[*pg_query.FuncCall]bool{}
	walk(stmt, func(n *pg_query.Node) {
		if rf := n.GetRangeFunction(); rf != nil {
			for _, f := range rf.Functions {
				if items := f.GetList().GetItems(); len(items) > 0 && items[0].GetFuncCall() != nil {
					fromCalls[items[0].GetFuncCall()] = true
				}
			}
		}
	})
	c := &duckCheck{ti: ti, ctes: ctes, fromCalls: fromCalls, ok: true}
	pgtree.Walk(stmt.ProtoReflect(), func(m protoreflect.Message) {
		if !c.ok {
			return
		}
		switch x := m.Interface().(type) {
		case *pg_query.Node:
			c.ok = c.node(x)
		case *pg_query.SelectStmt:
			c.ok = x.IntoClause == nil && len(x.LockingClause) == 0 && len(x.WindowClause) == 0
		case *pg_query.CommonTableExpr:
			c.ok = x.SearchClause == nil && x.CycleClause == nil && x.Ctematerialized == pg_query.CTEMaterialize_CTEMaterializeDefault
		}
	})
	if !c.ok {
		return nil, false
	}
	// The result's types must be known: they are what the client is told.
	for _, col := range ti.output {
		if classOf(col.t) == 0 {
			return nil, false
		}
	}
	return ti, len(ti.output) > 0
}

type duckCheck struct {
	ti        *typeInfo
	ctes      map[*pg_query.RangeVar]*pg_query.CommonTableExpr
	fromCalls map[*pg_query.FuncCall]bool
	ok        bool
}

// known reports whether n is an expression of a class of the route.
func (c *duckCheck) known(n *pg_query.Node) bool {
	if n == nil {
		return true
	}
	if isNullConst(n) {
		return true
	}
	return classOf(c.ti.typeAt(n)) != 0
}

// node checks one parse-tree node; its children are checked on their own.
func (c *duckCheck) node(n *pg_query.Node) bool {
	if n == nil {
		return false
	}
	switch x := n.Node.(type) {
	case nil:
		return true
	case *pg_query.Node_SelectStmt, *pg_query.Node_ResTarget, *pg_query.Node_List, *pg_query.Node_String_,
		*pg_query.Node_AStar, *pg_query.Node_SortBy, *pg_query.Node_RangeSubselect, *pg_query.Node_JoinExpr,
		*pg_query.Node_CommonTableExpr, *pg_query.Node_BoolExpr, *pg_query.Node_NullTest, *pg_query.Node_BooleanTest,
		*pg_query.Node_CaseWhen, *pg_query.Node_Integer:
		return true
	case *pg_query.Node_ColumnRef:
		return true // of a VALUES list, subquery, CTE or FROM function: typed with it
	case *pg_query.Node_RangeVar:
		return c.ctes[x.RangeVar] != nil // no relation is read: every name is a CTE
	case *pg_query.Node_AConst:
		return x.AConst.GetBsval() == nil
	case *pg_query.Node_CaseExpr:
		// CASE x WHEN v compares x with each v.
		if x.CaseExpr.Arg != nil {
			for _, w := range x.CaseExpr.Args {
				if cw := w.GetCaseWhen(); cw == nil || !c.sameGroup(x.CaseExpr.Arg, cw.Expr) {
					return false
				}
			}
		}
		return c.known(n)
	case *pg_query.Node_CoalesceExpr, *pg_query.Node_MinMaxExpr, *pg_query.Node_AArrayExpr:
		return c.known(n)
	case *pg_query.Node_SubLink:
		switch x.SubLink.SubLinkType {
		case pg_query.SubLinkType_EXISTS_SUBLINK, pg_query.SubLinkType_EXPR_SUBLINK:
			return true
		case pg_query.SubLinkType_ANY_SUBLINK, pg_query.SubLinkType_ALL_SUBLINK:
			return len(x.SubLink.OperName) == 0 || comparisonOps[x.SubLink.OperName[len(x.SubLink.OperName)-1].GetString_().GetSval()]
		}
		return false // ARRAY(SELECT …) builds one value of any size
	case *pg_query.Node_AIndirection:
		for _, ind := range x.AIndirection.Indirection {
			if ind.GetAIndices() == nil || ind.GetAIndices().IsSlice {
				return false
			}
		}
		return classOf(c.ti.typeAt(x.AIndirection.Arg)) == aArray
	case *pg_query.Node_AIndices:
		return true // checked with its AIndirection
	case *pg_query.Node_RangeFunction:
		rf := x.RangeFunction
		return !rf.Ordinality && !rf.IsRowsfrom && len(rf.Functions) == 1 && len(rf.Coldeflist) == 0
	case *pg_query.Node_TypeCast:
		return c.cast(x.TypeCast)
	case *pg_query.Node_AExpr:
		return c.operator(n, x.AExpr)
	case *pg_query.Node_FuncCall:
		return c.function(x.FuncCall)
	}
	return false
}

func (c *duckCheck) cast(tc *pg_query.TypeCast) bool {
	name := castTargetName(tc.TypeName)
	if name == "" {
		return false
	}
	t := c.ti.typeAt(tc.Arg)
	if classOf(t) == aText && !textCasts[name] {
		// DuckDB reads text as its own types, not as PostgreSQL's input
		// functions do: only literals the engine reads itself are cast.
		sv := tc.Arg.GetAConst().GetSval()
		if sv == nil || !engineReadsLiteral(name, sv.Sval) {
			return false
		}
	}
	return fits(t, pgDuckCasts[name], isNullConst(tc.Arg))
}

// textCasts are the casts of text the route performs for any text value:
// to text, and to json and jsonb (engine functions, jsonops.go).
var textCasts = map[string]bool{"text": true, "json": true, "jsonb": true}

// canonicalUUID is a uuid in the two spellings PostgreSQL and the engine's
// parser (pgsemantics.go) both read the same.
var canonicalUUID = regexp.MustCompile(`^\s*(?:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|[0-9a-fA-F]{32})\s*$`)

// engineReadsLiteral reports whether the engine reads the string literal
// text cast to the pgDuckCasts type name as PostgreSQL does (or fails as
// PostgreSQL does): numbers (numberLiteral), dates and timestamps in the
// forms pgwire.ParseDateTime reads (not 'now', 'today': the transaction's
// time), uuids in their usual spellings, bytea (bytealit.go).
func engineReadsLiteral(name, text string) bool {
	switch name {
	case "int2", "int4", "int8", "float8", "numeric":
		plain, err := numberLiteral(typeNameOIDs[name], text)
		return plain != "" || err != nil
	case "date", "timestamp":
		_, ok := pgwire.ParseDateTime(typeNameOIDs[name], text, time.UTC)
		return ok
	case "uuid":
		return canonicalUUID.MatchString(text)
	case "bytea":
		return true
	}
	return false
}

// sameGroup reports whether two operands compare within one group of
// comparableGroups. NULL fits every group; an untyped string literal takes the
// other side's type as PostgreSQL's unknown does, which the route
// reproduces for text, date/time and uuid values (pgsemantics.go), not for
// numbers ('1.5' = 1 is an error in PostgreSQL).
func (c *duckCheck) sameGroup(l, r *pg_query.Node) bool {
	if !c.known(l) || !c.known(r) {
		return false
	}
	in := func(n *pg_query.Node, g argClass) bool {
		t := c.ti.typeAt(n)
		switch {
		case isNullConst(n):
			return true
		case t.literal:
			return g == aText || g == aDate|aTimestamp || g == aUUID
		}
		return classOf(t)&g != 0
	}
	for _, g := range comparableGroups {
		if in(l, g) && in(r, g) {
			return true
		}
	}
	return false
}

func (c *duckCheck) operator(n *pg_query.Node, a *pg_query.A_Expr) bool {
	op := operatorName(a)
	if len(a.Name) > 1 && a.Name[0].GetString_().GetSval() != "pg_catalog" {
		return false
	}
	switch a.Kind {
	case pg_query.A_Expr_Kind_AEXPR_OP:
		if comparisonOps[op] {
			return a.Lexpr != nil && c.sameGroup(a.Lexpr, a.Rexpr)
		}
		sigs, ok := pgDuckOperators[op]
		if !ok || !c.known(a.Rexpr) {
			return false
		}
		lt, rt := c.ti.typeAt(a.Lexpr), c.ti.typeAt(a.Rexpr)
		for _, s := range sigs {
			switch {
			case a.Lexpr == nil && s.l == 0:
				if fits(rt, s.r, isNullConst(a.Rexpr)) {
					return true
				}
			case a.Lexpr != nil && s.l != 0:
				// A string literal is aText: it fits only text operands.
				if c.known(a.Lexpr) && fits(lt, s.l, isNullConst(a.Lexpr)) && fits(rt, s.r, isNullConst(a.Rexpr)) {
					return classOf(c.ti.typeAt(n)) != 0
				}
			}
		}
		return false
	case pg_query.A_Expr_Kind_AEXPR_OP_ANY, pg_query.A_Expr_Kind_AEXPR_OP_ALL:
		return comparisonOps[op] && c.known(a.Lexpr) && classOf(c.ti.typeAt(a.Rexpr)) == aArray
	case pg_query.A_Expr_Kind_AEXPR_DISTINCT, pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT, pg_query.A_Expr_Kind_AEXPR_NULLIF:
		return c.sameGroup(a.Lexpr, a.Rexpr)
	case pg_query.A_Expr_Kind_AEXPR_IN:
		for _, item := range a.Rexpr.GetList().GetItems() {
			if !c.sameGroup(a.Lexpr, item) {
				return false
			}
		}
		return a.Rexpr.GetList() != nil
	case pg_query.A_Expr_Kind_AEXPR_BETWEEN, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN:
		items := a.Rexpr.GetList().GetItems()
		return len(items) == 2 && c.sameGroup(a.Lexpr, items[0]) && c.sameGroup(a.Lexpr, items[1])
	}
	return false // LIKE (DuckDB has no default escape), SIMILAR, regular expressions, …
}

func (c *duckCheck) function(fc *pg_query.FuncCall) bool {
	if len(fc.Args) == 0 && !fc.AggStar && funcName(fc) == "extract" {
		return false
	}
	if len(fc.Funcname) > 1 && fc.Funcname[0].GetString_().GetSval() != "pg_catalog" {
		return false
	}
	f, ok := pgDuckFunctions[funcName(fc)]
	if !ok || fc.Over != nil || fc.FuncVariadic || fc.AggWithinGroup {
		return false
	}
	if (fc.AggDistinct || len(fc.AggOrder) > 0 || fc.AggFilter != nil || fc.AggStar) && !f.agg {
		return false
	}
	if fc.AggStar {
		return f.star
	}
	if funcName(fc) == "extract" {
		// Fields whose numeric result the rewrite gives (pgsemantics.go);
		// epoch and julian stay DuckDB's double.
		field, ok := stringValue(fc.Args[0])
		if field = strings.ToLower(field); !ok || !integralFields[field] && field != "second" && field != "milliseconds" {
			return false
		}
	}
	// Set-returning functions only where PostgreSQL and DuckDB agree
	// (generate_series in a select list is a list in DuckDB).
	if inFrom := c.fromCalls[fc]; inFrom && !f.from && !f.inFROM || !inFrom && f.from {
		return false
	}
	for _, a := range fc.Args {
		if a.GetNamedArgExpr() != nil || !c.known(a) {
			return false
		}
	}
	for _, s := range f.sigs {
		if c.matches(fc.Args, s, f.variadic) {
			return true
		}
	}
	return false
}

func (c *duckCheck) matches(args []*pg_query.Node, sig []argClass, variadic bool) bool {
	if len(args) != len(sig) && !(variadic && len(args) >= len(sig)-1) {
		return false
	}
	for i, a := range args {
		cl := sig[min(i, len(sig)-1)]
		if !fits(c.ti.typeAt(a), cl, isNullConst(a)) {
			return false
		}
	}
	return true
}

// textLiteralTargets casts the untyped literals the query's result shows
// (SELECT NULL, SELECT 'a') to text, as PostgreSQL resolves an unknown
// output column; DuckDB's NULL would be an integer. The column keeps the
// name PostgreSQL gives the literal.
func textLiteralTargets(stmt *pg_query.Node, ti *typeInfo) {
	sel := stmt.GetSelectStmt()
	if sel == nil || sel.Op != pg_query.SetOperation_SETOP_NONE || len(ti.output) != len(sel.TargetList) {
		return
	}
	for i, tn := range sel.TargetList {
		rt := tn.GetResTarget()
		if rt == nil || rt.Val == nil || !ti.output[i].t.literal {
			continue
		}
		if cr := rt.Val.GetColumnRef(); cr != nil && isStar(cr) {
			return // a VALUES list named by nameValuesColumns: its types are DuckDB's
		}
		if rt.Name == "" {
			rt.Name = pgColumnName(rt.Val)
		}
		rt.Val = makeCast(rt.Val, "text")
	}
}

// nameValuesColumns gives the columns of a VALUES list that names a
// query's result PostgreSQL's names, column1, column2, … (DuckDB's are
// col0, col1, …): the list becomes SELECT * FROM (VALUES …) AS
// "*VALUES*"(column1, …), its ORDER BY and LIMIT staying where they are.
func nameValuesColumns(stmt *pg_query.Node) {
	sel := stmt.GetSelectStmt()
	for sel != nil && sel.Op != pg_query.SetOperation_SETOP_NONE {
		sel = sel.Larg
	}
	if sel == nil || len(sel.ValuesLists) == 0 {
		return
	}
	var cols []*pg_query.Node
	for i := range sel.ValuesLists[0].GetList().GetItems() {
		cols = append(cols, pg_query.MakeStrNode(fmt.Sprintf("column%d", i+1)))
	}
	values := &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: &pg_query.SelectStmt{ValuesLists: sel.ValuesLists}}}
	sel.ValuesLists = nil
	sel.TargetList = []*pg_query.Node{pg_query.MakeResTargetNodeWithVal(
		pg_query.MakeColumnRefNode([]*pg_query.Node{pg_query.MakeAStarNode()}, -1), -1)}
	sel.FromClause = []*pg_query.Node{{Node: &pg_query.Node_RangeSubselect{RangeSubselect: &pg_query.RangeSubselect{
		Subquery: values, Alias: &pg_query.Alias{Aliasname: "*VALUES*", Colnames: cols}}}}}
}
