package engine

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"

	"github.com/duckdb/duckdb-go/v2"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/pgjson"
	"github.com/lakesoul-go/lakesoul/pgnumeric"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Functions the engine adds to DuckDB so that rewritten statements
// (pgsemantics.go) compute PostgreSQL's answers: jsonb operators with
// PostgreSQL's meaning (package pgjson), PostgreSQL's text of floats, and
// divisors that fail on zero. They are registered before DuckDB's
// configuration is locked; users may call them, which is harmless.

// duckMacros are SQL macros. lakesoul_divisor(a, b) is b, or fails with
// "division by zero" (22012) when b is zero and the dividend a is not NULL:
// PostgreSQL fails there where DuckDB divides by zero to NULL or infinity
// (and NULL / 0 is NULL in both). It names b twice, which DuckDB evaluates
// once for a deterministic b; lakesoul_divisor_once evaluates b exactly
// once (a lambda over a one-element list), for divisors that may call
// volatile functions.
//
// lakesoul_same_key(new, old, col) is old when a key or partition column
// is assigned the value it has (new evaluated once), and otherwise fails as
// an update of the key (0A000, keyUpdateMessage): the statement may name
// key columns in SET (ORMs set every column, and EXCLUDED.id in ON CONFLICT
// is the key it matched), but a row cannot move to another key.
//
// lakesoul_affect_once(again, val, cmd) is val, or fails with PostgreSQL's
// cardinality violation (21000, affectTwiceMessage) when again holds: the
// row val is written to was already written by the same statement cmd
// ("ON CONFLICT DO UPDATE", "MERGE"), which PostgreSQL refuses rather than
// pick one of the writes.
//
// lakesoul_char_assign(v, n, typ, pad) is v assigned to typ(n), typ being
// "character varying" or "character" (pad): a value longer than n
// characters fails (22001) unless the characters beyond n are spaces,
// which are cut; a character value loses its trailing spaces (char(n)
// compares and keys without them; they are padding). v is evaluated once.
var duckMacros = []string{
	`CREATE MACRO lakesoul_char_assign(v, n, typ, pad) AS list_transform([v], lambda x:
		CASE WHEN x IS NULL THEN NULL
		WHEN length(x) > n AND length(rtrim(x, ' ')) > n THEN error('value too long for type ' || typ || '(' || n || ')')
		WHEN pad THEN rtrim(x, ' ')
		WHEN length(x) > n THEN left(x, n)
		ELSE x END)[1]`,
	`CREATE MACRO lakesoul_affect_once(again, val, cmd) AS
		CASE WHEN again THEN error(cmd || ' ` + affectTwiceMessage + `') ELSE val END`,
	`CREATE MACRO lakesoul_same_key(new, old, col) AS
		CASE WHEN new IS NOT DISTINCT FROM old THEN old
		ELSE error('` + keyUpdateMessage + ` "' || col || '" is not supported') END`,
	`CREATE MACRO lakesoul_divisor(a, b) AS CASE WHEN b = 0 AND a IS NOT NULL THEN error('division by zero') ELSE b END`,
	`CREATE MACRO lakesoul_divisor_once(a, b) AS
		list_transform([b], lambda x: CASE WHEN x = 0 AND a IS NOT NULL THEN error('division by zero') ELSE x END)[1]`,
}

// duckScalar is a scalar function with fixed argument and result types.
type duckScalar struct {
	args   []duckdb.Type
	list   int // index of an argument that is a list of VARCHAR, or -1
	result duckdb.Type
	// listResult: the result is a list of result.
	listResult bool
	// nulls: fn sees NULL arguments (nil) instead of DuckDB answering NULL.
	nulls bool
	// volatile: called for every row, never folded (nextval).
	volatile bool
	fn       func(args []driver.Value) (any, error)
}

func (f duckScalar) Config() duckdb.ScalarFuncConfig {
	var in []duckdb.TypeInfo
	for i, t := range f.args {
		ti, err := duckdb.NewTypeInfo(t)
		if err != nil {
			panic(err) // a bug in duckFunctions
		}
		if i == f.list {
			if ti, err = duckdb.NewListInfo(ti); err != nil {
				panic(err)
			}
		}
		in = append(in, ti)
	}
	out, err := duckdb.NewTypeInfo(f.result)
	if err != nil {
		panic(err)
	}
	if f.listResult {
		if out, err = duckdb.NewListInfo(out); err != nil {
			panic(err)
		}
	}
	return duckdb.ScalarFuncConfig{InputTypeInfos: in, ResultTypeInfo: out, SpecialNullHandling: f.nulls, Volatile: f.volatile}
}

func (f duckScalar) Executor() duckdb.ScalarFuncExecutor {
	return duckdb.ScalarFuncExecutor{RowExecutor: f.fn}
}

var varchar2 = []duckdb.Type{duckdb.TYPE_VARCHAR, duckdb.TYPE_VARCHAR}

// duckFunctions are the scalar functions, by name. Arguments are never NULL
// (DuckDB's default NULL handling: NULL in, NULL out, as PostgreSQL's strict
// operators).
var duckFunctions = map[string]duckScalar{
	"lakesoul_jsonb_canonical": {args: []duckdb.Type{duckdb.TYPE_VARCHAR}, list: -1, result: duckdb.TYPE_VARCHAR,
		fn: func(a []driver.Value) (any, error) { return jsonbCanonical(a[0].(string)) }},
	"lakesoul_jsonb_key": {args: []duckdb.Type{duckdb.TYPE_VARCHAR}, list: -1, result: duckdb.TYPE_BLOB,
		fn: func(a []driver.Value) (any, error) {
			v, err := parseJSON(a[0], true)
			if err != nil {
				return nil, err
			}
			return pgjson.SortKey(v), nil
		}},
	"lakesoul_jsonb_contains": {args: varchar2, list: -1, result: duckdb.TYPE_BOOLEAN,
		fn: func(a []driver.Value) (any, error) {
			l, r, err := parseJSONB2(a[0], a[1])
			if err != nil {
				return nil, err
			}
			return pgjson.Contains(l, r), nil
		}},
	"lakesoul_jsonb_exists": {args: varchar2, list: -1, result: duckdb.TYPE_BOOLEAN,
		fn: func(a []driver.Value) (any, error) {
			v, err := parseJSON(a[0], true)
			if err != nil {
				return nil, err
			}
			return v.Exists(a[1].(string)), nil
		}},
	"lakesoul_jsonb_exists_any": {args: varchar2, list: 1, result: duckdb.TYPE_BOOLEAN,
		fn: func(a []driver.Value) (any, error) { return jsonbExistsKeys(a, false) }},
	"lakesoul_jsonb_exists_all": {args: varchar2, list: 1, result: duckdb.TYPE_BOOLEAN,
		fn: func(a []driver.Value) (any, error) { return jsonbExistsKeys(a, true) }},
	"lakesoul_jsonb_concat": {args: varchar2, list: -1, result: duckdb.TYPE_VARCHAR,
		fn: func(a []driver.Value) (any, error) {
			l, r, err := parseJSONB2(a[0], a[1])
			if err != nil {
				return nil, err
			}
			return pgjson.Concat(l, r).JSONB(), nil
		}},
	"lakesoul_jsonb_delete": {args: varchar2, list: -1, result: duckdb.TYPE_VARCHAR,
		fn: func(a []driver.Value) (any, error) {
			return jsonbModify(a[0], func(v *pgjson.Value) (*pgjson.Value, error) { return pgjson.DeleteKey(v, a[1].(string)) })
		}},
	"lakesoul_jsonb_delete_index": {args: []duckdb.Type{duckdb.TYPE_VARCHAR, duckdb.TYPE_BIGINT}, list: -1, result: duckdb.TYPE_VARCHAR,
		fn: func(a []driver.Value) (any, error) {
			return jsonbModify(a[0], func(v *pgjson.Value) (*pgjson.Value, error) { return pgjson.DeleteIndex(v, int(a[1].(int64))) })
		}},
	"lakesoul_json_field": {args: []duckdb.Type{duckdb.TYPE_VARCHAR, duckdb.TYPE_VARCHAR, duckdb.TYPE_BOOLEAN, duckdb.TYPE_BOOLEAN},
		list: -1, result: duckdb.TYPE_VARCHAR,
		fn: func(a []driver.Value) (any, error) {
			return jsonAccess(a, func(v *pgjson.Value) *pgjson.Value { return v.Field(a[1].(string)) })
		}},
	"lakesoul_json_index": {args: []duckdb.Type{duckdb.TYPE_VARCHAR, duckdb.TYPE_BIGINT, duckdb.TYPE_BOOLEAN, duckdb.TYPE_BOOLEAN},
		list: -1, result: duckdb.TYPE_VARCHAR,
		fn: func(a []driver.Value) (any, error) {
			return jsonAccess(a, func(v *pgjson.Value) *pgjson.Value {
				i := a[1].(int64)
				if int64(int(i)) != i {
					return nil
				}
				return v.Index(int(i), a[2].(bool))
			})
		}},
	"lakesoul_json_path": {args: []duckdb.Type{duckdb.TYPE_VARCHAR, duckdb.TYPE_VARCHAR, duckdb.TYPE_BOOLEAN, duckdb.TYPE_BOOLEAN},
		list: 1, result: duckdb.TYPE_VARCHAR,
		fn: func(a []driver.Value) (any, error) {
			path, ok := textList(a[1])
			if !ok {
				return nil, nil // a NULL path element: PostgreSQL returns NULL
			}
			return jsonAccess(a, func(v *pgjson.Value) *pgjson.Value { return v.Path(path) })
		}},
	"lakesoul_json_elements": {args: []duckdb.Type{duckdb.TYPE_VARCHAR, duckdb.TYPE_BOOLEAN, duckdb.TYPE_BOOLEAN},
		list: -1, result: duckdb.TYPE_VARCHAR, listResult: true,
		fn: func(a []driver.Value) (any, error) {
			v, err := parseJSON(a[0], a[1].(bool))
			if err != nil {
				return nil, err
			}
			elems, err := v.Elements(a[1].(bool), a[2].(bool))
			if err != nil {
				return nil, err
			}
			out := make([]any, len(elems))
			for i, e := range elems {
				if e != nil {
					out[i] = *e
				}
			}
			return out, nil
		}},
	"lakesoul_json_object_keys": {args: []duckdb.Type{duckdb.TYPE_VARCHAR, duckdb.TYPE_BOOLEAN, duckdb.TYPE_BOOLEAN},
		list: -1, result: duckdb.TYPE_VARCHAR, listResult: true,
		fn: func(a []driver.Value) (any, error) {
			jsonb := a[1].(bool)
			v, err := parseJSON(a[0], jsonb)
			if err != nil {
				return nil, err
			}
			fn := "json_object_keys"
			if jsonb {
				fn = "jsonb_object_keys"
			}
			keys, err := v.ObjectKeys(jsonb, fn)
			if err != nil {
				return nil, err
			}
			out := make([]any, len(keys))
			for i, k := range keys {
				out[i] = k
			}
			return out, nil
		}},
	"lakesoul_json_build_object": {args: []duckdb.Type{duckdb.TYPE_VARCHAR, duckdb.TYPE_BOOLEAN}, list: 0, result: duckdb.TYPE_VARCHAR,
		fn: func(a []driver.Value) (any, error) {
			items, _ := a[0].([]any)
			keys, vals := make([]string, 0, len(items)/2), make([]string, 0, len(items)/2)
			for i := 0; i+1 < len(items); i += 2 {
				k, ok := items[i].(string)
				if !ok {
					return nil, fmt.Errorf("argument %d: key must not be null", i+1)
				}
				keys, vals = append(keys, k), append(vals, jsonOrNull(items[i+1]))
			}
			return jsonResult(pgjson.BuildObject(keys, vals), a[1].(bool))
		}},
	"lakesoul_json_agg": {args: []duckdb.Type{duckdb.TYPE_VARCHAR, duckdb.TYPE_BOOLEAN}, list: 0, result: duckdb.TYPE_VARCHAR,
		fn: func(a []driver.Value) (any, error) {
			items, _ := a[0].([]any)
			elems := make([]string, len(items))
			for i, e := range items {
				elems[i] = jsonOrNull(e)
			}
			return jsonResult(pgjson.Agg(elems), a[1].(bool))
		}},
	"lakesoul_json_typeof": {args: []duckdb.Type{duckdb.TYPE_VARCHAR, duckdb.TYPE_BOOLEAN}, list: -1, result: duckdb.TYPE_VARCHAR,
		fn: func(a []driver.Value) (any, error) {
			v, err := parseJSON(a[0], a[1].(bool))
			if err != nil {
				return nil, err
			}
			return v.TypeName(), nil
		}},
	"lakesoul_quote_ident": {args: []duckdb.Type{duckdb.TYPE_VARCHAR}, list: -1, result: duckdb.TYPE_VARCHAR, nulls: true,
		fn: func(a []driver.Value) (any, error) {
			s, ok := a[0].(string)
			if !ok {
				return nil, errors.New("null values cannot be formatted as an SQL identifier")
			}
			return quoteIdentifier(s), nil
		}},
	"lakesoul_quote_literal": {args: []duckdb.Type{duckdb.TYPE_VARCHAR}, list: -1, result: duckdb.TYPE_VARCHAR,
		fn: func(a []driver.Value) (any, error) { return quoteLiteralPG(a[0].(string)), nil }},
	"lakesoul_numeric_add": numericOperator(func(a, b pgnumeric.Value) (pgnumeric.Value, error) { return pgnumeric.Add(a, b), nil }),
	"lakesoul_numeric_sub": numericOperator(func(a, b pgnumeric.Value) (pgnumeric.Value, error) { return pgnumeric.Sub(a, b), nil }),
	"lakesoul_numeric_mul": numericOperator(func(a, b pgnumeric.Value) (pgnumeric.Value, error) { return pgnumeric.Mul(a, b), nil }),
	"lakesoul_numeric_div": numericOperator(pgnumeric.Div),
	"lakesoul_numeric_rescale": {args: []duckdb.Type{duckdb.TYPE_VARCHAR, duckdb.TYPE_INTEGER}, list: -1, result: duckdb.TYPE_VARCHAR,
		fn: func(a []driver.Value) (any, error) {
			v, err := pgnumeric.Parse(a[0].(string))
			if err != nil {
				return nil, err
			}
			return pgnumeric.Round(v, int(a[1].(int32))).String(), nil
		}},
	"lakesoul_numeric_exact": {args: []duckdb.Type{duckdb.TYPE_VARCHAR}, list: -1, result: duckdb.TYPE_VARCHAR,
		fn: func(a []driver.Value) (any, error) { return numericExact(a[0].(string)) }},
	"lakesoul_numeric_checked_sum": {args: []duckdb.Type{duckdb.TYPE_VARCHAR, duckdb.TYPE_DOUBLE}, list: -1, result: duckdb.TYPE_VARCHAR,
		fn: func(a []driver.Value) (any, error) { return numericCheckedSum(a[0].(string), a[1].(float64)) }},
	"lakesoul_numeric_variance": {args: []duckdb.Type{duckdb.TYPE_VARCHAR, duckdb.TYPE_VARCHAR, duckdb.TYPE_BIGINT, duckdb.TYPE_VARCHAR},
		list: -1, result: duckdb.TYPE_VARCHAR,
		fn: func(a []driver.Value) (any, error) {
			return numericVariance(a[0].(string), a[1].(string), a[2].(int64), a[3].(string))
		}},
	"lakesoul_float8_text": {args: []duckdb.Type{duckdb.TYPE_DOUBLE}, list: -1, result: duckdb.TYPE_VARCHAR,
		fn: func(a []driver.Value) (any, error) {
			return string(pgwire.AppendFloatText(nil, a[0].(float64), 64)), nil
		}},
	"lakesoul_float4_text": {args: []duckdb.Type{duckdb.TYPE_FLOAT}, list: -1, result: duckdb.TYPE_VARCHAR,
		fn: func(a []driver.Value) (any, error) {
			return string(pgwire.AppendFloatText(nil, float64(a[0].(float32)), 32)), nil
		}},
}

// numericOperator is a numeric operator over PostgreSQL's text of numeric
// values, with PostgreSQL's display scales (package pgnumeric,
// numericresult.go): DuckDB's DECIMAL has one scale per column where
// PostgreSQL's numeric has one per value.
func numericOperator(op func(a, b pgnumeric.Value) (pgnumeric.Value, error)) duckScalar {
	return duckScalar{args: varchar2, list: -1, result: duckdb.TYPE_VARCHAR,
		fn: func(a []driver.Value) (any, error) {
			l, err := pgnumeric.Parse(a[0].(string))
			if err != nil {
				return nil, err
			}
			r, err := pgnumeric.Parse(a[1].(string))
			if err != nil {
				return nil, err
			}
			v, err := op(l, r)
			if err != nil {
				return nil, err
			}
			return v.String(), nil
		}}
}

// numericCheckedSum is exact, DuckDB's DECIMAL sum of values whose sum in double
// precision is approx, or 22003 where the two are further apart than any
// rounding of doubles makes them: DuckDB adds DECIMALs in 128 bits and
// wraps around past them, which moves the sum by 2¹²⁸ units of its last
// digit, while a double sum stays within a tiny fraction of the exact one.
func numericCheckedSum(exact string, approx float64) (any, error) {
	v, err := pgnumeric.Parse(exact)
	if err != nil {
		return nil, err
	}
	e, _ := new(big.Float).SetInt(v.Unscaled).Float64()
	unit := math.Pow10(-v.Scale)
	if math.IsInf(approx, 0) || math.IsNaN(approx) || math.Abs(e*unit-approx) > 1e38*unit {
		// (its SQLSTATE kept through DuckDB, duckguard.go)
		return nil, scanFailures.wrap(sqlerr.New(sqlerr.NumericValueOutOfRange, "numeric field overflow"))
	}
	return exact, nil
}

// numericExact is text, PostgreSQL's text of a numeric value, when
// DuckDB's DECIMAL(38, innerNumericScale) holds that value exactly (at most
// innerNumericScale fractional digits that are not zero, at most 38 −
// innerNumericScale whole digits); 0A000 otherwise — the engine computes
// numeric values inside a query in that type (numericresult.go), and a
// value it would round is refused, never changed.
func numericExact(text string) (any, error) {
	v, err := pgnumeric.Parse(text)
	if err != nil {
		return nil, err
	}
	u, s := new(big.Int).Set(v.Unscaled), v.Scale
	ten, r := big.NewInt(10), new(big.Int)
	for s > innerNumericScale {
		q, m := new(big.Int).QuoRem(u, ten, r)
		if m.Sign() != 0 {
			break
		}
		u, s = q, s-1
	}
	whole := len(new(big.Int).Abs(u).String()) - s
	if s > innerNumericScale || whole > 38-innerNumericScale {
		return nil, scanFailures.wrap(&sqlerr.Error{Code: sqlerr.FeatureNotSupported,
			Message: fmt.Sprintf("numeric value %s inside a query is not supported: more than %d whole or %d fractional digits",
				text, 38-innerNumericScale, innerNumericScale),
			Hint: "Cast the expression to numeric(p,s) or double precision, or compute it in a result column."})
	}
	return pgnumeric.Value{Unscaled: u, Scale: s}.String(), nil
}

// numericVariance is the variance aggregate named kind (var_pop, var_samp,
// stddev_pop, stddev_samp) of n numeric values with sum sumX and sum of
// squares sumX2, as PostgreSQL computes it; NULL where PostgreSQL's is.
func numericVariance(sumX, sumX2 string, n int64, kind string) (any, error) {
	x, err := pgnumeric.Parse(sumX)
	if err != nil {
		return nil, err
	}
	x2, err := pgnumeric.Parse(sumX2)
	if err != nil {
		return nil, err
	}
	v, ok := pgnumeric.Variance(x, x2, n, strings.HasSuffix(kind, "_samp"), strings.HasPrefix(kind, "stddev"))
	if !ok {
		return nil, nil
	}
	return v.String(), nil
}

// registerDuckFunctions adds duckMacros, duckFunctions and budgetFunctions to DuckDB.
func registerDuckFunctions(ctx context.Context, conn *sql.Conn) error {
	for _, m := range duckMacros {
		if _, err := conn.ExecContext(ctx, m); err != nil {
			return fmt.Errorf("duckdb macro: %w", err)
		}
	}
	for name, f := range duckFunctions {
		if err := duckdb.RegisterScalarUDF(conn, name, guardScalar(f)); err != nil {
			return fmt.Errorf("duckdb function %s: %w", name, err)
		}
	}
	for name, f := range budgetFunctions { // valuebudget.go
		if err := duckdb.RegisterScalarUDF(conn, budgetFuncName(name), guardBudget(f)); err != nil {
			return fmt.Errorf("duckdb function %s: %w", budgetFuncName(name), err)
		}
	}
	return nil
}

func parseJSON(v driver.Value, jsonb bool) (*pgjson.Value, error) {
	return pgjson.Parse(v.(string), jsonb)
}

func parseJSONB2(a, b driver.Value) (*pgjson.Value, *pgjson.Value, error) {
	l, err := parseJSON(a, true)
	if err != nil {
		return nil, nil, err
	}
	r, err := parseJSON(b, true)
	return l, r, err
}

func jsonbCanonical(text string) (string, error) { return pgjson.Canonical(text) }

// jsonOrNull is a JSON text element of a built value: null for NULL.
func jsonOrNull(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return "null"
}

// jsonResult is built json text as json (as is) or jsonb (canonical).
func jsonResult(text string, jsonb bool) (any, error) {
	if jsonb {
		return pgjson.Canonical(text)
	}
	return text, nil
}

// jsonbModify applies f to the jsonb value v and renders the result.
func jsonbModify(v driver.Value, f func(*pgjson.Value) (*pgjson.Value, error)) (any, error) {
	j, err := parseJSON(v, true)
	if err != nil {
		return nil, err
	}
	out, err := f(j)
	if err != nil {
		return nil, err
	}
	return out.JSONB(), nil
}

// textList reads a VARCHAR[] argument; false when an element is NULL.
func textList(v driver.Value) ([]string, bool) {
	l, _ := v.([]any)
	out := make([]string, len(l))
	for i, e := range l {
		s, ok := e.(string)
		if !ok {
			return nil, false
		}
		out[i] = s
	}
	return out, true
}

// jsonbExistsKeys is ?| (all false) and ?& (all true); NULL keys never match.
func jsonbExistsKeys(a []driver.Value, all bool) (any, error) {
	v, err := parseJSON(a[0], true)
	if err != nil {
		return nil, err
	}
	keys, _ := a[1].([]any)
	for _, k := range keys {
		s, ok := k.(string)
		found := ok && v.Exists(s)
		if found != all {
			return !all, nil
		}
	}
	return all, nil
}

// jsonAccess applies an access step to a[0] (json, or jsonb when a[2]) and
// renders the result as -> does, or as ->> when a[3]; NULL when the step
// finds nothing.
func jsonAccess(a []driver.Value, step func(*pgjson.Value) *pgjson.Value) (any, error) {
	jsonb, text := a[2].(bool), a[3].(bool)
	v, err := parseJSON(a[0], jsonb)
	if err != nil {
		return nil, err
	}
	r := step(v)
	if r == nil {
		return nil, nil
	}
	if text {
		s, ok := r.Unquoted(jsonb)
		if !ok {
			return nil, nil
		}
		return s, nil
	}
	return r.Text(jsonb), nil
}

// quoteIdentifier is PostgreSQL's quote_ident: s as is when it is a lower
// case identifier that is no keyword (unreserved keywords excepted), else
// in double quotes.
func quoteIdentifier(s string) string {
	safe := s != "" && (s[0] >= 'a' && s[0] <= 'z' || s[0] == '_')
	for i := 0; safe && i < len(s); i++ {
		c := s[i]
		safe = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_'
	}
	if safe {
		if r, err := pg_query.Scan(s); err == nil && len(r.Tokens) == 1 &&
			r.Tokens[0].KeywordKind != pg_query.KeywordKind_NO_KEYWORD && r.Tokens[0].KeywordKind != pg_query.KeywordKind_UNRESERVED_KEYWORD {
			safe = false
		}
	}
	if safe {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// quoteLiteralPG is PostgreSQL's quote_literal: quotes doubled, and a
// string with backslashes written as E'…' with them doubled.
func quoteLiteralPG(s string) string {
	q := "'" + strings.ReplaceAll(s, "'", "''") + "'"
	if strings.Contains(s, `\`) {
		return "E" + strings.ReplaceAll(q, `\`, `\\`)
	}
	return q
}
