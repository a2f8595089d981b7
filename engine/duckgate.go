package engine

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// The DuckDB gate: what SQL a user wrote may name of DuckDB.
//
// DuckDB evaluates statements over lake tables, but nothing of DuckDB's own
// belongs to a user: not the spill files in the one directory DuckDB keeps
// open for itself (openDuckDB), not its settings, catalog, secrets,
// extensions, logs or profiles. DuckDB's configuration closes every other
// file and network location; the gate closes DuckDB's functions and
// relations. Every statement tree the engine renders as DuckDB SQL is
// rendered by Session.duckSQL (or duckExprSQL), which first checks the
// whole tree — every clause of every statement kind, with stored
// expressions (defaults, checks, views) already parsed into it — and
// refuses:
//   - a call of a function outside the allowed surface: DuckDB's functions
//     that compute PostgreSQL's functions from their arguments alone
//     (duckUserFunctions), the functions the engine itself created in
//     DuckDB (the names registering them added, Engine.engineFuncs) and, in FROM,
//     PostgreSQL's set-returning functions (duckTableFunctions) and the
//     session's own lakesoul_scan calls. PostgreSQL answers 42883 for a
//     function it does not have, and so does the gate, whatever the kind
//     of DuckDB function: table, scalar, aggregate, macro or pragma; a
//     PostgreSQL function that DuckDB would answer from its own state
//     (duckStateFunctions) is 0A000;
//   - a relation that is neither a CTE in scope nor a temporary table of
//     the session (42P01): lake tables are lakesoul_scan calls by then
//     (bindLakeTables), so any other name could only reach DuckDB's own
//     views or a file path (a replacement scan);
//   - a statement kind other than a query, DML, or the creation of a
//     temporary table (a bug of the engine if it ever happens).
//
// The surface is closed by default: a function a later DuckDB adds is
// refused until it is listed here, and TestDuckGateRefusesDuckDBFunctions
// places every DuckDB function outside the surface at every clause of every
// statement kind, over pgwire and Flight SQL.

// duckUserFunctions are DuckDB's built-in scalar, aggregate and window
// functions user SQL may call. They are PostgreSQL's functions that DuckDB
// computes from their arguments alone (DuckDB's functions that answer from
// its own state — current_setting, current_database, current_query,
// version, txid_current, its sequences' nextval/currval and its pg_catalog
// macros — are not: the engine answers those it supports itself), the
// pg_catalog names behind PostgreSQL's SQL syntax (EXTRACT, OVERLAY, TRIM,
// AT TIME ZONE, SIMILAR TO, …), and the DuckDB functions the engine's
// rewrites call in their place (pgfuncs.go, pgsemantics.go, pgformat.go,
// jsonfuncs.go), which are then callable too.
var duckUserFunctions = setOf(
	// PostgreSQL's scalar functions
	"abs", "acos", "acosh", "age", "array_append", "array_cat", "array_length", "array_position", "array_prepend",
	"array_to_json", "array_to_string", "ascii", "asin", "asinh", "atan", "atan2", "atanh", "bit_count", "bit_length",
	"cardinality", "cbrt", "ceil", "ceiling", "char_length", "character_length", "chr", "concat", "concat_ws", "cos",
	"cosh", "cot", "date_part", "date_trunc", "decode", "degrees", "encode", "enum_first", "enum_last", "enum_range",
	"exp", "factorial", "floor", "format", "gcd", "gen_random_uuid", "generate_series", "generate_subscripts", "get_bit",
	"isfinite", "json_array_length", "json_extract_path", "json_extract_path_text", "json_object", "lcm", "left",
	"length", "like_escape", "ln", "log", "log10", "lower", "lpad", "ltrim", "make_date", "make_time",
	"make_timestamp", "make_timestamptz", "md5", "mod", "now", "octet_length", "pg_size_pretty", "pg_typeof", "pi",
	"position", "pow", "power", "radians", "random", "regexp_matches", "regexp_replace", "regexp_split_to_array",
	"regexp_split_to_table", "repeat", "replace", "reverse", "right", "round", "row_to_json", "rpad", "rtrim",
	"set_bit", "setseed", "sha256", "sign", "sin", "sinh", "split_part", "sqrt", "starts_with", "string_to_array",
	"strpos", "substr", "substring", "tan", "tanh", "timezone", "to_hex", "to_json", "to_timestamp",
	"transaction_timestamp", "translate", "trunc", "unnest", "upper",
	// pg_catalog names of PostgreSQL's SQL syntax (rendered as that syntax)
	"btrim", "extract", "overlay", "overlaps", "normalize", "is_normalized", "similar_to_escape", "pg_collation_for",
	// PostgreSQL's aggregate and window functions
	"array_agg", "avg", "bit_and", "bit_or", "bit_xor", "bool_and", "bool_or", "corr", "count", "covar_pop",
	"covar_samp", "cume_dist", "dense_rank", "first_value", "lag", "last_value", "lead", "max", "min", "mode",
	"nth_value", "ntile", "percent_rank", "rank", "regr_avgx", "regr_avgy", "regr_count", "regr_intercept",
	"regr_r2", "regr_slope", "regr_sxx", "regr_sxy", "regr_syy", "row_number", "stddev", "stddev_pop",
	"stddev_samp", "string_agg", "sum", "var_pop", "var_samp", "variance",
	// DuckDB functions the engine's rewrites call
	"arg_max", "arg_min", "epoch_us", "from_base64", "hex", "len", "list", "list_value", "printf", "round_even", "strftime",
	"struct_pack", "to_base64", "trim", "unhex",
)

// duckStateFunctions are PostgreSQL's functions that DuckDB has but
// answers from its own state — its settings, catalog, session, clock of
// start, transaction counter, sequences — which is nothing of the user's:
// DuckDB never runs them (0A000). Those the engine supports it answers
// before the gate sees the statement: current_setting of a session
// setting (currentsetting.go), nextval and friends (sequence.go),
// version() (pgcatalog.RewriteVersionCalls).
var duckStateFunctions = setOf(
	"col_description", "current_database", "current_query", "current_schema", "current_schemas", "current_setting",
	"current_user", "currval", "format_type", "has_any_column_privilege", "has_column_privilege",
	"has_database_privilege", "has_foreign_data_wrapper_privilege", "has_function_privilege",
	"has_language_privilege", "has_schema_privilege", "has_sequence_privilege", "has_server_privilege",
	"has_table_privilege", "has_tablespace_privilege", "inet_client_addr", "inet_client_port", "inet_server_addr",
	"inet_server_port", "nextval", "obj_description", "pg_collation_is_visible", "pg_conf_load_time",
	"pg_conversion_is_visible", "pg_function_is_visible", "pg_get_constraintdef", "pg_get_expr", "pg_get_viewdef",
	"pg_has_role", "pg_is_other_temp_schema", "pg_my_temp_schema", "pg_opclass_is_visible", "pg_operator_is_visible",
	"pg_opfamily_is_visible", "pg_postmaster_start_time", "pg_sleep", "pg_table_is_visible", "pg_timezone_names",
	"pg_ts_config_is_visible", "pg_ts_dict_is_visible", "pg_ts_parser_is_visible", "pg_ts_template_is_visible",
	"pg_type_is_visible", "session_user", "shobj_description", "txid_current", "version",
)

// duckTableFunctions are the functions user SQL may call in FROM (besides
// the session's own lakesoul_scan calls): set-returning functions over
// their arguments.
var duckTableFunctions = setOf(
	"generate_series", "range", "unnest", "generate_subscripts", "json_each", "json_tree", "jsonb_each",
	"jsonb_array_elements", "json_array_elements", "regexp_split_to_table", "json_array_elements_text",
	"jsonb_array_elements_text", "json_object_keys", "jsonb_object_keys",
)

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// duckFunctionNames lists the names of DuckDB's functions (of every kind).
func duckFunctionNames(ctx context.Context, conn *sql.Conn) (map[string]bool, error) {
	rows, err := conn.QueryContext(ctx, "SELECT DISTINCT lower(function_name) FROM duckdb_functions()")
	if err != nil {
		return nil, fmt.Errorf("list duckdb functions: %w", err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		out[name] = true
	}
	return out, rows.Err()
}

// duckSQL renders stmt as the SQL DuckDB runs: the session's user and
// database answered (answerSessionValues), then checked by the gate.
func (s *Session) duckSQL(stmt *pg_query.Node) (string, error) {
	s.answerSessionValues(stmt)
	if err := s.checkDuckTree(stmt); err != nil {
		return "", err
	}
	return deparseNode(stmt)
}

// sessionValueNames are the SQL value functions that name the session's
// user or database, by the column name PostgreSQL gives them.
var sessionValueNames = map[pg_query.SQLValueFunctionOp]string{
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_ROLE:    "current_role",
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_USER:    "current_user",
	pg_query.SQLValueFunctionOp_SVFOP_USER:            "current_user",
	pg_query.SQLValueFunctionOp_SVFOP_SESSION_USER:    "session_user",
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG: "current_catalog",
}

// answerSessionValues replaces CURRENT_USER, SESSION_USER, CURRENT_ROLE,
// USER and CURRENT_CATALOG by the session's values, which DuckDB would
// answer from its own state ('duckdb', 'memory'). A session runs as the
// role it logged in with (SET ROLE is refused) in the one database, so the
// values hold wherever the expression is evaluated — temporary tables'
// defaults included.
func (s *Session) answerSessionValues(stmt *pg_query.Node) {
	value := func(n *pg_query.Node) (string, string, bool) {
		svf := n.GetSqlvalueFunction()
		if svf == nil {
			return "", "", false
		}
		name, ok := sessionValueNames[svf.Op]
		if !ok {
			return "", "", false
		}
		if svf.Op == pg_query.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG {
			return name, DatabaseName, true
		}
		return name, s.user, true
	}
	walk(stmt, func(n *pg_query.Node) {
		if rt := n.GetResTarget(); rt != nil && rt.Name == "" && rt.Val != nil {
			if name, _, ok := value(rt.Val); ok {
				rt.Name = name
			}
		}
		if _, v, ok := value(n); ok {
			n.Node = &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{
				Arg:      pg_query.MakeAConstStrNode(v, -1),
				TypeName: &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode("text")}, Typemod: -1, Location: -1},
				Location: -1,
			}}
		}
	})
}

// duckExprSQL renders one expression as DuckDB SQL, once the gate accepts
// it.
func (s *Session) duckExprSQL(n *pg_query.Node) (string, error) {
	sel := selectNode([]*pg_query.Node{pg_query.MakeResTargetNodeWithVal(n, -1)}, nil, nil)
	text, err := s.duckSQL(sel)
	if err != nil {
		return "", err
	}
	return strings.TrimPrefix(text, "SELECT "), nil
}

// checkDuckTree is the gate: it accepts stmt when it names nothing of
// DuckDB's outside the allowed surface.
func (s *Session) checkDuckTree(stmt *pg_query.Node) error {
	created, err := duckStatementTarget(stmt)
	if err != nil {
		return err
	}
	inFrom := map[*pg_query.FuncCall]bool{}
	walk(stmt, func(n *pg_query.Node) {
		rf := n.GetRangeFunction() // nil-safe
		if rf == nil {
			return
		}
		for _, f := range rf.Functions {
			for _, item := range f.GetList().GetItems() {
				if fc := item.GetFuncCall(); fc != nil {
					inFrom[fc] = true
				}
			}
		}
	})
	ctes := cteRefs(stmt)
	walk(stmt, func(n *pg_query.Node) {
		if n == nil || err != nil {
			return
		}
		switch x := n.Node.(type) {
		case *pg_query.Node_FuncCall:
			err = s.checkDuckCall(x.FuncCall, inFrom[x.FuncCall])
		case *pg_query.Node_SqlvalueFunction:
			if x.SqlvalueFunction.Op == pg_query.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA {
				// DuckDB would answer its own schema ('main').
				err = sqlerr.Unsupported("CURRENT_SCHEMA in a statement over lake tables", "current_setting('search_path')")
			}
		case *pg_query.Node_RangeVar:
			rv := x.RangeVar
			if rv == created || ctes[rv] != nil || rv.Catalogname == duckTempCatalog && rv.Schemaname == duckTempSchema {
				return
			}
			err = sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", rangeVarName(rv))
		}
	})
	return err
}

// duckStatementTarget checks the kind of a statement rendered for DuckDB
// and returns the relation it creates, if any: only temporary tables.
func duckStatementTarget(stmt *pg_query.Node) (*pg_query.RangeVar, error) {
	switch x := stmt.Node.(type) {
	case *pg_query.Node_SelectStmt, *pg_query.Node_InsertStmt, *pg_query.Node_UpdateStmt, *pg_query.Node_DeleteStmt:
		return nil, nil
	case *pg_query.Node_CreateStmt:
		if x.CreateStmt.Relation.GetRelpersistence() == "t" {
			return x.CreateStmt.Relation, nil
		}
	case *pg_query.Node_CreateTableAsStmt:
		if rel := x.CreateTableAsStmt.GetInto().GetRel(); rel.GetRelpersistence() == "t" {
			return rel, nil
		}
	}
	return nil, fmt.Errorf("statement %T is not rendered for DuckDB", stmt.Node)
}

// checkDuckCall accepts a call of the allowed surface; inFrom: the call is
// a FROM item.
func (s *Session) checkDuckCall(fc *pg_query.FuncCall, inFrom bool) error {
	var parts []string
	for _, p := range fc.Funcname {
		str := p.GetString_()
		if str == nil {
			return undefinedFunction(fc)
		}
		parts = append(parts, str.Sval)
	}
	if len(parts) == 0 || len(parts) > 2 || len(parts) == 2 && parts[0] != "pg_catalog" {
		return undefinedFunction(fc)
	}
	name := parts[len(parts)-1]
	for i := 0; i < len(name); i++ {
		if name[i] >= 0x80 {
			return undefinedFunction(fc) // DuckDB's lookup folds case; keep to names it folds as we do
		}
	}
	name = strings.ToLower(name)
	switch {
	case name == scanFunctionName:
		if inFrom && len(parts) == 1 && len(fc.Args) == 1 {
			if h, ok := stringValue(fc.Args[0]); ok && fc.Args[0].GetAConst() != nil && strings.HasPrefix(h, s.token+":") {
				return nil
			}
		}
	case inFrom:
		if duckTableFunctions[name] {
			return nil
		}
	case duckUserFunctions[name] || s.e.engineFuncs[name]:
		return nil
	}
	if duckStateFunctions[name] {
		return sqlerr.Unsupported(fmt.Sprintf("%s() in this statement", name),
			"queries over lake tables answer current_setting('name') of a session setting, nextval('seq') and version(); run catalog functions in a statement of their own")
	}
	return undefinedFunction(fc)
}

// isInternalCall reports whether fc calls one of the functions the engine
// created in DuckDB for its own rewrites: the gate admits them in what the
// engine renders, so they are refused where the client's text is parsed
// (refuseCalls), before any rewrite adds such calls. The engine names those
// helpers lakesoul_* (internalFuncPrefix); the other functions it registers
// stand in for PostgreSQL's or pgvector's (repeat, lpad, l2_distance, …) and
// stay callable.
func (s *Session) isInternalCall(fc *pg_query.FuncCall) bool {
	if len(fc.Funcname) == 0 || len(fc.Funcname) > 2 {
		return false
	}
	if len(fc.Funcname) == 2 && fc.Funcname[0].GetString_().GetSval() != "pg_catalog" {
		return false
	}
	name := strings.ToLower(fc.Funcname[len(fc.Funcname)-1].GetString_().GetSval())
	return s.e.engineFuncs[name] && strings.HasPrefix(name, internalFuncPrefix)
}

// internalFuncPrefix begins the name of every function the engine creates
// in DuckDB for its own rewrites, and of no function it offers clients.
const internalFuncPrefix = "lakesoul_"

// undefinedFunction is PostgreSQL's error for a function it does not have.
func undefinedFunction(fc *pg_query.FuncCall) error {
	var parts []string
	for _, p := range fc.Funcname {
		parts = append(parts, p.GetString_().GetSval())
	}
	return &sqlerr.Error{Code: sqlerr.UndefinedFunction,
		Message: fmt.Sprintf("function %s does not exist", strings.Join(parts, ".")),
		Hint:    "No function matches the given name and argument types. You might need to add explicit type casts."}
}

// rangeVarName is a relation's name as written.
func rangeVarName(rv *pg_query.RangeVar) string {
	name := rv.Relname
	if rv.Schemaname != "" {
		name = rv.Schemaname + "." + name
	}
	if rv.Catalogname != "" {
		name = rv.Catalogname + "." + name
	}
	return name
}

// DuckDBSurface lists the DuckDB built-in functions user SQL may call by
// name: scalar (aggregate, window) functions anywhere, table functions in
// FROM; the engine's own functions aside. Tests enumerate DuckDB's other
// functions against it.
func DuckDBSurface() (scalar, table []string) {
	for n := range duckUserFunctions {
		scalar = append(scalar, n)
	}
	for n := range duckTableFunctions {
		table = append(table, n)
	}
	slices.Sort(scalar)
	slices.Sort(table)
	return scalar, table
}
