package engine

import (
	"context"
	"database/sql/driver"
	"fmt"

	"github.com/duckdb/duckdb-go/v2"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/duckstream"
	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/pgcatalog"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// duckQuery is a query over lake tables, executed by DuckDB.
type duckQuery struct {
	s      *Session
	sql    string
	tables map[string]*catalog.Table
	params []uint32
	cols   []pgwire.Column
	convs  []valueConv
	// direct, when set, executes the query without DuckDB (directscan.go).
	direct *directScan
	// gen is the Engine.ddlGen its tables were last known current at; ran
	// is set once it has run (checkPlanFiles).
	gen uint64
	ran bool
}

// describeDuck prepares sql in DuckDB without executing it and reports its
// result columns (with their DuckDB types) and parameter types.
func (s *Session) describeDuck(ctx context.Context, query string) (cols []pgwire.Column, convs []valueConv, types []duckdb.TypeInfo, params []uint32, err error) {
	err = s.duck.Raw(ctx, func(dc any) error {
		pc, ok := dc.(driver.ConnPrepareContext)
		if !ok {
			return fmt.Errorf("duckdb connection cannot prepare")
		}
		st, err := pc.PrepareContext(ctx, query)
		if err != nil {
			return err
		}
		defer st.Close()
		ds := st.(*duckdb.Stmt)
		// Parameters first: a result column whose type depends on an
		// untyped parameter (SELECT $1) has no type yet, and the caller
		// needs to know which parameters to type.
		for i := 1; i <= ds.NumInput(); i++ {
			t, err := ds.ParamType(i)
			if err != nil {
				return err
			}
			params = append(params, paramOID(t))
		}
		n, err := ds.ColumnCount()
		if err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			name, err := ds.ColumnName(i)
			if err != nil {
				return err
			}
			ti, err := ds.ColumnTypeInfo(i)
			if err != nil {
				return fmt.Errorf("result column %q: %w", name, err)
			}
			c, conv := duckResultColumn(name, ti)
			cols = append(cols, c)
			convs = append(convs, conv)
			types = append(types, ti)
		}
		return nil
	})
	return cols, convs, types, params, err
}

// prepareDuck types the statement's parameters (declared types, then text for
// any DuckDB cannot infer), re-spells what DuckDB would answer differently
// from PostgreSQL (bytealit.go, pgsemantics.go, pgfuncs.go), deparses it and
// describes it. The result columns carry PostgreSQL's types (resultcols.go);
// text is what DuckDB executes.
func (s *Session) prepareDuck(ctx context.Context, stmt *pg_query.Node, declared []uint32) (text string, cols []pgwire.Column, convs []valueConv, params []uint32, err error) {
	s.rewriteCurrentSettings(stmt) // currentsetting.go
	if err := checkDuckCurrentSettings(stmt); err != nil {
		return "", nil, nil, nil, err
	}
	if err := s.rewriteSequenceCalls(stmt); err != nil { // sequence.go
		return "", nil, nil, nil, err
	}
	if err := castDeclaredParams(stmt, declared); err != nil {
		return "", nil, nil, nil, err
	}
	nameValuesRelations(stmt) // valuescols.go
	if err := rewriteByteaLiterals(stmt); err != nil {
		return "", nil, nil, nil, err
	}
	if err := s.rewriteEnumCasts(ctx, stmt); err != nil { // enum.go
		return "", nil, nil, nil, err
	}
	if err := s.rewriteIntervalFields(ctx, stmt); err != nil { // intervalfields.go
		return "", nil, nil, nil, err
	}
	types := s.inferTypes(stmt)
	jsonParams := jsonContextParams(stmt, types)                      // jsonparams.go
	if err := castAnyArrayParams(stmt, types, declared); err != nil { // arrayparams.go
		return "", nil, nil, nil, err
	}
	if err := s.rewritePGSemantics(stmt, types); err != nil {
		return "", nil, nil, nil, err
	}
	// Again: the rewrite casts untyped literals of interval context.
	if err := s.rewriteIntervalFields(ctx, stmt); err != nil {
		return "", nil, nil, nil, err
	}
	if err := rewritePGFunctions(stmt); err != nil {
		return "", nil, nil, nil, err
	}
	budgetValues(stmt, types, s.e.valueBudget) // valuebudget.go
	for attempt := 0; ; attempt++ {
		if text, err = s.duckSQL(stmt); err != nil { // duckgate.go
			return "", nil, nil, nil, err
		}
		var duckTypes []duckdb.TypeInfo
		cols, convs, duckTypes, params, err = s.describeDuck(ctx, text)
		untyped := untypedParams(params)
		if err != nil && (len(untyped) == 0 || attempt > 0) {
			return "", nil, nil, nil, err
		}
		if err == nil && (len(untyped) == 0 || attempt > 0) {
			describeVectorParams(stmt, declared, params)
			describeCastParams(stmt, declared, params) // arrayparams.go
			describeJSONParams(jsonParams, declared, params)
			refineColumns(cols, convs, types.output)
			if wrapped, ok := jsonAsText(text, duckTypes); ok {
				text = wrapped
			}
			return text, cols, convs, params, nil
		}
		if err := castUntypedParams(stmt, untyped); err != nil {
			return "", nil, nil, nil, err
		}
	}
}

// paramOID is the PostgreSQL type a DuckDB parameter type is described as; 0
// when DuckDB could not infer one.
func paramOID(t duckdb.Type) uint32 {
	switch t {
	case duckdb.TYPE_INVALID, duckdb.TYPE_ANY:
		return 0
	case duckdb.TYPE_BOOLEAN:
		return schema.OIDBool
	case duckdb.TYPE_TINYINT, duckdb.TYPE_SMALLINT:
		return schema.OIDInt2
	case duckdb.TYPE_INTEGER:
		return schema.OIDInt4
	case duckdb.TYPE_BIGINT:
		return schema.OIDInt8
	case duckdb.TYPE_FLOAT:
		return schema.OIDFloat4
	case duckdb.TYPE_DOUBLE:
		return schema.OIDFloat8
	case duckdb.TYPE_DECIMAL:
		return schema.OIDNumeric
	case duckdb.TYPE_DATE:
		return schema.OIDDate
	case duckdb.TYPE_TIMESTAMP:
		return schema.OIDTimestamp
	case duckdb.TYPE_TIMESTAMP_TZ:
		return schema.OIDTimestamptz
	case duckdb.TYPE_BLOB:
		return schema.OIDBytea
	case duckdb.TYPE_UUID:
		return schema.OIDUUID
	case duckdb.TYPE_INTERVAL:
		return schema.OIDInterval
	}
	return schema.OIDText
}

// duckArgs converts decoded wire parameters into values DuckDB binds; array
// parameters (which arrive as PostgreSQL array text) become DuckDB list text,
// and bytea parameters sent as untyped text are read as PostgreSQL bytea
// text (bytealit.go).
func duckArgs(oids []uint32, params []any) ([]any, error) {
	args := make([]any, len(params))
	for i, p := range params {
		if str, ok := p.(string); ok && i < len(oids) && oids[i] == schema.OIDBytea {
			b, err := parseByteaText([]byte(str))
			if err != nil {
				return nil, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type bytea: %q (parameter $%d)", str, i+1)
			}
			args[i] = b
			continue
		}
		if str, ok := p.(string); ok && i < len(oids) && pgArrayTypes[oids[i]] != "" {
			l, err := pgArrayToDuckList(str)
			if err != nil {
				return nil, sqlerr.Wrap(sqlerr.InvalidTextRepresentation, err, fmt.Sprintf("parameter $%d", i+1))
			}
			args[i] = l
			continue
		}
		args[i] = duckArg(p)
	}
	return args, nil
}

// mergeParamOIDs prefers the types the client declared.
func mergeParamOIDs(declared, inferred []uint32) []uint32 {
	out := append([]uint32(nil), inferred...)
	for i, d := range declared {
		if i < len(out) && d != 0 {
			out[i] = d
		}
	}
	return out
}

func (s *Session) planDuckQuery(ctx context.Context, stmt *pg_query.Node, paramOIDs []uint32) (*duckQuery, error) {
	tables, err := s.bindLakeTables(ctx, stmt)
	if err != nil {
		return nil, err
	}
	s.markRowsOnlyScans(stmt, tables)
	pgcatalog.RewriteVersionCalls(stmt)
	nameUnnamedTargets(stmt)
	text, cols, convs, params, err := s.prepareDuck(ctx, stmt, paramOIDs)
	if err != nil {
		return nil, err
	}
	setColumnOrigins(stmt, tables, cols) // table OID and attnum in RowDescription (origin.go)
	q := &duckQuery{s: s, gen: s.e.ddlGen.Load(), sql: text, tables: tables, params: mergeParamOIDs(paramOIDs, params), cols: cols, convs: convs}
	releaseWith(s.e.scans, q, tables)
	q.direct = s.planDirectScan(stmt, tables, len(cols), q.params)
	return q, nil
}

func (q *duckQuery) ParamOIDs() []uint32                               { return q.params }
func (q *duckQuery) Describe(context.Context) ([]pgwire.Column, error) { return q.cols, nil }
func (q *duckQuery) Tag() string                                       { return "SELECT" }

func (q *duckQuery) Bind(_ context.Context, params []any) (pgwire.Portal, error) {
	if len(params) != len(q.params) {
		return nil, sqlerr.New(sqlerr.ProtocolViolation, "bind message supplies %d parameters, but prepared statement requires %d", len(params), len(q.params))
	}
	if q.direct != nil {
		return &directPortal{q: q, d: q.direct, params: params}, nil
	}
	args, err := duckArgs(q.params, params)
	if err != nil {
		return nil, err
	}
	return &duckPortal{q: q, args: args, params: params}, nil
}

// duckPortal streams a DuckDB result: DuckDB produces rows as Execute asks
// for them (internal/duckstream), so a result of any size — a COPY TO, a
// cursor FETCHing a few rows at a time — costs the memory of a few chunks.
// The stream lives across Execute calls (PortalSuspended, cursors), so it
// runs under the portal's own context; each Execute links the caller's
// context to it for cancellation. When the session's DuckDB connection is
// needed while the stream is open, the rest of the result is parked in a
// spill file and read from there (duckconn.go).
type duckPortal struct {
	q      *duckQuery
	args   []any
	params []any // as decoded, for pruning
	ctx    context.Context
	cancel context.CancelFunc
	// started is set by the first Execute. Then rows is the open stream,
	// or spill the rest of the result after a park, or err what parking
	// met; all are nil once the result was read to its end.
	started bool
	rows    *duckstream.Rows
	spill   *spillReader
	err     error
	vals    []any
	out     []any
	count   int
}

func (p *duckPortal) Describe(context.Context) ([]pgwire.Column, error) { return p.q.cols, nil }

func (p *duckPortal) start(ctx context.Context) error {
	if err := p.q.s.checkPlanTables(ctx, p.q); err != nil {
		return err
	}
	if err := p.q.s.takeSnapshotsWith(ctx, p.q.tables, p.params); err != nil {
		return err
	}
	if err := p.q.s.checkPlanFiles(ctx, p.q); err != nil {
		return err
	}
	query := p.q.sql
	p.ctx, p.cancel = context.WithCancel(context.Background())
	// DuckDB may run much of the query before the first row (aggregates,
	// sorts): link the caller's cancellation (CancelRequest,
	// statement_timeout) already.
	stop := context.AfterFunc(ctx, safego.Guard(p.cancel))
	err := p.q.s.duck.stream(ctx, p, func(c *duckdb.Conn) error {
		rows, err := duckstream.Query(p.ctx, c, query, p.args)
		p.rows = rows
		return err
	})
	stop()
	if err != nil {
		if ctx.Err() != nil {
			return sqlerr.ErrCanceled
		}
		return err
	}
	n := len(p.q.cols)
	p.vals, p.out = make([]any, n), make([]any, n)
	return nil
}

// next reads the stream's next row into p.out, converted; false at its end,
// when the stream is closed and the connection released.
func (p *duckPortal) next() (bool, error) {
	ok, err := p.rows.Next(p.ctx, p.vals)
	if !ok || err != nil {
		p.rows.Close()
		p.rows = nil
		p.q.s.duck.released(p)
		return false, err
	}
	for i, v := range p.vals {
		p.out[i] = p.q.convs[i](v)
	}
	return true, nil
}

func (p *duckPortal) Execute(ctx context.Context, maxRows int, w pgwire.RowWriter) (string, bool, error) {
	if !p.started {
		p.started = true
		if err := p.start(ctx); err != nil {
			return "", true, err
		}
	}
	if p.err != nil {
		return "", true, p.err
	}
	if p.spill != nil {
		return p.executeSpilled(ctx, maxRows, w)
	}
	if p.rows == nil {
		return fmt.Sprintf("SELECT %d", p.count), true, nil
	}
	stop := context.AfterFunc(ctx, safego.Guard(p.cancel))
	defer stop()
	for n := 0; maxRows == 0 || n < maxRows; n++ {
		ok, err := p.next()
		if err != nil {
			if ctx.Err() != nil {
				return "", true, sqlerr.ErrCanceled
			}
			return "", true, err
		}
		if !ok {
			return fmt.Sprintf("SELECT %d", p.count), true, nil
		}
		if err := w.WriteRow(p.out); err != nil {
			return "", true, err
		}
		p.count++
	}
	return "", false, nil
}

// executeSpilled reads the rest of a parked result.
func (p *duckPortal) executeSpilled(ctx context.Context, maxRows int, w pgwire.RowWriter) (string, bool, error) {
	for n := 0; maxRows == 0 || n < maxRows; n++ {
		if n%256 == 0 && ctx.Err() != nil {
			return "", true, sqlerr.ErrCanceled
		}
		ok, err := p.spill.next(p.q.cols, p.out)
		if err != nil {
			return "", true, err
		}
		if !ok {
			p.spill.close()
			p.spill = nil
			return fmt.Sprintf("SELECT %d", p.count), true, nil
		}
		if err := w.WriteRow(p.out); err != nil {
			return "", true, err
		}
		p.count++
	}
	return "", false, nil
}

// park implements streamHolder: the rest of the stream goes to a spill
// file, which later Executes read. A failure (the query's own error, the
// temp space limit, a cancel of the statement that needed the connection)
// is the portal's next Execute's error.
func (p *duckPortal) park(ctx context.Context) {
	sp, err := p.q.s.e.newSpill()
	if err == nil {
		stop := context.AfterFunc(ctx, safego.Guard(p.cancel))
		for err == nil {
			var ok bool
			if ok, err = p.next(); ok {
				err = sp.WriteRow(p.out)
			} else if err == nil {
				break
			}
		}
		stop()
		if err != nil && ctx.Err() != nil {
			err = sqlerr.ErrCanceled
		}
	}
	if p.rows != nil {
		p.rows.Close()
		p.rows = nil
	}
	if err == nil {
		p.spill, err = sp.finish()
	} else if sp != nil {
		sp.abort()
	}
	p.err = err
}

// takeSpill hands over the file of a parked result whose stream is closed
// (the rest of the result is in it); nil otherwise.
func (p *duckPortal) takeSpill() *spillReader {
	if p.rows != nil || p.err != nil {
		return nil
	}
	r := p.spill
	p.spill = nil
	return r
}

func (p *duckPortal) Close() {
	if p.rows != nil {
		p.rows.Close()
		p.rows = nil
		p.q.s.duck.released(p)
	}
	if p.spill != nil {
		p.spill.close()
		p.spill = nil
	}
	if p.cancel != nil {
		p.cancel()
	}
}

// nameUnnamedTargets gives unnamed output columns of the top-level SELECT the
// names PostgreSQL would (function name, cast type, or "?column?") instead of
// DuckDB's expression text.
func nameUnnamedTargets(stmt *pg_query.Node) {
	sel := stmt.GetSelectStmt()
	if sel == nil {
		return
	}
	for sel.Op != pg_query.SetOperation_SETOP_NONE && sel.Larg != nil {
		sel = sel.Larg
	}
	for _, t := range sel.TargetList {
		rt := t.GetResTarget()
		if rt == nil || rt.Name != "" || rt.Val == nil {
			continue
		}
		if name := pgColumnName(rt.Val); name != "" {
			rt.Name = name
		}
	}
}

// pgColumnName follows PostgreSQL's FigureColname for the common cases; ""
// leaves the choice to DuckDB (column references keep their names).
func pgColumnName(n *pg_query.Node) string {
	if n.GetColumnRef() != nil {
		return ""
	}
	if name, strength := figureColname(n); strength > 0 {
		return name
	}
	return "?column?"
}

// figureColname is PostgreSQL's FigureColnameInternal: a name and how sure
// it is (2: a column, function or keyword expression; 1: a type or
// construct name, which a cast's type overrides; 0: none).
func figureColname(n *pg_query.Node) (string, int) {
	switch {
	case n == nil:
	case n.GetColumnRef() != nil:
		if f := n.GetColumnRef().Fields; len(f) > 0 && f[len(f)-1].GetString_() != nil {
			return f[len(f)-1].GetString_().Sval, 2
		}
	case n.GetFuncCall() != nil:
		names := n.GetFuncCall().Funcname
		if s := names[len(names)-1].GetString_(); s != nil {
			return s.Sval, 2
		}
	case n.GetTypeCast() != nil:
		if name, strength := figureColname(n.GetTypeCast().Arg); strength > 1 {
			return name, strength
		}
		return typeNameString(n.GetTypeCast().TypeName), 1
	case n.GetCollateClause() != nil:
		return figureColname(n.GetCollateClause().Arg)
	case n.GetCaseExpr() != nil:
		// a CASE is named as its ELSE result is, when that has a name
		if name, strength := figureColname(n.GetCaseExpr().Defresult); strength > 1 {
			return name, strength
		}
		return "case", 1
	case n.GetAArrayExpr() != nil:
		return "array", 1
	case n.GetRowExpr() != nil:
		return "row", 1
	case n.GetAIndirection() != nil:
		if ind := n.GetAIndirection().Indirection; len(ind) > 0 && ind[len(ind)-1].GetString_() != nil {
			return ind[len(ind)-1].GetString_().Sval, 2
		}
		return figureColname(n.GetAIndirection().Arg) // a[1] is named a
	case n.GetAExpr() != nil && n.GetAExpr().Kind == pg_query.A_Expr_Kind_AEXPR_NULLIF:
		return "nullif", 2
	case n.GetCoalesceExpr() != nil:
		return "coalesce", 2
	case n.GetMinMaxExpr() != nil:
		if n.GetMinMaxExpr().Op == pg_query.MinMaxOp_IS_GREATEST {
			return "greatest", 2
		}
		return "least", 2
	case n.GetSubLink() != nil:
		switch sl := n.GetSubLink(); sl.SubLinkType {
		case pg_query.SubLinkType_EXISTS_SUBLINK:
			return "exists", 2
		case pg_query.SubLinkType_ARRAY_SUBLINK:
			return "array", 2
		case pg_query.SubLinkType_EXPR_SUBLINK:
			// The name of the subquery's one result column.
			sel := sl.Subselect.GetSelectStmt()
			for sel != nil && sel.Op != pg_query.SetOperation_SETOP_NONE {
				sel = sel.Larg
			}
			if sel != nil && len(sel.TargetList) > 0 {
				if rt := sel.TargetList[0].GetResTarget(); rt != nil {
					if rt.Name != "" {
						return rt.Name, 2
					}
					if name, strength := figureColname(rt.Val); strength > 0 {
						return name, 2
					}
					return "?column?", 2
				}
			}
		}
	}
	return "", 0
}
