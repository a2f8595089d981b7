package engine

import (
	"slices"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Schema-qualified column references. PostgreSQL lets a column of a FROM
// item written without an alias be qualified by the relation's schema
// (s.t.id, s.t.*) and even by the database (lakesoul.s.t.id); SQLAlchemy and
// pandas write them for tables with a schema, in SELECT lists, UPDATE … FROM
// and MERGE … ON. DuckDB knows a lake table only by its reference name
// (lakesoul_scan(…) AS t), so such references are rewritten to that name
// (t.id) before binding. A reference whose schema and table match no FROM
// item is left as written for the binder to report.

// unqualifyColumns rewrites the schema-qualified column references of stmt.
func (s *Session) unqualifyColumns(stmt *pg_query.Node) error {
	rels := relationRefs(stmt)
	if len(rels) == 0 {
		return nil
	}
	var err error
	walk(stmt, func(n *pg_query.Node) {
		cr := n.GetColumnRef()
		if cr == nil || err != nil || len(cr.Fields) < 3 {
			return
		}
		names := make([]string, 0, len(cr.Fields))
		for _, f := range cr.Fields {
			if sv := f.GetString_(); sv != nil {
				names = append(names, sv.Sval)
			} else if f.GetAStar() == nil {
				return
			}
		}
		star := cr.Fields[len(cr.Fields)-1].GetAStar() != nil
		// [database.]schema.table.column or [database.]schema.table.*
		qual := 3
		if star {
			qual = 2
		}
		if len(names) == qual+1 {
			if names[0] != DatabaseName {
				err = sqlerr.New(sqlerr.FeatureNotSupported, "cross-database references are not implemented: %s", joinNames(names, star))
				return
			}
			names, cr.Fields = names[1:], cr.Fields[1:]
		}
		if len(names) != qual {
			return
		}
		schemaName, table := names[0], names[1]
		if !slices.ContainsFunc(rels, func(rv *pg_query.RangeVar) bool {
			return rv.Alias == nil && rv.Relname == table &&
				(rv.Schemaname == schemaName || rv.Schemaname == "" && slices.Contains(s.searchPathSchemas(), schemaName))
		}) {
			return
		}
		cr.Fields = cr.Fields[1:]
	})
	return err
}

func joinNames(names []string, star bool) string {
	out := ""
	for i, n := range names {
		if i > 0 {
			out += "."
		}
		out += n
	}
	if star {
		out += ".*"
	}
	return out
}

// relationRefs returns every relation reference of stmt: FROM items and
// the target of an INSERT, UPDATE, DELETE or MERGE.
func relationRefs(stmt *pg_query.Node) []*pg_query.RangeVar {
	var out []*pg_query.RangeVar
	for _, rv := range []*pg_query.RangeVar{stmt.GetInsertStmt().GetRelation(), stmt.GetUpdateStmt().GetRelation(),
		stmt.GetDeleteStmt().GetRelation(), stmt.GetMergeStmt().GetRelation()} {
		if rv != nil {
			out = append(out, rv)
		}
	}
	walk(stmt, func(n *pg_query.Node) {
		if rv := n.GetRangeVar(); rv != nil {
			out = append(out, rv)
		}
	})
	return out
}
