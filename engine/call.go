package engine

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// CALL lakesoul.<procedure>(...): table maintenance of the SQL surface
// (DESIGN.md §4). Each procedure is a function of sqlfuncs/050_maintenance.sql
// that the statement calls on the catalog PostgreSQL, in its own read-write
// transaction, as the session's role, with the session's lake search path and
// time zone — so argument syntax (named arguments, TIMESTAMPTZ literals,
// parameters) is exactly PostgreSQL's. The catalog functions never delete
// files; cleanup's unreferenced files are deleted here after the catalog
// transaction committed.
//
//	CALL lakesoul.rollback('s.t', version => 3 [, partition => 'd=…'])  → partition, version (new)
//	CALL lakesoul.rollback('s.t', TIMESTAMPTZ '…' [, partition => '…'])
//	CALL lakesoul.cleanup('s.t', TIMESTAMPTZ 'older than' [, partition => '…'])  → partition, files_deleted
//	CALL lakesoul.drop_partition('s.t', 'd=…')  → versions_removed
//
// CALL runs outside transaction blocks only (25001), like PostgreSQL's
// maintenance commands: it commits at once and cannot be rolled back.
type callProc struct {
	// query selects the result from lakesoul.<name>(%s).
	query string
	// cleanup marks results of (partition_desc, path) whose files are deleted
	// after commit and summarised per partition.
	cleanup bool
}

// activeSQLTransaction is SQLSTATE 25001.
const activeSQLTransaction = "25001"

var callProcs = map[string]callProc{
	"rollback":       {query: `SELECT r.partition_desc AS "partition", r.new_version AS version FROM lakesoul.rollback(%s) r`},
	"cleanup":        {query: `SELECT c.partition_desc, c.path FROM lakesoul.cleanup(%s) c`, cleanup: true},
	"drop_partition": {query: `SELECT lakesoul.drop_partition(%s) AS versions_removed`},
}

func (s *Session) planCall(ctx context.Context, n *pg_query.CallStmt, paramOIDs []uint32) (pgwire.Statement, error) {
	fc := n.Funccall
	var names []string
	if fc != nil {
		for _, p := range fc.Funcname {
			if str := p.GetString_(); str != nil {
				names = append(names, str.Sval)
			}
		}
	}
	supported := "CALL lakesoul.rollback(...), CALL lakesoul.cleanup(...), CALL lakesoul.drop_partition(...)"
	if len(names) != 2 || names[0] != "lakesoul" {
		return nil, sqlerr.Unsupported("CALL "+strings.Join(names, "."), supported)
	}
	proc, ok := callProcs[names[1]]
	if !ok {
		if names[1] == "compact" {
			return s.planCompact(ctx, fc, paramOIDs) // compact_call.go
		}
		e := sqlerr.New(sqlerr.UndefinedFunction, "procedure lakesoul.%s does not exist", names[1])
		e.Hint = supported
		return nil, e
	}
	if s.inBlock {
		return nil, sqlerr.New(activeSQLTransaction, "CALL lakesoul.%s cannot run inside a transaction block", names[1])
	}
	query, err := callQuery(proc.query, fc)
	if err != nil {
		return nil, err
	}
	// Prepare (without executing) to check the call and learn parameter
	// and result types.
	var params []uint32
	var cols []pgwire.Column
	err = s.withCatalogTx(ctx, func(tx pgx.Tx) error {
		sd, err := tx.Conn().PgConn().Prepare(ctx, "", query, paramOIDs)
		if err != nil {
			return err
		}
		params = sd.ParamOIDs
		for _, f := range sd.Fields {
			cols = append(cols, pgwire.Column{Name: f.Name, TypeOID: f.DataTypeOID, TypeSize: f.DataTypeSize, TypeModifier: f.TypeModifier})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if proc.cleanup {
		cols = []pgwire.Column{{Name: "partition", TypeOID: schema.OIDText, TypeSize: -1, TypeModifier: -1},
			{Name: "files_deleted", TypeOID: schema.OIDInt8, TypeSize: 8, TypeModifier: -1}}
	}
	return &funcStmt{tag: "CALL", cols: cols, params: params, run: func(ctx context.Context, args []any) (string, [][]any, error) {
		if s.inBlock {
			return "", nil, sqlerr.New(activeSQLTransaction, "CALL lakesoul.%s cannot run inside a transaction block", names[1])
		}
		rows, err := s.runCall(ctx, query, params, cols, args, proc.cleanup)
		return "CALL", rows, err
	}}, nil
}

// callQuery renders proc's query around the call's arguments.
func callQuery(format string, fc *pg_query.FuncCall) (string, error) {
	if fc.AggStar || fc.AggDistinct || fc.FuncVariadic || fc.Over != nil || len(fc.AggOrder) > 0 || fc.AggFilter != nil {
		return "", sqlerr.New(sqlerr.SyntaxError, "CALL takes plain arguments")
	}
	if len(fc.Args) == 0 {
		return fmt.Sprintf(format, ""), nil
	}
	var parts []string
	for _, a := range fc.Args {
		one, err := pg_query.Deparse(&pg_query.ParseResult{Version: parseTreeVersion, Stmts: []*pg_query.RawStmt{{Stmt: &pg_query.Node{
			Node: &pg_query.Node_SelectStmt{SelectStmt: &pg_query.SelectStmt{TargetList: []*pg_query.Node{{Node: &pg_query.Node_ResTarget{
				ResTarget: &pg_query.ResTarget{Val: argValue(a)}}}}}}}}}})
		if err != nil {
			return "", fmt.Errorf("deparse CALL argument: %w", err)
		}
		text := strings.TrimPrefix(one, "SELECT ")
		if na := a.GetNamedArgExpr(); na != nil {
			text = pgx.Identifier{na.Name}.Sanitize() + " => " + text
		}
		parts = append(parts, text)
	}
	return fmt.Sprintf(format, strings.Join(parts, ", ")), nil
}

func argValue(a *pg_query.Node) *pg_query.Node {
	if na := a.GetNamedArgExpr(); na != nil {
		return na.Arg
	}
	return a
}

// runCall executes a maintenance call in a read-write catalog transaction and,
// for cleanup, deletes the files it made unreferenced once that committed.
func (s *Session) runCall(ctx context.Context, query string, params []uint32, cols []pgwire.Column, args []any, cleanup bool) ([][]any, error) {
	var out [][]any
	err := s.cat.Tx(ctx, func(tx pgx.Tx) error {
		out = nil
		if _, err := tx.Exec(ctx, "SELECT set_config('lakesoul.search_path', $1, true), set_config('TimeZone', $2, true)",
			strings.Join(s.searchPath(), ","), s.settings["timezone"].value); err != nil {
			return err
		}
		m := tx.Conn().TypeMap()
		values := make([][]byte, len(args))
		for i, a := range args {
			if a == nil {
				continue
			}
			b, err := m.Encode(params[i], pgtype.TextFormatCode, a, nil)
			if err != nil {
				return sqlerr.Wrap(sqlerr.InvalidParameterValue, err, fmt.Sprintf("parameter $%d", i+1))
			}
			values[i] = b
		}
		rr := tx.Conn().PgConn().ExecParams(ctx, query, values, params, nil, nil)
		for rr.NextRow() {
			row := make([]any, len(rr.FieldDescriptions()))
			for i, raw := range rr.Values() {
				v, err := decodeText(m, rr.FieldDescriptions()[i].DataTypeOID, raw)
				if err != nil {
					rr.Close()
					return err
				}
				row[i] = v
			}
			out = append(out, row)
		}
		_, err := rr.Close()
		return err
	})
	if err != nil {
		// Not committed, or (a connection lost during COMMIT) not known to
		// have committed: either way no file is deleted.
		return nil, err
	}
	if !cleanup {
		return out, nil
	}
	// Cleanup: the catalog no longer references these files.
	deleted := map[string]int64{}
	for _, r := range out {
		desc, _ := r[0].(string)
		path, _ := r[1].(string)
		if err := s.e.store.Delete(context.WithoutCancel(ctx), path); err != nil {
			s.e.log.Warn("cleanup: could not delete a data file; it stays as an orphan", "path", path, "err", err)
			continue
		}
		deleted[desc]++
	}
	descs := make([]string, 0, len(deleted))
	for d := range deleted {
		descs = append(descs, d)
	}
	sort.Strings(descs)
	summary := make([][]any, 0, len(descs))
	for _, d := range descs {
		summary = append(summary, []any{d, deleted[d]})
	}
	return summary, nil
}
