package engine

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Advisory locks (pg_advisory_lock and its family).
//
// The locks are held on a catalog connection of the session's own
// (catalog.AdvisoryLocks), so they behave as PostgreSQL's: counted,
// queued, shared or exclusive, deadlocks detected, session locks kept until
// unlocked or the session ends, transaction locks until the block ends or
// a ROLLBACK TO undoes them — across every server on the catalog.
//
// One form is answered: a SELECT whose every result column is a call of an
// advisory-lock function (`SELECT pg_advisory_lock($1)`,
// `SELECT pg_try_advisory_lock(1, 2) AS got, pg_advisory_unlock_all()`), with
// no FROM, WHERE or other clause; an argument is a constant, a parameter, or
// an expression without parameters, which is evaluated first as a query of
// its own (`pg_advisory_lock(hashtext('migrations'))`). Invariant: a
// statement of any other kind or form that calls one of these functions is
// refused at Parse (0A000), so no lock is ever taken where its holder would
// not be the session (a pooled catalog connection, DuckDB).

// advisoryFuncs are PostgreSQL's advisory-lock functions with their result
// types (TestAdvisoryFunctionsAreAll checks the list against pg_proc).
var advisoryFuncs = map[string]uint32{
	"pg_advisory_lock":                 voidOID,
	"pg_advisory_lock_shared":          voidOID,
	"pg_advisory_xact_lock":            voidOID,
	"pg_advisory_xact_lock_shared":     voidOID,
	"pg_advisory_unlock_all":           voidOID,
	"pg_try_advisory_lock":             schema.OIDBool,
	"pg_try_advisory_lock_shared":      schema.OIDBool,
	"pg_try_advisory_xact_lock":        schema.OIDBool,
	"pg_try_advisory_xact_lock_shared": schema.OIDBool,
	"pg_advisory_unlock":               schema.OIDBool,
	"pg_advisory_unlock_shared":        schema.OIDBool,
}

// advisoryFunc is the advisory-lock function fc calls, or "".
func advisoryFunc(fc *pg_query.FuncCall) string {
	parts, ok := funcNameParts(fc)
	if !ok || len(parts) > 2 || len(parts) == 2 && parts[0] != "pg_catalog" {
		return ""
	}
	name := parts[len(parts)-1]
	if _, ok := advisoryFuncs[name]; ok {
		return name
	}
	return ""
}

var errAdvisoryForm = sqlerr.Unsupported("advisory-lock functions inside a query or statement",
	"call them in a SELECT of their own: SELECT pg_advisory_lock(key) [, …] — without FROM, WHERE or other clauses")

// advisoryTarget is one result column of an advisory-lock SELECT.
type advisoryTarget struct {
	name string // the column's name
	fn   string
	args []*pg_query.Node
}

// advisoryTargets returns the calls of a statement of the answered form.
func advisoryTargets(stmt *pg_query.Node) ([]advisoryTarget, bool) {
	calls, ok := sessionFuncTargets(stmt, func(fc *pg_query.FuncCall) bool { return advisoryFunc(fc) != "" }) // setconfig.go
	if !ok {
		return nil, false
	}
	out := make([]advisoryTarget, len(calls))
	for i, c := range calls {
		out[i] = advisoryTarget{name: c.name, fn: advisoryFunc(c.fc), args: c.fc.Args}
	}
	return out, true
}

// keyArg produces one key of a call when the statement runs; null: the
// key is NULL (the functions are strict: the call is NULL and takes
// nothing, as in PostgreSQL).
type keyArg func(params []any) (key int64, null bool, err error)

// planAdvisory plans a SELECT of advisory-lock calls; ok is false when stmt
// is not one.
func (s *Session) planAdvisory(ctx context.Context, stmt *pg_query.Node, paramOIDs []uint32) (st pgwire.Statement, ok bool, err error) {
	// Any other statement calling one was refused at Parse (refuseCalls).
	targets, form := advisoryTargets(stmt)
	if !form {
		return nil, false, nil
	}
	params := append([]uint32(nil), paramOIDs...)
	cols := make([]pgwire.Column, len(targets))
	calls := make([][]keyArg, len(targets))
	var exprs []*pg_query.Node // arguments evaluated as a query first
	var exprSlots [][2]int
	for i, t := range targets {
		width := 0
		switch {
		case t.fn == "pg_advisory_unlock_all" && len(t.args) == 0:
		case t.fn != "pg_advisory_unlock_all" && len(t.args) == 1:
			width = 64
		case t.fn != "pg_advisory_unlock_all" && len(t.args) == 2:
			width = 32
		default:
			return nil, true, &sqlerr.Error{Code: sqlerr.UndefinedFunction,
				Message: fmt.Sprintf("function %s(%s) does not exist", t.fn, strings.TrimSuffix(strings.Repeat("integer, ", len(t.args)), ", ")),
				Hint:    "No function matches the given name and argument types. You might need to add explicit type casts."}
		}
		cols[i] = pgwire.Column{Name: t.name, TypeOID: advisoryFuncs[t.fn], TypeSize: 1, TypeModifier: -1}
		if cols[i].TypeOID == voidOID {
			cols[i].TypeSize = 4
		}
		calls[i] = make([]keyArg, len(t.args))
		for j, a := range t.args {
			k, isExpr, err := advisoryKey(a, width, &params)
			if err != nil {
				return nil, true, err
			}
			if isExpr {
				exprs = append(exprs, a)
				exprSlots = append(exprSlots, [2]int{i, j})
				continue
			}
			calls[i][j] = k
		}
	}
	for i, p := range params {
		if p == 0 {
			return nil, true, sqlerr.New(sqlerr.IndeterminateDatatype, "could not determine data type of parameter $%d", i+1)
		}
	}
	return &funcStmt{tag: "SELECT", cols: cols, params: params, run: func(ctx context.Context, p []any) (string, [][]any, error) {
		if len(exprs) > 0 {
			vals, err := s.evalKeyExprs(ctx, exprs, exprSlots, targets)
			if err != nil {
				return "", nil, err
			}
			for n, slot := range exprSlots {
				v := vals[n]
				calls[slot[0]][slot[1]] = func([]any) (int64, bool, error) { return v.key, v.null, nil }
			}
		}
		row := make([]any, len(targets))
		for i, t := range targets {
			keys := make([]int64, len(calls[i]))
			null := false
			for j, k := range calls[i] {
				v, isNull, err := k(p)
				if err != nil {
					return "", nil, err
				}
				keys[j], null = v, null || isNull
			}
			if null {
				row[i] = nil
				continue
			}
			v, err := s.advisoryCall(ctx, catalog.AdvisoryCall{Func: t.fn, Keys: keys})
			if err != nil {
				return "", nil, err
			}
			if v == nil {
				v = ""
			}
			row[i] = v
		}
		return "SELECT 1", [][]any{row}, nil
	}}, true, nil
}

// advisoryKey reads a key argument of a call whose keys are width bits:
// a constant or a parameter (given a type here unless the client did) is
// read when the statement runs; anything else is an expression, evaluated
// as a query first (isExpr).
func advisoryKey(a *pg_query.Node, width int, params *[]uint32) (k keyArg, isExpr bool, err error) {
	arg := a
	if tc := arg.GetTypeCast(); tc != nil && isIntegerTypeName(tc.TypeName) {
		arg = tc.Arg
	}
	switch {
	case arg.GetParamRef() != nil:
		num := int(arg.GetParamRef().Number)
		for len(*params) < num {
			*params = append(*params, 0)
		}
		if (*params)[num-1] == 0 {
			(*params)[num-1] = schema.OIDInt8
			if width == 32 {
				(*params)[num-1] = schema.OIDInt4
			}
		}
		return func(p []any) (int64, bool, error) {
			if p[num-1] == nil {
				return 0, true, nil
			}
			v, err := advisoryKeyValue(p[num-1], width)
			return v, false, err
		}, false, nil
	case arg.GetAConst() != nil:
		c := arg.GetAConst()
		var v any
		switch {
		case c.Isnull:
			return func([]any) (int64, bool, error) { return 0, true, nil }, false, nil
		case c.GetIval() != nil:
			v = int64(c.GetIval().Ival)
		case c.GetFval() != nil:
			v = c.GetFval().Fval
		default:
			return nil, true, nil
		}
		n, err := advisoryKeyValue(v, width)
		if err != nil {
			return nil, false, err
		}
		return func([]any) (int64, bool, error) { return n, false, nil }, false, nil
	}
	if hasParamRef(a) {
		return nil, false, sqlerr.Unsupported("a parameter inside an expression of an advisory-lock key",
			"pass the key itself as the parameter: SELECT pg_advisory_lock($1)")
	}
	return nil, true, nil
}

// keyValue converts a constant's or a bound parameter's value to a key.
func advisoryKeyValue(v any, width int) (int64, error) {
	var n int64
	switch x := v.(type) {
	case int64:
		n = x
	case int32:
		n = int64(x)
	case int16:
		n = int64(x)
	case int:
		n = int64(x)
	case string:
		i, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		if err != nil {
			return 0, sqlerr.New(sqlerr.NumericValueOutOfRange, "bigint out of range")
		}
		n = i
	default:
		return 0, sqlerr.New(sqlerr.DatatypeMismatch, "advisory lock key of type %T", v)
	}
	if width == 32 && (n < math.MinInt32 || n > math.MaxInt32) {
		return 0, sqlerr.New(sqlerr.NumericValueOutOfRange, "integer out of range")
	}
	return n, nil
}

// isIntegerTypeName reports whether a cast target is an integer type.
func isIntegerTypeName(tn *pg_query.TypeName) bool {
	if tn == nil || len(tn.ArrayBounds) > 0 || len(tn.Names) == 0 {
		return false
	}
	switch tn.Names[len(tn.Names)-1].GetString_().GetSval() {
	case "int2", "int4", "int8", "smallint", "integer", "bigint", "int":
		return true
	}
	return false
}

// hasParamRef reports whether n refers to a parameter.
func hasParamRef(n *pg_query.Node) bool {
	found := false
	walk(n, func(m *pg_query.Node) {
		if m.GetParamRef() != nil {
			found = true
		}
	})
	return found
}

// evalKeyExprs evaluates key expressions (evalStandalone), each cast to
// its key's type.
func (s *Session) evalKeyExprs(ctx context.Context, exprs []*pg_query.Node, slots [][2]int, targets []advisoryTarget) ([]evaluatedKey, error) {
	types := make([]string, len(exprs))
	for n := range exprs {
		types[n] = "int8"
		if len(targets[slots[n][0]].args) == 2 {
			types[n] = "int4"
		}
	}
	vals, err := s.evalStandalone(ctx, exprs, types) // setconfig.go
	if err != nil {
		return nil, err
	}
	out := make([]evaluatedKey, len(exprs))
	for i, v := range vals {
		if v == nil {
			out[i].null = true
			continue
		}
		k, err := advisoryKeyValue(v, 64)
		if err != nil {
			return nil, err
		}
		out[i].key = k
	}
	return out, nil
}

// evaluatedKey is the value of a key expression.
type evaluatedKey struct {
	key  int64
	null bool
}

// advisoryCall runs one call on the session's lock connection and passes
// PostgreSQL's warnings on to the client.
func (s *Session) advisoryCall(ctx context.Context, call catalog.AdvisoryCall) (any, error) {
	if s.advisory == nil {
		s.advisory = s.e.cat.AdvisoryLocks()
	}
	sps := make([]int, len(s.savepoints))
	for i, sp := range s.savepoints {
		sps[i] = sp.seq
	}
	v, err := s.advisory.Call(ctx, call, s.inBlock, sps, s.settings["lock_timeout"].value, s.settings["statement_timeout"].value)
	for _, n := range s.advisory.Notices() {
		_ = pgwire.SendNotice(ctx, pgwire.Notice{Severity: n.Severity, Code: n.Code, Message: n.Message})
	}
	// A call that may have left the session holding nothing lets the
	// connection go when nothing is held.
	if err == nil && (strings.Contains(call.Func, "unlock") || strings.Contains(call.Func, "xact") && !s.inBlock || v == false) {
		s.advisory.AfterCall(ctx)
	}
	return v, err
}

// endBlockAdvisory releases the ending block's transaction locks.
func (s *Session) endBlockAdvisory(ctx context.Context) {
	if s.advisory != nil {
		s.advisory.EndBlock(context.WithoutCancel(ctx))
	}
}
