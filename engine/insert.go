package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/duckdb/duckdb-go/v2"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
	"github.com/lakesoul-go/lakesoul/writer"
)

// planInsert plans INSERT ... VALUES / INSERT ... SELECT.
//
// DuckDB evaluates the source rows, cast to the target columns' types; the Go
// writer turns them into data files; one catalog commit makes them visible.
// On a primary-key table this is an upsert (MergeCommit): columns left out of
// the column list are not written, so rows that already exist keep their old
// values there (LakeSoul partial upsert). On an append table (AppendCommit)
// omitted columns are NULL.
func (s *Session) planInsert(ctx context.Context, n *pg_query.InsertStmt, paramOIDs []uint32) (pgwire.Statement, error) {
	if st, ok, err := s.planTempDML(ctx, &pg_query.Node{Node: &pg_query.Node_InsertStmt{InsertStmt: n}}, paramOIDs); ok {
		return st, err // temptable.go
	}
	t, err := s.resolveTable(ctx, n.Relation.Schemaname, n.Relation.Relname)
	if err != nil {
		return nil, err
	}
	if n.SelectStmt == nil {
		// DEFAULT VALUES: one row of every column's default.
		var row []*pg_query.Node
		n.Cols = nil
		for _, f := range t.Schema.Fields() {
			n.Cols = append(n.Cols, pg_query.MakeResTargetNodeWithName(f.Name, -1))
			row = append(row, &pg_query.Node{Node: &pg_query.Node_SetToDefault{SetToDefault: &pg_query.SetToDefault{Location: -1}}})
		}
		n.SelectStmt = selectNode(nil, nil, nil)
		n.SelectStmt.GetSelectStmt().ValuesLists = []*pg_query.Node{pg_query.MakeListNode(row)}
	}
	if oc := n.OnConflictClause; oc != nil {
		if err := checkConflictTarget(t, oc); err != nil {
			return nil, err
		}
	}

	// Target columns.
	var target []string
	if len(n.Cols) == 0 {
		// Without a column list the source's columns fill the table's
		// first columns and the rest take their defaults, as in
		// PostgreSQL (INSERT INTO t VALUES (1) into t(a, b, c)).
		for _, f := range t.Schema.Fields() {
			target = append(target, f.Name)
		}
		if w, ok := sourceWidth(n.SelectStmt); ok && w < len(target) {
			target = target[:w]
		}
	} else {
		for _, c := range n.Cols {
			rt := c.GetResTarget()
			if len(rt.Indirection) > 0 {
				return nil, sqlerr.Unsupported("assigning to a field or subscript", "plain column names")
			}
			if len(t.Schema.FieldIndices(rt.Name)) == 0 {
				return nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", rt.Name, t.Name)
			}
			if slices.Contains(target, rt.Name) {
				return nil, sqlerr.New(sqlerr.SyntaxError, "column %q specified more than once", rt.Name)
			}
			target = append(target, rt.Name)
		}
	}
	// DEFAULT in VALUES is the column's default expression (NULL without
	// one), as PostgreSQL reads it (columndefault.go).
	explicit, err := s.replaceSetToDefault(ctx, n.SelectStmt, target, t)
	if err != nil {
		return nil, err
	}
	// Defaults of the columns left out; an identity column GENERATED
	// ALWAYS takes no value unless OVERRIDING SYSTEM VALUE.
	defaults := map[string]string{}
	for _, f := range t.Schema.Fields() {
		def, always := columnDefault(f)
		if always && explicit[f.Name] && n.Override != pg_query.OverridingKind_OVERRIDING_SYSTEM_VALUE {
			e := sqlerr.New(sqlerr.GeneratedAlways, "cannot insert a non-DEFAULT value into column %q", f.Name)
			e.Detail = fmt.Sprintf("Column %q is an identity column defined as GENERATED ALWAYS.", f.Name)
			e.Hint = "Use OVERRIDING SYSTEM VALUE to override."
			return nil, e
		}
		if def == "" || slices.Contains(target, f.Name) {
			continue
		}
		expr, err := s.defaultSQL(ctx, t.Namespace, def, f)
		if err != nil {
			return nil, err
		}
		defaults[f.Name] = expr
	}
	for _, c := range t.PKCols {
		if !slices.Contains(target, c) && defaults[c] == "" {
			return nil, writer.NotNullViolation(t, c, nil, 0)
		}
	}

	// Source rows.
	src := n.SelectStmt
	if sel := src.GetSelectStmt(); sel != nil && n.WithClause != nil {
		if sel.WithClause != nil {
			return nil, sqlerr.Unsupported("WITH on both INSERT and its SELECT", "one WITH clause")
		}
		sel.WithClause = n.WithClause
	}
	tables, err := s.bindLakeTables(ctx, src)
	if err != nil {
		return nil, err
	}
	// $n and string literals placed directly in VALUES take their target
	// column's type, as PostgreSQL's untyped values do: '\x00ff' into a bytea
	// column is bytea text, 'Infinity' into a real column a float, whatever
	// other rows of the VALUES hold.
	if sel := src.GetSelectStmt(); sel != nil {
		for _, row := range sel.ValuesLists {
			for j, item := range row.GetList().GetItems() {
				if j >= len(target) {
					continue
				}
				if err := typeAssigned(item, t.Schema.Field(t.Schema.FieldIndices(target[j])[0])); err != nil {
					return nil, err
				}
			}
		}
	}
	srcSQL, srcCols, _, params, err := s.prepareDuck(ctx, src, paramOIDs)
	if err != nil {
		return nil, err
	}
	switch {
	case len(srcCols) < len(target):
		return nil, sqlerr.New(sqlerr.SyntaxError, "INSERT has more target columns than expressions")
	case len(srcCols) > len(target):
		return nil, sqlerr.New(sqlerr.SyntaxError, "INSERT has more expressions than target columns")
	}

	// The written columns, in table order, and the query producing them.
	var fields []arrow.Field
	var exprs []string
	for _, f := range t.Schema.Fields() {
		i := slices.Index(target, f.Name)
		switch {
		case i >= 0:
			exprs = append(exprs, lakeWriteCast(fmt.Sprintf("__src.c%d", i), f)+" AS "+quoteIdent(f.Name))
		case defaults[f.Name] != "":
			exprs = append(exprs, defaults[f.Name]+" AS "+quoteIdent(f.Name))
		case !t.HasPK() || slices.Contains(t.RangeCols, f.Name):
			exprs = append(exprs, fmt.Sprintf("CAST(NULL AS %s) AS %s", schema.DuckDBType(f.Type), quoteIdent(f.Name)))
		default:
			continue // partial upsert: not written, old value kept
		}
		fields = append(fields, arrow.Field{Name: f.Name, Type: f.Type, Nullable: f.Nullable})
	}
	aliases := make([]string, len(target))
	for i := range aliases {
		aliases[i] = fmt.Sprintf("c%d", i)
	}
	query := fmt.Sprintf("SELECT %s FROM (%s) AS __src(%s)", strings.Join(exprs, ", "), srcSQL, strings.Join(aliases, ", "))
	// targetHandle is the scan of the target's current rows ON CONFLICT
	// reads ("" without ON CONFLICT).
	targetHandle := ""
	if oc := n.OnConflictClause; oc != nil {
		// The statement reads the target's current rows too.
		handle := s.token + ":" + t.ID
		if in := conflictKeyInput(t, src, target); in != nil {
			// A pruned reference has a handle of its own, released
			// with the statement (resolve.go).
			s.handleSeq++
			handle = fmt.Sprintf("%s:%s:p%d", s.token, t.ID, s.handleSeq)
			s.e.scans.putPruned(handle, t, in) // conflictprune.go
		} else {
			s.e.scans.put(handle, t)
		}
		targetHandle = handle
		tables[handle] = t
		alias := n.Relation.Relname
		if n.Relation.Alias != nil {
			alias = n.Relation.Alias.Aliasname
		}
		var written []string
		for _, f := range fields {
			written = append(written, f.Name)
		}
		// $n of DO UPDATE SET … [WHERE …] take the declared types, or
		// their target column's.
		for _, tl := range oc.TargetList {
			rt := tl.GetResTarget()
			if idx := t.Schema.FieldIndices(rt.Name); len(idx) > 0 {
				if err := typeAssigned(rt.Val, t.Schema.Field(idx[0])); err != nil {
					return nil, err
				}
			}
			if err := castDeclaredParams(rt.Val, paramOIDs); err != nil {
				return nil, err
			}
		}
		if err := castDeclaredParams(oc.WhereClause, paramOIDs); err != nil {
			return nil, err
		}
		// The json types the action's casts give its parameters, read
		// before conflictQuery spells them for DuckDB (jsonparams.go).
		ocNode := &pg_query.Node{Node: &pg_query.Node_OnConflictClause{OnConflictClause: oc}}
		conflictJSON := jsonContextParams(ocNode, conflictColumnTypes(ocNode, t))
		// The conflict action may hold parameters the source does not;
		// those DuckDB cannot type are text, as in prepareDuck.
		inserted := query
		var cols []string
		for attempt := 0; ; attempt++ {
			var q string
			if q, cols, err = s.conflictQuery(t, alias, handle, inserted, written, target, oc, singleValuesRow(src)); err != nil {
				return nil, err
			}
			query = q
			_, _, _, all, err := s.describeDuck(ctx, query)
			untyped := untypedParams(all)
			if len(untyped) == 0 || attempt > 0 {
				if err != nil {
					return nil, err
				}
				if len(all) > len(params) {
					copy(all, params) // the source's, as prepareDuck described them
					params = all
				}
				describeJSONParams(conflictJSON, paramOIDs, params)
				break
			}
			for _, tl := range oc.TargetList {
				if err := castUntypedParams(tl.GetResTarget().Val, untyped); err != nil {
					return nil, err
				}
			}
			if err := castUntypedParams(oc.WhereClause, untyped); err != nil {
				return nil, err
			}
		}
		fields = fields[:0]
		for _, c := range cols {
			f := t.Schema.Field(t.Schema.FieldIndices(c)[0])
			fields = append(fields, arrow.Field{Name: f.Name, Type: f.Type, Nullable: f.Nullable})
		}
	}
	recSchema := arrow.NewSchema(fields, nil)
	ret, err := s.planReturning(ctx, n.ReturningList, n.Relation, t, paramOIDs) // returning.go
	if err != nil {
		return nil, err
	}

	paramTypes := ret.statementParams(mergeParamOIDs(paramOIDs, params))
	var insert func(ctx context.Context, args []any) (string, [][]any, error)
	st := &funcStmt{
		tag:    "INSERT",
		cols:   ret.columns(),
		params: paramTypes,
		run: func(ctx context.Context, args []any) (string, [][]any, error) {
			if targetHandle == "" {
				return insert(ctx, args) // a blind write: last writer wins
			}
			// ON CONFLICT reads the rows it updates or keeps (rmw.go).
			return s.runRMW(ctx, t, true, func(ctx context.Context) (string, [][]any, error) { return insert(ctx, args) })
		},
	}
	insert = func(ctx context.Context, args []any) (string, [][]any, error) {
		if err := s.takeSnapshotsWith(ctx, tables, args); err != nil {
			return "", nil, err
		}
		if targetHandle != "" {
			if e, ok := s.e.scans.get(targetHandle); ok {
				s.noteRead(t, e.parts)
			}
		}
		dargs, err := duckArgs(paramTypes, args)
		if err != nil {
			return "", nil, err
		}
		var n int64
		var rows [][]any
		if ret == nil {
			n, err = s.writeQuery(ctx, t, query, dargs[:len(params)], recSchema, false)
		} else {
			n, rows, err = ret.run(ctx, s, dargs,
				func() error { return ret.add(ctx, s, query, dargs[:len(params)]) },
				func() (int64, error) { return s.writeQuery(ctx, t, ret.source(fields, nil), nil, recSchema, false) })
		}
		if err != nil {
			return "", nil, err
		}
		s.noteWrite()
		return fmt.Sprintf("INSERT 0 %d", n), rows, nil
	}
	releaseWith(s.e.scans, st, tables)
	return st, nil
}

// writeQuery streams the rows of query (whose columns have sch's types) into
// the table in bounded batches and commits them once (MergeCommit on PK
// tables, AppendCommit otherwise, staged inside a transaction block). It
// returns the number of rows written. Nothing is visible if it fails.
// keysExist tells that every key query yields is one the table has (UPDATE),
// so columns it leaves out need no NOT NULL check (ingest.go).
func (s *Session) writeQuery(ctx context.Context, t *catalog.Table, query string, args []any, sch *arrow.Schema, keysExist bool) (int64, error) {
	rows, err := s.duck.query(ctx, query, args)
	if err != nil {
		if ctx.Err() != nil {
			return 0, sqlerr.ErrCanceled
		}
		return 0, err
	}
	defer rows.Close()
	sink := s.newTableSink(ctx, t)
	defer sink.release(ctx)
	sink.keysExist = keysExist
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	vals := make([]any, sch.NumFields())
	fail := func(err error) (int64, error) {
		sink.abort(context.WithoutCancel(ctx))
		if ctx.Err() != nil {
			return 0, sqlerr.ErrCanceled
		}
		return 0, err
	}
	pending := 0
	for {
		ok, err := rows.Next(ctx, vals)
		if err != nil {
			return fail(err)
		}
		if !ok {
			break
		}
		for i, v := range vals {
			if err := appendDuckValue(b.Field(i), v); err != nil {
				return fail(fmt.Errorf("column %s: %w", sch.Field(i).Name, err))
			}
		}
		if pending++; pending == ingestBatchRows || pending%1024 == 0 && builderBytes(b) >= ingestBatchBytes {
			if err := sink.write(ctx, b.NewRecordBatch()); err != nil {
				return fail(err)
			}
			pending = 0
		}
	}
	if err := sink.write(ctx, b.NewRecordBatch()); err != nil {
		return fail(err)
	}
	written := sink.rows
	if err := sink.commit(ctx); err != nil {
		return 0, err
	}
	return written, nil
}

// builderBytes estimates the Arrow data b holds (values and offsets).
func builderBytes(b *array.RecordBuilder) int {
	n := 0
	for _, f := range b.Fields() {
		switch fb := f.(type) {
		case *array.StringBuilder:
			n += fb.DataLen() + 4*fb.Len()
		case *array.BinaryBuilder:
			n += fb.DataLen() + 4*fb.Len()
		default:
			if fw, ok := f.Type().(arrow.FixedWidthDataType); ok {
				n += f.Len() * max(1, fw.BitWidth()/8)
			}
		}
	}
	return n
}

// collect runs query in DuckDB and gathers its rows into one Arrow batch of
// schema sch (the query's columns must already have sch's types).
func (s *Session) collect(ctx context.Context, query string, args []any, sch *arrow.Schema) (arrow.RecordBatch, error) {
	rows, err := s.duck.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	n := sch.NumFields()
	vals := make([]any, n)
	ptrs := make([]any, n)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		for i, v := range vals {
			if err := appendDuckValue(b.Field(i), v); err != nil {
				return nil, fmt.Errorf("column %s: %w", sch.Field(i).Name, err)
			}
		}
	}
	if err := rows.Err(); err != nil {
		if ctx.Err() != nil {
			return nil, sqlerr.ErrCanceled
		}
		return nil, err
	}
	return b.NewRecordBatch(), nil
}

// appendDuckValue appends a value DuckDB returned for a column cast to the
// builder's type.
func appendDuckValue(b array.Builder, v any) error {
	if v == nil {
		b.AppendNull()
		return nil
	}
	var ok bool
	switch bb := b.(type) {
	case *array.Int64Builder:
		var x int64
		if x, ok = v.(int64); ok {
			bb.Append(x)
		}
	case *array.Int32Builder:
		var x int32
		if x, ok = v.(int32); ok {
			bb.Append(x)
		}
	case *array.Int16Builder:
		var x int16
		if x, ok = v.(int16); ok {
			bb.Append(x)
		}
	case *array.Int8Builder:
		var x int8
		if x, ok = v.(int8); ok {
			bb.Append(x)
		}
	case *array.Float64Builder:
		var x float64
		if x, ok = v.(float64); ok {
			bb.Append(x)
		}
	case *array.Float32Builder:
		var x float32
		if x, ok = v.(float32); ok {
			bb.Append(x)
		}
	case *array.BooleanBuilder:
		var x bool
		if x, ok = v.(bool); ok {
			bb.Append(x)
		}
	case *array.StringBuilder:
		var x string
		if x, ok = v.(string); ok {
			bb.Append(x)
		}
	case *array.BinaryBuilder:
		var x []byte
		if x, ok = v.([]byte); ok {
			bb.Append(x)
		}
	case *array.Date32Builder:
		var x time.Time
		if x, ok = v.(time.Time); ok {
			bb.Append(arrow.Date32FromTime(x))
		}
	case *array.TimestampBuilder:
		var x time.Time
		if x, ok = v.(time.Time); ok {
			bb.Append(arrow.Timestamp(x.UnixMicro()))
		}
	case *array.Decimal128Builder:
		var x duckdb.Decimal
		if x, ok = v.(duckdb.Decimal); ok {
			bb.Append(decimal128.FromBigInt(x.Value))
		}
	case *array.MonthDayNanoIntervalBuilder:
		var x duckdb.Interval
		if x, ok = v.(duckdb.Interval); ok {
			iv, err := schema.IntervalFromMicros(x.Months, x.Days, x.Micros)
			if err != nil {
				return err
			}
			bb.Append(iv)
		}
	case *array.FixedSizeListBuilder:
		ok = appendVector(bb, v) // vectorops.go
	case *array.ListBuilder:
		ok = appendList(bb, v) // arraycols.go
	default:
		return fmt.Errorf("cannot write values of type %s", b.Type())
	}
	if !ok {
		return fmt.Errorf("unexpected value %T for type %s", v, b.Type())
	}
	return nil
}

// quoteIdent quotes an identifier for SQL.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// sourceWidth is the number of columns an INSERT's source produces when
// it can be read off the parse tree: the first row of VALUES, or the select
// list of a plain SELECT without a star. ok is false otherwise (the source
// then must produce every column of the table).
func sourceWidth(src *pg_query.Node) (int, bool) {
	sel := src.GetSelectStmt()
	switch {
	case sel == nil || sel.Op != pg_query.SetOperation_SETOP_NONE:
		return 0, false
	case len(sel.ValuesLists) > 0:
		return len(sel.ValuesLists[0].GetList().GetItems()), true
	}
	for _, rt := range sel.TargetList {
		if cr := rt.GetResTarget().GetVal().GetColumnRef(); cr != nil {
			for _, f := range cr.Fields {
				if f.GetAStar() != nil {
					return 0, false
				}
			}
		}
	}
	return len(sel.TargetList), len(sel.TargetList) > 0
}
