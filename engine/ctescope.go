package engine

import (
	"strconv"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Common table expressions, resolved the way PostgreSQL scopes them.
//
// An unqualified relation name is a CTE only where a WITH clause that
// defines it is in scope: the statement owning the WITH and its subqueries,
// the later CTEs of a non-recursive WITH, every CTE of a recursive one; an
// inner definition shadows an outer one. Anything else is a table. DuckDB
// must never be left to decide: a name it does not find as a CTE it tries
// as a file (a replacement scan), so a quoted glob used outside the scope of
// a CTE of the same name would read raw files. bindLakeTables therefore
// renames every CTE and each reference in its scope to engine-chosen names
// (keeping the written name as the reference's alias) and binds every other
// name to a lake table or fails; no relation name a user wrote reaches
// DuckDB.

// cteRefs maps each RangeVar of stmt that refers to a CTE in scope to that
// CTE's definition.
func cteRefs(stmt *pg_query.Node) map[*pg_query.RangeVar]*pg_query.CommonTableExpr {
	refs := map[*pg_query.RangeVar]*pg_query.CommonTableExpr{}
	collectCTERefs(stmt.ProtoReflect(), nil, refs)
	return refs
}

// cteScope is the CTE names visible at a point of the tree, innermost first.
type cteScope struct {
	parent *cteScope
	names  map[string]*pg_query.CommonTableExpr
}

func (sc *cteScope) lookup(name string) *pg_query.CommonTableExpr {
	for ; sc != nil; sc = sc.parent {
		if c, ok := sc.names[name]; ok {
			return c
		}
	}
	return nil
}

// withClauseOf returns the WITH clause of a statement message, if any.
func withClauseOf(m protoreflect.ProtoMessage) *pg_query.WithClause {
	switch x := m.(type) {
	case *pg_query.SelectStmt:
		return x.WithClause
	case *pg_query.InsertStmt:
		return x.WithClause
	case *pg_query.UpdateStmt:
		return x.WithClause
	case *pg_query.DeleteStmt:
		return x.WithClause
	case *pg_query.MergeStmt:
		return x.WithClause
	}
	return nil
}

// isTargetField reports whether fd is the target relation of a DML
// statement, which PostgreSQL never resolves as a CTE.
func isTargetField(m protoreflect.ProtoMessage, fd protoreflect.FieldDescriptor) bool {
	switch m.(type) {
	case *pg_query.InsertStmt, *pg_query.UpdateStmt, *pg_query.DeleteStmt, *pg_query.MergeStmt:
		return fd.Name() == "relation"
	}
	return false
}

func collectCTERefs(m protoreflect.Message, sc *cteScope, refs map[*pg_query.RangeVar]*pg_query.CommonTableExpr) {
	msg := m.Interface()
	if rv, ok := msg.(*pg_query.RangeVar); ok {
		if rv.Schemaname == "" && rv.Catalogname == "" {
			if c := sc.lookup(rv.Relname); c != nil {
				refs[rv] = c
			}
		}
		return
	}
	if wc := withClauseOf(msg); wc != nil {
		inner := &cteScope{parent: sc, names: map[string]*pg_query.CommonTableExpr{}}
		var ctes []*pg_query.CommonTableExpr
		for _, n := range wc.Ctes {
			if c := n.GetCommonTableExpr(); c != nil {
				ctes = append(ctes, c)
			}
		}
		if wc.Recursive {
			for _, c := range ctes {
				inner.names[c.Ctename] = c
			}
		}
		for _, c := range ctes {
			if c.Ctequery != nil {
				collectCTERefs(c.Ctequery.ProtoReflect(), inner, refs)
			}
			inner.names[c.Ctename] = c
		}
		sc = inner
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Message() == nil || fd.IsMap() || isTargetField(msg, fd) {
			return true
		}
		if fd.IsList() {
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				collectCTERefs(l.Get(i).Message(), sc, refs)
			}
			return true
		}
		if _, ok := v.Message().Interface().(*pg_query.WithClause); ok {
			return true // walked above, in its own scoping
		}
		collectCTERefs(v.Message(), sc, refs)
		return true
	})
}

// renameCTEs gives every CTE of stmt an engine-chosen name and points refs
// (from cteRefs) at it, keeping the name the query used as the alias.
func renameCTEs(stmt *pg_query.Node, refs map[*pg_query.RangeVar]*pg_query.CommonTableExpr) {
	names := map[*pg_query.CommonTableExpr]string{}
	walk(stmt, func(n *pg_query.Node) {
		if c := n.GetCommonTableExpr(); c != nil {
			if _, ok := names[c]; !ok {
				names[c] = "lakesoul_cte_" + strconv.Itoa(len(names)+1)
			}
		}
	})
	for rv, c := range refs {
		if rv.Alias == nil {
			rv.Alias = &pg_query.Alias{Aliasname: rv.Relname}
		}
		rv.Relname = names[c]
	}
	for c, name := range names {
		c.Ctename = name
	}
}
