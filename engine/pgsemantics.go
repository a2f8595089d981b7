package engine

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Operators and functions whose PostgreSQL answer DuckDB does not give by
// itself. rewritePGSemantics re-spells them in a statement whose lake tables
// are bound, using the types inferTypes found (pgtypes.go):
//
//   - x / y, x % y and mod(x, y) fail with 22012 when y is zero (DuckDB
//     returns NULL or infinity); integer division itself is DuckDB's
//     integer_division setting (duckdb.go), which DuckDB's binder applies
//     by the operands' types.
//   - round(numeric, n) keeps n fractional digits (2.50); round(float8)
//     rounds half to even; round(float8, n) does not exist (42883).
//   - format() (pgformat.go).
//   - A function in FROM that returns a base type names its one column
//     after the alias (FROM generate_series(1, 3) g: g is the value), and
//     generate_series over integers yields integers.
//   - Date/time literals are read as PostgreSQL reads them (offsets like
//     +00 or +05:30 without seconds, the session's TimeZone for literals
//     without an offset); untyped literals take the type of what they are
//     compared with or combined with (a uuid literal in a VALUES column of
//     uuids), as PostgreSQL resolves "unknown".
//   - json/jsonb operators (->, ->>, #>, #>>, @>, <@, ?, ?|, ?&) and casts
//     (jsonops.go).
//   - float8::text and float4::text print as PostgreSQL prints floats.
//   - Result columns that are numeric divisions, averages and arithmetic
//     over them show PostgreSQL's value and display scale
//     (numericresult.go).
//
// Nodes are rewritten children first, so a rewrite sees its operands in
// their final form; types are those of the statement as written.
func (s *Session) rewritePGSemantics(stmt *pg_query.Node, ti *typeInfo) error {
	var nodes []*pg_query.Node
	walk(stmt, func(n *pg_query.Node) {
		if n != nil && n.Node != nil {
			nodes = append(nodes, n)
		}
	})
	if ti.mismatch != nil {
		return ti.mismatch // setoptypes.go
	}
	rw := &pgRewriter{s: s, ti: ti, compared: comparedRows(stmt)}
	for i := len(nodes) - 1; i >= 0; i-- {
		if err := rw.node(nodes[i]); err != nil {
			return err
		}
	}
	if err := rw.setTypes(); err != nil { // setoptypes.go
		return err
	}
	rw.numericValues(stmt, true) // numericresult.go
	rw.numericResults(stmt)
	rw.numericValues(stmt, false)
	return nil
}

type pgRewriter struct {
	s        *Session
	ti       *typeInfo
	compared map[*pg_query.Node]bool // comparedRows
	exact    map[*pg_query.Node]bool // numeric values made PostgreSQL's (numericValues)
}

func (rw *pgRewriter) node(n *pg_query.Node) error {
	switch x := n.Node.(type) {
	case *pg_query.Node_AExpr:
		if rw.vectorOperator(n, x.AExpr) { // vectorops.go
			return nil
		}
		if err := rw.coerceOperands(x.AExpr); err != nil {
			return err
		}
		if err := rw.jsonOperator(n, x.AExpr); err != nil { // jsonops.go
			return err
		}
		if rw.intervalOperator(n, x.AExpr) { // intervalfuncs.go
			return nil
		}
		if a := n.GetAExpr(); a != nil {
			if err := rw.divisor(a); err != nil {
				return err
			}
			rw.dateDifference(n, a)
		}
	case *pg_query.Node_FuncCall:
		vectorFunction(x.FuncCall)
		return rw.function(n, x.FuncCall)
	case *pg_query.Node_TypeCast:
		if vectorCast(n, x.TypeCast) {
			return nil
		}
		return rw.cast(n, x.TypeCast)
	case *pg_query.Node_CaseExpr:
		t := rw.ti.typeAt(n)
		for _, w := range x.CaseExpr.Args {
			if cw := w.GetCaseWhen(); cw != nil {
				if err := rw.coerceLiteral(cw.Result, t); err != nil {
					return err
				}
			}
		}
		return rw.coerceLiteral(x.CaseExpr.Defresult, t)
	case *pg_query.Node_CoalesceExpr:
		return rw.coerceLiterals(x.CoalesceExpr.Args, rw.ti.typeAt(n))
	case *pg_query.Node_MinMaxExpr:
		return rw.coerceLiterals(x.MinMaxExpr.Args, rw.ti.typeAt(n))
	case *pg_query.Node_SelectStmt:
		rw.jsonbSort(x.SelectStmt) // jsonops.go
		return rw.values(x.SelectStmt)
	case *pg_query.Node_RowExpr:
		if !rw.compared[n] {
			rw.namedRow(n, x.RowExpr)
		}
	case *pg_query.Node_RangeFunction:
		rw.tableFunction(n, x.RangeFunction)
	}
	return nil
}

func makeCall(name string, args ...*pg_query.Node) *pg_query.Node {
	return pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode(name)}, args, -1)
}

// makeCast is CAST(n AS typeName) for a type name DuckDB and PostgreSQL
// read alike.
func makeCast(n *pg_query.Node, typeName string) *pg_query.Node {
	var tn *pg_query.TypeName
	if strings.HasPrefix(typeName, "json") {
		tn = duckJSONTypeName(strings.HasSuffix(typeName, "[]"))
	} else {
		var err error
		if tn, err = parsedTypeName(typeName); err != nil {
			panic("pgsemantics: type " + typeName + ": " + err.Error()) // a bug in a caller
		}
	}
	return &pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{Arg: n, TypeName: tn, Location: -1}}}
}

// duckJSONTypeName is DuckDB's JSON type (or JSON[]): the parser's json is
// pg_catalog.json, which DuckDB does not read.
func duckJSONTypeName(array bool) *pg_query.TypeName {
	tn := &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode("json")}, Typemod: -1, Location: -1}
	if array {
		tn.ArrayBounds = []*pg_query.Node{pg_query.MakeIntNode(-1)}
	}
	return tn
}

// coalesce is COALESCE(args…).
func coalesce(args ...*pg_query.Node) *pg_query.Node {
	return &pg_query.Node{Node: &pg_query.Node_CoalesceExpr{CoalesceExpr: &pg_query.CoalesceExpr{Args: args, Location: -1}}}
}

// wrap replaces n by f(n): f gets a node holding what n held.
func wrap(n *pg_query.Node, f func(inner *pg_query.Node) *pg_query.Node) {
	inner := &pg_query.Node{Node: n.Node}
	n.Node = f(inner).Node
}

// intConst returns the value of an integer constant (-k is one too).
func intConst(n *pg_query.Node) (int64, bool) {
	if n == nil {
		return 0, false
	}
	if c := n.GetAConst(); c != nil && c.GetIval() != nil {
		return int64(c.GetIval().Ival), true
	}
	if a := n.GetAExpr(); a != nil && a.Kind == pg_query.A_Expr_Kind_AEXPR_OP && a.Lexpr == nil && operatorName(a) == "-" {
		v, ok := intConst(a.Rexpr)
		return -v, ok
	}
	return 0, false
}

// nonZeroConst reports a numeric constant that is not zero.
func nonZeroConst(n *pg_query.Node) bool {
	c := n.GetAConst()
	switch {
	case c == nil:
		return false
	case c.GetIval() != nil:
		return c.GetIval().Ival != 0
	case c.GetFval() != nil:
		f, err := strconv.ParseFloat(c.GetFval().Fval, 64)
		return err == nil && f != 0
	}
	return false
}

// callsFunctions reports whether n calls a function or holds a subquery,
// which might be volatile.
func callsFunctions(n *pg_query.Node) bool {
	found := false
	walk(n, func(x *pg_query.Node) {
		if x.GetFuncCall() != nil || x.GetSubLink() != nil {
			found = true
		}
	})
	return found
}

// checkedDivisor wraps the divisor of dividend / divisor so that zero fails
// with 22012.
func checkedDivisor(dividend, divisor *pg_query.Node) {
	if nonZeroConst(divisor) {
		return
	}
	macro := "lakesoul_divisor"
	if callsFunctions(divisor) {
		macro = "lakesoul_divisor_once"
	}
	a := proto.Clone(dividend).(*pg_query.Node)
	wrap(divisor, func(inner *pg_query.Node) *pg_query.Node { return makeCall(macro, a, inner) })
}

func (rw *pgRewriter) divisor(a *pg_query.A_Expr) error {
	if a.Kind != pg_query.A_Expr_Kind_AEXPR_OP || a.Lexpr == nil || a.Rexpr == nil {
		return nil
	}
	op := operatorName(a)
	if op == "%" {
		// PostgreSQL's % is for integers and numeric only.
		if l, r := rw.ti.typeAt(a.Lexpr), rw.ti.typeAt(a.Rexpr); l.isFloat() || r.isFloat() {
			return &sqlerr.Error{Code: sqlerr.UndefinedFunction,
				Message: fmt.Sprintf("operator does not exist: %s %% %s", sqlTypeName(l), sqlTypeName(r)),
				Hint:    "No operator matches the given name and argument types. You might need to add explicit type casts."}
		}
	}
	if op == "/" || op == "%" {
		checkedDivisor(a.Lexpr, a.Rexpr)
	}
	return nil
}

// sqlTypeName names a type as PostgreSQL's messages do.
func sqlTypeName(t pgType) string {
	if name, ok := map[uint32]string{schema.OIDInt2: "smallint", schema.OIDInt4: "integer", schema.OIDInt8: "bigint",
		schema.OIDFloat4: "real", schema.OIDFloat8: "double precision", schema.OIDNumeric: "numeric"}[t.oid]; ok {
		return name
	}
	if t.literal {
		return "unknown"
	}
	return "text"
}

func (rw *pgRewriter) function(n *pg_query.Node, fc *pg_query.FuncCall) error {
	name := funcName(fc)
	if fc.FuncVariadic && name == "format" {
		return sqlerr.Unsupported("format() with VARIADIC arguments", "format('… %s …', arg, …)")
	}
	if fc.FuncVariadic || fc.AggStar || fc.Over != nil || len(fc.Args) == 0 {
		return nil
	}
	if ok, err := rw.jsonFunction(n, fc, name); ok || err != nil { // jsonfuncs.go
		return err
	}
	if rw.intervalAggregate(n, fc, name) { // intervalfuncs.go
		return nil
	}
	switch {
	case name == "sum" && len(fc.Args) == 1 && !fc.AggDistinct && rw.ti.typeAt(n).oid == schema.OIDInt8 &&
		rw.ti.typeAt(fc.Args[0]).oid != schema.OIDInt8:
		// sum(int2/int4) is bigint in PostgreSQL, DuckDB's is hugeint.
		wrap(n, func(inner *pg_query.Node) *pg_query.Node { return makeCast(inner, "int8") })
	case name == "mod" && len(fc.Args) == 2:
		checkedDivisor(fc.Args[0], fc.Args[1])
	case name == "round":
		return rw.round(n, fc)
	case name == "format":
		return rw.format(n, fc) // pgformat.go
	case name == "extract" && len(fc.Args) == 2:
		rw.extract(n, fc)
	case name == "pg_typeof" && len(fc.Args) == 1:
		rw.pgTypeof(n, fc) // pgtypeof.go
	}
	return nil
}

// dateDifference makes date - date an integer, as in PostgreSQL (DuckDB's
// is bigint).
func (rw *pgRewriter) dateDifference(n *pg_query.Node, a *pg_query.A_Expr) {
	if a.Kind != pg_query.A_Expr_Kind_AEXPR_OP || operatorName(a) != "-" || a.Lexpr == nil {
		return
	}
	// An unknown operand of a date difference is a date (coerceOperands).
	l, r := rw.ti.typeAt(a.Lexpr), rw.ti.typeAt(a.Rexpr)
	if (l.oid == schema.OIDDate || r.oid == schema.OIDDate) && (l.oid == schema.OIDDate || l.literal) &&
		(r.oid == schema.OIDDate || r.literal) {
		wrap(n, func(inner *pg_query.Node) *pg_query.Node { return makeCast(inner, "int4") })
	}
}

// integralFields are the fields extract() returns as whole numbers.
var integralFields = map[string]bool{"century": true, "day": true, "decade": true, "dow": true, "doy": true,
	"hour": true, "isodow": true, "isoyear": true, "microseconds": true, "millennium": true, "minute": true,
	"month": true, "quarter": true, "week": true, "year": true}

// extract gives extract() PostgreSQL's numeric result: DuckDB's is bigint
// (seconds without their fraction).
func (rw *pgRewriter) extract(n *pg_query.Node, fc *pg_query.FuncCall) {
	field, ok := stringValue(fc.Args[0])
	if !ok {
		return
	}
	field = strings.ToLower(field)
	switch arg := rw.ti.typeAt(fc.Args[1]); {
	case arg.oid != schema.OIDDate && arg.oid != schema.OIDTimestamp && arg.oid != schema.OIDTimestamptz && arg.oid != schema.OIDInterval:
	case integralFields[field]:
		wrap(n, func(inner *pg_query.Node) *pg_query.Node { return makeCast(inner, "numeric(38,0)") })
	case field == "second" || field == "milliseconds":
		// microseconds × 10⁻⁶ (10⁻³): decimal arithmetic, exact.
		unit := "0.000001"
		if field == "milliseconds" {
			unit = "0.001"
		}
		fc.Args[0] = pg_query.MakeAConstStrNode("microseconds", -1)
		wrap(n, func(inner *pg_query.Node) *pg_query.Node {
			return pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode("*")},
				makeCast(inner, "numeric(38,0)"), &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{
					Val: &pg_query.A_Const_Fval{Fval: &pg_query.Float{Fval: unit}}}}}, -1)
		})
	case field == "epoch" && arg.oid == schema.OIDInterval:
		n.Node = makeCall("lakesoul_interval_epoch", fc.Args[1]).Node // intervalfuncs.go
	case field == "epoch" && arg.oid == schema.OIDDate:
		wrap(n, func(inner *pg_query.Node) *pg_query.Node { return makeCast(inner, "numeric(38,0)") })
	case field == "epoch" && arg.oid != schema.OIDInterval:
		n.Node = pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode("*")},
			makeCast(makeCall("epoch_us", fc.Args[1]), "numeric(38,0)"), &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{
				Val: &pg_query.A_Const_Fval{Fval: &pg_query.Float{Fval: "0.000001"}}}}}, -1).Node
	}
}

// round gives round() PostgreSQL's result types: numeric with exactly n
// fractional digits for round(x, n) (DuckDB keeps x's scale, or has a
// double where PostgreSQL has numeric, as for avg), half-to-even rounding
// for round(float8).
func (rw *pgRewriter) round(n *pg_query.Node, fc *pg_query.FuncCall) error {
	arg := rw.ti.typeAt(fc.Args[0])
	switch len(fc.Args) {
	case 1:
		switch {
		case arg.isFloat():
			fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode("round_even")}
			fc.Args = append(fc.Args, pg_query.MakeAConstIntNode(0, -1))
		case arg.isNumeric():
			wrap(n, func(inner *pg_query.Node) *pg_query.Node { return makeCast(inner, "numeric(38,0)") })
		}
	case 2:
		digits, ok := intConst(fc.Args[1])
		if !ok || digits > 37 {
			return nil
		}
		if arg.isFloat() {
			return &sqlerr.Error{Code: sqlerr.UndefinedFunction, Message: "function round(double precision, integer) does not exist",
				Hint: "No function matches the given name and argument types. You might need to add explicit type casts."}
		}
		scale := max(digits, 0)
		wrap(n, func(inner *pg_query.Node) *pg_query.Node {
			return makeCast(inner, fmt.Sprintf("numeric(38,%d)", scale))
		})
	}
	return nil
}

// cast re-spells casts: date/time literals (PostgreSQL's input forms),
// float → text, jsonb (DuckDB's JSON), varchar(n) and char(n).
func (rw *pgRewriter) cast(n *pg_query.Node, tc *pg_query.TypeCast) error {
	target := typeNameType(tc.TypeName)
	if sv := tc.Arg.GetAConst().GetSval(); sv != nil && arrayLiteralType(target.oid) != "" {
		arr, err := arrayLiteralElems(sv.Sval) // arraylit.go
		if err != nil {
			return err
		}
		tc.Arg = arr
		return nil
	}
	if sv := tc.Arg.GetAConst().GetSval(); sv != nil {
		if err := rw.s.respellLiteral(sv, target.oid); err != nil {
			return err
		}
	}
	switch {
	case target.isNumeric() && len(tc.TypeName.Typmods) == 0 && len(tc.TypeName.ArrayBounds) == 0:
		rw.bareNumeric(n, tc)
	case target.isJSON(), schema.ElemOID(target.oid) == schema.OIDJSON, schema.ElemOID(target.oid) == schema.OIDJSONB:
		tc.TypeName = duckJSONTypeName(len(tc.TypeName.ArrayBounds) > 0) // jsonb is DuckDB's JSON too
	case (target.oid == schema.OIDVarchar || target.oid == schema.OIDBPChar) && len(tc.TypeName.Typmods) == 1 && len(tc.TypeName.ArrayBounds) == 0:
		// DuckDB's VARCHAR has no length: an explicit cast cuts the value
		// to n characters, as PostgreSQL's does (no error, unlike an
		// assignment); a char(n) value loses its trailing spaces, the
		// padding results show again (resultcols.go).
		if size, ok := intConst(tc.TypeName.Typmods[0]); ok && size >= 0 {
			cut := makeCall("left", makeCast(tc.Arg, "varchar"), pg_query.MakeAConstIntNode(size, -1))
			if target.oid == schema.OIDBPChar {
				cut = makeCall("rtrim", cut, pg_query.MakeAConstStrNode(" ", -1))
			}
			n.Node = cut.Node
		}
	case target.isText() && len(tc.TypeName.Typmods) == 0:
		switch rw.ti.typeAt(tc.Arg).oid {
		case schema.OIDFloat8:
			n.Node = makeCall("lakesoul_float8_text", tc.Arg).Node
		case schema.OIDFloat4:
			n.Node = makeCall("lakesoul_float4_text", tc.Arg).Node
		}
	}
	return nil
}

// bareNumeric re-spells a cast to numeric without precision, which is
// DuckDB's DECIMAL(18,3) (three fractional digits) but arbitrary precision in
// PostgreSQL: an integer becomes numeric(38,0), a numeric keeps its type, a
// literal the digits it has, and a float stays a double (its digits, as in
// round(x::numeric, n), the usual reason for the cast).
func (rw *pgRewriter) bareNumeric(n *pg_query.Node, tc *pg_query.TypeCast) {
	switch arg := rw.ti.typeAt(tc.Arg); {
	case arg.isInteger():
		n.Node = makeCast(tc.Arg, "numeric(38,0)").Node
	case arg.isNumeric():
		n.Node = tc.Arg.Node
	case arg.isFloat():
		n.Node = makeCast(tc.Arg, "float8").Node
	case arg.literal:
		if sv := tc.Arg.GetAConst().GetSval(); sv != nil {
			if _, err := strconv.ParseFloat(sv.Sval, 64); err == nil && !strings.ContainsAny(sv.Sval, "eEnN") {
				_, frac, _ := strings.Cut(strings.TrimSpace(sv.Sval), ".")
				if len(frac) <= 37 {
					n.Node = makeCast(tc.Arg, fmt.Sprintf("numeric(38,%d)", len(frac))).Node
				}
			}
		}
	}
}

// respellLiteral rewrites the text of a string literal of type oid for
// DuckDB: date/time input in PostgreSQL's forms (dateTimeLiteral), and a
// uuid in its canonical spelling (a malformed one fails with 22P02, as
// PostgreSQL reads literals when it parses them).
func (s *Session) respellLiteral(sv *pg_query.String, oid uint32) error {
	if text, err := numberLiteral(oid, sv.Sval); err != nil {
		return err
	} else if text != "" {
		sv.Sval = text
		return nil
	}
	if oid == schema.OIDUUID {
		u, err := uuid.Parse(strings.TrimSpace(sv.Sval))
		if err != nil {
			return sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type uuid: %q", sv.Sval)
		}
		sv.Sval = u.String()
		return nil
	}
	if text, ok := s.dateTimeLiteral(oid, sv.Sval); ok {
		sv.Sval = text
	}
	return nil
}

// integerTypes are PostgreSQL's integer types: name and range.
var integerTypes = map[uint32]struct {
	name     string
	min, max int64
}{
	schema.OIDInt2: {"smallint", math.MinInt16, math.MaxInt16},
	schema.OIDInt4: {"integer", math.MinInt32, math.MaxInt32},
	schema.OIDInt8: {"bigint", math.MinInt64, math.MaxInt64},
}

// numberLiteral reads the text of a string literal cast to an integer,
// float or numeric type as PostgreSQL's input functions do (DuckDB reads
// '12.5' and '1e3' as integers, and says nothing of ranges), and returns
// its plain spelling for DuckDB; "" for other types and for the forms it
// leaves to DuckDB (NaN and infinity for numeric, hexadecimal floats, more
// digits than DuckDB's DECIMAL holds).
func numberLiteral(oid uint32, text string) (string, error) {
	if it, ok := integerTypes[oid]; ok {
		v, err := pgParseInt(text) // prune.go
		switch {
		case err != nil && !errors.Is(err, errIntRange):
			return "", sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type %s: %q", it.name, text)
		case err != nil || v < it.min || v > it.max:
			return "", sqlerr.New(sqlerr.NumericValueOutOfRange, "value %q is out of range for type %s", text, it.name)
		}
		return strconv.FormatInt(v, 10), nil
	}
	if oid == schema.OIDNumeric {
		plain, ok, err := plainNumeric(text)
		if err != nil || !ok {
			return "", err
		}
		return plain, nil
	}
	if oid == schema.OIDFloat8 || oid == schema.OIDFloat4 {
		name, bits := "double precision", 64
		if oid == schema.OIDFloat4 {
			name, bits = "real", 32
		}
		t := strings.TrimSpace(text)
		if h := strings.TrimLeft(t, "+-"); len(h) > 1 && h[0] == '0' && (h[1] == 'x' || h[1] == 'X') {
			return "", nil // hexadecimal: C's strtod and Go's ParseFloat read different forms; left to DuckDB
		}
		v, err := strconv.ParseFloat(t, bits)
		switch {
		case err != nil && errors.Is(err, strconv.ErrRange):
			return "", sqlerr.New(sqlerr.NumericValueOutOfRange, "%q is out of range for type %s", text, name)
		case err != nil:
			return "", sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type %s: %q", name, text)
		}
		return strconv.FormatFloat(v, 'g', -1, bits), nil
	}
	return "", nil
}

var numericInput = regexp.MustCompile(`^([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?$`)

// plainNumeric reads numeric input text as PostgreSQL does and spells it
// without an exponent, keeping PostgreSQL's scale ('1.50e1' is 15.0, '1e3'
// is 1000). ok is false for NaN and the infinities, and for values beyond
// what DuckDB's DECIMAL holds (38 digits), which the engine leaves alone.
func plainNumeric(text string) (plain string, ok bool, err error) {
	plain, ok, err = plainNumericText(text)
	if !ok || err != nil {
		return "", ok, err
	}
	whole, frac, _ := strings.Cut(strings.TrimPrefix(plain, "-"), ".")
	if len(whole)+len(frac) > 38 || len(frac) > 37 {
		return "", false, nil
	}
	return plain, true, nil
}

// plainNumericText is plainNumeric without DuckDB's limits: the plain
// spelling of any numeric input text.
func plainNumericText(text string) (plain string, ok bool, err error) {
	t := strings.TrimSpace(text)
	m := numericInput.FindStringSubmatch(t)
	if m == nil || m[2] == "" && m[3] == "" {
		switch strings.ToLower(strings.TrimLeft(t, "+-")) {
		case "nan", "inf", "infinity":
			return "", false, nil
		}
		return "", false, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type numeric: %q", text)
	}
	sign, digits, frac := m[1], m[2]+m[3], len(m[3])
	exp := 0
	if m[4] != "" {
		e, err := strconv.Atoi(m[4])
		if err != nil || e > 1000 || e < -1000 {
			return "", false, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type numeric: %q", text)
		}
		exp = e
	}
	scale := max(frac-exp, 0)
	// The value is digits × 10^(exp-frac), written with scale digits after the point.
	shift := exp - frac + scale // ≥ 0: zeros after the digits
	digits += strings.Repeat("0", shift)
	if len(digits) < scale+1 {
		digits = strings.Repeat("0", scale+1-len(digits)) + digits
	}
	whole, fraction := strings.TrimLeft(digits[:len(digits)-scale], "0"), digits[len(digits)-scale:]
	if whole == "" {
		whole = "0"
	}
	if sign == "+" {
		sign = ""
	}
	if fraction != "" {
		return sign + whole + "." + fraction, true, nil
	}
	return sign + whole, true, nil
}

// dateTimeLiteral spells PostgreSQL date/time input text as DuckDB reads it
// with the same meaning: timestamptz as UTC with its offset, timestamp and
// date as the wall clock or date written (PostgreSQL ignores an offset
// there). A timestamptz without an offset is in the session's TimeZone.
// false leaves the text to DuckDB (infinity, named zones, other forms).
func (s *Session) dateTimeLiteral(oid uint32, text string) (string, bool) {
	if oid != schema.OIDTimestamptz && oid != schema.OIDTimestamp && oid != schema.OIDDate {
		return "", false
	}
	loc := s.timeZone()
	var t time.Time
	switch w := strings.ToLower(strings.TrimSpace(text)); w {
	case "epoch":
		t = time.Unix(0, 0).UTC()
	case "now":
		t = time.Now().In(loc)
	case "today", "tomorrow", "yesterday":
		y, m, d := time.Now().In(loc).Date()
		t = time.Date(y, m, d+map[string]int{"today": 0, "tomorrow": 1, "yesterday": -1}[w], 0, 0, 0, 0, loc)
	default:
		var ok bool
		if t, ok = pgwire.ParseDateTime(oid, text, loc); !ok {
			return "", false
		}
	}
	switch oid {
	case schema.OIDTimestamptz:
		return t.UTC().Format("2006-01-02 15:04:05.999999") + "+00", true
	case schema.OIDTimestamp:
		return t.Format("2006-01-02 15:04:05.999999"), true
	}
	return t.Format("2006-01-02"), true
}

// coercibleTypes are the types an untyped literal is cast to where its
// context has that type: those whose text DuckDB reads differently, or
// that DuckDB does not combine with a string (VALUES, CASE, COALESCE).
var coercibleTypes = map[uint32]string{
	schema.OIDTimestamptz: "timestamptz", schema.OIDTimestamp: "timestamp", schema.OIDDate: "date",
	schema.OIDTime: "time", schema.OIDInterval: "interval", schema.OIDUUID: "uuid", schema.OIDBool: "bool",
	schema.OIDInt2: "int2", schema.OIDInt4: "int4", schema.OIDInt8: "int8", schema.OIDFloat4: "float4",
	schema.OIDFloat8: "float8",
}

// coerceLiteral casts n, if it is an untyped string literal or parameter,
// to t. Text that cannot be an array of array type t is 22P02, as
// PostgreSQL reads it.
func (rw *pgRewriter) coerceLiteral(n *pg_query.Node, t pgType) error {
	if n != nil && n.GetParamRef() != nil {
		return coerceParam(n, t)
	}
	if n == nil || n.GetAConst().GetSval() == nil {
		return nil
	}
	if t.oid != 0 && t.oid == schema.VectorOID() {
		wrap(n, vectorInput)
		return nil
	}
	if arrayLiteralType(t.oid) != "" {
		_, err := arrayLiteral(n, t.oid) // arraylit.go
		return err
	}
	if e := rw.s.enumOf(t.oid); e != nil {
		return rw.coerceEnumLiteral(n, e) // enum.go
	}
	name, ok := coercibleTypes[t.oid]
	if !ok {
		return nil
	}
	// Malformed text fails as PostgreSQL reads the literal (22P02, 22003).
	if err := rw.s.respellLiteral(n.GetAConst().GetSval(), t.oid); err != nil {
		return err
	}
	wrap(n, func(inner *pg_query.Node) *pg_query.Node { return makeCast(inner, name) })
	return nil
}

// coerceParam casts a parameter sent without a type to t, the type
// PostgreSQL resolves it to from its context; the parameter is then
// described as t. Types DuckDB would read differently are left to DuckDB's
// own inference (and text when it has none): arrays and vectors have their
// own rules (arrayparams.go, vectorops.go), enums are DuckDB's ENUMs; a
// numeric takes the other operand's precision and scale.
func coerceParam(n *pg_query.Node, t pgType) error {
	name, ok := coercibleTypes[t.oid]
	switch {
	case t.isText():
		name, ok = "text", true
	case t.isNumeric() && t.typmod >= 4:
		name, ok = fmt.Sprintf("numeric(%d,%d)", (t.typmod-4)>>16, (t.typmod-4)&0xffff), true
	}
	if !ok {
		return nil
	}
	return castParam(n, name)
}

func (rw *pgRewriter) coerceLiterals(ns []*pg_query.Node, t pgType) error {
	for _, n := range ns {
		if err := rw.coerceLiteral(n, t); err != nil {
			return err
		}
	}
	return nil
}

// comparisons are the operators whose untyped operand takes the type of
// the other.
var comparisons = map[string]bool{"=": true, "<>": true, "!=": true, "<": true, ">": true, "<=": true, ">=": true}

// sameTypeOperator reports whether PostgreSQL has operator op for two
// operands of type t — the operator its resolution picks when the other
// operand is unknown ("assume it is the same type as the other argument",
// PostgreSQL's operator type resolution): comparisons of any type,
// arithmetic of numbers and intervals, the difference of dates and
// timestamps, the concatenation of text.
func sameTypeOperator(op string, t pgType) bool {
	switch {
	case comparisons[op]:
		return true
	case t.isInteger() || t.isNumeric():
		return op == "+" || op == "-" || op == "*" || op == "/" || op == "%"
	case t.isFloat():
		return op == "+" || op == "-" || op == "*" || op == "/"
	case t.oid == schema.OIDInterval:
		return op == "+" || op == "-"
	case t.oid == schema.OIDDate, t.oid == schema.OIDTimestamp, t.oid == schema.OIDTimestamptz:
		return op == "-"
	case t.isText():
		return op == "||"
	}
	return false
}

// coerceOperands resolves untyped literals and parameters combined with a
// typed operand (=, <, +, ||, IN, BETWEEN …), as PostgreSQL resolves an
// unknown operand: by the other operand's type, where an operator for two
// of that type exists.
func (rw *pgRewriter) coerceOperands(a *pg_query.A_Expr) error {
	l, r := rw.ti.typeAt(a.Lexpr), rw.ti.typeAt(a.Rexpr)
	switch a.Kind {
	case pg_query.A_Expr_Kind_AEXPR_OP, pg_query.A_Expr_Kind_AEXPR_DISTINCT, pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT,
		pg_query.A_Expr_Kind_AEXPR_NULLIF:
		op := operatorName(a)
		if a.Kind == pg_query.A_Expr_Kind_AEXPR_OP && !comparisons[op] {
			// Arithmetic and concatenation: the unknown operand takes the
			// other's type (string literals only where DuckDB would not
			// combine them: numbers and intervals).
			if a.Lexpr == nil {
				return nil
			}
			if l.known() && sameTypeOperator(op, l) {
				if err := rw.coerceOperand(a.Rexpr, l); err != nil {
					return err
				}
			}
			if r.known() && sameTypeOperator(op, r) {
				return rw.coerceOperand(a.Lexpr, r)
			}
			return nil
		}
		if l.known() && r.known() && comparisons[op] && !comparable(l, r) {
			return &sqlerr.Error{Code: sqlerr.UndefinedFunction,
				Message: fmt.Sprintf("operator does not exist: %s %s %s", typeDisplayName(l), op, typeDisplayName(r)),
				Hint:    "No operator matches the given name and argument types. You might need to add explicit type casts."}
		}
		if l.known() {
			if err := rw.coerceLiteral(a.Rexpr, l); err != nil {
				return err
			}
		}
		if r.known() {
			return rw.coerceLiteral(a.Lexpr, r)
		}
	case pg_query.A_Expr_Kind_AEXPR_IN, pg_query.A_Expr_Kind_AEXPR_BETWEEN, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN,
		pg_query.A_Expr_Kind_AEXPR_BETWEEN_SYM, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM:
		if l.known() {
			return rw.coerceLiterals(a.Rexpr.GetList().GetItems(), l)
		}
	}
	return nil
}

// typeCategory is PostgreSQL's type category of the scalar types whose
// comparisons it defines across types within a category only: numbers,
// strings, dates and timestamps; every other type is its own category.
func typeCategory(t pgType) string {
	switch {
	case t.isInteger(), t.isFloat(), t.isNumeric():
		return "N"
	case t.isText():
		return "S"
	case t.oid == schema.OIDDate, t.oid == schema.OIDTimestamp, t.oid == schema.OIDTimestamptz:
		return "D"
	case t.oid == schema.OIDBool:
		return "B"
	}
	return ""
}

// comparable reports whether PostgreSQL compares values of the known types
// l and r with =, <, …: within one of typeCategory's categories. Types
// outside them (uuid, json, enums, arrays, vectors …) are DuckDB's to
// judge.
func comparable(l, r pgType) bool {
	lc, rc := typeCategory(l), typeCategory(r)
	return lc == "" || rc == "" || lc == rc
}

// typeDisplayName names a type as PostgreSQL's messages do.
func typeDisplayName(t pgType) string {
	if n, ok := map[uint32]string{schema.OIDInt2: "smallint", schema.OIDInt4: "integer", schema.OIDInt8: "bigint",
		schema.OIDFloat4: "real", schema.OIDFloat8: "double precision", schema.OIDNumeric: "numeric",
		schema.OIDText: "text", schema.OIDVarchar: "character varying", schema.OIDBPChar: "character",
		schema.OIDDate: "date", schema.OIDTimestamp: "timestamp without time zone",
		schema.OIDTimestamptz: "timestamp with time zone", schema.OIDBool: "boolean"}[t.oid]; ok {
		return n
	}
	return "unknown"
}

// coerceOperand resolves an unknown operand of arithmetic or
// concatenation to t: a parameter always (coerceParam), a string literal
// when t is a number, an interval, a date or a timestamp — DuckDB has no
// operator for those and a string, and text concatenation reads the
// literal as text anyway.
func (rw *pgRewriter) coerceOperand(n *pg_query.Node, t pgType) error {
	switch {
	case n.GetParamRef() != nil:
		return coerceParam(n, t)
	case n.GetAConst().GetSval() == nil:
		return nil
	case t.isInteger() || t.isFloat() || t.oid == schema.OIDInterval || t.oid == schema.OIDDate ||
		t.oid == schema.OIDTimestamp || t.oid == schema.OIDTimestamptz:
		return rw.coerceLiteral(n, t)
	case t.isNumeric():
		// The literal's own digits, as PostgreSQL reads '1.5' as numeric.
		text := strings.TrimSpace(n.GetAConst().GetSval().Sval)
		if _, err := strconv.ParseFloat(text, 64); err != nil || strings.ContainsAny(text, "eEnNiI") {
			return sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type numeric: %q", text)
		}
		_, frac, _ := strings.Cut(text, ".")
		if len(frac) > 37 {
			return nil
		}
		wrap(n, func(inner *pg_query.Node) *pg_query.Node {
			return makeCast(inner, fmt.Sprintf("numeric(38,%d)", len(frac)))
		})
	}
	return nil
}

// namedRow names the fields of a ROW(…) value f1, f2, … as PostgreSQL
// names a record's columns: DuckDB's row() is a struct without field names,
// which its client cannot describe. Rows compared with rows (=, IN, a
// subquery's row) stay DuckDB's rows.
func (rw *pgRewriter) namedRow(n *pg_query.Node, r *pg_query.RowExpr) {
	var args []*pg_query.Node
	for i, a := range r.Args {
		args = append(args, &pg_query.Node{Node: &pg_query.Node_NamedArgExpr{NamedArgExpr: &pg_query.NamedArgExpr{
			Arg: a, Name: fmt.Sprintf("f%d", i+1), Argnumber: -1, Location: -1}}})
	}
	n.Node = makeCall("struct_pack", args...).Node
}

// comparedRows returns the ROW(…) nodes of stmt that are compared with
// other rows.
func comparedRows(stmt *pg_query.Node) map[*pg_query.Node]bool {
	out := map[*pg_query.Node]bool{}
	mark := func(ns ...*pg_query.Node) {
		for _, n := range ns {
			if n.GetRowExpr() != nil {
				out[n] = true
			}
		}
	}
	walk(stmt, func(n *pg_query.Node) {
		switch {
		case n.GetAExpr() != nil:
			a := n.GetAExpr()
			mark(a.Lexpr, a.Rexpr)
			mark(a.Rexpr.GetList().GetItems()...)
		case n.GetSubLink() != nil:
			mark(n.GetSubLink().Testexpr)
		}
	})
	return out
}

// values resolves the untyped literals of each VALUES column to the
// column's type.
func (rw *pgRewriter) values(sel *pg_query.SelectStmt) error {
	if len(sel.ValuesLists) == 0 {
		return nil
	}
	var cols [][]*pg_query.Node
	for _, row := range sel.ValuesLists {
		for i, it := range row.GetList().GetItems() {
			if i >= len(cols) {
				cols = append(cols, nil)
			}
			cols[i] = append(cols[i], it)
		}
	}
	for _, col := range cols {
		ts := make([]pgType, len(col))
		for i, n := range col {
			ts[i] = rw.ti.typeAt(n)
		}
		if err := rw.coerceLiterals(col, commonType(ts)); err != nil {
			return err
		}
	}
	return nil
}

// tableFunction names the column of a base-type function in FROM after its
// alias, and makes generate_series over integers integer.
func (rw *pgRewriter) tableFunction(n *pg_query.Node, rf *pg_query.RangeFunction) {
	if len(rf.Functions) != 1 || rf.Ordinality || rf.IsRowsfrom || len(rf.Coldeflist) > 0 {
		return
	}
	items := rf.Functions[0].GetList().GetItems()
	if len(items) == 0 || items[0].GetFuncCall() == nil {
		return
	}
	fc := items[0].GetFuncCall()
	name := funcName(fc)
	if !scalarTableFunctions[name] || name == "unnest" && len(fc.Args) != 1 {
		return
	}
	if rf.Alias == nil {
		rf.Alias = &pg_query.Alias{Aliasname: name}
	}
	if len(rf.Alias.Colnames) == 0 {
		rf.Alias.Colnames = []*pg_query.Node{pg_query.MakeStrNode(rf.Alias.Aliasname)}
	}
	if name != "generate_series" {
		return
	}
	args := make([]pgType, len(fc.Args))
	for i, a := range fc.Args {
		args[i] = rw.ti.typeAt(a)
	}
	if t := seriesType(args); t.oid != schema.OIDInt4 && t.oid != schema.OIDInt2 {
		return
	}
	// DuckDB's generate_series is bigint: LATERAL (SELECT CAST(v AS int4)
	// AS col FROM generate_series(…) AS lakesoul_series(v)) AS alias.
	col := rf.Alias.Colnames[0].GetString_().GetSval()
	inner := &pg_query.RangeFunction{Functions: rf.Functions, Lateral: true,
		Alias: &pg_query.Alias{Aliasname: "lakesoul_series", Colnames: []*pg_query.Node{pg_query.MakeStrNode("v")}}}
	target := resTarget(col, makeCast(colRef("lakesoul_series", "v"), "int4"))
	sub := selectNode([]*pg_query.Node{target}, []*pg_query.Node{{Node: &pg_query.Node_RangeFunction{RangeFunction: inner}}}, nil)
	n.Node = &pg_query.Node_RangeSubselect{RangeSubselect: &pg_query.RangeSubselect{Lateral: true, Subquery: sub,
		Alias: &pg_query.Alias{Aliasname: rf.Alias.Aliasname, Colnames: rf.Alias.Colnames}}}
}
