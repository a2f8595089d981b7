package pgcatalog

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// The emulation views have no system columns, but clients select the
// tableoid of catalog rows (pg_dump identifies every object it dumps by
// tableoid and oid): rewriteTableoids turns each reference to the tableoid of
// an emulated pg_catalog relation into that relation's OID,
// 'pg_catalog.X'::pg_catalog.regclass::pg_catalog.oid — the value PostgreSQL
// gives every row of X, lake rows included, since they stand for rows of X.
//
// A reference is resolved as PostgreSQL resolves it: rel.tableoid against
// the FROM items named rel of the innermost query that has one, unqualified
// tableoid against a query whose FROM clause is a single relation (with
// several, PostgreSQL itself calls it ambiguous). References that resolve to
// any other relation are left alone. Runs before the relations are renamed.
func rewriteTableoids(tree *pg_query.ParseResult, ctes map[string]bool) {
	var selects []*pg_query.SelectStmt
	walk(tree.ProtoReflect(), func(m any) {
		if s, ok := m.(*pg_query.SelectStmt); ok {
			selects = append(selects, s)
		}
	})
	done := map[*pg_query.ColumnRef]bool{}
	replaced := map[*pg_query.Node]bool{}
	// Innermost first: walk lists parents before children.
	for i := len(selects) - 1; i >= 0; i-- {
		sel := selects[i]
		// names maps the FROM items' names to the emulated relation they
		// refer to, "" for any other relation.
		names := map[string]string{}
		count := 0
		for _, f := range sel.FromClause {
			fromNames(f, ctes, names, &count)
		}
		if len(names) == 0 {
			continue
		}
		walk(sel.ProtoReflect(), func(m any) {
			n, ok := m.(*pg_query.Node)
			if !ok {
				return
			}
			cr := n.GetColumnRef()
			if cr == nil || done[cr] {
				return
			}
			f, ok := strs(cr.Fields)
			if !ok || f[len(f)-1] != "tableoid" {
				return
			}
			var rel string
			switch len(f) {
			case 1:
				if count != 1 {
					return
				}
				for _, r := range names {
					rel = r
				}
			case 2:
				r, ok := names[f[0]]
				if !ok {
					return
				}
				rel = r
			default:
				return
			}
			done[cr] = true
			if rel != "" {
				n.Node = relationOID(rel, cr.Location).Node
				replaced[n] = true
			}
		})
		// The result column keeps the name PostgreSQL gives it.
		for _, t := range sel.TargetList {
			if rt := t.GetResTarget(); rt != nil && rt.Name == "" && replaced[rt.Val] {
				rt.Name = "tableoid"
			}
		}
	}
}

// fromNames adds the names a FROM item makes visible: a relation's alias or
// name, through joins; subqueries and functions count as relations that are
// not emulated.
func fromNames(n *pg_query.Node, ctes map[string]bool, names map[string]string, count *int) {
	switch {
	case n.GetRangeVar() != nil:
		rv := n.GetRangeVar()
		*count++
		name := rv.Relname
		if rv.Alias != nil {
			name = rv.Alias.Aliasname
		}
		rel := ""
		if !(rv.Schemaname == "" && ctes[rv.Relname]) {
			if _, ok := emulationFor(rv.Schemaname, rv.Relname); ok && rv.Schemaname != "information_schema" {
				rel = "pg_catalog." + rv.Relname
			}
		}
		names[name] = rel
	case n.GetJoinExpr() != nil:
		j := n.GetJoinExpr()
		fromNames(j.Larg, ctes, names, count)
		fromNames(j.Rarg, ctes, names, count)
		if j.Alias != nil {
			names[j.Alias.Aliasname] = ""
		}
	case n.GetRangeSubselect() != nil:
		*count++
		if a := n.GetRangeSubselect().Alias; a != nil {
			names[a.Aliasname] = ""
		}
	case n.GetRangeFunction() != nil:
		*count++
		if a := n.GetRangeFunction().Alias; a != nil {
			names[a.Aliasname] = ""
		}
	default:
		*count++
	}
}

// relationOID is the expression 'rel'::pg_catalog.regclass::pg_catalog.oid.
func relationOID(rel string, location int32) *pg_query.Node {
	cast := func(arg *pg_query.Node, typ string) *pg_query.Node {
		return &pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{
			Arg: arg,
			TypeName: &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode("pg_catalog"), pg_query.MakeStrNode(typ)},
				Typemod: -1, Location: -1},
			Location: -1,
		}}}
	}
	return cast(cast(pg_query.MakeAConstStrNode(rel, location), "regclass"), "oid")
}
