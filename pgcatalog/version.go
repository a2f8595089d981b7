package pgcatalog

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// ServerVersion and ServerVersionNum are the PostgreSQL version the server
// claims: in ParameterStatus and SHOW (engine), and in version() and
// current_setting('server_version[_num]') of catalog queries (Rewrite), which
// would otherwise report the catalog database's own version. A 16.x version,
// whose client-side behaviour (psql's describe queries, pgjdbc's startup) the
// emulation is tested with; the catalog itself may be PostgreSQL 15 or later.
const (
	ServerVersion    = "16.4"
	ServerVersionNum = "160004"
)

// VersionString is what version() answers, in PostgreSQL's format
// ("PostgreSQL 16.4 … on <platform>, compiled by …, 64-bit") so that clients
// that parse it find the version they see in ParameterStatus.
var VersionString = fmt.Sprintf("PostgreSQL %s (LakeSoul-Go) on %s-%s, compiled by %s, %d-bit",
	ServerVersion, runtime.GOARCH, runtime.GOOS, runtime.Version(), strconv.IntSize)

// versionSettings are the settings current_setting answers from the server's
// claimed version instead of the catalog database's (names are
// case-insensitive, as PostgreSQL's).
var versionSettings = map[string]string{
	"server_version":     ServerVersion,
	"server_version_num": ServerVersionNum,
}

// versionFunctionValue returns the constant a call answers when it is
// version() or current_setting('server_version'|'server_version_num' [, missing_ok]),
// unqualified or qualified with pg_catalog, and the name PostgreSQL gives
// the call's result column.
func versionFunctionValue(fc *pg_query.FuncCall) (value, colname string, ok bool) {
	if fc == nil || fc.AggStar || fc.AggDistinct || fc.FuncVariadic || fc.Over != nil || len(fc.AggOrder) > 0 || fc.AggFilter != nil {
		return "", "", false
	}
	name, ok := strs(fc.Funcname)
	if !ok || len(name) == 0 || len(name) > 2 || (len(name) == 2 && name[0] != "pg_catalog") {
		return "", "", false
	}
	for _, a := range fc.Args {
		if a.GetNamedArgExpr() != nil {
			return "", "", false
		}
	}
	switch fn := name[len(name)-1]; {
	case fn == "version" && len(fc.Args) == 0:
		return VersionString, fn, true
	case fn == "current_setting" && (len(fc.Args) == 1 || len(fc.Args) == 2):
		setting, ok := stringConst(fc.Args[0])
		if !ok {
			return "", "", false
		}
		if v, ok := versionSettings[strings.ToLower(setting)]; ok {
			return v, fn, true
		}
	}
	return "", "", false
}

// stringConst returns the value of a string literal, possibly cast to text.
func stringConst(n *pg_query.Node) (string, bool) {
	if tc := n.GetTypeCast(); tc != nil {
		tn, ok := strs(tc.GetTypeName().GetNames())
		if !ok || len(tn) == 0 || tn[len(tn)-1] != "text" {
			return "", false
		}
		n = tc.Arg
	}
	if c := n.GetAConst(); c != nil && !c.Isnull {
		if s := c.GetSval(); s != nil {
			return s.Sval, true
		}
	}
	return "", false
}

// textConst is the expression 'value'::text.
func textConst(value string, location int32) *pg_query.Node {
	return &pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{
		Arg:      pg_query.MakeAConstStrNode(value, location),
		TypeName: &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode("text")}, Typemod: -1, Location: -1},
		Location: -1,
	}}}
}

// rewriteVersionTarget names a result column that is a version function call
// after the function, as PostgreSQL would, before rewriteVersionFunction
// turns the call into a constant (which would be named "text").
func rewriteVersionTarget(rt *pg_query.ResTarget) {
	if rt.Name != "" || rt.Val == nil {
		return
	}
	if _, colname, ok := versionFunctionValue(rt.Val.GetFuncCall()); ok {
		rt.Name = colname
	}
}

// rewriteVersionFunction replaces a version function call by its value.
func rewriteVersionFunction(n *pg_query.Node) {
	fc := n.GetFuncCall()
	if value, _, ok := versionFunctionValue(fc); ok {
		n.Node = textConst(value, fc.Location).Node
	}
}

// RewriteVersionCalls turns version() and current_setting('server_version…')
// of any statement into the claimed version's constants — for queries over
// lake tables, which DuckDB (whose version() is its own) executes.
func RewriteVersionCalls(stmt *pg_query.Node) {
	walkNode(stmt, func(m any) {
		switch n := m.(type) {
		case *pg_query.ResTarget:
			rewriteVersionTarget(n)
		case *pg_query.Node:
			rewriteVersionFunction(n)
		}
	})
}
