package pgcatalog

import (
	"fmt"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// ActivityView is the relation PointActivity redirects.
const ActivityView = "pg_stat_activity"

// activityColumns are pg_stat_activity's columns (PostgreSQL 16) with
// their types, as the subquery PointActivity builds yields them; datid and
// usesysid are looked up by name in the catalog. The JSON document bound to
// the parameter holds one object per session with the other columns.
const activityColumns = `datname name, pid int4, leader_pid int4, usename name, application_name text,
	client_addr inet, client_hostname text, client_port int4, backend_start timestamptz,
	xact_start timestamptz, query_start timestamptz, state_change timestamptz,
	wait_event_type text, wait_event text, state text, backend_xid xid, backend_xmin xid,
	query_id int8, query text, backend_type text`

const activitySelect = `SELECT (SELECT d.oid FROM pg_catalog.pg_database d WHERE d.datname = a.datname) AS datid,
	a.datname, a.pid, a.leader_pid,
	(SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = a.usename) AS usesysid,
	a.usename, a.application_name, a.client_addr, a.client_hostname, a.client_port, a.backend_start,
	a.xact_start, a.query_start, a.state_change, a.wait_event_type, a.wait_event, a.state,
	a.backend_xid, a.backend_xmin, a.query_id, a.query, a.backend_type
	FROM pg_catalog.jsonb_to_recordset($%d::pg_catalog.jsonb) AS a(%s)`

// PointActivity replaces, in place, every reference of tree to
// pg_stat_activity (pg_catalog.pg_stat_activity, or unqualified where no
// WITH clause defines the name) by a subquery over parameter $param, a JSON
// array of the lake server's sessions that the caller binds at execution.
// The catalog PostgreSQL's own backends are never read: they are the
// server's internals, not the sessions a client talks to. It reports
// whether any reference was replaced.
func PointActivity(tree *pg_query.ParseResult, param int) (bool, error) {
	sub, err := activitySubquery(param)
	if err != nil {
		return false, err
	}
	ctes := cteNames(tree)
	found := false
	walk(tree.ProtoReflect(), func(m any) {
		n, ok := m.(*pg_query.Node)
		if !ok {
			return
		}
		rv := n.GetRangeVar()
		if rv == nil || rv.Relname != ActivityView || (rv.Schemaname != "" && rv.Schemaname != "pg_catalog") ||
			(rv.Schemaname == "" && ctes[rv.Relname]) {
			return
		}
		alias := rv.Alias
		if alias == nil {
			alias = &pg_query.Alias{Aliasname: ActivityView}
		}
		n.Node = &pg_query.Node_RangeSubselect{RangeSubselect: &pg_query.RangeSubselect{
			Subquery: sub, Alias: alias}}
		found = true
	})
	return found, nil
}

// activitySubquery parses the subquery over parameter $param.
func activitySubquery(param int) (*pg_query.Node, error) {
	tree, err := pg_query.Parse(fmt.Sprintf(activitySelect, param, activityColumns))
	if err != nil {
		return nil, fmt.Errorf("pgcatalog: activity subquery: %w", err)
	}
	return tree.Stmts[0].Stmt, nil
}

// HasActivity reports whether tree refers to pg_stat_activity.
func HasActivity(tree *pg_query.ParseResult) bool {
	ctes := cteNames(tree)
	found := false
	walk(tree.ProtoReflect(), func(m any) {
		if rv, ok := m.(*pg_query.RangeVar); ok && rv.Relname == ActivityView &&
			(rv.Schemaname == "pg_catalog" || rv.Schemaname == "" && !ctes[rv.Relname]) {
			found = true
		}
	})
	return found
}
