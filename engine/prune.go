package engine

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/layout"
	"github.com/lakesoul-go/lakesoul/reader"
	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Pruning. A lake table that is a plain FROM item of a SELECT gets the
// AND-conjuncts of that SELECT's WHERE that compare one of its columns with
// a constant or a bind parameter ($n): `=`, `<>`, `IN (…)`, `<`, `<=`, `>`,
// `>=`, `BETWEEN`. They are resolved when the statement executes, with its
// parameters:
//
//   - terms on range-partition columns keep only the matching partitions
//     (equalities and IN lists also list only those, prunefetch.go);
//   - equalities pinning every primary-key column keep only the buckets
//     those keys hash to;
//   - every term on a primary-key column (but <>) becomes the reader's key
//     filter, which skips files, row groups and pages inside the merge
//     (reader/prune.go);
//   - the other terms (other columns, <> on the key) become the reader's
//     row filter, applied to the merged rows before they leave the reader
//     (and deciding which rows' other columns are decoded at all).
//
// DuckDB still applies the whole WHERE, so pruning only ever removes rows
// that cannot match; a query whose WHERE is nothing but such terms, each
// comparing as the column's values do, may skip DuckDB (directscan.go),
// the reader then being exact. A constant that cannot be of its column's
// type fails as PostgreSQL fails it (22P02, 22003), when the statement is
// planned.

// pruneOp is a term's comparison.
type pruneOp uint8

const (
	opEq pruneOp = iota // = (and IN)
	opLt
	opLe
	opGt
	opGe
	opNe
	opAny // the column satisfies the terms of one of alts (an OR's hull, pruneor.go)
)

// termArgKind says what a term's argument is.
type termArgKind uint8

const (
	termInt     termArgKind = iota + 1 // an integer literal (text holds its digits)
	termString                         // an untyped string literal: takes the column's type
	termCast                           // a typed constant: text::cast
	termParam                          // a bind parameter $param
	termNumeric                        // a numeric constant (text: numericText or big.Rat's "a/b"; prunenumeric.go)
)

// pruneArg is one argument of a term: a constant or a parameter.
type pruneArg struct {
	kind  termArgKind
	text  string
	cast  string // termCast: the type name, lower case
	param int    // termParam: 1-based
}

// pruneTerm is `col op arg`, or `col IN (args)` (opEq with several args),
// or (opAny) the disjunction of alts, each the AND of its terms on col.
type pruneTerm struct {
	col  string
	op   pruneOp
	args []pruneArg
	alts [][]pruneTerm
}

// pruneInput is what a WHERE says about the columns of one FROM item.
type pruneInput struct {
	terms []pruneTerm
	// exact is set when the WHERE is nothing but these terms, ANDed, of a
	// statement reading only this FROM item.
	exact bool
}

// termOf reads one conjunct as terms on one column that col resolves
// (col returns "" for anything else); implied is set when the terms are
// implied by the conjunct without being equivalent to it (LIKE 'prefix%'
// as a range), so the reader's filter is not the conjunct itself.
func termOf(cond *pg_query.Node, col func(*pg_query.Node) string) (terms []pruneTerm, implied, ok bool) {
	if b := cond.GetBoolExpr(); b != nil && b.Boolop == pg_query.BoolExprType_OR_EXPR {
		return orTerms(b.Args, col) // pruneor.go
	}
	e := cond.GetAExpr()
	if e == nil || len(e.Name) != 1 || e.Name[0].GetString_() == nil {
		return nil, false, false
	}
	op := e.Name[0].GetString_().Sval
	switch e.Kind {
	case pg_query.A_Expr_Kind_AEXPR_OP:
		ops := map[string][2]pruneOp{"=": {opEq, opEq}, "<>": {opNe, opNe}, "<": {opLt, opGt}, "<=": {opLe, opGe}, ">": {opGt, opLt}, ">=": {opGe, opLe}}
		o, ok := ops[op]
		if !ok {
			return nil, false, false
		}
		c, v, flip := col(e.Lexpr), e.Rexpr, false
		if c == "" {
			c, v, flip = col(e.Rexpr), e.Lexpr, true
		}
		a, ok := argOf(v)
		if c == "" || !ok {
			return nil, false, false
		}
		t := pruneTerm{col: c, op: o[0], args: []pruneArg{a}}
		if flip {
			t.op = o[1]
		}
		return []pruneTerm{t}, false, true
	case pg_query.A_Expr_Kind_AEXPR_IN:
		c := col(e.Lexpr)
		list := e.Rexpr.GetList()
		if c == "" || list == nil || (op != "=" && op != "<>") {
			return nil, false, false
		}
		var args []pruneArg
		for _, it := range list.Items {
			a, ok := argOf(it)
			if !ok {
				return nil, false, false
			}
			args = append(args, a)
		}
		if op == "=" {
			return []pruneTerm{{col: c, op: opEq, args: args}}, false, true
		}
		// NOT IN (a, b) is <> a AND <> b (a NULL among them: no row).
		var terms []pruneTerm
		for _, a := range args {
			terms = append(terms, pruneTerm{col: c, op: opNe, args: []pruneArg{a}})
		}
		return terms, false, true
	case pg_query.A_Expr_Kind_AEXPR_BETWEEN:
		c := col(e.Lexpr)
		list := e.Rexpr.GetList()
		if c == "" || list == nil || len(list.Items) != 2 {
			return nil, false, false
		}
		lo, ok1 := argOf(list.Items[0])
		hi, ok2 := argOf(list.Items[1])
		if !ok1 || !ok2 {
			return nil, false, false
		}
		return []pruneTerm{{col: c, op: opGe, args: []pruneArg{lo}}, {col: c, op: opLe, args: []pruneArg{hi}}}, false, true
	case pg_query.A_Expr_Kind_AEXPR_LIKE:
		// col LIKE 'prefix%…' (default escape) implies prefix <= col <
		// the next prefix, bytewise as text compares here.
		c := col(e.Lexpr)
		pat := e.Rexpr.GetAConst()
		if op != "~~" || c == "" || pat == nil || pat.GetSval() == nil {
			return nil, false, false
		}
		lo, hi, ok := likePrefixRange(pat.GetSval().Sval)
		if !ok {
			return nil, false, false
		}
		terms := []pruneTerm{{col: c, op: opGe, args: []pruneArg{{kind: termCast, cast: "text", text: lo}}}}
		if hi != "" {
			terms = append(terms, pruneTerm{col: c, op: opLt, args: []pruneArg{{kind: termCast, cast: "text", text: hi}}})
		}
		return terms, true, true
	}
	return nil, false, false
}

// likePrefixRange is the range of the strings a LIKE pattern can match
// when it starts with literal characters: [lo, hi) with lo the prefix and
// hi the prefix with its last byte below 0xff incremented (bytes after it
// dropped; "" when there is none: no upper bound). ok is false when the
// pattern has no literal prefix or uses the escape character.
func likePrefixRange(pat string) (lo, hi string, ok bool) {
	i := strings.IndexAny(pat, "%_\\")
	if i <= 0 || pat[i] == '\\' {
		return "", "", false
	}
	lo = pat[:i]
	b := []byte(lo)
	for len(b) > 0 && b[len(b)-1] == 0xff {
		b = b[:len(b)-1]
	}
	if len(b) > 0 {
		b[len(b)-1]++
	}
	return lo, string(b), true
}

// argOf reads a constant or parameter; NULL, expressions other than date
// and numeric arithmetic on constants, and casts with a type modifier are
// not arguments.
func argOf(n *pg_query.Node) (pruneArg, bool) {
	if e := n.GetAExpr(); e != nil {
		if a, ok := foldDateArith(e); ok { // prunefold.go
			return a, true
		}
		return foldNumericArith(e) // prunenumeric.go
	}
	if p := n.GetParamRef(); p != nil {
		return pruneArg{kind: termParam, param: int(p.Number)}, true
	}
	if tc := n.GetTypeCast(); tc != nil {
		if p := tc.Arg.GetParamRef(); p != nil {
			return pruneArg{kind: termParam, param: int(p.Number)}, true // castDeclaredParams' casts
		}
		c := tc.Arg.GetAConst()
		if c == nil || c.Isnull || tc.TypeName == nil || len(tc.TypeName.Typmods) > 0 || len(tc.TypeName.ArrayBounds) > 0 {
			// A type modifier can change the value ('0.055'::numeric(15,2)
			// is 0.06, 'abc'::varchar(2) is 'ab'): no constant.
			return pruneArg{}, false
		}
		text, ok := stringValue(tc.Arg)
		if !ok {
			return pruneArg{}, false
		}
		return pruneArg{kind: termCast, text: text, cast: strings.ToLower(typeNameString(tc.TypeName))}, true
	}
	c := n.GetAConst()
	if c == nil || c.Isnull {
		return pruneArg{}, false
	}
	switch {
	case c.GetIval() != nil:
		return pruneArg{kind: termInt, text: fmt.Sprint(c.GetIval().Ival)}, true
	case c.GetFval() != nil:
		if _, err := pgParseInt(c.GetFval().Fval); err == nil {
			return pruneArg{kind: termInt, text: c.GetFval().Fval}, true // beyond int4
		}
		if _, ok := numericText(c.GetFval().Fval); ok {
			return pruneArg{kind: termNumeric, text: c.GetFval().Fval}, true
		}
	case c.GetSval() != nil:
		return pruneArg{kind: termString, text: c.GetSval().Sval}, true
	}
	return pruneArg{}, false
}

// pruneSpec is a pruneInput resolved against a table and an execution's
// parameters.
type pruneSpec struct {
	// ranges holds the allowed values of range columns an equality or IN
	// pins; bounds the constraints of the others (intervals, <>).
	ranges map[string]allowedValues
	bounds map[string]*colConstraint
	// buckets holds the buckets the pinned keys hash to (nil = all).
	buckets map[int]bool
	// keys filters the primary key inside the merge (nil = no filter);
	// rows filters the merged rows (nil = no filter).
	keys *reader.KeyFilter
	rows *reader.RowFilter
}

type allowedValues struct {
	dt   arrow.DataType
	vals []any
}

// colFamily is how a column's values are compared for pruning; 0 for
// columns no term prunes.
type colFamily uint8

const (
	famInt colFamily = iota + 1
	famText
	famDate
	famTimestamp
	famDecimal // DECIMAL of up to 18 digits: int64 unscaled values (prunenumeric.go)
)

func familyOf(dt arrow.DataType) colFamily {
	switch t := dt.(type) {
	case *arrow.Int8Type, *arrow.Int16Type, *arrow.Int32Type, *arrow.Int64Type:
		return famInt
	case *arrow.StringType:
		return famText
	case *arrow.Date32Type:
		return famDate
	case *arrow.TimestampType:
		if t.TimeZone == "" && t.Unit == arrow.Microsecond {
			return famTimestamp
		}
	case *arrow.Decimal128Type:
		if t.Precision <= 18 && t.Scale >= 0 && t.Scale <= t.Precision {
			return famDecimal
		}
	}
	return 0
}

// scaleOf is the scale of the int64 values of a column of family famInt
// or famDecimal.
func scaleOf(dt arrow.DataType) int32 {
	if d, ok := dt.(*arrow.Decimal128Type); ok {
		return d.Scale
	}
	return 0
}

// fieldFamily is the family of column f: familyOf its type, except that a
// text-stored column of another PostgreSQL type (uuid, json, char(n), …)
// has none — its values do not compare as their text does ('A0EE…' equals
// the stored 'a0ee…' as a uuid).
func fieldFamily(f arrow.Field) colFamily {
	fam := familyOf(f.Type)
	if fam == famText {
		if oid, _ := schema.PGTypeOf(f); oid != schema.OIDText && oid != schema.OIDVarchar {
			return 0
		}
	}
	return fam
}

// castFamilies are the type names of typed constants whose comparison with a
// column of the family compares the values as the family does.
var castFamilies = map[string]colFamily{
	"int2": famInt, "int4": famInt, "int8": famInt, "smallint": famInt, "integer": famInt, "int": famInt, "bigint": famInt,
	"text": famText, "varchar": famText, "date": famDate, "timestamp": famTimestamp,
}

// paramFamilies are the parameter types that compare with a column of the
// family as the family does.
var paramFamilies = map[uint32]colFamily{
	schema.OIDInt2: famInt, schema.OIDInt4: famInt, schema.OIDInt8: famInt,
	schema.OIDText: famText, schema.OIDVarchar: famText, schema.OIDDate: famDate, schema.OIDTimestamp: famTimestamp,
}

// argValue is a term argument's value for a column of type dt, normalised
// as the key filter takes it (int64 for integers, dates and timestamps;
// string for text; nil for SQL NULL) — except numeric constants on integer
// and DECIMAL columns, which are a *big.Rat for scaledTerm to place among
// the column's values. ok is false when the argument says
// nothing exact about the column: a parameter not yet known or of another
// type, a constant DuckDB would compare differently. err is PostgreSQL's
// error for a constant that cannot be of the column's type.
func argValue(a pruneArg, dt arrow.DataType, params []any) (v any, ok bool, err error) {
	fam := familyOf(dt)
	if r, ok := numericArg(a, fam); ok {
		return r, true, nil
	}
	if fam == famDecimal {
		return nil, false, nil
	}
	switch a.kind {
	case termParam:
		if params == nil || a.param < 1 || a.param > len(params) {
			return nil, false, nil
		}
		switch p := params[a.param-1].(type) {
		case nil:
			return nil, true, nil
		case int16:
			return int64(p), fam == famInt, nil
		case int32:
			return int64(p), fam == famInt, nil
		case int64:
			return p, fam == famInt, nil
		case string:
			return p, fam == famText, nil
		case time.Time:
			switch fam {
			case famDate:
				days := p.Unix() / 86400
				if p.Unix()%86400 != 0 || p.Nanosecond() != 0 {
					return nil, false, nil
				}
				return days, true, nil
			case famTimestamp:
				return p.UnixMicro(), p.Nanosecond()%1000 == 0, nil
			}
		}
		return nil, false, nil
	case termInt:
		if fam != famInt {
			return nil, false, nil
		}
		n, err := pgParseInt(a.text)
		return n, err == nil, nil
	case termCast:
		if castFamilies[a.cast] != fam {
			return nil, false, nil
		}
		a.kind = termString
		return argValue(a, dt, params)
	case termString:
		switch fam {
		case famText:
			return a.text, true, nil
		case famInt:
			n, err := pgParseInt(a.text)
			if err != nil && !errors.Is(err, errIntRange) {
				return nil, false, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type %s: %q", pgIntName(dt), a.text)
			}
			if lo, hi := intRange(dt); err != nil || n < lo || n > hi {
				return nil, false, sqlerr.New(sqlerr.NumericValueOutOfRange, "value %q is out of range for type %s", a.text, pgIntName(dt))
			}
			return n, true, nil
		case famDate:
			d, err := layout.ParseValue(a.text, dt)
			if d, isDate := d.(arrow.Date32); err == nil && isDate {
				return int64(d), true, nil
			}
		case famTimestamp:
			if us, ok := isoTimestamp(a.text); ok {
				return us, true, nil
			}
		}
	}
	return nil, false, nil
}

// numericArg is a as an exact number for a column of family fam: numeric
// constants for integer and DECIMAL columns; integer literals, numeric text
// and casts to numeric or integer types for DECIMAL columns. false for
// anything else (parameters among them).
func numericArg(a pruneArg, fam colFamily) (*big.Rat, bool) {
	if fam != famInt && fam != famDecimal {
		return nil, false
	}
	if a.kind == termNumeric {
		return ratOf(a.text)
	}
	if fam != famDecimal {
		return nil, false
	}
	switch a.kind {
	case termInt:
		if n, err := pgParseInt(a.text); err == nil {
			return new(big.Rat).SetInt64(n), true
		}
	case termString:
		return numericText(a.text)
	case termCast:
		switch a.cast {
		case "numeric", "decimal":
			return numericText(a.text)
		}
		if castFamilies[a.cast] == famInt {
			if n, err := pgParseInt(a.text); err == nil {
				return new(big.Rat).SetInt64(n), true
			}
		}
	}
	return nil, false
}

// pgParseInt reads integer text as PostgreSQL's int8 input does: surrounding
// whitespace, a sign, decimal digits (or 0x/0o/0b), single underscores
// between digits.
func pgParseInt(s string) (int64, error) {
	bad := fmt.Errorf("invalid integer %q", s)
	s = strings.Trim(s, " \t\n\r\f\v")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg, s = s[0] == '-', s[1:]
	}
	base := uint64(10)
	if len(s) > 2 && s[0] == '0' {
		switch s[1] {
		case 'x', 'X':
			base, s = 16, s[2:]
		case 'o', 'O':
			base, s = 8, s[2:]
		case 'b', 'B':
			base, s = 2, s[2:]
		}
	}
	if s == "" || s[0] == '_' || s[len(s)-1] == '_' || strings.Contains(s, "__") {
		return 0, bad
	}
	var u uint64
	over := false
	for _, r := range s {
		if r == '_' {
			continue
		}
		var d uint64
		switch {
		case r >= '0' && r <= '9':
			d = uint64(r - '0')
		case r >= 'a' && r <= 'f':
			d = uint64(r-'a') + 10
		case r >= 'A' && r <= 'F':
			d = uint64(r-'A') + 10
		default:
			return 0, bad
		}
		if d >= base {
			return 0, bad
		}
		if u > (1<<63)/base {
			over = true // keep reading: later characters may still be invalid
			continue
		}
		u = u*base + d
	}
	switch {
	case over:
	case neg && u <= 1<<63:
		return int64(-u), nil
	case !neg && u < 1<<63:
		return int64(u), nil
	}
	return 0, errIntRange
}

// errIntRange is pgParseInt's error for a well-formed integer beyond int8.
var errIntRange = errors.New("integer out of range")

// intRange is the value range of an integer column type.
func intRange(dt arrow.DataType) (int64, int64) {
	switch dt.ID() {
	case arrow.INT8:
		return math.MinInt8, math.MaxInt8
	case arrow.INT16:
		return math.MinInt16, math.MaxInt16
	case arrow.INT32:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

// pgIntName is PostgreSQL's name of an integer column type.
func pgIntName(dt arrow.DataType) string {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16:
		return "smallint"
	case arrow.INT32:
		return "integer"
	}
	return "bigint"
}

// colConstraint accumulates the terms on one column.
type colConstraint struct {
	dt arrow.DataType
	// points are the values an equality allows (nil: none given).
	points []any
	pinned bool
	lo, hi reader.Cond // only the Lower/Upper halves are used
	// excl are the values a <> term rules out; none says a <> NULL ruled
	// out every row.
	excl []any
	none bool
}

// compareNorm orders two normalised values of one family.
func compareNorm(a, b any) int {
	if x, ok := a.(string); ok {
		return strings.Compare(x, b.(string))
	}
	x, y := a.(int64), b.(int64)
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func (c *colConstraint) addPoints(vals []any) {
	vals = slices.DeleteFunc(slices.Clone(vals), func(v any) bool { return v == nil })
	if !c.pinned {
		c.points, c.pinned = vals, true
		return
	}
	c.points = slices.DeleteFunc(c.points, func(v any) bool {
		return !slices.ContainsFunc(vals, func(w any) bool { return compareNorm(v, w) == 0 })
	})
}

// addBound tightens the interval by `col op v`, or excludes v (opNe).
func (c *colConstraint) addBound(op pruneOp, v any) {
	if v == nil { // a comparison with NULL holds for no row
		c.addPoints(nil)
		return
	}
	if op == opNe {
		c.excl = append(c.excl, v)
		return
	}
	if op == opGt || op == opGe {
		incl := op == opGe
		if c.lo.Lower == nil || compareNorm(v, c.lo.Lower) > 0 || (compareNorm(v, c.lo.Lower) == 0 && !incl) {
			c.lo.Lower, c.lo.LowerInclusive = v, incl
		}
		return
	}
	incl := op == opLe
	if c.hi.Upper == nil || compareNorm(v, c.hi.Upper) < 0 || (compareNorm(v, c.hi.Upper) == 0 && !incl) {
		c.hi.Upper, c.hi.UpperInclusive = v, incl
	}
}

// allows reports whether v satisfies every term: in the points (when
// pinned), in the interval, not excluded.
func (c *colConstraint) allows(v any) bool {
	if c.pinned && !slices.ContainsFunc(c.points, func(p any) bool { return compareNorm(p, v) == 0 }) {
		return false
	}
	return c.inBounds(v) && !slices.ContainsFunc(c.excl, func(x any) bool { return compareNorm(x, v) == 0 })
}

// cond is c as a reader condition on column col.
func (c *colConstraint) cond(col string) reader.Cond {
	rc := reader.Cond{Column: col, In: c.pinned, Exclude: c.excl}
	if c.pinned {
		rc.Values = []any{}
		for _, v := range c.points {
			if c.allows(v) {
				rc.Values = append(rc.Values, v)
			}
		}
		return rc
	}
	rc.Lower, rc.LowerInclusive = c.lo.Lower, c.lo.LowerInclusive
	rc.Upper, rc.UpperInclusive = c.hi.Upper, c.hi.UpperInclusive
	return rc
}

// inBounds reports whether v lies in the interval.
func (c *colConstraint) inBounds(v any) bool {
	if c.lo.Lower != nil {
		if d := compareNorm(v, c.lo.Lower); d < 0 || (d == 0 && !c.lo.LowerInclusive) {
			return false
		}
	}
	if c.hi.Upper != nil {
		if d := compareNorm(v, c.hi.Upper); d > 0 || (d == 0 && !c.hi.UpperInclusive) {
			return false
		}
	}
	return true
}

// checkPrune resolves in's constants against t, for the errors PostgreSQL
// gives when it plans the statement.
func checkPrune(in *pruneInput, t *catalog.Table) error {
	_, err := resolvePrune(in, t, nil)
	return err
}

// exactFor reports whether the reader can evaluate the whole WHERE of in
// exactly for t, with parameters of the given types: every term is on a
// column of a family the reader compares (the key and row filters, the
// partition values) and every argument compares as the column's values
// do.
func (in *pruneInput) exactFor(t *catalog.Table, paramOIDs []uint32) bool {
	if in == nil || !in.exact {
		return false
	}
	for _, term := range in.terms {
		idx := t.Schema.FieldIndices(term.col)
		if len(idx) == 0 {
			return false
		}
		dt := t.Schema.Field(idx[0]).Type
		fam := fieldFamily(t.Schema.Field(idx[0]))
		if fam == 0 {
			return false
		}
		if term.op == opAny {
			return false // implied by its OR, not the OR itself
		}
		for _, a := range term.args {
			if a.kind == termParam {
				if a.param < 1 || a.param > len(paramOIDs) || paramFamilies[paramOIDs[a.param-1]] != fam {
					return false
				}
				continue
			}
			v, ok, err := argValue(a, dt, nil)
			if _, isRat := v.(*big.Rat); !ok || err != nil || isRat {
				return false // numeric constants are left to DuckDB to decide
			}
		}
	}
	return true
}

// resolvePrune evaluates in against t with an execution's parameters (nil:
// terms with parameters say nothing); nil when nothing prunes.
func resolvePrune(in *pruneInput, t *catalog.Table, params []any) (*pruneSpec, error) {
	if in == nil {
		return nil, nil
	}
	// Terms on key and partition columns, and the row filter's: <> on a
	// key column goes to the row filter (it prunes nothing).
	cons, rowCons := map[string]*colConstraint{}, map[string]*colConstraint{}
	var rowOrder []string
	// constraintOf is term col's constraint, in the row filter's map (kept in
	// first-seen order) or the pruning map.
	constraintOf := func(col string, dt arrow.DataType, isRow bool) *colConstraint {
		into := cons
		if isRow {
			into = rowCons
		}
		c := into[col]
		if c == nil {
			c = &colConstraint{dt: dt}
			into[col] = c
			if isRow {
				rowOrder = append(rowOrder, col)
			}
		}
		return c
	}
	for _, term := range in.terms {
		idx := t.Schema.FieldIndices(term.col)
		if len(idx) == 0 {
			continue
		}
		dt := t.Schema.Field(idx[0]).Type
		fam := fieldFamily(t.Schema.Field(idx[0]))
		if fam == 0 || (fam == famDecimal && slices.Contains(t.RangeCols, term.col)) {
			continue
		}
		if term.op == opAny {
			hull, err := resolveAny(term, dt, params)
			if err != nil {
				return nil, err
			}
			if hull == nil {
				continue
			}
			isRow := !slices.Contains(t.RangeCols, term.col) && (!slices.Contains(t.PKCols, term.col) || fam == famDecimal)
			hull.applyTo(constraintOf(term.col, dt, isRow))
			continue
		}
		op, vals, usable, err := termValues(term, dt, params)
		if err != nil {
			return nil, err
		}
		if !usable {
			continue
		}
		// Terms on DECIMAL key columns are row-filter terms: the key
		// filter compares key values as the files store them.
		isRow := !slices.Contains(t.RangeCols, term.col) && (!slices.Contains(t.PKCols, term.col) || op == opNe || fam == famDecimal)
		c := constraintOf(term.col, dt, isRow)
		if op == opEq {
			c.addPoints(vals)
		} else {
			c.addBound(op, vals[0])
		}
	}
	sp := &pruneSpec{ranges: map[string]allowedValues{}, bounds: map[string]*colConstraint{}}
	for _, col := range t.RangeCols {
		c := cons[col]
		if c == nil {
			continue
		}
		if !c.pinned {
			sp.bounds[col] = c
			continue
		}
		av := allowedValues{dt: c.dt, vals: []any{}}
		for _, v := range c.points {
			if c.allows(v) {
				if tv, ok := typedValue(c.dt, v); ok {
					av.vals = append(av.vals, tv)
				}
			}
		}
		sp.ranges[col] = av
	}
	if t.HasPK() {
		allPinned := true
		var keyCols [][]any
		var keyTypes []arrow.DataType
		for _, col := range t.PKCols {
			c := cons[col]
			if c == nil {
				allPinned = false
				continue
			}
			kc := c.cond(col)
			if c.pinned {
				var typed []any
				for _, v := range kc.Values {
					if tv, ok := typedValue(c.dt, v); ok {
						typed = append(typed, tv)
					}
				}
				keyCols, keyTypes = append(keyCols, typed), append(keyTypes, c.dt)
			} else {
				allPinned = false
			}
			if sp.keys == nil {
				sp.keys = &reader.KeyFilter{}
			}
			sp.keys.Conds = append(sp.keys.Conds, kc)
		}
		if allPinned && t.HashBucketNum > 1 {
			sp.buckets = keyBuckets(keyCols, keyTypes, t.HashBucketNum)
		}
	}
	for _, col := range rowOrder {
		if sp.rows == nil {
			sp.rows = &reader.RowFilter{}
		}
		sp.rows.Conds = append(sp.rows.Conds, rowCons[col].cond(col))
	}
	if len(sp.ranges) == 0 && len(sp.bounds) == 0 && sp.buckets == nil && sp.keys == nil && sp.rows == nil {
		return nil, nil
	}
	return sp, nil
}

// termValues resolves the arguments of a term (not opAny) on a column of
// type dt: the comparison and its normalised values (numeric constants
// placed among the column's values, which may change the comparison);
// usable is false when some argument says nothing exact, err is
// PostgreSQL's error for a constant that cannot be of the column's type.
func termValues(term pruneTerm, dt arrow.DataType, params []any) (op pruneOp, vals []any, usable bool, err error) {
	usable, op = true, term.op
	for _, a := range term.args {
		v, ok, err := argValue(a, dt, params)
		if err != nil {
			return op, nil, false, err
		}
		if r, isRat := v.(*big.Rat); ok && isRat {
			op, v, ok = scaledTerm(term.op, r, scaleOf(dt))
		}
		if !ok {
			usable = false
			continue // keep checking the other constants for errors
		}
		vals = append(vals, v)
	}
	return op, vals, usable, nil
}

// typedValue converts a normalised value to the Go type layout.ParseValue
// gives for dt; false when the value is out of the type's range (it then
// equals no value of the column).
func typedValue(dt arrow.DataType, v any) (any, bool) {
	if s, ok := v.(string); ok {
		return s, true
	}
	n := v.(int64)
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32:
		if lo, hi := intRange(dt); n < lo || n > hi {
			return nil, false
		}
	case arrow.DATE32:
		if n < math.MinInt32 || n > math.MaxInt32 {
			return nil, false
		}
	}
	switch dt.ID() {
	case arrow.INT8:
		return int8(n), true
	case arrow.INT16:
		return int16(n), true
	case arrow.INT32:
		return int32(n), true
	case arrow.DATE32:
		return arrow.Date32(n), true
	case arrow.TIMESTAMP:
		return arrow.Timestamp(n), true
	}
	return n, true
}

// keyBuckets hashes every combination of the pinned key values; an empty
// set when some column allows no value.
func keyBuckets(cols [][]any, types []arrow.DataType, n int) map[int]bool {
	combos := 1
	for _, c := range cols {
		combos *= len(c)
	}
	if combos == 0 {
		return map[int]bool{}
	}
	if combos > 4096 {
		return nil
	}
	arrs := make([]arrow.Array, len(cols))
	for i, vals := range cols {
		b := array.NewBuilder(memory.DefaultAllocator, types[i])
		for k := 0; k < combos; k++ {
			// Mixed-radix enumeration of the combinations.
			stride := 1
			for j := i + 1; j < len(cols); j++ {
				stride *= len(cols[j])
			}
			if !appendKeyValue(b, vals[(k/stride)%len(vals)]) {
				b.Release()
				return nil
			}
		}
		arrs[i] = b.NewArray()
		b.Release()
		defer arrs[i].Release()
	}
	hashes := make([]uint32, combos)
	if err := layout.HashRows(arrs, hashes); err != nil {
		return nil
	}
	out := map[int]bool{}
	for _, h := range hashes {
		out[layout.BucketOf(h, n)] = true
	}
	return out
}

func appendKeyValue(b array.Builder, v any) bool {
	switch bb := b.(type) {
	case *array.Int8Builder:
		bb.Append(v.(int8))
	case *array.Int16Builder:
		bb.Append(v.(int16))
	case *array.Int32Builder:
		bb.Append(v.(int32))
	case *array.Int64Builder:
		bb.Append(v.(int64))
	case *array.StringBuilder:
		bb.Append(v.(string))
	case *array.Date32Builder:
		bb.Append(v.(arrow.Date32))
	default:
		return false
	}
	return true
}

// pruneCounts is what a spec kept of a snapshot, for EXPLAIN.
type pruneCounts struct {
	partitions, partitionsKept int
	files, filesKept           int
	buckets                    []int // kept buckets (nil: all)
}

// apply keeps the partitions and bucket files the spec allows.
func (sp *pruneSpec) apply(parts []catalog.PartitionFiles) ([]catalog.PartitionFiles, pruneCounts) {
	var pc pruneCounts
	pc.partitions = len(parts)
	for _, p := range parts {
		pc.files += len(p.Files)
	}
	if sp == nil {
		pc.partitionsKept, pc.filesKept = pc.partitions, pc.files
		return parts, pc
	}
	if sp.buckets != nil {
		pc.buckets = []int{}
		for b := range sp.buckets {
			pc.buckets = append(pc.buckets, b)
		}
		slices.Sort(pc.buckets)
	}
	var out []catalog.PartitionFiles
	for _, p := range parts {
		if (len(sp.ranges) > 0 || len(sp.bounds) > 0) && !sp.matchDesc(p.Desc) {
			continue
		}
		if sp.buckets != nil {
			q := catalog.PartitionFiles{Desc: p.Desc, Version: p.Version}
			for _, f := range p.Files {
				if b, ok := layout.BucketOfFile(f.Path); !ok || sp.buckets[b] {
					q.Files = append(q.Files, f)
				}
			}
			p = q
		}
		pc.partitionsKept++
		pc.filesKept += len(p.Files)
		out = append(out, p)
	}
	return out, pc
}

func (sp *pruneSpec) matchDesc(desc string) bool {
	kvs, err := layout.ParseDesc(desc)
	if err != nil {
		return true
	}
	for _, kv := range kvs {
		if allowed, ok := sp.ranges[kv.Key]; ok {
			v, err := layout.ParseValue(kv.Value, allowed.dt)
			if err != nil {
				return true
			}
			if v == nil || !slices.Contains(allowed.vals, v) {
				return false
			}
		}
		if c, ok := sp.bounds[kv.Key]; ok {
			v, err := layout.ParseValue(kv.Value, c.dt)
			if err != nil {
				return true
			}
			if v == nil {
				return false // NULL satisfies no comparison
			}
			if n, ok := normValue(v); ok && !c.allows(n) {
				return false
			}
		}
	}
	return true
}

// normValue is a partition value (as layout.ParseValue gives it) in the
// normalised form of the key filter: int64 or string; false for other
// types.
func normValue(v any) (any, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case arrow.Date32:
		return int64(x), true
	case arrow.Timestamp:
		return int64(x), true
	}
	return nil, false
}
