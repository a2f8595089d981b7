package engine

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// CREATE EXTENSION of the extensions whose SQL surface the engine has.
//
// There is no extension to install: what an extension ORMs and migrations
// ask for gives is served by the engine itself (vector: pgvector's type and
// operators, vectorsearch.go; plpgsql: PostgreSQL's own) or is the same as
// a built-in function (uuid-ossp's uuid_generate_v4() and pgcrypto's
// gen_random_uuid() make random version 4 UUIDs, as PostgreSQL's core
// gen_random_uuid() does; the engine answers uuid_generate_v4() with it,
// in every statement: queries, defaults, writes). CREATE EXTENSION of one of
// these succeeds and changes nothing, IF NOT EXISTS or not (the database
// acts as one where it is installed by the first migration that asks); any
// other extension is 0A000, naming these.

// extensions maps an extension name to the functions of it the engine
// serves (documentation for the hint).
var extensions = map[string]string{
	"uuid-ossp": "uuid_generate_v4()",
	"pgcrypto":  "gen_random_uuid()",
	"plpgsql":   "",
	"vector":    "the vector type, its operators and ivfflat indexes",
}

// functionAliases are extension functions the engine answers with a
// built-in function of the same result.
var functionAliases = map[string]string{
	"uuid_generate_v4": "gen_random_uuid",
}

func (s *Session) planCreateExtension(n *pg_query.CreateExtensionStmt) (pgwire.Statement, error) {
	if _, ok := extensions[n.Extname]; !ok {
		names := make([]string, 0, len(extensions))
		for k := range extensions {
			names = append(names, fmt.Sprintf("%q", k))
		}
		sort.Strings(names)
		return nil, sqlerr.Unsupported(fmt.Sprintf("extension %q", n.Extname), "CREATE EXTENSION of "+strings.Join(names, ", "))
	}
	return &funcStmt{tag: "CREATE EXTENSION", run: func(context.Context, []any) (string, [][]any, error) {
		return "CREATE EXTENSION", nil, nil
	}}, nil
}

// rewriteFunctionAliases renames the calls of functionAliases in stmt
// (unqualified, or qualified by public, where extensions install them).
func rewriteFunctionAliases(stmt *pg_query.Node) {
	walk(stmt, func(n *pg_query.Node) {
		fc := n.GetFuncCall()
		if fc == nil || len(fc.Funcname) == 0 || len(fc.Funcname) > 2 {
			return
		}
		var name []string
		for _, p := range fc.Funcname {
			name = append(name, p.GetString_().GetSval())
		}
		if len(name) == 2 && name[0] != "public" {
			return
		}
		to, ok := functionAliases[name[len(name)-1]]
		if !ok || len(fc.Args) != 0 || slices.Contains(name, "") {
			return
		}
		fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode(to)}
	})
}
