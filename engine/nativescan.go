package engine

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// userTableFunctions are the table functions user SQL may call in FROM. Any
// other (read_parquet, read_csv, query, glob …) could read files or bypass
// the catalog, so it is refused; lakesoul_scan is the engine's own and is
// never accepted from users.
var userTableFunctions = map[string]bool{
	"generate_series": true, "range": true, "unnest": true, "generate_subscripts": true,
	"json_each": true, "json_tree": true, "jsonb_each": true, "jsonb_array_elements": true,
	"json_array_elements": true, "regexp_split_to_table": true, "json_array_elements_text": true,
	"jsonb_array_elements_text": true, "json_object_keys": true, "jsonb_object_keys": true,
}

// checkTableFunctions refuses table functions users may not call. The
// engine's own lakesoul_scan calls carry this session's random token.
func (s *Session) checkTableFunctions(stmt *pg_query.Node) error {
	var bad string
	walk(stmt, func(n *pg_query.Node) {
		rf := n.GetRangeFunction()
		if rf == nil || bad != "" {
			return
		}
		if name, _ := timeTravelCall(rf); name != "" {
			return
		}
		for _, f := range rf.Functions {
			items := f.GetList().GetItems()
			if len(items) == 0 || items[0].GetFuncCall() == nil {
				continue
			}
			var parts []string
			for _, p := range items[0].GetFuncCall().Funcname {
				parts = append(parts, p.GetString_().GetSval())
			}
			name := strings.Join(parts, ".")
			if name == scanFunctionName && len(items[0].GetFuncCall().Args) == 1 {
				if h, ok := stringValue(items[0].GetFuncCall().Args[0]); ok && strings.HasPrefix(h, s.token+":") {
					continue
				}
			}
			if !userTableFunctions[strings.TrimPrefix(name, "pg_catalog.")] {
				bad = name
				return
			}
		}
	})
	if bad != "" {
		return sqlerr.New(sqlerr.UndefinedFunction, "table function %s does not exist or is not allowed on lake queries", bad)
	}
	return nil
}
