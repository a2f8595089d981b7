package pgcatalog

import (
	"errors"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/pganalyze/pg_query_go/v6/parser"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// RewriteSQL parses sql, applies Rewrite and deparses the result. The text
// is pg_query's rendering (PostgreSQL 17 grammar), which PostgreSQL 15 accepts
// for the queries clients send to the catalog.
func RewriteSQL(sql string) (string, error) {
	tree, err := pg_query.Parse(sql)
	if err != nil {
		se := &sqlerr.Error{Code: sqlerr.SyntaxError, Message: err.Error(), Err: err}
		var pe *parser.Error
		if errors.As(err, &pe) {
			se.Position = int32(pe.Cursorpos)
		}
		return "", se
	}
	if err := Rewrite(tree); err != nil {
		return "", err
	}
	return pg_query.Deparse(tree)
}

// Rewrite re-points, in place, the catalog references of tree at the
// emulation objects of schema lakesoul_pg:
//
//   - every RangeVar naming pg_catalog.X, an unqualified pg_X, or
//     information_schema.X for which an emulation view exists is renamed to
//     that view; it keeps its alias, or gets the original relation name as
//     alias, so column references stay valid; a database qualifier is
//     dropped (the lake's database name is not the catalog's);
//   - column references qualified with such a relation's schema
//     (pg_catalog.pg_class.relname) lose the schema;
//   - calls of pg_catalog functions that lakesoul_pg replaces (same name and
//     argument count, positional arguments), qualified with pg_catalog or not,
//     are renamed to lakesoul_pg.<name>; so is the keyword CURRENT_SCHEMA;
//   - version() and current_setting('server_version' or 'server_version_num'
//     [, missing_ok]) (a string literal name, any case) become text literals
//     of the version the server claims (ServerVersion, VersionString), not
//     the catalog database's; as a result column the literal keeps the
//     function's name.
//
// An unqualified name that some WITH clause of the statement defines is never
// treated as a catalog relation. Everything else is left untouched.
//
// Rewrite is for statements bound for the catalog database, which must not
// change it: a statement that is not a plain query (SELECT or VALUES without
// INTO or FOR UPDATE/SHARE, or EXPLAIN of one, with no data-modifying WITH)
// makes Rewrite return a 42501 *sqlerr.Error and leave the tree unchanged.
// (Functions called by a query run with the catalog session's privileges:
// that session's role is what limits them.)
func Rewrite(tree *pg_query.ParseResult) error {
	if tree == nil {
		return errors.New("pgcatalog: nil parse tree")
	}
	ctes := cteNames(tree)
	for _, raw := range tree.GetStmts() {
		if !isReadOnlyQuery(raw.GetStmt()) {
			return sqlerr.New(sqlerr.InsufficientPrivilege,
				"permission denied: the system catalogs only answer queries")
		}
	}
	rewriteRegCasts(tree)        // regnames.go (before the casts tableoid.go adds)
	rewriteTableoids(tree, ctes) // tableoid.go
	walk(tree.ProtoReflect(), func(m any) {
		switch n := m.(type) {
		case *pg_query.RangeVar:
			rewriteRangeVar(n, ctes)
		case *pg_query.ColumnRef:
			rewriteColumnRef(n)
		case *pg_query.ResTarget:
			rewriteVersionTarget(n)
		case *pg_query.FuncCall:
			rewriteFuncCall(n)
		case *pg_query.Node:
			rewriteSQLValueFunction(n)
			rewriteVersionFunction(n)
		}
	})
	return nil
}

func rewriteRangeVar(n *pg_query.RangeVar, ctes map[string]bool) {
	if n.Schemaname == "" && ctes[n.Relname] {
		return
	}
	view, ok := emulationFor(n.Schemaname, n.Relname)
	if !ok {
		return
	}
	if n.Alias == nil {
		n.Alias = &pg_query.Alias{Aliasname: n.Relname}
	}
	n.Catalogname, n.Schemaname, n.Relname = "", EmulationSchema, view
}

// rewriteColumnRef turns [catalog.]schema.rel.col into rel.col when
// schema.rel is emulated (its RangeVar now carries alias rel).
func rewriteColumnRef(n *pg_query.ColumnRef) {
	if len(n.Fields) < 3 {
		return
	}
	qual, ok := strs(n.Fields[:len(n.Fields)-1])
	if !ok || len(qual) > 3 {
		return
	}
	if _, ok := emulationFor(qual[len(qual)-2], qual[len(qual)-1]); ok && qual[len(qual)-2] != "" {
		n.Fields = n.Fields[len(n.Fields)-2:]
	}
}

func rewriteFuncCall(n *pg_query.FuncCall) {
	name, ok := strs(n.Funcname)
	if !ok || len(name) == 0 || len(name) > 2 || (len(name) == 2 && name[0] != "pg_catalog") {
		return
	}
	if n.AggStar || n.AggDistinct || n.FuncVariadic || n.Over != nil || len(n.AggOrder) > 0 || n.AggFilter != nil {
		return
	}
	for _, a := range n.Args {
		if a.GetNamedArgExpr() != nil {
			return
		}
	}
	fn := name[len(name)-1]
	if !hasEmulatedFunction(fn, len(n.Args)) {
		return
	}
	n.Funcname = []*pg_query.Node{pg_query.MakeStrNode(EmulationSchema), pg_query.MakeStrNode(fn)}
	if n.Funcformat == pg_query.CoercionForm_COERCE_SQL_SYNTAX {
		// current_schema written without parentheses.
		n.Funcformat = pg_query.CoercionForm_COERCE_EXPLICIT_CALL
	}
}

// rewriteSQLValueFunction turns the keyword CURRENT_SCHEMA into a call of
// lakesoul_pg.current_schema().
func rewriteSQLValueFunction(n *pg_query.Node) {
	svf := n.GetSqlvalueFunction()
	if svf == nil || svf.Op != pg_query.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA {
		return
	}
	n.Node = &pg_query.Node_FuncCall{FuncCall: &pg_query.FuncCall{
		Funcname:   []*pg_query.Node{pg_query.MakeStrNode(EmulationSchema), pg_query.MakeStrNode("current_schema")},
		Funcformat: pg_query.CoercionForm_COERCE_EXPLICIT_CALL,
		Location:   svf.Location,
	}}
}

// cteNames returns the names every WITH clause of the tree defines.
func cteNames(tree *pg_query.ParseResult) map[string]bool {
	names := map[string]bool{}
	walk(tree.ProtoReflect(), func(m any) {
		if c, ok := m.(*pg_query.CommonTableExpr); ok {
			names[c.Ctename] = true
		}
	})
	return names
}

// isReadOnlyQuery reports whether stmt is a SELECT (or EXPLAIN of one) that
// neither creates a table (INTO), locks rows (FOR UPDATE …) nor modifies data
// (in a WITH clause).
func isReadOnlyQuery(stmt *pg_query.Node) bool {
	if e := stmt.GetExplainStmt(); e != nil {
		stmt = e.GetQuery()
	}
	if stmt.GetSelectStmt() == nil {
		return false
	}
	ok := true
	walkNode(stmt, func(m any) {
		switch n := m.(type) {
		case *pg_query.InsertStmt, *pg_query.UpdateStmt, *pg_query.DeleteStmt, *pg_query.MergeStmt:
			ok = false
		case *pg_query.SelectStmt:
			if n.IntoClause != nil || len(n.LockingClause) > 0 {
				ok = false
			}
		}
	})
	return ok
}
