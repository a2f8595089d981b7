package pgcatalog

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// Object-name types. regclass, regtype and regnamespace read and write
// names through the real catalog's syscache, which knows no lake object:
// '"s"."t"'::regclass would fail and a lake OID would print as a number.
// Rewrite therefore turns
//
//   - every cast to one of them (x::regclass, CAST(x AS pg_catalog.regtype),
//     $1::regclass) into lakesoul_pg.<type>(x), which resolves a name as
//     PostgreSQL does, lake objects included, and takes an OID as it is
//     (sqlfuncs/170_pg_names.sql);
//   - a cast of such a value (or of to_regclass(…) and friends) to text,
//     varchar, name or char, and such a value in the statement's own
//     result columns, into
//     lakesoul_pg.<type>_text(…), the type's output (the column keeps the
//     name PostgreSQL gives it, but is text: the catalog cannot return a
//     regclass whose text is a lake name).

// regTypes are the object-name types whose casts Rewrite re-points.
var regTypes = map[string]bool{"regclass": true, "regtype": true, "regnamespace": true}

// textCastTypes are the types a cast to which is an object name's output.
var textCastTypes = map[string]bool{"text": true, "varchar": true, "name": true, "bpchar": true}

// castTypeName returns the (pg_catalog) type a TypeName names, "" for
// arrays, other schemas and %TYPE references.
func castTypeName(tn *pg_query.TypeName) string {
	if tn == nil || len(tn.ArrayBounds) > 0 || tn.PctType || tn.Setof {
		return ""
	}
	names, ok := strs(tn.Names)
	switch {
	case !ok || len(names) == 0 || len(names) > 2:
		return ""
	case len(names) == 2 && names[0] != "pg_catalog":
		return ""
	}
	return names[len(names)-1]
}

// regCall returns the object-name type n yields when n is the call a cast
// to that type became (lakesoul_pg.regclass(x)) or a call of to_regclass,
// to_regtype or to_regnamespace; "" otherwise.
func regCall(n *pg_query.Node) string {
	fc := n.GetFuncCall()
	if fc == nil || len(fc.Args) != 1 {
		return ""
	}
	names, ok := strs(fc.Funcname)
	switch {
	case !ok || len(names) == 0 || len(names) > 2:
		return ""
	case len(names) == 2 && names[0] == EmulationSchema && regTypes[names[1]]:
		return names[1]
	case len(names) == 2 && names[0] != "pg_catalog":
		return ""
	}
	if typ, ok := strings.CutPrefix(names[len(names)-1], "to_"); ok && regTypes[typ] {
		return typ
	}
	return ""
}

func emulationCall(fn string, args ...*pg_query.Node) *pg_query.FuncCall {
	return &pg_query.FuncCall{
		Funcname:   []*pg_query.Node{pg_query.MakeStrNode(EmulationSchema), pg_query.MakeStrNode(fn)},
		Args:       args,
		Funcformat: pg_query.CoercionForm_COERCE_EXPLICIT_CALL,
		Location:   -1,
	}
}

// rewriteRegCasts re-points the object-name casts of tree (see above).
func rewriteRegCasts(tree *pg_query.ParseResult) {
	// The statement's result columns keep the names PostgreSQL gives the
	// expressions as written.
	for _, rt := range topTargets(tree) {
		if rt.Name == "" && rt.Val.GetTypeCast() != nil && hasRegCast(rt.Val) {
			rt.Name, _ = figureColumnName(rt.Val)
		}
	}
	var nodes []*pg_query.Node
	walk(tree.ProtoReflect(), func(m any) {
		if n, ok := m.(*pg_query.Node); ok && n.GetTypeCast() != nil {
			nodes = append(nodes, n)
		}
	})
	// Inner casts first: x::regclass::text sees its argument rewritten.
	for i := len(nodes) - 1; i >= 0; i-- {
		n := nodes[i]
		tc := n.GetTypeCast()
		typ := castTypeName(tc.TypeName)
		switch {
		case regTypes[typ]:
			n.Node = &pg_query.Node_FuncCall{FuncCall: emulationCall(typ, tc.Arg)}
		case textCastTypes[typ] && regCall(tc.Arg) != "":
			out := &pg_query.Node{Node: &pg_query.Node_FuncCall{FuncCall: emulationCall(regCall(tc.Arg)+"_text", tc.Arg)}}
			if typ == "text" {
				n.Node = out.Node
			} else {
				tc.Arg = out // varchar, name, char: their cast of the text
			}
		}
	}
	for _, rt := range topTargets(tree) {
		if typ := regCall(rt.Val); typ != "" {
			if rt.Name == "" {
				rt.Name, _ = figureColumnName(rt.Val) // to_regclass
			}
			rt.Val = &pg_query.Node{Node: &pg_query.Node_FuncCall{FuncCall: emulationCall(typ+"_text", rt.Val)}}
		}
	}
}

// topTargets are the result columns of the statements of tree (of EXPLAIN's
// query too) that have a value.
func topTargets(tree *pg_query.ParseResult) []*pg_query.ResTarget {
	var out []*pg_query.ResTarget
	for _, raw := range tree.GetStmts() {
		stmt := raw.GetStmt()
		if e := stmt.GetExplainStmt(); e != nil {
			stmt = e.GetQuery()
		}
		for _, t := range stmt.GetSelectStmt().GetTargetList() {
			if rt := t.GetResTarget(); rt != nil && rt.Val != nil {
				out = append(out, rt)
			}
		}
	}
	return out
}

// hasRegCast reports whether n casts to an object-name type somewhere.
func hasRegCast(n *pg_query.Node) bool {
	found := false
	walk(n.ProtoReflect(), func(m any) {
		if tc, ok := m.(*pg_query.TypeCast); ok && regTypes[castTypeName(tc.TypeName)] {
			found = true
		}
	})
	return found
}

// figureColumnName is the name PostgreSQL's parser gives a result column
// without an alias, and how strongly (FigureColname: a column's or
// function's name beats a cast's type name, which beats "?column?").
func figureColumnName(n *pg_query.Node) (string, int) {
	switch {
	case n.GetColumnRef() != nil:
		cr := n.GetColumnRef()
		if s := cr.Fields[len(cr.Fields)-1].GetString_(); s != nil {
			return s.Sval, 2
		}
	case n.GetFuncCall() != nil:
		if names, ok := strs(n.GetFuncCall().Funcname); ok && len(names) > 0 {
			return names[len(names)-1], 2
		}
	case n.GetTypeCast() != nil:
		tc := n.GetTypeCast()
		if name, strength := figureColumnName(tc.Arg); strength > 1 {
			return name, strength
		}
		if names, ok := strs(tc.TypeName.Names); ok && len(names) > 0 {
			return names[len(names)-1], 1
		}
	}
	return "?column?", 0
}
