package engine

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// PostgreSQL's json and jsonb functions over DuckDB. Values become JSON
// text (jsonText: their own text for json and jsonb, DuckDB's to_json for
// the rest), which the engine's functions (duckfuncs.go, package pgjson)
// assemble and take apart; a json result gets PostgreSQL's spacing
// ({"k" : v}, [a, b]), a jsonb result is canonical (and is rendered so on
// the way out, resultcols.go).
//
// Set-returning functions (json[b]_array_elements[_text],
// json[b]_object_keys) become unnest of a list, in the select list as in
// FROM (where tableFunction names their column after the alias).

// jsonSetFunctions are the set-returning functions: their engine function
// and its jsonb and text flags.
var jsonSetFunctions = map[string]struct {
	fn          string
	jsonb, text bool
}{
	"json_array_elements":       {"lakesoul_json_elements", false, false},
	"jsonb_array_elements":      {"lakesoul_json_elements", true, false},
	"json_array_elements_text":  {"lakesoul_json_elements", false, true},
	"jsonb_array_elements_text": {"lakesoul_json_elements", true, true},
	"json_object_keys":          {"lakesoul_json_object_keys", false, false},
	"jsonb_object_keys":         {"lakesoul_json_object_keys", true, false},
}

// jsonSetTypes are the types of the set-returning functions' rows.
var jsonSetTypes = map[string]uint32{
	"json_array_elements": schema.OIDJSON, "jsonb_array_elements": schema.OIDJSONB,
	"json_array_elements_text": schema.OIDText, "jsonb_array_elements_text": schema.OIDText,
	"json_object_keys": schema.OIDText, "jsonb_object_keys": schema.OIDText,
}

// jsonFunction rewrites a call of a json/jsonb function; false when name is
// none of them.
func (rw *pgRewriter) jsonFunction(n *pg_query.Node, fc *pg_query.FuncCall, name string) (bool, error) {
	if s, ok := jsonSetFunctions[name]; ok && len(fc.Args) == 1 {
		call := makeCall(s.fn, makeCast(fc.Args[0], "text"), boolConst(s.jsonb), boolConst(s.text))
		n.Node = makeCall("unnest", call).Node
		return true, nil
	}
	switch name {
	case "jsonb_build_object", "json_build_object":
		if len(fc.Args)%2 != 0 {
			return false, sqlerr.New(sqlerr.InvalidParameterValue, "argument list must have even number of elements")
		}
		items := make([]*pg_query.Node, len(fc.Args))
		for i, a := range fc.Args {
			if i%2 == 0 {
				items[i] = makeCast(a, "text")
			} else {
				items[i] = rw.jsonText(a)
			}
		}
		n.Node = makeCall("lakesoul_json_build_object", makeCall("list_value", items...), boolConst(name == "jsonb_build_object")).Node
	case "to_jsonb", "to_json":
		if len(fc.Args) != 1 {
			return false, nil
		}
		n.Node = rw.jsonText(fc.Args[0]).Node
	case "jsonb_agg", "json_agg":
		if len(fc.Args) != 1 {
			return false, nil
		}
		fc.Args[0] = rw.jsonText(fc.Args[0])
		fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode("list")}
		wrap(n, func(inner *pg_query.Node) *pg_query.Node {
			return makeCall("lakesoul_json_agg", inner, boolConst(name == "jsonb_agg"))
		})
	case "jsonb_typeof", "json_typeof":
		if len(fc.Args) != 1 {
			return false, nil
		}
		n.Node = makeCall("lakesoul_json_typeof", makeCast(fc.Args[0], "text"), boolConst(name == "jsonb_typeof")).Node
	default:
		return false, nil
	}
	return true, nil
}

// jsonText is the JSON text of a value, as PostgreSQL's json functions
// take it: a json or jsonb value's own text (DuckDB's JSON would re-spell
// its numbers as doubles: 2.50 becomes 2.5), other values through to_json.
// NULL stays NULL (the engine's functions write null).
func (rw *pgRewriter) jsonText(a *pg_query.Node) *pg_query.Node {
	if rw.ti.typeAt(a).isJSON() {
		return makeCast(a, "text")
	}
	return makeCast(makeCall("to_json", a), "text")
}
