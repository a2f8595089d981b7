package pgcatalog

import (
	"fmt"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// Server views are relations a catalog query may name whose rows live in
// the lake server's memory, not in the catalog: pg_stat_activity (the
// server's sessions — the catalog PostgreSQL's own backends are the
// server's internals and are never shown) and lakesoul.progress (running
// imports, in pg_stat_progress_copy's shape). PointServerViews makes each
// reference a subquery over a JSON document the engine binds as an extra
// parameter when the query executes, so the rows are current at every
// execution and the query keeps PostgreSQL's functions and types.
type serverView struct {
	schema, name string
	// columns are jsonb_to_recordset's column definitions, selectList the
	// view's columns over them (alias a).
	columns, selectList string
}

var serverViews = []serverView{
	{schema: "pg_catalog", name: "pg_stat_activity",
		columns: `datname name, pid int4, leader_pid int4, usename name, application_name text,
			client_addr inet, client_hostname text, client_port int4, backend_start timestamptz,
			xact_start timestamptz, query_start timestamptz, state_change timestamptz,
			wait_event_type text, wait_event text, state text, backend_xid xid, backend_xmin xid,
			query_id int8, query text, backend_type text`,
		// PostgreSQL 16's columns; datid and usesysid are the catalog's oids.
		selectList: `(SELECT d.oid FROM pg_catalog.pg_database d WHERE d.datname = a.datname) AS datid,
			a.datname, a.pid, a.leader_pid,
			(SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = a.usename) AS usesysid,
			a.usename, a.application_name, a.client_addr, a.client_hostname, a.client_port, a.backend_start,
			a.xact_start, a.query_start, a.state_change, a.wait_event_type, a.wait_event, a.state,
			a.backend_xid, a.backend_xmin, a.query_id, a.query, a.backend_type`},
	{schema: "lakesoul", name: "progress",
		columns: `pid int4, datname name, relation text, command text, type text, bytes_processed int8,
			bytes_total int8, tuples_processed int8, tuples_excluded int8, files_processed int4,
			files_total int4, current_file text, started timestamptz`,
		selectList: `a.pid, a.datname, a.relation, a.command, a.type, a.bytes_processed, a.bytes_total,
			a.tuples_processed, a.tuples_excluded, a.files_processed, a.files_total, a.current_file, a.started`},
}

// serverViewFor returns the server view a RangeVar names: schema-qualified
// always, and pg_stat_activity unqualified too unless a WITH clause of the
// statement defines the name.
func serverViewFor(rv *pg_query.RangeVar, ctes map[string]bool) (*serverView, bool) {
	for i := range serverViews {
		v := &serverViews[i]
		if rv.Relname != v.name {
			continue
		}
		if rv.Schemaname == v.schema || (rv.Schemaname == "" && v.schema == "pg_catalog" && !ctes[rv.Relname]) {
			return v, true
		}
	}
	return nil, false
}

// PointServerViews replaces, in place, every reference of tree to a server
// view by a subquery over one parameter per view, numbered from first on,
// and returns the views' names ("schema.name") in parameter order. Each
// parameter is a JSON array of objects, one per row, keyed by column.
func PointServerViews(tree *pg_query.ParseResult, first int) ([]string, error) {
	ctes := cteNames(tree)
	var used []string
	subs := map[string]*pg_query.Node{}
	var err error
	walk(tree.ProtoReflect(), func(m any) {
		n, ok := m.(*pg_query.Node)
		if !ok || err != nil {
			return
		}
		rv := n.GetRangeVar()
		if rv == nil {
			return
		}
		v, ok := serverViewFor(rv, ctes)
		if !ok {
			return
		}
		key := v.schema + "." + v.name
		sub := subs[key]
		if sub == nil {
			used = append(used, key)
			text := fmt.Sprintf("SELECT %s FROM pg_catalog.jsonb_to_recordset($%d::pg_catalog.jsonb) AS a(%s)",
				v.selectList, first+len(used)-1, v.columns)
			tree, perr := pg_query.Parse(text)
			if perr != nil {
				err = fmt.Errorf("pgcatalog: server view %s: %w", key, perr)
				return
			}
			sub = tree.Stmts[0].Stmt
			subs[key] = sub
		}
		alias := rv.Alias
		if alias == nil {
			alias = &pg_query.Alias{Aliasname: v.name}
		}
		n.Node = &pg_query.Node_RangeSubselect{RangeSubselect: &pg_query.RangeSubselect{Subquery: sub, Alias: alias}}
	})
	return used, err
}
