package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/pgwire"
)

// RETURNING of INSERT, UPDATE, DELETE and MERGE.
//
// A statement with a RETURNING list first materialises the rows it changes
// (full rows of the table, in its column types) into a DuckDB temporary
// table of the session, writes the table's data from that temporary table,
// and then evaluates the list over it. So the rows returned are exactly the
// rows written, whatever volatile functions (now(), random(),
// gen_random_uuid(), nextval) produced them, and nothing is returned when the
// write fails. The list is planned like a SELECT over the target table (its
// types, names and subqueries as for any query), with the target's FROM item
// standing for the temporary table.

// returningTable is the session's temporary DuckDB table of the changed rows;
// it lives only while one statement runs (statements of a session run one at
// a time, and a statement with RETURNING returns its rows all at once).
const returningTable = "__lakesoul_returning"

// returning is a planned RETURNING list.
type returning struct {
	t *catalog.Table
	// handle is an empty fixed scan of the target, whose columns the
	// temporary table copies.
	handle string
	sql    string
	cols   []pgwire.Column
	convs  []valueConv
	params []uint32
	// tables are the other tables the list reads (subqueries).
	tables map[string]*catalog.Table
}

// planReturning plans list as it is evaluated over the rows a statement
// writes into t (rel, with its alias, names t in the statement).
func (s *Session) planReturning(ctx context.Context, list []*pg_query.Node, rel *pg_query.RangeVar, t *catalog.Table, declared []uint32) (*returning, error) {
	if len(list) == 0 {
		return nil, nil
	}
	targets := make([]*pg_query.Node, len(list))
	for i, n := range list {
		targets[i] = proto.Clone(n).(*pg_query.Node)
	}
	from := &pg_query.Node{Node: &pg_query.Node_RangeVar{RangeVar: proto.Clone(rel).(*pg_query.RangeVar)}}
	sel := selectNode(targets, []*pg_query.Node{from}, nil)
	tables, err := s.bindLakeTables(ctx, sel)
	if err != nil {
		return nil, err
	}
	r := &returning{t: t, handle: s.token + ":returning:" + t.ID}
	s.e.scans.putFixed(r.handle, t, nil)
	// The FROM item bound to the target now scans the (empty) fixed handle
	// while planning; at run time the temporary table replaces it.
	fc := sel.GetSelectStmt().FromClause[0].GetRangeFunction().Functions[0].GetList().Items[0].GetFuncCall()
	arg := fc.Args[0].GetAConst().GetSval()
	shared := arg.Sval
	arg.Sval = r.handle
	nameUnnamedTargets(sel)
	text, cols, convs, params, err := s.prepareDuck(ctx, sel, declared)
	if err != nil {
		return nil, err
	}
	scan := scanCallSQL(r.handle)
	if !strings.Contains(text, scan) {
		return nil, fmt.Errorf("RETURNING: target scan not found in %q", text)
	}
	r.sql = strings.Replace(text, scan, returningTable, 1)
	if !strings.Contains(text, shared) {
		delete(tables, shared)
	}
	r.cols, r.convs, r.params, r.tables = cols, convs, params, tables
	return r, nil
}

// statementParams extends a statement's parameter types with those only its
// RETURNING list has.
func (r *returning) statementParams(params []uint32) []uint32 {
	if r == nil || len(r.params) <= len(params) {
		return params
	}
	return append(append([]uint32(nil), params...), r.params[len(params):]...)
}

// columns are the statement's result columns (none without RETURNING).
func (r *returning) columns() []pgwire.Column {
	if r == nil {
		return nil
	}
	return r.cols
}

// begin creates the (empty) temporary table of changed rows.
func (r *returning) begin(ctx context.Context, s *Session) error {
	if err := s.takeSnapshots(ctx, r.tables); err != nil {
		return err
	}
	_, err := s.duck.ExecContext(ctx, fmt.Sprintf("CREATE OR REPLACE TEMP TABLE %s AS SELECT * FROM %s LIMIT 0",
		returningTable, scanCallSQL(r.handle)))
	return err
}

// add inserts the rows of query (columns named as the table's) into the
// temporary table.
func (r *returning) add(ctx context.Context, s *Session, query string, args []any) error {
	_, err := s.duck.ExecContext(ctx, fmt.Sprintf("INSERT INTO %s BY NAME %s", returningTable, query), args...)
	return err
}

// source is a query of the temporary table's rows giving fields (cast to
// their lake types), the rows the statement writes; exprs replaces the
// column of a field by an expression over the table.
func (r *returning) source(fields []arrow.Field, exprs map[string]string) string {
	cols := make([]string, len(fields))
	for i, f := range fields {
		e := quoteIdent(f.Name)
		if x, ok := exprs[f.Name]; ok {
			e = x
		}
		cols[i] = lakeStoreCast(e, declaredField(r.t, f)) + " AS " + quoteIdent(f.Name) // assigned when filled
	}
	return fmt.Sprintf("SELECT %s FROM %s", strings.Join(cols, ", "), returningTable)
}

// run materialises the changed rows with fill, evaluates the list over them
// and then writes them with write; the list's rows are returned only if the
// write succeeded. The list sees the tables as they were before the write,
// as PostgreSQL's RETURNING subqueries do. A failure to drop the temporary
// table afterwards is reported when nothing failed before it.
func (r *returning) run(ctx context.Context, s *Session, args []any, fill func() error, write func() (int64, error)) (_ int64, _ [][]any, err error) {
	if err := r.begin(ctx, s); err != nil {
		return 0, nil, err
	}
	defer func() {
		if endErr := r.end(ctx, s); err == nil && endErr != nil {
			err = fmt.Errorf("RETURNING: drop %s: %w", returningTable, endErr)
		}
	}()
	if err := fill(); err != nil {
		return 0, nil, err
	}
	rows, err := r.rows(ctx, s, args)
	if err != nil {
		return 0, nil, err
	}
	n, err := write()
	if err != nil {
		return 0, nil, err
	}
	return n, rows, nil
}

// rows evaluates the list over the temporary table.
func (r *returning) rows(ctx context.Context, s *Session, args []any) ([][]any, error) {
	if len(args) > len(r.params) {
		args = args[:len(r.params)]
	}
	res, err := s.duck.QueryContext(ctx, r.sql, args...)
	if err != nil {
		return nil, err
	}
	defer res.Close()
	n := len(r.cols)
	vals := make([]any, n)
	ptrs := make([]any, n)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var out [][]any
	for res.Next() {
		if err := res.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make([]any, n)
		for i, v := range vals {
			row[i] = r.convs[i](v)
		}
		out = append(out, row)
	}
	return out, res.Err()
}

// end drops the temporary table.
func (r *returning) end(ctx context.Context, s *Session) error {
	_, err := s.duck.ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+returningTable)
	return err
}
