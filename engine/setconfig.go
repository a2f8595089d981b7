package engine

import (
	"context"
	"fmt"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

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
// the same validation, block and savepoint rules), where it is a result
// column of a SELECT (setConfigTargets): the SELECT runs with each call's
// arguments in its place, and each row's calls are applied in order —
// pg_dump's `SELECT set_config(name, '…', false) FROM pg_settings WHERE name =
// '…'` sets the parameter only when the row exists. Invariant: a set_config
// call in any other statement or position is refused at Parse (0A000), so
// none runs where its effect would be lost.

const fnSetConfig = "set_config"

func isSetConfig(fc *pg_query.FuncCall) bool { return isCatalogFunc(fc, fnSetConfig) }

var errSetConfigForm = sqlerr.Unsupported("set_config inside a query or statement",
	"call it as a result column of a SELECT: SELECT set_config(name, value, is_local) [FROM …] — or use SET [LOCAL]")

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

// setConfigTargets returns the positions in stmt's result columns of its
// set_config calls, when stmt is a SELECT calling set_config only as whole
// result columns (ok false otherwise).
func setConfigTargets(stmt *pg_query.Node) (positions []int, ok bool) {
	sel := stmt.GetSelectStmt()
	if sel == nil || sel.Op != pg_query.SetOperation_SETOP_NONE || sel.IntoClause != nil || len(sel.LockingClause) > 0 {
		return nil, false
	}
	nested := false
	check := func(n *pg_query.Node) {
		walk(n, func(m *pg_query.Node) {
			if fc := m.GetFuncCall(); fc != nil && isSetConfig(fc) {
				nested = true
			}
		})
	}
	for i, t := range sel.TargetList {
		rt := t.GetResTarget()
		fc := rt.GetVal().GetFuncCall()
		if fc == nil || !isSetConfig(fc) {
			check(t)
			continue
		}
		if fc.AggStar || fc.AggDistinct || fc.Over != nil || len(fc.AggOrder) > 0 || fc.AggFilter != nil || fc.FuncVariadic {
			return nil, false
		}
		for _, a := range fc.Args {
			if a.GetNamedArgExpr() != nil {
				return nil, false
			}
			check(a)
		}
		positions = append(positions, i)
	}
	// Every other part of the statement.
	rest := proto.Clone(sel).(*pg_query.SelectStmt)
	rest.TargetList = nil
	check(&pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: rest}})
	return positions, len(positions) > 0 && !nested
}

// hasSetConfigColumn reports whether stmt is a SELECT with a result column
// that is a set_config call.
func hasSetConfigColumn(stmt *pg_query.Node) bool {
	for _, t := range stmt.GetSelectStmt().GetTargetList() {
		if fc := t.GetResTarget().GetVal().GetFuncCall(); fc != nil && isSetConfig(fc) {
			return true
		}
	}
	return false
}

// planSetConfig plans a SELECT with set_config result columns; ok is false
// when stmt is not one.
func (s *Session) planSetConfig(ctx context.Context, stmt *pg_query.Node, paramOIDs []uint32) (st pgwire.Statement, ok bool, err error) {
	// Any other statement calling it was refused at Parse (refuseCalls):
	// a SELECT without a set_config result column is none, told so without
	// the walk and the copy setConfigTargets makes (every SELECT comes here).
	if !hasSetConfigColumn(stmt) {
		return nil, false, nil
	}
	positions, form := setConfigTargets(stmt)
	if !form {
		return nil, false, nil
	}
	sel := proto.Clone(stmt.GetSelectStmt()).(*pg_query.SelectStmt)
	isCall := map[int]bool{}
	for _, p := range positions {
		isCall[p] = true
	}
	// The query that runs: each call's three arguments in its place.
	var targets []*pg_query.Node
	var names []string
	for i, t := range sel.TargetList {
		if !isCall[i] {
			targets = append(targets, t)
			continue
		}
		rt := t.GetResTarget()
		fc := rt.GetVal().GetFuncCall()
		if len(fc.Args) != 3 {
			return nil, true, &sqlerr.Error{Code: sqlerr.UndefinedFunction,
				Message: fmt.Sprintf("function set_config(%s) does not exist", strings.TrimSuffix(strings.Repeat("unknown, ", len(fc.Args)), ", ")),
				Hint:    "No function matches the given name and argument types. You might need to add explicit type casts."}
		}
		name := rt.Name
		if name == "" {
			name = fnSetConfig
		}
		names = append(names, name)
		for j, a := range fc.Args {
			typ := "text"
			if j == 2 {
				typ = "bool"
			}
			targets = append(targets, pg_query.MakeResTargetNodeWithVal(castAs(a, typ), -1))
		}
	}
	sel.TargetList = targets
	inner, err := s.planSelect(ctx, &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: sel}}, paramOIDs)
	if err != nil {
		return nil, true, err
	}
	innerCols, err := inner.Describe(ctx)
	if err != nil {
		return nil, true, err
	}
	var cols []pgwire.Column
	for i, c, n := 0, 0, 0; i < len(stmt.GetSelectStmt().TargetList); i++ {
		if !isCall[i] {
			cols = append(cols, innerCols[c])
			c++
			continue
		}
		cols = append(cols, pgwire.Column{Name: names[n], TypeOID: schema.OIDText, TypeSize: -1, TypeModifier: -1})
		c += 3
		n++
	}
	return &funcStmt{tag: "SELECT", cols: cols, params: inner.ParamOIDs(), run: func(ctx context.Context, p []any) (string, [][]any, error) {
		portal, err := inner.Bind(ctx, p)
		if err != nil {
			return "", nil, err
		}
		var rows rowsCollector
		_, _, err = portal.Execute(ctx, 0, &rows)
		portal.Close()
		if err != nil {
			return "", nil, err
		}
		out := make([][]any, len(rows))
		for r, row := range rows {
			vals := make([]any, 0, len(cols))
			for i, c := 0, 0; i < len(cols); i++ {
				if !isCall[i] {
					vals = append(vals, row[c])
					c++
					continue
				}
				name, value, local := row[c], row[c+1], row[c+2]
				c += 3
				if name == nil {
					return "", nil, sqlerr.New(sqlerr.NullValueNotAllowed, "SET requires parameter name")
				}
				var v *string
				if value != nil {
					t := paramText(value)
					v = &t
				}
				isLocal := false
				if local != nil {
					if b, ok := local.(bool); ok {
						isLocal = b
					} else {
						isLocal, _ = parseBool(paramText(local))
					}
				}
				res, err := s.setConfig(ctx, paramText(name), v, isLocal)
				if err != nil {
					return "", nil, err
				}
				vals = append(vals, res)
			}
			out[r] = vals
		}
		return fmt.Sprintf("SELECT %d", len(out)), out, nil
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

// evalStandalone evaluates expressions that read no relation as one query
// of their own, each cast to its type (a pg_catalog type name) — planned
// as any query the session sends, so a catalog function, a cast or a lake
// table's OID resolves as everywhere — and returns their values.
func (s *Session) evalStandalone(ctx context.Context, exprs []*pg_query.Node, types []string) ([]any, error) {
	sel := &pg_query.SelectStmt{}
	for i, e := range exprs {
		sel.TargetList = append(sel.TargetList, pg_query.MakeResTargetNodeWithVal(castAs(e, types[i]), -1))
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

// castAs is expr::typ for typ text, bool, int4 or int8, with the type
// named as PostgreSQL's parser names it (text unqualified, the others in
// pg_catalog), which every route translates.
func castAs(expr *pg_query.Node, typ string) *pg_query.Node {
	names := []*pg_query.Node{pg_query.MakeStrNode(typ)}
	if typ != "text" {
		names = []*pg_query.Node{pg_query.MakeStrNode("pg_catalog"), pg_query.MakeStrNode(typ)}
	}
	return &pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{Arg: expr, Location: -1,
		TypeName: &pg_query.TypeName{Names: names, Typemod: -1, Location: -1}}}}
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
