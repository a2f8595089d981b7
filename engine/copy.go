package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/faults"
	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
	"github.com/lakesoul-go/lakesoul/writer"
)

// COPY … FROM STDIN into lake tables and COPY … TO STDOUT. pgwire decodes
// and encodes the COPY data format; this file turns COPY FROM fields into
// Arrow batches for the writer (copyconv.go converts values) and runs the
// query of COPY TO.

// copyOptions are the parsed options of a COPY statement.
type copyOptions struct {
	format  pgwire.CopyFormat
	nullSet bool
}

func (s *Session) parseCopyOptions(n *pg_query.CopyStmt) (copyOptions, error) {
	var o copyOptions
	oneByte := func(d *pg_query.DefElem, what string) (byte, error) {
		v := defElemValue(d)
		if len(v) != 1 {
			return 0, sqlerr.New(sqlerr.FeatureNotSupported, "COPY %s must be a single one-byte character", what)
		}
		return v[0], nil
	}
	seen := map[string]bool{}
	for _, opt := range n.Options {
		d := opt.GetDefElem()
		if d == nil {
			continue
		}
		name := strings.ToLower(d.Defname)
		if seen[name] {
			return o, sqlerr.New(sqlerr.SyntaxError, "conflicting or redundant options")
		}
		seen[name] = true
		var err error
		switch name {
		case "format":
			switch strings.ToLower(defElemValue(d)) {
			case "text":
				o.format.Kind = pgwire.CopyText
			case "csv":
				o.format.Kind = pgwire.CopyCSV
			case "binary":
				o.format.Kind = pgwire.CopyBinary
			default:
				return o, sqlerr.New(sqlerr.InvalidParameterValue, "COPY format %q not recognized", defElemValue(d))
			}
		case "header":
			switch strings.ToLower(defElemValue(d)) {
			case "true", "on", "1", "match":
				o.format.Header = true
			case "false", "off", "0":
				o.format.Header = false
			default:
				return o, sqlerr.New(sqlerr.SyntaxError, "header requires a Boolean value or \"match\"")
			}
		case "delimiter":
			o.format.Delimiter, err = oneByte(d, "delimiter")
		case "null":
			o.format.Null, o.nullSet = defElemValue(d), true
		case "quote":
			o.format.Quote, err = oneByte(d, "quote")
		case "escape":
			o.format.Escape, err = oneByte(d, "escape")
		case "encoding":
			if v := strings.ToUpper(strings.ReplaceAll(defElemValue(d), "-", "")); v != "UTF8" && v != "UNICODE" {
				return o, sqlerr.Unsupported("COPY ENCODING "+defElemValue(d), "UTF8")
			}
		case "freeze":
		default:
			return o, sqlerr.Unsupported("COPY option "+strings.ToUpper(d.Defname),
				"FORMAT, HEADER, DELIMITER, NULL, QUOTE, ESCAPE, ENCODING 'UTF8'")
		}
		if err != nil {
			return o, err
		}
	}
	if o.format.Kind == pgwire.CopyBinary && (o.format.Delimiter != 0 || o.nullSet || o.format.Header) {
		return o, sqlerr.New(sqlerr.SyntaxError, "cannot specify DELIMITER, NULL or HEADER in BINARY mode")
	}
	if o.format.Kind != pgwire.CopyCSV && (o.format.Quote != 0 || o.format.Escape != 0) {
		return o, sqlerr.New(sqlerr.FeatureNotSupported, "COPY QUOTE and ESCAPE are available only in CSV mode")
	}
	o.format = o.format.WithDefaults(o.nullSet)
	if o.format.Kind != pgwire.CopyBinary {
		if err := checkCopyFormat(o.format); err != nil {
			return o, err
		}
	}
	return o, nil
}

// checkCopyFormat refuses the text and CSV formats PostgreSQL refuses (all
// 22023): they could not be read back unambiguously.
func checkCopyFormat(f pgwire.CopyFormat) error {
	bad := func(format string, args ...any) error {
		return sqlerr.New(sqlerr.InvalidParameterValue, format, args...)
	}
	switch {
	case f.Delimiter == '\n' || f.Delimiter == '\r':
		return bad("COPY delimiter cannot be newline or carriage return")
	case strings.ContainsAny(f.Null, "\r\n"):
		return bad("COPY null representation cannot use newline or carriage return")
	case f.Kind == pgwire.CopyText && strings.IndexByte(`\.abcdefghijklmnopqrstuvwxyz0123456789`, f.Delimiter) >= 0:
		// Text-format escapes and the end marker use these.
		return bad("COPY delimiter cannot be %q", string(f.Delimiter))
	case strings.IndexByte(f.Null, f.Delimiter) >= 0:
		return bad("COPY delimiter must not appear in the NULL specification")
	case f.Kind == pgwire.CopyCSV && f.Delimiter == f.Quote:
		return bad("COPY delimiter and quote must be different")
	case f.Kind == pgwire.CopyCSV && strings.IndexByte(f.Null, f.Quote) >= 0:
		return bad("CSV quote character must not appear in the NULL specification")
	}
	return nil
}

func (s *Session) planCopy(ctx context.Context, n *pg_query.CopyStmt) (pgwire.Statement, error) {
	if n.IsProgram || n.Filename != "" {
		return nil, sqlerr.New(sqlerr.InsufficientPrivilege,
			"COPY to or from a file or program is not allowed: use COPY … FROM STDIN / TO STDOUT (psql's \\copy)")
	}
	if n.WhereClause != nil {
		return nil, sqlerr.Unsupported("COPY FROM … WHERE", "COPY FROM STDIN without WHERE, then DELETE")
	}
	opts, err := s.parseCopyOptions(n)
	if err != nil {
		return nil, err
	}
	if n.IsFrom {
		if n.Relation == nil {
			return nil, sqlerr.New(sqlerr.SyntaxError, "COPY FROM needs a table")
		}
		return s.planCopyFrom(ctx, n, opts)
	}
	return s.planCopyTo(ctx, n, opts)
}

// ---- COPY TO STDOUT ----

type copyToStmt struct {
	inner  pgwire.Statement
	cols   []pgwire.Column
	format pgwire.CopyFormat
}

func (s *Session) planCopyTo(ctx context.Context, n *pg_query.CopyStmt, opts copyOptions) (pgwire.Statement, error) {
	query := n.Query
	if query == nil {
		t, err := s.resolveTable(ctx, n.Relation.Schemaname, n.Relation.Relname)
		if err != nil {
			return nil, err
		}
		cols, err := copyColumns(t, n.Attlist)
		if err != nil {
			return nil, err
		}
		quoted := make([]string, len(cols))
		for i, c := range cols {
			quoted[i] = quoteIdent(c)
		}
		text := fmt.Sprintf("SELECT %s FROM %s.%s", strings.Join(quoted, ", "), quoteIdent(t.Namespace), quoteIdent(t.Name))
		tree, err := pg_query.Parse(text)
		if err != nil {
			return nil, err
		}
		query = tree.Stmts[0].Stmt
	} else if query.GetSelectStmt() == nil {
		return nil, sqlerr.Unsupported("COPY ("+statementName(query)+") TO", "COPY (SELECT …) TO STDOUT")
	}
	inner, err := s.plan(ctx, query, nil)
	if err != nil {
		return nil, err
	}
	if len(inner.ParamOIDs()) > 0 {
		return nil, sqlerr.New(sqlerr.SyntaxError, "COPY does not take parameters")
	}
	cols, err := inner.Describe(ctx)
	if err != nil {
		return nil, err
	}
	return &copyToStmt{inner: inner, cols: cols, format: opts.format}, nil
}

func (c *copyToStmt) ParamOIDs() []uint32                               { return nil }
func (c *copyToStmt) Describe(context.Context) ([]pgwire.Column, error) { return nil, nil }
func (c *copyToStmt) Tag() string                                       { return "COPY" }

func (c *copyToStmt) Bind(ctx context.Context, params []any) (pgwire.Portal, error) {
	if len(params) != 0 {
		return nil, sqlerr.New(sqlerr.ProtocolViolation, "bind message supplies %d parameters, but prepared statement requires 0", len(params))
	}
	p, err := c.inner.Bind(ctx, nil)
	if err != nil {
		return nil, err
	}
	return &copyToPortal{stmt: c, p: p}, nil
}

type copyToPortal struct {
	stmt *copyToStmt
	p    pgwire.Portal
}

var _ pgwire.CopyOutPortal = (*copyToPortal)(nil)

func (p *copyToPortal) Describe(context.Context) ([]pgwire.Column, error) { return nil, nil }
func (p *copyToPortal) CopyOutFormat() (pgwire.CopyFormat, []pgwire.Column) {
	return p.stmt.format, p.stmt.cols
}

func (p *copyToPortal) Execute(ctx context.Context, _ int, w pgwire.RowWriter) (string, bool, error) {
	cw := &countingRowWriter{w: w}
	for {
		_, done, err := p.p.Execute(ctx, 0, cw)
		if err != nil {
			return "", true, err
		}
		if done {
			return fmt.Sprintf("COPY %d", cw.n), true, nil
		}
	}
}

func (p *copyToPortal) Close() { p.p.Close() }

// countingRowWriter counts the rows it passes on.
type countingRowWriter struct {
	w pgwire.RowWriter
	n int64
}

func (c *countingRowWriter) WriteRow(v []any) error {
	c.n++
	return c.w.WriteRow(v)
}

// copyColumns resolves a COPY column list (all columns when empty).
func copyColumns(t *catalog.Table, attlist []*pg_query.Node) ([]string, error) {
	if len(attlist) == 0 {
		out := make([]string, 0, t.Schema.NumFields())
		for _, f := range t.Schema.Fields() {
			out = append(out, f.Name)
		}
		return out, nil
	}
	var out []string
	for _, a := range attlist {
		name, _ := stringValue(a)
		if len(t.Schema.FieldIndices(name)) == 0 {
			return nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", name, t.Name)
		}
		if slices.Contains(out, name) {
			return nil, sqlerr.New(sqlerr.SyntaxError, "column %q specified more than once", name)
		}
		out = append(out, name)
	}
	return out, nil
}

// ---- COPY FROM STDIN ----

type copyFromStmt struct {
	s      *Session
	t      *catalog.Table
	target []string // columns of the data, in data order
	format pgwire.CopyFormat
	// recSchema are the written columns in table order; src[i] is the
	// data column feeding written column i, or -1 for all-NULL.
	recSchema *arrow.Schema
	src       []int
	// defaults are the DuckDB expressions of the written columns the data
	// leaves out that have a DEFAULT (columndefault.go), by column index.
	defaults map[int]string
}

func (s *Session) planCopyFrom(ctx context.Context, n *pg_query.CopyStmt, opts copyOptions) (pgwire.Statement, error) {
	t, err := s.resolveTable(ctx, n.Relation.Schemaname, n.Relation.Relname)
	if err != nil {
		return nil, err
	}
	target, err := copyColumns(t, n.Attlist)
	if err != nil {
		return nil, err
	}
	return s.newCopyFrom(ctx, t, target, opts.format)
}

// newCopyFrom plans COPY FROM of rows holding the target columns of t, in
// that order, in format. Columns left out take their DEFAULT; a left-out key
// without one is a NOT NULL violation.
func (s *Session) newCopyFrom(ctx context.Context, t *catalog.Table, target []string, format pgwire.CopyFormat) (*copyFromStmt, error) {
	st := &copyFromStmt{s: s, t: t, target: target, format: format, defaults: map[int]string{}}
	st.format.Columns = len(target)
	var fields []arrow.Field
	for _, f := range t.Schema.Fields() {
		i := slices.Index(target, f.Name)
		def, _ := columnDefault(f)
		if i < 0 && def != "" {
			expr, err := s.defaultSQL(ctx, t.Namespace, def, f)
			if err != nil {
				return nil, err
			}
			st.defaults[len(fields)] = expr
		} else if i < 0 && slices.Contains(t.PKCols, f.Name) {
			return nil, writer.NotNullViolation(t, f.Name, nil, 0)
		} else if i < 0 && t.HasPK() && !slices.Contains(t.RangeCols, f.Name) {
			continue // partial upsert: not written, old value kept
		}
		fields = append(fields, arrow.Field{Name: f.Name, Type: f.Type, Nullable: f.Nullable, Metadata: f.Metadata})
		st.src = append(st.src, i)
	}
	st.recSchema = arrow.NewSchema(fields, nil)
	// Check every column type converts before any data flows.
	if _, err := st.converters(time.UTC, "postgres"); err != nil {
		return nil, err
	}
	return st, nil
}

func (c *copyFromStmt) ParamOIDs() []uint32                               { return nil }
func (c *copyFromStmt) Describe(context.Context) ([]pgwire.Column, error) { return nil, nil }
func (c *copyFromStmt) Tag() string                                       { return "COPY" }

func (c *copyFromStmt) Bind(_ context.Context, params []any) (pgwire.Portal, error) {
	if len(params) != 0 {
		return nil, sqlerr.New(sqlerr.ProtocolViolation, "bind message supplies %d parameters, but prepared statement requires 0", len(params))
	}
	return &copyFromPortal{stmt: c}, nil
}

// converters returns one converter per written column (nil for all-NULL);
// loc and intervalStyle are the session's TimeZone and IntervalStyle.
func (c *copyFromStmt) converters(loc *time.Location, intervalStyle string) ([]fieldConv, error) {
	convs := make([]fieldConv, len(c.src))
	for i, src := range c.src {
		if src < 0 {
			continue
		}
		var err error
		if c.format.Kind == pgwire.CopyBinary {
			convs[i], err = binaryConv(c.recSchema.Field(i))
		} else {
			convs[i], err = textConv(c.recSchema.Field(i), loc, intervalStyle)
		}
		if err != nil {
			return nil, err
		}
	}
	return convs, nil
}

type copyFromPortal struct {
	stmt *copyFromStmt
	ran  bool
	tag  string
}

var _ pgwire.CopyInPortal = (*copyFromPortal)(nil)

func (p *copyFromPortal) Describe(context.Context) ([]pgwire.Column, error) { return nil, nil }
func (p *copyFromPortal) CopyInFormat() pgwire.CopyFormat                   { return p.stmt.format }
func (p *copyFromPortal) Close()                                            {}

// Execute is reached only when the portal runs outside the COPY protocol
// (it already ran): it repeats the tag.
func (p *copyFromPortal) Execute(context.Context, int, pgwire.RowWriter) (string, bool, error) {
	if !p.ran {
		return "", true, sqlerr.New(sqlerr.ProtocolViolation, "COPY FROM STDIN must run through the COPY protocol")
	}
	return p.tag, true, nil
}

// CopyIn implements pgwire.CopyInPortal: rows become Arrow batches, batches
// become data files as they fill, and one commit at the end makes them all
// visible (upsert on primary-key tables, append otherwise), or nothing.
func (p *copyFromPortal) CopyIn(ctx context.Context, rows pgwire.CopyRowReader) (string, error) {
	c := p.stmt
	s := c.s
	convs, err := c.converters(s.timeZone(), s.settings["intervalstyle"].value)
	if err != nil {
		return "", err
	}
	sink := s.newTableSink(ctx, c.t)
	defer sink.release(ctx)
	n, err := c.ingest(ctx, rows, convs, sink)
	if err != nil {
		sink.abort(ctx)
		if ctx.Err() != nil && !errors.Is(err, sqlerr.ErrCanceled) && sqlerr.Code(err) != sqlerr.QueryCanceled {
			return "", sqlerr.ErrCanceled
		}
		return "", err
	}
	if err := sink.commit(ctx); err != nil {
		return "", err
	}
	p.ran, p.tag = true, fmt.Sprintf("COPY %d", n)
	return p.tag, nil
}

// Bounds of a block of rows handed from the reading to the converting
// goroutine of a COPY: small enough to stay in cache, large enough that
// the hand-over costs nothing per row.
const (
	copyBlockRows  = 4096
	copyBlockBytes = 1 << 20
)

// rowBlock holds COPY rows copied out of the row reader's buffers: rows
// rows of ncols fields. Field k (= row × ncols + column) is
// data[ends[k-1]:ends[k]] (ends[-1] = 0), or NULL when null[k]. Everything
// is stored by index into space allocated once per block (see copyColumn
// on write barriers); blocks are reused.
type rowBlock struct {
	data   []byte
	size   int // bytes of data in use
	ends   []int32
	null   []bool
	fields int
	lines  []int64 // each row's line, for error context
	rows   int
}

func newRowBlock(ncols int) *rowBlock {
	return &rowBlock{data: make([]byte, copyBlockBytes), ends: make([]int32, copyBlockRows*ncols),
		null: make([]bool, copyBlockRows*ncols), lines: make([]int64, copyBlockRows)}
}

// add appends a row; the block must not be full. A row of more than 2 GiB
// (beyond the 32-bit field ends) is refused.
func (b *rowBlock) add(fields [][]byte, line int64) error {
	n := 0
	for _, f := range fields {
		n += len(f)
	}
	if b.size+n > math.MaxInt32 {
		return errValueTooLarge
	}
	if b.size+n > len(b.data) { // the row that crosses copyBlockBytes
		grown := make([]byte, max(2*len(b.data), b.size+n))
		copy(grown, b.data[:b.size])
		b.data = grown
	}
	for _, f := range fields {
		b.size += copy(b.data[b.size:], f)
		b.ends[b.fields] = int32(b.size)
		b.null[b.fields] = f == nil
		b.fields++
	}
	b.lines[b.rows] = line
	b.rows++
	return nil
}

func (b *rowBlock) full() bool { return b.rows >= copyBlockRows || b.size >= copyBlockBytes }

func (b *rowBlock) field(k int) []byte {
	start := int32(0)
	if k > 0 {
		start = b.ends[k-1]
	}
	return b.data[start:b.ends[k]:b.ends[k]]
}

// reset empties the block for reuse; a block that grew for a huge row goes
// back to its normal size, so the COPY does not keep that memory.
func (b *rowBlock) reset() {
	b.size, b.fields, b.rows = 0, 0, 0
	if len(b.data) > 4*copyBlockBytes {
		b.data = make([]byte, copyBlockBytes)
	}
}

// errConvertStopped tells the reading goroutine that the converting one
// ended early; its error is the ingest's.
var errConvertStopped = errors.New("engine: COPY conversion stopped")

// ingest reads every row into batches handed to sink; it returns the row
// count. Two goroutines share the work: this one reads rows from the
// stream (the protocol, line splitting, unescaping) into blocks, and a
// converting one turns blocks into Arrow batches for the sink, so the
// two halves of parsing run on two cores. Rows keep their order, and the
// first bad row in that order is the error.
func (c *copyFromStmt) ingest(ctx context.Context, rows pgwire.CopyRowReader, convs []fieldConv, sink *tableSink) (int64, error) {
	blocks := make(chan *rowBlock, 2)
	free := make(chan *rowBlock, 4) // blocks the converter is done with, for reuse
	stopped := make(chan struct{})
	var total int64
	var convErr error
	// A panic of either half fails the COPY like an error of that half,
	// and the other half still ends.
	safego.Go(func() {
		defer close(stopped)
		convErr = safego.Call(func() (err error) {
			total, err = c.convert(ctx, blocks, free, convs, sink)
			return err
		})
	})
	readErr := safego.Call(func() error { return c.readBlocks(ctx, rows, blocks, free, stopped) })
	close(blocks)
	<-stopped
	// The converter saw every row before the reader's failing one, so its
	// error comes first.
	switch {
	case convErr != nil:
		return 0, convErr
	case readErr != nil:
		return 0, readErr
	}
	return total, nil
}

// readBlocks reads the COPY rows into blocks sent on out until the end of
// the data, a bad row, or the converter stopping (closed stopped).
func (c *copyFromStmt) readBlocks(ctx context.Context, rows pgwire.CopyRowReader, out chan<- *rowBlock, free <-chan *rowBlock, stopped <-chan struct{}) error {
	ncols := len(c.target)
	var b *rowBlock
	send := func() error {
		select {
		case out <- b:
			b = nil
			return nil
		case <-stopped:
			return errConvertStopped
		}
	}
	for n := 1; ; n++ {
		fields, err := rows.ReadRow()
		if err == io.EOF {
			break
		}
		if err == nil && len(fields) != ncols {
			err = c.countError(rows, fields)
		}
		if err == nil && n&0xfff == 0 && ctx.Err() != nil {
			err = sqlerr.ErrCanceled
		}
		if err != nil {
			if b != nil { // the rows before the bad one are still converted
				_ = send()
			}
			return err
		}
		if b == nil {
			select {
			case b = <-free:
				b.reset()
			default:
				b = newRowBlock(ncols)
			}
		}
		if err := b.add(fields, rows.Line()); err != nil {
			_ = send() // the rows before this one are still converted
			return err
		}
		if b.full() {
			if err := send(); err != nil {
				return err
			}
		}
	}
	if b != nil {
		return send()
	}
	return nil
}

// convert turns the blocks from in into Arrow batches of the written
// columns and hands them to sink; it returns the row count.
func (c *copyFromStmt) convert(ctx context.Context, in <-chan *rowBlock, free chan<- *rowBlock, convs []fieldConv, sink *tableSink) (int64, error) {
	faults.Point("copy.convert", c.t.QualifiedName())
	cols := make([]*copyColumn, len(c.src))
	for i := range cols {
		cols[i] = newCopyColumn(memory.DefaultAllocator, c.recSchema.Field(i).Type)
		defer cols[i].release()
	}
	// A batch's size is estimated as its Arrow data: the field bytes plus
	// a fixed cost per row (offsets and fixed-width values).
	perRow := 0
	for _, col := range cols {
		if col.b != nil {
			if fw, ok := col.typ.(arrow.FixedWidthDataType); ok {
				perRow += max(1, fw.BitWidth()/8)
				continue
			}
		}
		perRow += 4
	}
	// flush hands the batch to the sink, then reserves room for the next.
	flush := func(rows int) error {
		arrs := make([]arrow.Array, len(cols))
		for i, col := range cols {
			arrs[i] = col.finish()
		}
		if err := c.fillDefaults(ctx, arrs, rows); err != nil {
			for _, a := range arrs {
				a.Release()
			}
			return err
		}
		rec := array.NewRecordBatch(c.recSchema, arrs, int64(rows))
		for _, a := range arrs {
			a.Release()
		}
		if err := sink.write(ctx, rec); err != nil {
			return err
		}
		for _, col := range cols {
			col.reserve(rows)
		}
		return nil
	}
	for _, col := range cols {
		col.reserve(copyBlockRows)
	}
	ncols := len(c.target)
	var total int64
	batchRows, batchBytes := 0, 0
	for b := range in {
		ascii := isASCII(b.data[:b.size])
		for _, col := range cols {
			col.asciiBlock = ascii
		}
		for r := range b.rows {
			if batchRows == 0 && total > 0 {
				// A row after a full batch: the ingest has several.
				if err := sink.continued(ctx); err != nil {
					return 0, err
				}
			}
			line := b.lines[r]
			base := r * ncols
			for i, src := range c.src {
				col := cols[i]
				if src < 0 || b.null[base+src] {
					col.appendNull()
					continue
				}
				v := b.field(base + src)
				batchBytes += len(v)
				if err := convs[i](col, v); err != nil {
					return 0, c.valueError(err, line, c.recSchema.Field(i).Name, v)
				}
			}
			batchBytes += perRow
			batchRows++
			total++
			if batchRows >= ingestBatchRows || batchBytes >= ingestBatchBytes {
				if err := flush(batchRows); err != nil {
					return 0, err
				}
				batchRows, batchBytes = 0, 0
			}
		}
		select {
		case free <- b:
		default:
		}
	}
	if batchRows > 0 {
		if err := flush(batchRows); err != nil {
			return 0, err
		}
	}
	return total, nil
}

// fillDefaults replaces the (all-NULL) columns of a batch of rows rows that
// have defaults by their defaults, evaluated by DuckDB once per row.
func (c *copyFromStmt) fillDefaults(ctx context.Context, arrs []arrow.Array, rows int) error {
	if len(c.defaults) == 0 {
		return nil
	}
	var idx []int
	var exprs []string
	var fields []arrow.Field
	for i := range arrs {
		if e, ok := c.defaults[i]; ok {
			idx = append(idx, i)
			exprs = append(exprs, fmt.Sprintf("%s AS c%d", e, len(exprs)))
			fields = append(fields, c.recSchema.Field(i))
		}
	}
	q := fmt.Sprintf("SELECT %s FROM range(%d)", strings.Join(exprs, ", "), rows)
	rec, err := c.s.collect(ctx, q, nil, arrow.NewSchema(fields, nil))
	if err != nil {
		return err
	}
	defer rec.Release()
	for j, i := range idx {
		arrs[i].Release()
		arrs[i] = rec.Column(j)
		arrs[i].Retain()
	}
	return nil
}

// countError reports a row with the wrong number of fields.
func (c *copyFromStmt) countError(rows pgwire.CopyRowReader, fields [][]byte) error {
	e := &sqlerr.Error{Code: "22P04", Where: fmt.Sprintf("COPY %s, line %d", c.t.Name, rows.Line())}
	switch {
	case c.format.Kind == pgwire.CopyBinary:
		e.Message = fmt.Sprintf("row field count is %d, expected %d", len(fields), len(c.target))
	case len(fields) > len(c.target):
		e.Message = "extra data after last expected column"
	default:
		e.Message = fmt.Sprintf("missing data for column %q", c.target[len(fields)])
	}
	return e
}

// valueError adds COPY's context to a conversion error of the row at line.
func (c *copyFromStmt) valueError(err error, line int64, col string, v []byte) error {
	e := sqlerr.From(err)
	out := *e
	if c.format.Kind == pgwire.CopyBinary {
		out.Where = fmt.Sprintf("COPY %s, line %d, column %s", c.t.Name, line, col)
	} else {
		out.Where = fmt.Sprintf("COPY %s, line %d, column %s: %q", c.t.Name, line, col, truncateValue(v))
	}
	return &out
}
