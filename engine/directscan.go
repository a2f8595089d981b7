package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/duckdb/duckdb-go/v2"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/faults"
	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/reader"
	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Direct scans. A query that only projects columns of one table —
// SELECT a, b FROM t, SELECT * FROM t LIMIT 10, and lookups such as
// SELECT * FROM t WHERE id = $1, whose WHERE the reader's key and row
// filters evaluate exactly (prune.go) — needs nothing from DuckDB but the
// table's rows themselves (merged on read for primary-key tables). Handing those rows to DuckDB through
// the table function and taking them back through database/sql costs more
// than the merge: every value crosses cgo twice and DuckDB materialises the
// whole result before the first row goes out. Such a query still goes
// through planning and DuckDB's Describe (so its RowDescription is exactly
// the DuckDB route's), but executes by streaming the reader's batches
// straight into DataRows: units (partition × bucket; an append table's
// files and row groups, reader.ParallelUnits) are read in parallel on
// their own goroutines, the connection encodes rows as batches arrive.
//
// Invariant: a direct scan yields exactly the values the DuckDB route would.
// Each value is produced as the Go value DuckDB's scan returns for the
// column's DuckDB type and passes through the same valueConv; types without
// such an exact correspondence keep the DuckDB route (TestDirectScanMatchesDuckDB).

// directScan is the plan of a direct scan.
type directScan struct {
	handle string
	// cols is the table column of each output column.
	cols []int
	// getters produce each output column's DuckDB scan value; types are
	// the columns' arrow types.
	getters []arrowGetter
	types   []arrow.DataType
	// limit < 0 means no LIMIT.
	limit, offset int64
}

// arrowGetter returns value i of a non-null arrow value as DuckDB's scan
// would return the same value.
type arrowGetter func(arr arrow.Array, i int) any

// planDirectScan recognises a direct scan in stmt, a SELECT whose lake tables
// are already bound (bindLakeTables) and whose parameters have the given
// types; nil when the query needs DuckDB.
func (s *Session) planDirectScan(stmt *pg_query.Node, tables map[string]*catalog.Table, ncols int, paramOIDs []uint32) *directScan {
	sel := stmt.GetSelectStmt()
	if sel == nil || len(tables) != 1 || sel.Op != pg_query.SetOperation_SETOP_NONE || sel.WithClause != nil ||
		len(sel.GroupClause) > 0 || sel.HavingClause != nil || len(sel.WindowClause) > 0 ||
		len(sel.SortClause) > 0 || len(sel.DistinctClause) > 0 || len(sel.LockingClause) > 0 || sel.IntoClause != nil ||
		len(sel.ValuesLists) > 0 || len(sel.FromClause) != 1 {
		return nil
	}
	var handle string
	var t *catalog.Table
	for h, tt := range tables {
		handle, t = h, tt
	}
	rf := sel.FromClause[0].GetRangeFunction()
	if rf == nil || len(t.Enums) > 0 {
		return nil // enum columns: labels are mapped by lakesoul_scan (enum.go)
	}
	e, ok := s.e.scans.get(handle)
	if !ok || e.fixed {
		return nil // time travel and rewrites keep their own route
	}
	if (sel.WhereClause != nil || len(paramOIDs) > 0) && !e.prune.exactFor(t, paramOIDs) {
		return nil // DuckDB evaluates the WHERE
	}
	alias := ""
	if rf.Alias != nil {
		alias = rf.Alias.Aliasname
	}
	d := &directScan{handle: handle, limit: -1}
	if d.limit, ok = limitValue(sel.LimitCount, -1); !ok {
		return nil
	}
	if d.offset, ok = limitValue(sel.LimitOffset, 0); !ok || sel.LimitOption == pg_query.LimitOption_LIMIT_OPTION_WITH_TIES {
		return nil
	}
	for _, target := range sel.TargetList {
		rt := target.GetResTarget()
		if rt == nil || rt.Val == nil {
			return nil
		}
		cols, ok := refColumns(t, rt.Val.GetColumnRef(), alias)
		if !ok {
			return nil
		}
		d.cols = append(d.cols, cols...)
	}
	if len(d.cols) != ncols {
		return nil
	}
	for _, c := range d.cols {
		g := directGetter(t.Schema.Field(c).Type)
		if g == nil {
			return nil
		}
		d.getters = append(d.getters, g)
		d.types = append(d.types, t.Schema.Field(c).Type)
	}
	return d
}

// refColumns resolves a select-list column reference to t's columns: `col`,
// `qual.col`, `*` or `qual.*`, where qual is the table's name or alias in
// the query; false for anything else (an expression, another qualifier, a
// column t lacks).
func refColumns(t *catalog.Table, cref *pg_query.ColumnRef, qual string) ([]int, bool) {
	if cref == nil {
		return nil, false
	}
	fields := cref.Fields
	if len(fields) == 2 {
		if q := fields[0].GetString_(); q == nil || q.Sval != qual {
			return nil, false
		}
		fields = fields[1:]
	}
	if len(fields) != 1 {
		return nil, false
	}
	if fields[0].GetAStar() != nil {
		cols := make([]int, t.Schema.NumFields())
		for c := range cols {
			cols[c] = c
		}
		return cols, true
	}
	name := fields[0].GetString_()
	if name == nil {
		return nil, false
	}
	c := columnIndex(t, name.Sval)
	if c < 0 {
		return nil, false
	}
	return []int{c}, true
}

// columnIndex finds a column as DuckDB binds names: exactly, else the one
// column equal ignoring case; -1 otherwise.
func columnIndex(t *catalog.Table, name string) int {
	if idx := t.Schema.FieldIndices(name); len(idx) == 1 {
		return idx[0]
	}
	found := -1
	for i, f := range t.Schema.Fields() {
		if strings.EqualFold(f.Name, name) {
			if found >= 0 {
				return -1
			}
			found = i
		}
	}
	return found
}

// limitValue reads a constant LIMIT/OFFSET; absent gives def.
func limitValue(n *pg_query.Node, def int64) (int64, bool) {
	if n == nil {
		return def, true
	}
	c := n.GetAConst()
	if c == nil {
		return 0, false
	}
	if c.Isnull { // LIMIT ALL / LIMIT NULL
		return def, true
	}
	iv := c.GetIval()
	if iv == nil || iv.Ival < 0 {
		return 0, false
	}
	return int64(iv.Ival), true
}

// directGetter returns the getter of an arrow type whose DuckDB scan value it
// reproduces exactly (see scan.go's duckColumn for the way in); nil when there
// is none.
func directGetter(dt arrow.DataType) arrowGetter {
	switch t := dt.(type) {
	case *arrow.Int64Type:
		return func(a arrow.Array, i int) any { return a.(*array.Int64).Value(i) }
	case *arrow.Int32Type:
		return func(a arrow.Array, i int) any { return a.(*array.Int32).Value(i) }
	case *arrow.Int16Type:
		return func(a arrow.Array, i int) any { return a.(*array.Int16).Value(i) }
	case *arrow.Int8Type:
		return func(a arrow.Array, i int) any { return a.(*array.Int8).Value(i) }
	case *arrow.Float64Type:
		return func(a arrow.Array, i int) any { return a.(*array.Float64).Value(i) }
	case *arrow.Float32Type:
		return func(a arrow.Array, i int) any { return a.(*array.Float32).Value(i) }
	case *arrow.BooleanType:
		return func(a arrow.Array, i int) any { return a.(*array.Boolean).Value(i) }
	case *arrow.StringType:
		return func(a arrow.Array, i int) any { return a.(*array.String).Value(i) }
	case *arrow.BinaryType:
		return func(a arrow.Array, i int) any { return a.(*array.Binary).Value(i) }
	case *arrow.Date32Type:
		return func(a arrow.Array, i int) any { return a.(*array.Date32).Value(i).ToTime() }
	case *arrow.TimestampType:
		if t.Unit != arrow.Microsecond {
			return nil // DuckDB's TIMESTAMP is microseconds: finer units would round
		}
		return func(a arrow.Array, i int) any {
			return time.UnixMicro(int64(a.(*array.Timestamp).Value(i))).UTC()
		}
	case *arrow.Decimal128Type:
		w, sc := uint8(t.Precision), uint8(t.Scale)
		return func(a arrow.Array, i int) any {
			return duckdb.Decimal{Width: w, Scale: sc, Value: a.(*array.Decimal128).Value(i).BigInt()}
		}
	case *arrow.MonthDayNanoIntervalType:
		return func(a arrow.Array, i int) any { return duckInterval(a.(*array.MonthDayNanoInterval).Value(i)) }
	}
	return nil
}

// fieldKind is how a direct scan encodes an output column's values.
type fieldKind uint8

const (
	// fieldValue: through the column's getter and valueConv, as on the
	// DuckDB route (pgwire encodes the value).
	fieldValue fieldKind = iota
	// fieldText: a string column of type text/varchar, whose wire form in
	// text and binary is its bytes.
	fieldText
	// fieldInt: an integer column of its own PostgreSQL type: decimal
	// digits in text, big-endian in binary.
	fieldInt
	// fieldBool: a boolean column: 't'/'f' in text, 1/0 in binary.
	fieldBool
)

// fieldEncoding is how one output column is encoded.
type fieldEncoding struct {
	kind fieldKind
	text bool // text format (fieldInt, fieldBool)
	size int  // bytes of a binary integer
	get  arrowGetter
	conv valueConv
}

// fieldEncodings returns each output column's encoding. Text, integers and
// booleans in the column's own PostgreSQL type are encoded here, without
// boxing (their wire forms are fixed: the bytes, decimal digits or 't'/'f'
// in text, big-endian in binary); every other value — and every value when
// there are no formats (valueRows) — goes through the column's valueConv
// and pgwire's encoding, as on the DuckDB route.
func (p *directPortal) fieldEncodings(formats []int16) []fieldEncoding {
	encs := make([]fieldEncoding, len(p.d.cols))
	for j := range encs {
		e := &encs[j]
		e.get, e.conv = p.d.getters[j], p.q.convs[j]
		if formats == nil {
			continue
		}
		e.text = formats[j] == 0
		oid := p.q.cols[j].TypeOID
		switch p.d.types[j].(type) {
		case *arrow.StringType:
			if oid == schema.OIDText || oid == schema.OIDVarchar {
				e.kind = fieldText
			}
		case *arrow.Int64Type:
			if oid == schema.OIDInt8 {
				e.kind, e.size = fieldInt, 8
			}
		case *arrow.Int32Type:
			if oid == schema.OIDInt4 {
				e.kind, e.size = fieldInt, 4
			}
		case *arrow.Int16Type:
			if oid == schema.OIDInt2 {
				e.kind, e.size = fieldInt, 2
			}
		case *arrow.BooleanType:
			if oid == schema.OIDBool {
				e.kind = fieldBool
			}
		}
	}
	return encs
}

// batchColumn is an output column of the current batch as buildRow reads
// it: its buffers taken out once per batch, so that a row costs no
// interface call or type switch per value.
type batchColumn struct {
	arr arrow.Array
	// valid is the validity bitmap (nil: no NULLs), off the array's offset
	// into it and into the value buffers.
	valid []byte
	off   int
	// Text columns: value i is data[offsets[off+i]:offsets[off+i+1]].
	offsets []int32
	data    []byte
	// Integer columns, by width; boolean values as bits.
	i64  []int64
	i32  []int32
	i16  []int16
	bits []byte
}

// setBatch takes the output columns of b apart for buildRow.
func (p *directPortal) setBatch(b reader.Selected, encs []fieldEncoding) {
	if cap(p.view) < len(p.d.cols) {
		p.view = make([]batchColumn, len(p.d.cols))
	}
	p.view = p.view[:len(p.d.cols)]
	for j, c := range p.d.cols {
		arr := b.Column(c)
		v := batchColumn{arr: arr, off: arr.Data().Offset()}
		if arr.NullN() > 0 {
			v.valid = arr.NullBitmapBytes()
		}
		switch a := arr.(type) {
		case *array.String:
			if encs[j].kind == fieldText {
				// The raw buffers: values are indexed by off + i.
				v.offsets = arrow.Int32Traits.CastFromBytes(bufferBytes(a.Data(), 1))
				v.data = bufferBytes(a.Data(), 2)
			}
		case *array.Int64:
			v.i64 = arrow.Int64Traits.CastFromBytes(bufferBytes(a.Data(), 1))
		case *array.Int32:
			v.i32 = arrow.Int32Traits.CastFromBytes(bufferBytes(a.Data(), 1))
		case *array.Int16:
			v.i16 = arrow.Int16Traits.CastFromBytes(bufferBytes(a.Data(), 1))
		case *array.Boolean:
			v.bits = bufferBytes(a.Data(), 1)
		}
		p.view[j] = v
	}
}

// bufferBytes is buffer i of d, or nil when d has none (an array of NULLs
// or of empty strings may come without a values buffer; only valid rows are
// read from it).
func bufferBytes(d arrow.ArrayData, i int) []byte {
	if b := d.Buffers()[i]; b != nil {
		return b.Bytes()
	}
	return nil
}

// buildRow sends row i of the current batch (setBatch) through rb.
func (p *directPortal) buildRow(rb pgwire.RowBuilder, encs []fieldEncoding, i int) error {
	rb.BeginRow()
	for j := range encs {
		v, e := &p.view[j], &encs[j]
		at := v.off + i
		if v.valid != nil && !bitutil.BitIsSet(v.valid, at) {
			rb.AppendNull()
			continue
		}
		switch e.kind {
		case fieldText:
			rb.AppendField(v.data[v.offsets[at]:v.offsets[at+1]])
		case fieldInt:
			var x int64
			switch e.size {
			case 8:
				x = v.i64[at]
			case 4:
				x = int64(v.i32[at])
			default:
				x = int64(v.i16[at])
			}
			if e.text {
				p.scratch = strconv.AppendInt(p.scratch[:0], x, 10)
			} else {
				p.scratch = binary.BigEndian.AppendUint64(p.scratch[:0], uint64(x))[8-e.size:]
			}
			rb.AppendField(p.scratch)
		case fieldBool:
			rb.AppendField(boolField[boolIndex(e.text, bitutil.BitIsSet(v.bits, at))])
		default:
			if err := rb.AppendValue(e.conv(e.get(v.arr, i))); err != nil {
				return err
			}
		}
	}
	return rb.EndRow()
}

// boolField holds the wire forms of booleans: binary false, true, then
// text false, true (boolIndex).
var boolField = [4][]byte{{0}, {1}, {'f'}, {'t'}}

func boolIndex(text, v bool) int {
	i := 0
	if text {
		i = 2
	}
	if v {
		i++
	}
	return i
}

// directPortal executes a direct scan. Workers merge units and send batches
// on a bounded channel; Execute encodes them, possibly across several calls
// (PortalSuspended), so the workers run under the portal's own context.
type directPortal struct {
	q      *duckQuery
	d      *directScan
	params []any
	ctx    context.Context
	cancel context.CancelFunc
	// batches carries merged batches (file batches with their winning rows
	// selected: reader.NextSelected); it is closed when the workers are done.
	batches chan reader.Selected
	wg      sync.WaitGroup
	errMu   sync.Mutex
	err     error
	cur     reader.Selected
	row     int // next selected row of cur
	// view is cur's output columns taken apart (setBatch).
	view    []batchColumn
	scratch []byte
	skipped int64
	count   int64
	started bool
}

func (p *directPortal) Describe(context.Context) ([]pgwire.Column, error) { return p.q.cols, nil }

func (p *directPortal) setErr(err error) {
	p.errMu.Lock()
	if p.err == nil {
		p.err = err
	}
	p.errMu.Unlock()
	p.cancel()
}

func (p *directPortal) start(ctx context.Context) error {
	p.started = true
	if err := p.q.s.checkPlanTables(ctx, p.q); err != nil {
		return err
	}
	if err := p.q.s.takeSnapshotsWith(ctx, p.q.tables, p.params); err != nil {
		return err
	}
	if err := p.q.s.checkPlanFiles(ctx, p.q); err != nil {
		return err
	}
	e, ok := p.q.s.e.scans.get(p.d.handle)
	if !ok {
		return fmt.Errorf("%s: unknown handle", scanFunctionName)
	}
	needed := make([]bool, e.table.Schema.NumFields())
	for _, c := range p.d.cols {
		needed[c] = true
	}
	scans := p.q.s.e.scans
	scan := &reader.Scan{Store: scans.store, Table: e.table, Partitions: e.parts, Mem: scans.mem, Needed: needed, Unordered: true,
		Keys: e.keys(), Rows: e.rows(), Meta: scans.meta, Chunks: scans.chunks, Stats: e.stats, Spill: scans.spill, OnlyNeeded: true}
	units, err := scan.ParallelUnits(ctx)
	if err != nil {
		return err
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	// Two batches per worker in flight keep every core busy without letting
	// a slow client pile up merged data.
	workers := max(1, min(len(units), runtime.GOMAXPROCS(0)))
	p.batches = make(chan reader.Selected, 2*workers)
	next := make(chan reader.Unit, len(units))
	for _, u := range units {
		next <- u
	}
	close(next)
	p.wg.Add(workers)
	for range workers {
		safego.Go(func() { p.work(scan, next) })
	}
	safego.Go(func() {
		p.wg.Wait()
		close(p.batches)
	})
	return nil
}

// work merges units until none is left, the portal is closed or one fails.
// A panic fails the scan like an error, delivered before the worker counts
// as done.
func (p *directPortal) work(scan *reader.Scan, units <-chan reader.Unit) {
	defer p.wg.Done()
	defer safego.RecoverTo(p.setErr)
	for u := range units {
		faults.Point("directscan.worker", scan.Table.QualifiedName())
		if p.ctx.Err() != nil {
			return
		}
		it, err := scan.Open(p.ctx, u)
		if err != nil {
			p.setErr(err)
			return
		}
		for {
			b, err := reader.NextSelected(p.ctx, it)
			if err == io.EOF {
				break
			}
			if err != nil {
				it.Close()
				p.setErr(err)
				return
			}
			select {
			case p.batches <- b:
			case <-p.ctx.Done():
				b.Release()
				it.Close()
				return
			}
		}
		it.Close()
	}
}

// failure is the workers' error, if any, as the client should see it.
func (p *directPortal) failure(ctx context.Context) error {
	p.errMu.Lock()
	err := p.err
	p.errMu.Unlock()
	if err != nil && (ctx.Err() != nil || errors.Is(err, context.Canceled)) {
		return sqlerr.ErrCanceled
	}
	return err
}

func (p *directPortal) Execute(ctx context.Context, maxRows int, w pgwire.RowWriter) (string, bool, error) {
	if !p.started {
		if err := p.start(ctx); err != nil {
			return "", true, err
		}
	}
	stop := context.AfterFunc(ctx, safego.Guard(p.cancel))
	defer stop()
	done := func() (string, bool, error) {
		if err := p.failure(ctx); err != nil {
			return "", true, err
		}
		if ctx.Err() != nil {
			return "", true, sqlerr.ErrCanceled
		}
		return fmt.Sprintf("SELECT %d", p.count), true, nil
	}
	rb, ok := w.(pgwire.RowBuilder)
	if !ok {
		rb = &valueRows{w: w}
	}
	encs := p.fieldEncodings(rb.Formats())
	for n := 0; maxRows == 0 || n < maxRows; {
		if p.d.limit >= 0 && p.count >= p.d.limit {
			p.cancel() // nothing more is wanted: stop the workers
			return fmt.Sprintf("SELECT %d", p.count), true, nil
		}
		for p.cur.RecordBatch == nil || p.row >= p.cur.Len() {
			if p.cur.RecordBatch != nil {
				p.cur.Release()
				p.cur = reader.Selected{}
			}
			b, ok := <-p.batches
			if !ok {
				return done()
			}
			if ctx.Err() != nil {
				b.Release()
				return "", true, sqlerr.ErrCanceled
			}
			p.cur, p.row = b, 0
			p.setBatch(b, encs)
		}
		if skip := min(p.d.offset-p.skipped, int64(p.cur.Len()-p.row)); skip > 0 {
			p.skipped += skip
			p.row += int(skip)
			continue
		}
		if err := p.buildRow(rb, encs, p.cur.Row(p.row)); err != nil {
			return "", true, err
		}
		p.row++
		p.count++
		n++
	}
	return "", false, nil
}

// valueRows lets a plain RowWriter (COPY TO's, tests') stand in for a
// RowBuilder: it collects a row's values and writes them at EndRow. It has
// no formats, so fieldEncodings gives it no pre-encoded fields.
type valueRows struct {
	w    pgwire.RowWriter
	vals []any
}

func (v *valueRows) WriteRow(vals []any) error { return v.w.WriteRow(vals) }
func (v *valueRows) Formats() []int16          { return nil }
func (v *valueRows) BeginRow()                 { v.vals = v.vals[:0] }
func (v *valueRows) AppendField([]byte)        { panic("valueRows: pre-encoded field") }
func (v *valueRows) AppendNull()               { v.vals = append(v.vals, nil) }
func (v *valueRows) AppendValue(x any) error   { v.vals = append(v.vals, x); return nil }
func (v *valueRows) EndRow() error             { return v.w.WriteRow(v.vals) }

func (p *directPortal) Close() {
	if !p.started || p.cancel == nil {
		return
	}
	p.cancel()
	if p.cur.RecordBatch != nil {
		p.cur.Release()
		p.cur = reader.Selected{}
	}
	// Workers stop at their next send; drain what they already queued.
	for b := range p.batches {
		b.Release()
	}
}
