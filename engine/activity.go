package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/pgcatalog"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// SessionRegistry is the pgwire server's list of its sessions
// (*pgwire.Server implements it): what pg_stat_activity shows and what
// pg_cancel_backend and pg_terminate_backend act on. These are the lake
// server's sessions, never the catalog PostgreSQL's backends, which are the
// server's internals. Several servers on one catalog each answer with their
// own sessions, as PostgreSQL clusters do.
type SessionRegistry interface {
	Activity() []pgwire.Activity
	Signal(pid uint32, terminate bool) bool
}

// SetSessions gives the engine the registry of the server's sessions. It
// must be called before the first session starts; without it
// pg_stat_activity is empty and no pid can be signalled.
func (e *Engine) SetSessions(r SessionRegistry) { e.sessions = r }

// SetBackendPID implements pgwire.SessionPID.
func (s *Session) SetBackendPID(pid uint32) { s.pid = pid }

// admin reports whether the session's role administers the server: a
// superuser of the catalog, or the role of the server's own catalog
// connections.
func (s *Session) admin() bool { return s.superuser || s.user == s.e.catalogRole }

// insufficientPrivilege is the query text PostgreSQL shows of sessions
// whose details the viewer may not see.
const insufficientPrivilege = "<insufficient privilege>"

// activityRow is one element of the JSON document pg_stat_activity's
// subquery reads (pgcatalog.PointActivity); nil fields are NULL.
type activityRow struct {
	Datname         string  `json:"datname"`
	PID             uint32  `json:"pid"`
	Usename         string  `json:"usename"`
	ApplicationName string  `json:"application_name"`
	ClientAddr      *string `json:"client_addr"`
	ClientPort      *int    `json:"client_port"`
	BackendStart    *string `json:"backend_start"`
	XactStart       *string `json:"xact_start"`
	QueryStart      *string `json:"query_start"`
	StateChange     *string `json:"state_change"`
	State           *string `json:"state"`
	Query           string  `json:"query"`
	BackendType     *string `json:"backend_type"`
}

// activityJSON renders the server's sessions as the session may see them,
// as PostgreSQL does: every session is listed; the details (state,
// times, client address, query) of another role's session only to an
// administrator, others see '<insufficient privilege>' as its query.
func (s *Session) activityJSON() string {
	var list []pgwire.Activity
	if s.e.sessions != nil {
		list = s.e.sessions.Activity()
	}
	rows := make([]activityRow, 0, len(list))
	ts := func(t time.Time) *string {
		if t.IsZero() {
			return nil
		}
		v := t.UTC().Format("2006-01-02 15:04:05.999999Z07:00")
		return &v
	}
	for _, a := range list {
		r := activityRow{Datname: a.Database, PID: a.PID, Usename: a.User, ApplicationName: a.ApplicationName,
			Query: insufficientPrivilege}
		if s.admin() || a.User == s.user {
			backendType := "client backend"
			r.BackendType, r.Query = &backendType, a.Query
			if a.ClientAddr != "" {
				addr, port := a.ClientAddr, a.ClientPort
				r.ClientAddr, r.ClientPort = &addr, &port
			}
			r.BackendStart, r.XactStart, r.QueryStart, r.StateChange = ts(a.BackendStart), ts(a.XactStart), ts(a.QueryStart), ts(a.StateChange)
			if a.State != "" {
				state := a.State
				r.State = &state
			}
		}
		rows = append(rows, r)
	}
	rows = append(rows, s.buildActivity(ts)...)
	b, err := json.Marshal(rows)
	if err != nil {
		panic(err) // plain strings and numbers always marshal
	}
	return string(b)
}

// backendVectorBuild is the backend_type of a vector index build.
const backendVectorBuild = "vector index build"

// buildActivity lists the running vector index builds as pg_stat_activity
// lists PostgreSQL's background workers: a build for a role shows as that
// role's; one of the server's own (after a compaction) has no user, and
// only administrators see its details.
func (s *Session) buildActivity(ts func(time.Time) *string) []activityRow {
	var rows []activityRow
	for _, b := range s.e.vectors.builder.Running() {
		r := activityRow{Datname: DatabaseName, PID: b.PID, Usename: b.User, Query: insufficientPrivilege}
		if s.admin() || b.User != "" && b.User == s.user {
			backendType, state := backendVectorBuild, "active"
			r.BackendType, r.State = &backendType, &state
			r.Query = fmt.Sprintf("CREATE INDEX %s ON %s", b.Index, b.Table)
			r.BackendStart, r.XactStart, r.QueryStart, r.StateChange = ts(b.Started), ts(b.Started), ts(b.Started), ts(b.Started)
		}
		rows = append(rows, r)
	}
	return rows
}

// signalBuild cancels the vector index build pid (pg_cancel_backend and
// pg_terminate_backend alike); false when pid is no build. Its role and
// administrators may.
func (s *Session) signalBuild(pid uint32, terminate bool) (bool, error) {
	for _, b := range s.e.vectors.builder.Running() {
		if b.PID != pid {
			continue
		}
		if !s.admin() && (b.User == "" || b.User != s.user) {
			return false, signalDenied(terminate)
		}
		return s.e.vectors.builder.Cancel(pid), nil
	}
	return false, nil
}

// signalDenied is PostgreSQL's error for signalling another role's backend.
func signalDenied(terminate bool) error {
	if terminate {
		return &sqlerr.Error{Code: sqlerr.InsufficientPrivilege, Message: "permission denied to terminate process",
			Detail: "Only roles with privileges of the role whose process is being terminated or with privileges of the \"pg_signal_backend\" role may terminate this process."}
	}
	return &sqlerr.Error{Code: sqlerr.InsufficientPrivilege, Message: "permission denied to cancel query",
		Detail: "Only roles with privileges of the role whose query is being canceled or with privileges of the \"pg_signal_backend\" role may cancel this query."}
}

// Session functions the engine answers itself rather than the catalog:
// they are about the lake server's sessions.
const (
	fnBackendPID   = "pg_backend_pid"
	fnCancel       = "pg_cancel_backend"
	fnTerminate    = "pg_terminate_backend"
	signalColAlias = "lakesoul_signal_"
)

// signalColumn is a result column whose catalog value is the pid argument
// of pg_cancel_backend or pg_terminate_backend; the engine sends the
// signal per row and returns its boolean result instead.
type signalColumn struct {
	idx       int
	terminate bool
}

// sessionFunctionName returns the name of a session function call: fn
// alone or qualified with pg_catalog.
func sessionFunctionName(fc *pg_query.FuncCall) string {
	name, ok := funcNameParts(fc)
	if !ok || len(name) > 2 || (len(name) == 2 && name[0] != "pg_catalog") {
		return ""
	}
	switch fn := name[len(name)-1]; fn {
	case fnBackendPID, fnCancel, fnTerminate:
		return fn
	}
	return ""
}

func funcNameParts(fc *pg_query.FuncCall) ([]string, bool) {
	out := make([]string, len(fc.Funcname))
	for i, n := range fc.Funcname {
		s := n.GetString_()
		if s == nil {
			return nil, false
		}
		out[i] = s.Sval
	}
	return out, len(out) > 0
}

// rewriteSessionFunctions prepares a catalog query's calls of session
// functions: pg_backend_pid() becomes the session's pid; pg_cancel_backend
// and pg_terminate_backend, allowed as result columns of the outermost
// SELECT, become their pid argument under a marker alias (the engine
// signals per row, signalColumns). Such a call anywhere else is 0A000.
// It returns the marker aliases with the names the columns must carry.
func (s *Session) rewriteSessionFunctions(stmt *pg_query.Node) (map[string]string, error) {
	markers := map[string]string{}
	handled := map[*pg_query.FuncCall]bool{}
	if sel := stmt.GetSelectStmt(); sel != nil && sel.Op == pg_query.SetOperation_SETOP_NONE {
		for _, t := range sel.TargetList {
			rt := t.GetResTarget()
			if rt == nil || rt.Val.GetFuncCall() == nil {
				continue
			}
			fc := rt.Val.GetFuncCall()
			fn := sessionFunctionName(fc)
			if fn != fnCancel && fn != fnTerminate {
				continue
			}
			if len(fc.Args) != 1 || fc.Over != nil || fc.AggStar || fc.AggDistinct || fc.Args[0].GetNamedArgExpr() != nil {
				return nil, sqlerr.Unsupported(fn+" with these arguments", fn+"(pid)")
			}
			name := rt.Name
			if name == "" {
				name = fn
			}
			alias := fmt.Sprintf("%s%d_%s", signalColAlias, len(markers), fn)
			markers[alias] = name
			handled[fc] = true
			rt.Name = alias
			rt.Val = &pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{
				Arg: fc.Args[0], TypeName: &pg_query.TypeName{
					Names:   []*pg_query.Node{pg_query.MakeStrNode("pg_catalog"), pg_query.MakeStrNode("int4")},
					Typemod: -1}}}}
		}
	}
	var err error
	walk(stmt, func(n *pg_query.Node) {
		fc := n.GetFuncCall()
		if fc == nil || err != nil || handled[fc] {
			return
		}
		switch fn := sessionFunctionName(fc); fn {
		case fnBackendPID:
			if len(fc.Args) == 0 {
				n.Node = &pg_query.Node_AConst{AConst: &pg_query.A_Const{
					Val: &pg_query.A_Const_Ival{Ival: &pg_query.Integer{Ival: int32(s.pid)}}}}
			}
		case fnCancel, fnTerminate:
			err = sqlerr.Unsupported(fn+" inside an expression", "call "+fn+"(pid) as a result column of the outermost SELECT, e.g. SELECT "+fn+"(pid) FROM pg_stat_activity WHERE …")
		}
	})
	return markers, err
}

// signal runs pg_cancel_backend (terminate false) or pg_terminate_backend
// on the session with process ID v (an int32, or nil: NULL in, NULL out).
// As in PostgreSQL: a pid that is no session of this server is false with
// a WARNING; an administrator may signal any session, a role its own
// sessions; another role's is 42501.
func (s *Session) signal(ctx context.Context, v any, terminate bool) (any, error) {
	pid, ok := v.(int32)
	if !ok {
		return nil, nil
	}
	var target *pgwire.Activity
	if s.e.sessions != nil && pid > 0 {
		for _, a := range s.e.sessions.Activity() {
			if a.PID == uint32(pid) {
				target = &a
				break
			}
		}
	}
	if target == nil && pid > 0 {
		if ok, err := s.signalBuild(uint32(pid), terminate); ok || err != nil {
			return ok, err
		}
	}
	if target == nil {
		_ = pgwire.SendNotice(ctx, pgwire.Notice{Severity: "WARNING",
			Message: fmt.Sprintf("PID %d is not a PostgreSQL backend process", pid)})
		return false, nil
	}
	if !s.admin() && target.User != s.user {
		return nil, signalDenied(terminate)
	}
	return s.e.sessions.Signal(uint32(pid), terminate), nil
}

// pointServerViews makes a catalog query's pg_stat_activity and
// lakesoul.progress read the server's sessions and imports
// (pgcatalog.PointServerViews): the references become subqueries over
// parameters after the statement's own — the declared ones and every $n it
// uses — bound to serverViewJSON when it executes. It returns the number
// of the client's parameters and the views in parameter order.
func pointServerViews(tree *pg_query.ParseResult, declared int) (int, []string, error) {
	n := declared
	for num := range paramRefs(tree.Stmts[0].Stmt) {
		n = max(n, int(num))
	}
	views, err := pgcatalog.PointServerViews(tree, n+1)
	return n, views, err
}

// serverViewJSON renders a server view's rows as the session may see them.
func (s *Session) serverViewJSON(view string) string {
	if view == "lakesoul.progress" {
		return s.progressJSON()
	}
	return s.activityJSON()
}

// progressRow is one element of lakesoul.progress's document.
type progressRow struct {
	PID             uint32  `json:"pid"`
	Datname         string  `json:"datname"`
	Relation        string  `json:"relation"`
	Command         string  `json:"command"`
	Type            string  `json:"type"`
	BytesProcessed  int64   `json:"bytes_processed"`
	BytesTotal      *int64  `json:"bytes_total"`
	TuplesProcessed int64   `json:"tuples_processed"`
	TuplesExcluded  int64   `json:"tuples_excluded"`
	FilesProcessed  int64   `json:"files_processed"`
	FilesTotal      int     `json:"files_total"`
	CurrentFile     *string `json:"current_file"`
	Started         string  `json:"started"`
}

// progressJSON lists the running imports: an administrator's view has all,
// a role's its own.
func (s *Session) progressJSON() string {
	rows := []progressRow{}
	for _, p := range s.e.imports.list() {
		if !s.admin() && p.user != s.user {
			continue
		}
		r := progressRow{PID: p.pid, Datname: DatabaseName, Relation: p.relation, Command: "IMPORT", Type: "FILE",
			TuplesExcluded: 0, FilesProcessed: p.done.Load(), FilesTotal: p.files, CurrentFile: p.current.Load(),
			Started: p.started.UTC().Format("2006-01-02 15:04:05.999999Z07:00")}
		r.TuplesProcessed, r.BytesProcessed = p.progressCounts()
		if p.total >= 0 {
			total := p.total
			r.BytesTotal = &total
		}
		rows = append(rows, r)
	}
	b, err := json.Marshal(rows)
	if err != nil {
		panic(err) // plain strings and numbers always marshal
	}
	return string(b)
}
