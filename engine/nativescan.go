package engine

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/layout"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Native scans. A table without a primary key needs no merge: its rows are
// the concatenation of its files. When those files are on local disk under
// the warehouse (the only place DuckDB may read, see openDuckDB), the query
// reads them with DuckDB's own Parquet scan — parallel, with filter and
// projection pushdown into row groups — instead of through lakesoul_scan.
// Range-partition values come from each partition's desc as constants;
// columns a partition's files lack (added later) read as NULL.

// nativeSQL returns q's SQL with every eligible lakesoul_scan replaced by a
// native Parquet scan of the snapshot taken for this execution, or "" when
// nothing is eligible.
func (s *Session) nativeSQL(q *duckQuery) (string, error) {
	if s.e.warehouseDir == "" {
		return "", nil
	}
	// The scans of the deparsed text are swapped for subqueries: the handle
	// text is unique (it holds the session's random token), and the subquery
	// uses DuckDB syntax pg_query would not parse.
	query := q.sql
	replaced := 0
	for handle := range q.tables {
		e, ok := s.e.scans.get(handle)
		if !ok || !e.resolved || e.table.HasPK() {
			continue
		}
		sub, ok := s.nativeScanSQL(e.table, e.parts)
		if !ok {
			continue
		}
		call := scanFunctionName + "('" + strings.ReplaceAll(handle, "'", "''") + "')"
		if !strings.Contains(query, call) {
			continue
		}
		query = strings.ReplaceAll(query, call, "("+sub+")")
		replaced++
	}
	if replaced == 0 {
		return "", nil
	}
	return query, nil
}

// nativeScanSQL builds the SELECT reading a non-PK table's snapshot.
func (s *Session) nativeScanSQL(t *catalog.Table, parts []catalog.PartitionFiles) (string, bool) {
	if len(t.Enums) > 0 {
		return "", false // enum columns are DuckDB ENUMs of lakesoul_scan (enum.go)
	}
	var selects []string
	for _, p := range parts {
		if len(p.Files) == 0 {
			continue
		}
		consts, ok := partitionConstants(t, p.Desc)
		if !ok {
			return "", false
		}
		have := map[string]bool{}
		var paths []string
		for _, f := range p.Files {
			// Only Parquet files (by name: LakeSoul's engines may also
			// write .vortex files) inside the table's directory, and no
			// name DuckDB would read as a glob; anything else goes to the
			// reader, which refuses files outside the table and names
			// files of other formats (reader/file.go).
			lp, err := objstore.LocalPath(f.Path)
			if err != nil || !strings.HasPrefix(lp, s.e.warehouseDir+"/") || !layout.Within(t.Path, f.Path) ||
				strings.ContainsAny(lp, "*?[{") || !strings.HasSuffix(lp, ".parquet") {
				return "", false
			}
			paths = append(paths, "'"+strings.ReplaceAll(lp, "'", "''")+"'")
			for _, c := range f.ExistCols {
				have[c] = true
			}
		}
		var cols []string
		for _, f := range t.Schema.Fields() {
			expr := "NULL"
			if consts[f.Name] != "" {
				expr = consts[f.Name]
			} else if names := fileNamesOf(f, have); len(names) == 1 {
				expr = names[0]
			} else if len(names) > 1 {
				// union_by_name: a file written before a rename has the
				// column under a former name (and NULL under the others);
				// no file has two of its names (rename.go).
				expr = "COALESCE(" + strings.Join(names, ", ") + ")"
			}
			cols = append(cols, fmt.Sprintf("CAST(%s AS %s) AS %s", expr, duckReadType(f), quoteIdent(f.Name)))
		}
		selects = append(selects, fmt.Sprintf("SELECT %s FROM read_parquet([%s], union_by_name = true)",
			strings.Join(cols, ", "), strings.Join(paths, ", ")))
	}
	if len(selects) == 0 {
		var cols []string
		for _, f := range t.Schema.Fields() {
			cols = append(cols, fmt.Sprintf("CAST(NULL AS %s) AS %s", duckReadType(f), quoteIdent(f.Name)))
		}
		return "SELECT " + strings.Join(cols, ", ") + " WHERE false", true
	}
	return strings.Join(selects, " UNION ALL "), true
}

// fileNamesOf are the quoted names column f has in files whose columns are
// have: its name and its former names (rename.go).
func fileNamesOf(f arrow.Field, have map[string]bool) []string {
	var out []string
	for _, n := range append([]string{f.Name}, schema.FormerNames(f)...) {
		if have[n] {
			out = append(out, quoteIdent(n))
		}
	}
	return out
}

// partitionConstants renders a partition's range values as SQL literals.
func partitionConstants(t *catalog.Table, desc string) (map[string]string, bool) {
	out := map[string]string{}
	if len(t.RangeCols) == 0 {
		return out, true
	}
	kvs, err := layout.ParseDesc(desc)
	if err != nil {
		return nil, false
	}
	for _, kv := range kvs {
		idx := t.Schema.FieldIndices(kv.Key)
		if len(idx) == 0 {
			return nil, false
		}
		dt := t.Schema.Field(idx[0]).Type
		v, err := layout.ParseValue(kv.Value, dt)
		if err != nil {
			return nil, false
		}
		lit, ok := sqlLiteral(v, dt)
		if !ok {
			return nil, false
		}
		out[kv.Key] = lit
	}
	return out, true
}

// sqlLiteral renders a value from layout.ParseValue as a SQL literal.
func sqlLiteral(v any, dt arrow.DataType) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "NULL", true
	case string:
		return "'" + strings.ReplaceAll(x, "'", "''") + "'", true
	case int8, int16, int32, int64, uint8, uint16, uint32, uint64:
		return fmt.Sprint(x), true
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32), true
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), true
	case bool:
		return strconv.FormatBool(x), true
	case arrow.Date32:
		return "DATE '" + x.ToTime().Format("2006-01-02") + "'", true
	case decimal128.Num:
		d, ok := dt.(*arrow.Decimal128Type)
		if !ok {
			return "", false
		}
		return "'" + x.ToString(d.Scale) + "'", true
	}
	return "", false
}

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
