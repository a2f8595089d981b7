package engine

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// refuseCalls refuses, where the client's text is parsed and before any
// rewrite, a statement calling a function that must not run where the
// statement would run it — in one walk over the tree, for every statement
// kind:
//   - the engine's own DuckDB helpers (isInternalCall, duckgate.go): 42883,
//     as PostgreSQL answers for a function it does not have;
//   - advisory-lock functions outside a SELECT of their own, set_config
//     anywhere but as a result column of a SELECT (advisory.go,
//     setconfig.go): they act on the session, which only those forms
//     reach; 0A000;
//   - large-object functions (largeobject.go): 0A000.
func (s *Session) refuseCalls(stmt *pg_query.Node) error {
	var internal *pg_query.FuncCall
	var advisory, setConfig bool
	var largeObject string
	walk(stmt, func(n *pg_query.Node) {
		fc := n.GetFuncCall()
		if fc == nil {
			return
		}
		switch {
		case internal == nil && s.isInternalCall(fc):
			internal = fc
		case advisoryFunc(fc) != "":
			advisory = true
		case isSetConfig(fc):
			setConfig = true
		case largeObject == "" && isLargeObjectFunc(fc):
			parts, _ := funcNameParts(fc)
			largeObject = parts[len(parts)-1]
		}
	})
	switch {
	case internal != nil:
		return undefinedFunction(internal)
	case largeObject != "":
		return sqlerr.Unsupported("large objects ("+largeObject+")", "store the bytes in a bytea column of a lake table")
	}
	if advisory {
		if _, ok := advisoryTargets(stmt); !ok {
			return errAdvisoryForm
		}
	}
	if setConfig {
		if _, ok := setConfigTargets(stmt); !ok {
			return errSetConfigForm
		}
	}
	return nil
}
