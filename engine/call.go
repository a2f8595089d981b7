package engine

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/layout"
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
	// cleanup marks results of (table_id, partition_desc, path) whose files
	// are deleted after commit (those inside the table's directory) and
	// summarised per partition.
	cleanup bool
	// notify: the rows are (partition, new version) of the table named by
	// the argument tbl (the first), announced on lakesoul_commits once
	// committed.
	notify bool
}

// activeSQLTransaction is SQLSTATE 25001.
const activeSQLTransaction = "25001"

var callProcs = map[string]callProc{
	"rollback":       {query: `SELECT r.partition_desc AS "partition", r.new_version AS version FROM lakesoul.rollback(%s) r`, notify: true},
	"cleanup":        {query: `SELECT c.table_id, c.partition_desc, c.path FROM lakesoul.cleanup_files(%s) c`, cleanup: true},
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
	supported := "CALL lakesoul.rollback(...), CALL lakesoul.cleanup(...), CALL lakesoul.drop_partition(...), CALL lakesoul.compact(...), CALL lakesoul.import(...)"
	if len(names) != 2 || names[0] != "lakesoul" {
		return nil, sqlerr.Unsupported("CALL "+strings.Join(names, "."), supported)
	}
	proc, ok := callProcs[names[1]]
	if !ok {
		switch names[1] {
		case "compact":
			return s.planCompact(ctx, fc, paramOIDs) // compact_call.go
		case "import":
			return s.planImport(ctx, fc, paramOIDs) // import.go
		}
		e := sqlerr.New(sqlerr.UndefinedFunction, "procedure lakesoul.%s does not exist", names[1])
		e.Hint = supported
		return nil, e
	}
	if err := s.preventTransactionBlockAtPlan("CALL lakesoul." + names[1]); err != nil {
		return nil, err
	}
	call, err := s.prepareCall(ctx, proc.query, fc, paramOIDs)
	if err != nil {
		return nil, err
	}
	cols := call.cols
	if proc.cleanup {
		cols = []pgwire.Column{{Name: "partition", TypeOID: schema.OIDText, TypeSize: -1, TypeModifier: -1},
			{Name: "files_deleted", TypeOID: schema.OIDInt8, TypeSize: 8, TypeModifier: -1}}
	}
	return &funcStmt{tag: "CALL", cols: cols, params: call.args.clientParamOIDs(), run: func(ctx context.Context, args []any) (string, [][]any, error) {
		if err := s.preventTransactionBlock(ctx, "CALL lakesoul."+names[1]); err != nil {
			return "", nil, err
		}
		rows, err := s.runCall(ctx, call, args, proc)
		return "CALL", rows, err
	}}, nil
}

// callTableID resolves the table a call names (argument tbl, or the first
// positional one) as the call will, in its transaction.
func callTableID(ctx context.Context, tx pgx.Tx, args *boundArgs, values [][]byte) (string, error) {
	idx := slices.Index(args.names, "tbl")
	if idx < 0 {
		idx = slices.Index(args.names, "")
	}
	if idx < 0 || idx >= len(values) {
		return "", sqlerr.New(sqlerr.UndefinedFunction, "the call names no table")
	}
	var id string
	err := tx.QueryRow(ctx, "SELECT lakesoul.resolve_table($1::text)", string(values[idx])).Scan(&id)
	return id, err
}

// preparedCall is a maintenance call: the server's statement around the
// call's arguments (callargs.go), checked by preparing it.
type preparedCall struct {
	query string
	args  *boundArgs
	cols  []pgwire.Column
}

// prepareCall renders format around fc's arguments and prepares it (without
// executing) to check the call and learn parameter and result types.
func (s *Session) prepareCall(ctx context.Context, format string, fc *pg_query.FuncCall, clientOIDs []uint32) (*preparedCall, error) {
	if fc.AggStar || fc.AggDistinct || fc.FuncVariadic || fc.Over != nil || len(fc.AggOrder) > 0 || fc.AggFilter != nil {
		return nil, sqlerr.New(sqlerr.SyntaxError, "CALL takes plain arguments")
	}
	args, err := s.bindArgs(ctx, fc.Args, 1, clientOIDs)
	if err != nil {
		return nil, err
	}
	c := &preparedCall{query: fmt.Sprintf(format, args.list), args: args}
	err = s.withServerTx(ctx, func(tx pgx.Tx) error {
		sd, err := tx.Conn().PgConn().Prepare(ctx, "", c.query, args.oids)
		if err != nil {
			return err
		}
		args.setResolved(sd.ParamOIDs)
		for _, f := range sd.Fields {
			c.cols = append(c.cols, pgwire.Column{Name: f.Name, TypeOID: f.DataTypeOID, TypeSize: f.DataTypeSize, TypeModifier: f.TypeModifier})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// runCall executes a maintenance call in a read-write server transaction
// and, once that committed, announces the versions of a notifying call and,
// for cleanup, deletes the files it made unreferenced.
func (s *Session) runCall(ctx context.Context, call *preparedCall, clientArgs []any, proc callProc) ([][]any, error) {
	values, err := s.argValues(ctx, call.args, clientArgs)
	if err != nil {
		return nil, err
	}
	conn, tx, err := s.beginServerTx(ctx, pgx.ReadWrite)
	if err != nil {
		return nil, err
	}
	defer conn.Release()
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit a no-op
	var tableID string
	if proc.notify {
		if tableID, err = callTableID(ctx, tx, call.args, values); err != nil {
			return nil, err
		}
	}
	out, err := execCommit(ctx, tx, call.query, call.args.oids, values)
	if err != nil {
		// Not committed, or (a connection lost during COMMIT) not known to
		// have committed: either way no file is deleted.
		return nil, err
	}
	if proc.notify {
		versions := map[string]int{}
		for _, r := range out {
			desc, _ := r[0].(string)
			switch v := r[1].(type) {
			case int32:
				versions[desc] = int(v)
			case int64:
				versions[desc] = int(v)
			}
		}
		s.cat.NotifyCommitted(tableID, versions)
	}
	if !proc.cleanup {
		return out, nil
	}
	// Cleanup: the catalog no longer references these files; only those in
	// the cleaned table's own directory are deleted (paths.go).
	deleted := map[string]int64{}
	var dir string
	if len(out) > 0 {
		id, _ := out[0][0].(string)
		t, err := s.cat.NamedTableByID(ctx, id)
		if err == nil {
			err = s.e.checkTableDir(t)
		}
		if err != nil {
			s.e.log.Warn("cleanup: the table is not in its own directory; its unreferenced files stay", "table", id, "err", err)
			out = nil
		} else {
			dir = t.Path
		}
	}
	for _, r := range out {
		desc, _ := r[1].(string)
		path, _ := r[2].(string)
		if err := layout.CheckWithin(dir, path); err != nil {
			s.e.log.Warn("cleanup: refusing to delete a file outside the table's directory", "path", path, "err", err)
			continue
		}
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
