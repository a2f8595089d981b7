package engine

import (
	"strings"
	"sync"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// PostgreSQL functions DuckDB spells or types differently. Queries over
// lake tables run in DuckDB, whose functions mostly match PostgreSQL's; the
// ones below would otherwise fail or answer differently, so calls are
// rewritten into DuckDB expressions that give PostgreSQL's answer:
//
//   - encode(bytea, 'hex'|'base64') and decode(text, 'hex'|'base64'):
//     DuckDB's encode/decode are UTF-8 conversions; PostgreSQL's hex is
//     lower case and its base64 wraps lines at 76 characters.
//   - to_char(date/timestamp, '<constant pattern>'): strftime with the
//     pattern translated; a pattern with a field this translation does not
//     know fails with 0A000 rather than printing it literally.
//   - cardinality(array): DuckDB's is for maps only.
//   - btrim(text[, characters]): DuckDB's trim.
//   - length, char_length, character_length,
//     strpos, ascii, array_length: integer (int4) results, as in PostgreSQL, not bigint.
//
// TestDifferential (tests/) checks these against PostgreSQL itself.

// pgFuncTemplates are DuckDB expressions of PostgreSQL calls; $1, $2 stand
// for the call's arguments.
var pgFuncTemplates = map[string]string{
	"encode/hex":    "lower(hex($1))",
	"encode/base64": `rtrim(regexp_replace(to_base64($1), '(.{76})', '\1' || chr(10), 'g'), chr(10))`,
	"decode/hex":    "unhex($1)",
	"decode/base64": `from_base64(regexp_replace($1, '\s', '', 'g'))`,
	"to_char":       "strftime($1, $2)",
	"int4":          "CAST($1 AS INTEGER)",
	"cardinality":   "CAST(len($1) AS INTEGER)",
}

// int4Functions return int4 in PostgreSQL and bigint in DuckDB.
var int4Functions = map[string]bool{"length": true, "char_length": true, "character_length": true,
	"strpos": true, "ascii": true, "array_length": true}

var (
	templateMu    sync.Mutex
	templateCache = map[string]*pg_query.Node{}
)

// template returns a fresh copy of the parsed expression of pgFuncTemplates[key].
func template(key string) *pg_query.Node {
	templateMu.Lock()
	defer templateMu.Unlock()
	n, ok := templateCache[key]
	if !ok {
		r, err := pg_query.Parse("SELECT " + pgFuncTemplates[key])
		if err != nil {
			panic("pgfuncs: template " + key + ": " + err.Error()) // a bug in the table above
		}
		n = r.Stmts[0].Stmt.GetSelectStmt().TargetList[0].GetResTarget().Val
		templateCache[key] = n
	}
	return proto.Clone(n).(*pg_query.Node)
}

// instantiate replaces $k in the template expr by args[k-1]. The template's
// placeholders are found before any argument is put in, so parameters of
// the statement inside the arguments stay as they are.
func instantiate(expr *pg_query.Node, args ...*pg_query.Node) *pg_query.Node {
	var slots []*pg_query.Node
	walk(expr, func(n *pg_query.Node) {
		if n.GetParamRef() != nil {
			slots = append(slots, n)
		}
	})
	for _, n := range slots {
		n.Node = args[n.GetParamRef().Number-1].Node
	}
	return expr
}

// rewritePGFunctions rewrites the calls described above in stmt. Calls are
// rewritten innermost first, each once: a rewritten call's arguments are
// already in their final form when it takes them.
func rewritePGFunctions(stmt *pg_query.Node) error {
	var calls []*pg_query.Node
	walk(stmt, func(n *pg_query.Node) {
		if fc := n.GetFuncCall(); fc != nil && fc.Over == nil && !fc.AggStar && len(fc.AggOrder) == 0 && fc.AggFilter == nil {
			calls = append(calls, n)
		}
	})
	for i := len(calls) - 1; i >= 0; i-- {
		if err := rewritePGCall(calls[i]); err != nil {
			return err
		}
	}
	return nil
}

// rewritePGCall rewrites one call node, if it is one of the calls above.
func rewritePGCall(n *pg_query.Node) error {
	fc := n.GetFuncCall()
	name := funcName(fc)
	switch {
	case (name == "encode" || name == "decode") && len(fc.Args) == 2:
		format, ok := stringValue(fc.Args[1])
		if key := name + "/" + strings.ToLower(format); ok && pgFuncTemplates[key] != "" {
			n.Node = instantiate(template(key), fc.Args[0]).Node
		}
	case name == "to_char" && len(fc.Args) == 2:
		format, ok := stringValue(fc.Args[1])
		if !ok {
			return nil // DuckDB reports that to_char does not exist
		}
		f, err := strftimeFormat(format)
		if err != nil {
			return err
		}
		n.Node = instantiate(template("to_char"), fc.Args[0], pg_query.MakeAConstStrNode(f, -1)).Node
	case name == "btrim" && (len(fc.Args) == 1 || len(fc.Args) == 2):
		fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode("trim")} // DuckDB's trim is btrim
	case name == "cardinality" && len(fc.Args) == 1:
		n.Node = instantiate(template("cardinality"), fc.Args[0]).Node
	case int4Functions[name] && !fc.FuncVariadic:
		fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode(name)} // pg_catalog.length is DuckDB's length
		inner := &pg_query.Node{Node: n.Node}
		n.Node = instantiate(template("int4"), inner).Node
	}
	return nil
}

// funcName is a call's function name without a pg_catalog qualification;
// "" for other schemas.
func funcName(fc *pg_query.FuncCall) string {
	parts := fc.Funcname
	if len(parts) == 2 && parts[0].GetString_().GetSval() == "pg_catalog" {
		parts = parts[1:]
	}
	if len(parts) != 1 {
		return ""
	}
	return parts[0].GetString_().GetSval()
}

// toCharFields maps PostgreSQL to_char fields to strftime's, longest first.
var toCharFields = []struct{ pg, duck string }{
	{"HH24", "%H"}, {"HH12", "%I"}, {"HH", "%I"}, {"MI", "%M"}, {"SS", "%S"}, {"MS", "%g"}, {"US", "%f"},
	{"YYYY", "%Y"}, {"YY", "%y"}, {"MM", "%m"}, {"DDD", "%j"}, {"DD", "%d"},
	{"AM", "%p"}, {"PM", "%p"},
}

// strftimeFormat translates a to_char pattern. Text in double quotes and
// characters that are not letters are copied; letters must form a field of
// toCharFields.
func strftimeFormat(pattern string) (string, error) {
	var sb strings.Builder
	for i := 0; i < len(pattern); {
		c := pattern[i]
		switch {
		case c == '"':
			end := strings.IndexByte(pattern[i+1:], '"')
			if end < 0 {
				end = len(pattern) - i - 1
			}
			sb.WriteString(strings.ReplaceAll(pattern[i+1:i+1+end], "%", "%%"))
			i += end + 2
			continue
		case c == '%':
			sb.WriteString("%%")
		case c == '\\' && i+1 < len(pattern):
			i++
			sb.WriteByte(pattern[i])
		case c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z':
			found := false
			for _, f := range toCharFields {
				if strings.HasPrefix(pattern[i:], f.pg) {
					sb.WriteString(f.duck)
					i += len(f.pg)
					found = true
					break
				}
			}
			if !found {
				return "", sqlerr.Unsupported("to_char pattern "+quoteLiteral(pattern[i:]),
					"the fields YYYY YY MM DD DDD HH24 HH12 HH MI SS MS US AM PM")
			}
			continue
		default:
			sb.WriteByte(c)
		}
		i++
	}
	return sb.String(), nil
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
