package engine

import (
	"context"
	"fmt"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// set_config(name, value, is_local): SET as a function.
//
// The session's settings are the server's (settings.go), not a catalog
// backend's: a set_config that ran on the catalog would change a pooled
// connection's setting inside a transaction that is rolled back, and the
// session would never see it (PostgREST's `set_config('request.jwt.claims',
// $1, true)` read back by current_setting, pg_dump's `set_config('search_path',
// '', false)`). It is answered here, as SET [LOCAL] name = value (planSet:
// the same validation, block and savepoint rules), in one form: a SELECT whose
// every result column is a set_config call, with no FROM, WHERE or other
// clause; an argument that is not a constant or a parameter is evaluated
// first as a query of its own. Invariant: a set_config call in any other
// statement or position is refused at Parse (0A000), so none runs where
// its effect would be lost.

const fnSetConfig = "set_config"

func isSetConfig(fc *pg_query.FuncCall) bool { return isCatalogFunc(fc, fnSetConfig) }

var errSetConfigForm = sqlerr.Unsupported("set_config inside a query or statement",
	"call it in a SELECT of its own: SELECT set_config(name, value, is_local) [, …] — or use SET [LOCAL]")

// sessionFuncTarget is one result column of a SELECT of session-function
// calls.
type sessionFuncTarget struct {
	name string // the column's name
	fc   *pg_query.FuncCall
}

// sessionFuncTargets returns the calls of a SELECT whose every result
// column is a plain call of a function is accepts, with no other clause.
func sessionFuncTargets(stmt *pg_query.Node, is func(*pg_query.FuncCall) bool) ([]sessionFuncTarget, bool) {
	sel := stmt.GetSelectStmt()
	if sel == nil || sel.Op != pg_query.SetOperation_SETOP_NONE || len(sel.FromClause) > 0 || sel.WhereClause != nil ||
		len(sel.GroupClause) > 0 || sel.HavingClause != nil || len(sel.WindowClause) > 0 || sel.WithClause != nil ||
		len(sel.SortClause) > 0 || sel.LimitCount != nil || sel.LimitOffset != nil || len(sel.LockingClause) > 0 ||
		len(sel.DistinctClause) > 0 || len(sel.ValuesLists) > 0 || sel.IntoClause != nil || len(sel.TargetList) == 0 {
		return nil, false
	}
	out := make([]sessionFuncTarget, 0, len(sel.TargetList))
	for _, t := range sel.TargetList {
		rt := t.GetResTarget()
		fc := rt.GetVal().GetFuncCall()
		if fc == nil || !is(fc) || fc.AggStar || fc.AggDistinct || fc.Over != nil || len(fc.AggOrder) > 0 || fc.AggFilter != nil || fc.FuncVariadic {
			return nil, false
		}
		for _, a := range fc.Args {
			if a.GetNamedArgExpr() != nil {
				return nil, false
			}
			nested := false
			walk(a, func(n *pg_query.Node) {
				if f := n.GetFuncCall(); f != nil && is(f) {
					nested = true
				}
			})
			if nested {
				return nil, false
			}
		}
		name := rt.Name
		if name == "" {
			parts, _ := funcNameParts(fc)
			name = parts[len(parts)-1]
		}
		out = append(out, sessionFuncTarget{name: name, fc: fc})
	}
	return out, true
}

// planSetConfig plans a SELECT of set_config calls; ok is false when stmt
// is not one.
func (s *Session) planSetConfig(ctx context.Context, stmt *pg_query.Node, paramOIDs []uint32) (st pgwire.Statement, ok bool, err error) {
	// Any other statement calling it was refused at Parse (refuseCalls).
	targets, form := sessionFuncTargets(stmt, isSetConfig)
	if !form {
		return nil, false, nil
	}
	params := append([]uint32(nil), paramOIDs...)
	cols := make([]pgwire.Column, len(targets))
	args := make([][3]textArg, len(targets))
	for i, t := range targets {
		if len(t.fc.Args) != 3 {
			return nil, true, &sqlerr.Error{Code: sqlerr.UndefinedFunction,
				Message: fmt.Sprintf("function set_config(%s) does not exist", strings.TrimSuffix(strings.Repeat("unknown, ", len(t.fc.Args)), ", ")),
				Hint:    "No function matches the given name and argument types. You might need to add explicit type casts."}
		}
		cols[i] = pgwire.Column{Name: t.name, TypeOID: schema.OIDText, TypeSize: -1, TypeModifier: -1}
		for j, a := range t.fc.Args {
			oid := uint32(schema.OIDText)
			if j == 2 {
				oid = schema.OIDBool
			}
			if args[i][j], err = s.textArgOf(a, oid, &params); err != nil {
				return nil, true, err
			}
		}
	}
	for i, p := range params {
		if p == 0 {
			return nil, true, sqlerr.New(sqlerr.IndeterminateDatatype, "could not determine data type of parameter $%d", i+1)
		}
	}
	return &funcStmt{tag: "SELECT", cols: cols, params: params, run: func(ctx context.Context, p []any) (string, [][]any, error) {
		row := make([]any, len(targets))
		for i := range targets {
			var vals [3]*string
			for j := range 3 {
				v, err := args[i][j](ctx, p)
				if err != nil {
					return "", nil, err
				}
				vals[j] = v
			}
			if vals[0] == nil {
				return "", nil, sqlerr.New(sqlerr.NullValueNotAllowed, "SET requires parameter name")
			}
			local := false
			if vals[2] != nil {
				b, ok := parseBool(*vals[2])
				if !ok {
					return "", nil, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type boolean: %q", *vals[2])
				}
				local = b
			}
			v, err := s.setConfig(ctx, *vals[0], vals[1], local)
			if err != nil {
				return "", nil, err
			}
			row[i] = v
		}
		return "SELECT 1", [][]any{row}, nil
	}}, true, nil
}

// setConfig runs SET [LOCAL] name = value (RESET for a NULL value) and
// returns the setting's value as current_setting then shows it.
func (s *Session) setConfig(ctx context.Context, name string, value *string, local bool) (any, error) {
	n := &pg_query.VariableSetStmt{Name: name, IsLocal: local, Kind: pg_query.VariableSetKind_VAR_RESET}
	if value != nil {
		n.Kind = pg_query.VariableSetKind_VAR_SET_VALUE
		n.Args = []*pg_query.Node{pg_query.MakeAConstStrNode(*value, -1)}
	}
	st, err := s.planSet(n)
	if err != nil {
		return nil, err
	}
	key := strings.ToLower(name)
	if local && !s.inBlock {
		// The value lasts until the end of the statement's own
		// transaction, that is not at all; PostgreSQL does not warn.
		if value == nil {
			return s.defaultSettings(nil)[key].value, nil
		}
		return *value, nil
	}
	portal, err := st.Bind(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer portal.Close()
	if _, _, err := portal.Execute(ctx, 0, discardRows{}); err != nil {
		return nil, err
	}
	if cur, ok := s.settings[key]; ok {
		return cur.value, nil
	}
	return "", nil
}

// textArg produces an argument's text when the statement runs (nil: NULL).
type textArg func(ctx context.Context, params []any) (*string, error)

// textArgOf reads an argument: a constant or a parameter (given type oid
// here unless the client typed it) directly, anything else as a query of
// its own when the statement runs.
func (s *Session) textArgOf(a *pg_query.Node, oid uint32, params *[]uint32) (textArg, error) {
	arg := a
	if tc := arg.GetTypeCast(); tc != nil {
		arg = tc.Arg
	}
	switch {
	case arg.GetParamRef() != nil:
		num := int(arg.GetParamRef().Number)
		for len(*params) < num {
			*params = append(*params, 0)
		}
		if (*params)[num-1] == 0 {
			(*params)[num-1] = oid
		}
		return func(_ context.Context, p []any) (*string, error) {
			if p[num-1] == nil {
				return nil, nil
			}
			v := paramText(p[num-1])
			return &v, nil
		}, nil
	case arg.GetAConst() != nil:
		c := arg.GetAConst()
		if c.Isnull {
			return func(context.Context, []any) (*string, error) { return nil, nil }, nil
		}
		v, ok := stringValue(arg)
		if !ok {
			break
		}
		return func(context.Context, []any) (*string, error) { return &v, nil }, nil
	}
	if hasParamRef(a) {
		return nil, sqlerr.Unsupported("a parameter inside an expression of a set_config argument",
			"pass the value itself as the parameter: SELECT set_config('name', $1, false)")
	}
	return func(ctx context.Context, _ []any) (*string, error) {
		vals, err := s.evalStandalone(ctx, []*pg_query.Node{a}, []string{"text"})
		if err != nil || vals[0] == nil {
			return nil, err
		}
		v := paramText(vals[0])
		return &v, nil
	}, nil
}

// evalStandalone evaluates expressions that read no relation as one query
// of their own, each cast to its type (a pg_catalog type name) — planned
// as any query the session sends, so a catalog function, a cast or a lake
// table's OID resolves as everywhere — and returns their values.
func (s *Session) evalStandalone(ctx context.Context, exprs []*pg_query.Node, types []string) ([]any, error) {
	sel := &pg_query.SelectStmt{}
	for i, e := range exprs {
		sel.TargetList = append(sel.TargetList, pg_query.MakeResTargetNodeWithVal(
			&pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{Arg: e, Location: -1,
				TypeName: &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode("pg_catalog"), pg_query.MakeStrNode(types[i])}, Typemod: -1}}}}, -1))
	}
	st, err := s.planSelect(ctx, &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: sel}}, nil)
	if err != nil {
		return nil, err
	}
	portal, err := st.Bind(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer portal.Close()
	var rows rowsCollector
	if _, _, err := portal.Execute(ctx, 0, &rows); err != nil {
		return nil, err
	}
	if len(rows) != 1 || len(rows[0]) != len(exprs) {
		return nil, fmt.Errorf("standalone expressions: %d rows for %d values", len(rows), len(exprs))
	}
	return rows[0], nil
}

// paramText is a bound value's or a result value's text.
func paramText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case bool:
		if x {
			return "true"
		}
		return "false"
	}
	return fmt.Sprint(v)
}
