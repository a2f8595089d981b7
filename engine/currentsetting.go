package engine

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// current_setting('name' [, missing_ok]) of a setting the session keeps
// answers what SHOW answers. Neither the catalog PostgreSQL (whose own
// search_path, transaction_isolation, … are its connection's) nor DuckDB
// knows the session's values, so a call with a constant name is replaced by
// the value as a text literal when the statement is planned; the result
// column keeps the name current_setting. (A prepared statement keeps the
// value it was planned with.) Other names are left to the database that runs
// the query.

// currentSettingValue returns the session's value when n is such a call.
func (s *Session) currentSettingValue(n *pg_query.Node) (string, bool) {
	fc := n.GetFuncCall()
	if fc == nil || fc.AggStar || fc.AggDistinct || fc.FuncVariadic || fc.Over != nil || fc.AggFilter != nil ||
		len(fc.Args) < 1 || len(fc.Args) > 2 {
		return "", false
	}
	var name []string
	for _, p := range fc.Funcname {
		name = append(name, p.GetString_().GetSval())
	}
	if len(name) > 2 || name[len(name)-1] != "current_setting" || (len(name) == 2 && name[0] != "pg_catalog") {
		return "", false
	}
	arg := fc.Args[0]
	if tc := arg.GetTypeCast(); tc != nil && typeNameString(tc.TypeName) == "text" {
		arg = tc.Arg
	}
	c := arg.GetAConst()
	if c == nil || c.GetSval() == nil {
		return "", false
	}
	st, ok := s.settings[strings.ToLower(c.GetSval().GetSval())]
	if !ok {
		return "", false
	}
	return st.value, true
}

// rewriteCurrentSettings replaces the statement's current_setting calls of
// session settings by their values.
func (s *Session) rewriteCurrentSettings(stmt *pg_query.Node) {
	walk(stmt, func(n *pg_query.Node) {
		if rt := n.GetResTarget(); rt != nil && rt.Name == "" && rt.Val != nil {
			if _, ok := s.currentSettingValue(rt.Val); ok {
				rt.Name = "current_setting"
			}
		}
		if v, ok := s.currentSettingValue(n); ok {
			n.Node = &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{
				Arg:      pg_query.MakeAConstStrNode(v, -1),
				TypeName: &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode("text")}, Typemod: -1, Location: -1},
				Location: -1,
			}}
		}
	})
}
