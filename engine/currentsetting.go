package engine

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// current_setting('name' [, missing_ok]) of a setting the session keeps
// answers what SHOW answers. Neither the catalog PostgreSQL (whose own
// search_path, transaction_isolation, … are its connection's) nor DuckDB
// knows the session's values, so a call with a constant name is replaced by
// the value as a text literal when the statement is planned; the result
// column keeps the name current_setting. (A prepared statement is planned
// again when a setting changed since: settingsChanged.) On the catalog PostgreSQL other names are its
// own; DuckDB's settings are not the session's and name server paths, so on
// lake queries (DuckDB) other names are unknown, as PostgreSQL answers for a
// parameter it does not have (42704, NULL with missing_ok), and a name that is
// not a constant is refused (checkDuckCurrentSettings).

// currentSettingCall returns n as a call of current_setting, or nil.
func currentSettingCall(n *pg_query.Node) *pg_query.FuncCall {
	fc := n.GetFuncCall()
	if fc == nil {
		return nil
	}
	var name []string
	for _, p := range fc.Funcname {
		name = append(name, strings.ToLower(p.GetString_().GetSval()))
	}
	if len(name) == 0 || len(name) > 2 || name[len(name)-1] != "current_setting" || (len(name) == 2 && name[0] != "pg_catalog") {
		return nil
	}
	return fc
}

// currentSettingValue returns the session's value when n is such a call.
func (s *Session) currentSettingValue(n *pg_query.Node) (string, bool) {
	fc := currentSettingCall(n)
	if fc == nil || fc.AggStar || fc.AggDistinct || fc.FuncVariadic || fc.Over != nil || fc.AggFilter != nil ||
		len(fc.Args) < 1 || len(fc.Args) > 2 {
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

// checkDuckCurrentSettings handles the current_setting calls left after
// rewriteCurrentSettings in a statement DuckDB runs: a constant name the
// session does not keep is unknown (42704, or NULL when missing_ok is a true
// constant); any other call is refused.
func checkDuckCurrentSettings(stmt *pg_query.Node) error {
	var err error
	walk(stmt, func(n *pg_query.Node) {
		fc := currentSettingCall(n)
		if fc == nil || err != nil {
			return
		}
		var name string
		if len(fc.Args) >= 1 {
			arg := fc.Args[0]
			if tc := arg.GetTypeCast(); tc != nil {
				arg = tc.Arg
			}
			if c := arg.GetAConst(); c != nil && c.GetSval() != nil {
				name = c.GetSval().GetSval()
			}
		}
		if name == "" || len(fc.Args) > 2 {
			err = sqlerr.Unsupported("current_setting with a name that is not a constant, on lake tables", "name the setting: current_setting('search_path')")
			return
		}
		if len(fc.Args) == 2 {
			if c := fc.Args[1].GetAConst(); c != nil && c.GetBoolval() != nil && c.GetBoolval().Boolval {
				n.Node = &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{
					Arg:      &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{Isnull: true}}},
					TypeName: &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode("text")}, Typemod: -1, Location: -1},
					Location: -1,
				}}
				return
			}
		}
		err = sqlerr.New(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", name)
	})
	return err
}
