package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/reader"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Time travel in FROM: lakesoul.snapshot(...) and lakesoul.changes(...) are
// table functions of the SQL surface (DESIGN.md §4) that behave like a lake
// table pinned to a file list, so they work anywhere a table does (joins,
// aggregates, subqueries, INSERT … SELECT):
//
//	lakesoul.snapshot('s.t', TIMESTAMPTZ '…' [, partition => '…'])
//	lakesoul.snapshot('s.t', version => 3 [, partition => '…'])
//	lakesoul.changes('s.t', TIMESTAMPTZ 'from' [, TIMESTAMPTZ 'to'] [, partition => '…'])
//
// bindLakeTables replaces each such call by lakesoul_scan(handle) where the
// handle is a fixed scan entry (putFixed) over the files that the catalog's
// lakesoul.snapshot_files / lakesoul.change_files return for the same
// arguments; the catalog evaluates the arguments, so literals, casts and
// named arguments mean exactly what they mean in PostgreSQL, in the session's
// time zone. The file list is resolved when the statement is planned (Parse)
// and stays fixed for the statement's life: a snapshot in the past does not
// change, and a prepared statement keeps reading the same files.
//
// Invariants: the first argument is a table name constant, resolved like any
// table reference of the session (search path, "public" = "default"); the
// other arguments are constants (no column references or parameters).

// lakeCatalogSchemas hold catalog objects (views, functions) that queries
// read from the catalog PostgreSQL, e.g. lakesoul.tables, lakesoul.history().
// (lakesoul_pg, the pg_catalog emulation's schema, is reached only through
// pgcatalog's rewrite.)
var lakeCatalogSchemas = map[string]bool{"lakesoul": true}

// isLakeCatalogRelation reports whether a relation reference names a view of
// the catalog's own schemas rather than a lake table.
func isLakeCatalogRelation(schema string) bool { return lakeCatalogSchemas[schema] }

// timeTravelFunctions maps the SQL surface's table functions to the catalog
// functions that list their files.
var timeTravelFunctions = map[string]string{
	"snapshot": "snapshot_files",
	"changes":  "change_files",
}

// timeTravelCall returns the surface name ("snapshot", "changes") and call of
// a FROM item that is lakesoul.snapshot(...) or lakesoul.changes(...).
func timeTravelCall(rf *pg_query.RangeFunction) (string, *pg_query.FuncCall) {
	if rf == nil || len(rf.Functions) != 1 {
		return "", nil
	}
	l := rf.Functions[0].GetList()
	if l == nil || len(l.Items) == 0 {
		return "", nil
	}
	fc := l.Items[0].GetFuncCall()
	if fc == nil || len(fc.Funcname) != 2 {
		return "", nil
	}
	schema, name := fc.Funcname[0].GetString_(), fc.Funcname[1].GetString_()
	if schema == nil || name == nil || schema.Sval != "lakesoul" {
		return "", nil
	}
	if _, ok := timeTravelFunctions[name.Sval]; !ok {
		return "", nil
	}
	return name.Sval, fc
}

// bindTimeTravel replaces the FROM item n (a lakesoul.snapshot/changes call)
// with a fixed lake scan.
func (s *Session) bindTimeTravel(ctx context.Context, n *pg_query.Node, rf *pg_query.RangeFunction, name string, fc *pg_query.FuncCall) error {
	if rf.Ordinality || len(rf.Coldeflist) > 0 || rf.IsRowsfrom {
		return sqlerr.Unsupported(fmt.Sprintf("WITH ORDINALITY, ROWS FROM or a column definition list on lakesoul.%s", name),
			"lakesoul."+name+"(...) AS alias [(column aliases)]")
	}
	if fc.AggStar || fc.AggDistinct || fc.FuncVariadic || fc.Over != nil || len(fc.AggOrder) > 0 || fc.AggFilter != nil {
		return sqlerr.New(sqlerr.SyntaxError, "lakesoul.%s takes plain arguments", name)
	}
	if len(fc.Args) < 2 {
		return sqlerr.New(sqlerr.UndefinedFunction, "lakesoul.%s needs a table name and a point in time or version", name)
	}
	var bad string
	for _, a := range fc.Args {
		walk(a, func(x *pg_query.Node) {
			switch {
			case x.GetColumnRef() != nil:
				bad = "column references"
			case x.GetParamRef() != nil:
				bad = "parameters"
			case x.GetSubLink() != nil:
				bad = "subqueries"
			}
		})
	}
	if bad != "" {
		return sqlerr.Unsupported(fmt.Sprintf("%s in the arguments of lakesoul.%s", bad, name),
			"constants: lakesoul."+name+"('schema.table', TIMESTAMPTZ '…')")
	}
	tableName, ok := stringValue(fc.Args[0])
	if !ok || fc.Args[0].GetNamedArgExpr() != nil {
		return sqlerr.New(sqlerr.InvalidParameterValue, "the first argument of lakesoul.%s must be a table name string, e.g. 's.t'", name)
	}
	schemaName, rel, err := splitTableName(tableName)
	if err != nil {
		return err
	}
	t, err := s.resolveTable(ctx, schemaName, rel)
	if err != nil {
		return err
	}

	args, err := s.bindArgs(ctx, fc.Args[1:], 2, nil)
	if err != nil {
		return err
	}
	values, err := s.argValues(ctx, args, nil)
	if err != nil {
		return err
	}
	query := fmt.Sprintf(`SELECT partition_desc, partition_version, path, size, coalesce(file_exist_cols, '') FROM lakesoul.%s($1, %s)`,
		timeTravelFunctions[name], args.list)
	var parts []catalog.PartitionFiles
	err = s.withServerTx(ctx, func(tx pgx.Tx) error {
		rr := tx.Conn().PgConn().ExecParams(ctx, query, append([][]byte{[]byte(t.ID)}, values...), append([]uint32{pgtype.TextOID}, args.oids...), nil, nil)
		var err error
		parts, err = catalog.ReadPartitionFiles(rr)
		return err
	})
	if err != nil {
		return err
	}
	if err := reader.CheckFiles(t, parts); err != nil {
		return err
	}
	key := t.ID + "\x00" + query
	for _, v := range values {
		key += "\x00" + strconv.Quote(string(v))
	}
	sum := sha256.Sum256([]byte(key))
	handle := s.token + ":tt:" + hex.EncodeToString(sum[:12])
	if name == "changes" {
		s.e.scans.putChangeFeed(handle, t, parts)
	} else {
		s.e.scans.putFixed(handle, t, parts)
	}
	alias := rf.Alias
	if alias == nil {
		alias = &pg_query.Alias{Aliasname: name}
	}
	n.Node = scanFromClause(handle, alias).Node
	return nil
}

// splitTableName splits 's.t' (or '"S"."t"', or 't') as PostgreSQL parses a
// qualified name.
func splitTableName(name string) (schema, rel string, err error) {
	tree, err := parseSQL("SELECT 1 FROM " + name)
	if err == nil && len(tree.Stmts) == 1 {
		if sel := tree.Stmts[0].Stmt.GetSelectStmt(); sel != nil && len(sel.FromClause) == 1 {
			if rv := sel.FromClause[0].GetRangeVar(); rv != nil && rv.Alias == nil && rv.Catalogname == "" {
				return rv.Schemaname, rv.Relname, nil
			}
		}
	}
	return "", "", sqlerr.New(sqlerr.InvalidParameterValue, "invalid table name %q: want 'schema.table' or 'table'", name)
}
