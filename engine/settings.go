package engine

import (
	"context"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// settings are a session's run-time parameters, keyed by lower-case name.
type settings map[string]setting

type setting struct {
	name  string // canonical spelling, as SHOW and ParameterStatus use it
	value string
}

// reported are the parameters PostgreSQL reports in ParameterStatus.
var reported = []string{"server_version", "server_encoding", "client_encoding", "application_name",
	"DateStyle", "TimeZone", "integer_datetimes", "standard_conforming_strings", "IntervalStyle",
	"is_superuser", "session_authorization"}

func (s *Session) defaultSettings(params map[string]string) settings {
	st := settings{}
	set := func(name, v string) { st[strings.ToLower(name)] = setting{name: name, value: v} }
	set("server_version", s.e.serverVersion)
	set("server_encoding", "UTF8")
	set("client_encoding", "UTF8")
	set("application_name", "")
	set("DateStyle", "ISO, MDY")
	set("TimeZone", "UTC")
	set("integer_datetimes", "on")
	set("standard_conforming_strings", "on")
	set("IntervalStyle", "postgres")
	set("is_superuser", boolSetting(s.user == s.e.catalogRole))
	set("session_authorization", s.user)
	set("search_path", catalog.DefaultNamespace)
	set("extra_float_digits", "1")
	set("statement_timeout", "0")
	set("transaction_isolation", "serializable")
	set("default_transaction_isolation", "serializable")
	set("transaction_read_only", "off")
	set("max_identifier_length", "63")
	set("lc_messages", "C")
	set("client_min_messages", "notice")
	for k, v := range params {
		switch strings.ToLower(k) {
		case "user", "database", "options", "replication", "client_encoding":
		default:
			if cur, ok := st[strings.ToLower(k)]; ok {
				set(cur.name, v)
			} else {
				set(k, v)
			}
		}
	}
	return st
}

func boolSetting(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// ParameterStatus implements pgwire.Session.
func (s *Session) ParameterStatus() map[string]string {
	out := make(map[string]string, len(reported))
	for _, n := range reported {
		out[n] = s.settings[strings.ToLower(n)].value
	}
	return out
}

// searchPath returns the lake namespaces unqualified names resolve in.
func (s *Session) searchPath() []string {
	var out []string
	for _, p := range strings.Split(s.settings["search_path"].value, ",") {
		p = strings.Trim(strings.TrimSpace(p), `"`)
		if p != "" && p != "$user" {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		out = []string{catalog.DefaultNamespace}
	}
	return out
}

// readOnlySettings cannot be changed by SET.
var readOnlySettings = map[string]bool{"server_version": true, "server_encoding": true, "integer_datetimes": true,
	"is_superuser": true, "max_identifier_length": true, "session_authorization": true}

func (s *Session) planSet(n *pg_query.VariableSetStmt) (pgwire.Statement, error) {
	name := strings.ToLower(n.Name)
	switch name {
	case "role":
		return nil, sqlerr.New(sqlerr.InsufficientPrivilege, "SET ROLE is not allowed: sessions run as the role they logged in with")
	case "session_authorization":
		return nil, sqlerr.New(sqlerr.InsufficientPrivilege, "SET SESSION AUTHORIZATION is not allowed")
	case "transaction", "session_characteristics", "transaction_snapshot":
		return &funcStmt{tag: "SET", run: func(context.Context, []any) (string, [][]any, error) { return "SET", nil, nil }}, nil
	}
	if name == "timezone" && n.Kind == pg_query.VariableSetKind_VAR_SET_VALUE {
		name = "timezone"
	}
	if readOnlySettings[name] {
		return nil, sqlerr.New("55P02", "parameter %q cannot be changed", n.Name)
	}
	var value string
	switch n.Kind {
	case pg_query.VariableSetKind_VAR_SET_VALUE:
		parts := make([]string, 0, len(n.Args))
		for _, a := range n.Args {
			v, ok := stringValue(a)
			if !ok {
				return nil, sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter %q", n.Name)
			}
			parts = append(parts, v)
		}
		value = strings.Join(parts, ", ")
	case pg_query.VariableSetKind_VAR_SET_DEFAULT, pg_query.VariableSetKind_VAR_RESET:
		value = s.defaultSettings(nil)[name].value
	case pg_query.VariableSetKind_VAR_RESET_ALL:
		return &funcStmt{tag: "RESET", run: func(context.Context, []any) (string, [][]any, error) {
			s.settings = s.defaultSettings(nil)
			return "RESET", nil, nil
		}}, nil
	default:
		value = s.defaultSettings(nil)[name].value
	}
	if name == "client_encoding" && !strings.EqualFold(strings.ReplaceAll(value, "-", ""), "UTF8") && !strings.EqualFold(value, "unicode") {
		return nil, sqlerr.Unsupported("client_encoding "+value, "only UTF8 is supported")
	}
	tag := "SET"
	if n.Kind == pg_query.VariableSetKind_VAR_RESET {
		tag = "RESET"
	}
	return &funcStmt{tag: tag, run: func(context.Context, []any) (string, [][]any, error) {
		canon := n.Name
		if cur, ok := s.settings[name]; ok {
			canon = cur.name
		}
		if name == "client_encoding" {
			value = "UTF8"
		}
		s.settings[name] = setting{name: canon, value: value}
		return tag, nil, nil
	}}, nil
}

func (s *Session) planShow(n *pg_query.VariableShowStmt) (pgwire.Statement, error) {
	name := strings.ToLower(n.Name)
	if name == "all" {
		return nil, sqlerr.Unsupported("SHOW ALL", "SHOW <name> for a single setting")
	}
	if name == "time zone" {
		name = "timezone"
	}
	if _, ok := s.settings[name]; !ok {
		return nil, sqlerr.New(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", n.Name)
	}
	return &funcStmt{
		tag:  "SHOW",
		cols: []pgwire.Column{{Name: name, TypeOID: schema.OIDText, TypeSize: -1, TypeModifier: -1}},
		run: func(context.Context, []any) (string, [][]any, error) {
			return "SHOW", [][]any{{s.settings[name].value}}, nil
		},
	}, nil
}

// planTransaction handles BEGIN/COMMIT/ROLLBACK. Each write commits to the
// catalog when it executes; a transaction block groups statements for the
// client's bookkeeping (status, error state) but cannot undo a committed write,
// so ROLLBACK after a write in the block is refused with 0A000 rather than
// pretending the write was undone.
func (s *Session) planTransaction(n *pg_query.TransactionStmt) (pgwire.Statement, error) {
	run := func(tag string, fn func() error) (pgwire.Statement, error) {
		return &funcStmt{tag: tag, run: func(context.Context, []any) (string, [][]any, error) {
			if err := fn(); err != nil {
				return "", nil, err
			}
			return tag, nil, nil
		}}, nil
	}
	switch n.Kind {
	case pg_query.TransactionStmtKind_TRANS_STMT_BEGIN, pg_query.TransactionStmtKind_TRANS_STMT_START:
		return run("BEGIN", func() error { s.inBlock = true; return nil })
	case pg_query.TransactionStmtKind_TRANS_STMT_COMMIT:
		return run("COMMIT", func() error {
			// COMMIT of a failed block rolls back, as in PostgreSQL.
			s.inBlock, s.failed, s.wroteInBlock = false, false, false
			return nil
		})
	case pg_query.TransactionStmtKind_TRANS_STMT_ROLLBACK:
		return run("ROLLBACK", func() error {
			wrote := s.wroteInBlock
			s.inBlock, s.failed, s.wroteInBlock = false, false, false
			if wrote {
				return sqlerr.Unsupported("ROLLBACK of lake writes",
					"each INSERT commits when it executes; the transaction block has ended, but its writes remain")
			}
			return nil
		})
	case pg_query.TransactionStmtKind_TRANS_STMT_SAVEPOINT, pg_query.TransactionStmtKind_TRANS_STMT_RELEASE,
		pg_query.TransactionStmtKind_TRANS_STMT_ROLLBACK_TO:
		return nil, sqlerr.Unsupported("SAVEPOINT", "BEGIN, COMMIT and ROLLBACK")
	}
	return nil, sqlerr.Unsupported("this transaction command", "BEGIN, COMMIT and ROLLBACK")
}
