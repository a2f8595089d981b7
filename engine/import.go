package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/google/uuid"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/layout"
	"github.com/lakesoul-go/lakesoul/metrics"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/reader"
	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// CALL lakesoul.import('s.t', location [, format => 'parquet'|'csv']
//
//	[, header => true] [, delimiter => ';'] [, register => true])
//
// brings existing files into a table without a client streaming them: the
// server reads them (importsrc.go says from where a role may) in bounded
// memory and writes them as COPY FROM does — the same CSV parser and value
// conversions, the same batches into the table sink (ingest.go): upsert on
// primary-key tables (columns a file lacks keep their values), append
// otherwise — and commits every file once at the end, or nothing (a bad
// value 22P02, a file that is not Parquet XX001: the error names the file).
// Parquet columns are matched to the table's by name (a type the table's
// widens from is widened); CSV columns are the table's in order, or those
// the header line names with header => true. Progress goes to the client as
// NOTICE messages (rows, bytes, rate) and to lakesoul.progress.
//
// register => true (Parquet files of a table without a primary key or
// partitions) commits the files as they are, without reading their rows,
// when every column they hold is a column of the table with the same type.
// They must already lie inside the table's directory — the rule every data
// file of a table obeys (layout.CheckWithin) — else 22023: import without
// register copies them in. Registered files then belong to the table (DROP
// TABLE deletes them). Until they are registered they are files no commit
// knows, which orphan collection deletes once they are older than its
// grace (--orphan-grace, a day by default): register files soon after
// placing them.
//
// Like the other CALLs it runs outside transaction blocks (25001).
func (s *Session) planImport(ctx context.Context, fc *pg_query.FuncCall, paramOIDs []uint32) (pgwire.Statement, error) {
	if err := s.preventTransactionBlockAtPlan("CALL lakesoul.import"); err != nil {
		return nil, err
	}
	call, err := s.prepareCall(ctx, `SELECT i.table_id, i.src, i.src_format, i.has_header, i.delim, i.reg,
		i.read_server_files, i.namespaces FROM lakesoul.import_target(%s) i`, fc, paramOIDs)
	if err != nil {
		return nil, err
	}
	cols := []pgwire.Column{{Name: "file", TypeOID: schema.OIDText, TypeSize: -1, TypeModifier: -1},
		{Name: "rows", TypeOID: schema.OIDInt8, TypeSize: 8, TypeModifier: -1},
		{Name: "bytes", TypeOID: schema.OIDInt8, TypeSize: 8, TypeModifier: -1}}
	return &funcStmt{tag: "CALL", cols: cols, params: call.args.clientParamOIDs(), run: func(ctx context.Context, args []any) (string, [][]any, error) {
		if err := s.preventTransactionBlock(ctx, "CALL lakesoul.import"); err != nil {
			return "", nil, err
		}
		res, err := s.runCall(ctx, call, args, callProc{})
		if err != nil {
			return "", nil, err
		}
		req, err := s.importRequest(ctx, res)
		if err != nil {
			return "", nil, err
		}
		rows, err := s.runImport(ctx, req)
		return "CALL", rows, err
	}}, nil
}

// importReq is a resolved CALL lakesoul.import.
type importReq struct {
	t                *catalog.Table
	location, format string
	header, register bool
	delimiter        byte
	readServerFiles  bool
	namespaces       []string
}

// importRequest reads lakesoul.import_target's row.
func (s *Session) importRequest(ctx context.Context, res [][]any) (*importReq, error) {
	if len(res) != 1 || len(res[0]) != 8 {
		return nil, fmt.Errorf("lakesoul.import_target returned %d rows", len(res))
	}
	r := res[0]
	id, _ := r[0].(string)
	req := &importReq{}
	req.location, _ = r[1].(string)
	req.format, _ = r[2].(string)
	req.header, _ = r[3].(bool)
	req.register, _ = r[5].(bool)
	req.readServerFiles, _ = r[6].(bool)
	switch ns := r[7].(type) {
	case []any:
		for _, v := range ns {
			if n, ok := v.(string); ok {
				req.namespaces = append(req.namespaces, n)
			}
		}
	case []string:
		req.namespaces = ns
	}
	if req.format == "" {
		lower := strings.ToLower(req.location)
		switch {
		case strings.HasSuffix(lower, ".parquet"):
			req.format = "parquet"
		case strings.HasSuffix(lower, ".csv"):
			req.format = "csv"
		default:
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "lakesoul.import needs format => 'parquet' or 'csv' for %q", req.location)
		}
	}
	if req.format != "parquet" && req.format != "csv" {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "lakesoul.import format %q is not supported (parquet or csv)", req.format)
	}
	if d, ok := r[4].(string); ok {
		if len(d) != 1 || req.format != "csv" {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "delimiter must be a single one-byte character of a csv import")
		}
		req.delimiter = d[0]
	}
	if req.header && req.format != "csv" {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "header => true is an option of csv imports")
	}
	t, err := s.cat.NamedTableByID(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := s.e.checkTableDir(t); err != nil {
		return nil, err
	}
	req.t = t
	return req, nil
}

// runImport imports every file of the request and commits once; it returns
// one row per file: path, rows, bytes.
func (s *Session) runImport(ctx context.Context, req *importReq) ([][]any, error) {
	store, files, err := s.importSource(ctx, req.location, req.format, req.readServerFiles, req.namespaces)
	if err != nil {
		return nil, err
	}
	prog := s.e.imports.start(s, req.t.QualifiedName(), files)
	defer s.e.imports.end(prog)
	if req.register {
		return s.registerFiles(ctx, req, store, files, prog)
	}
	sink := s.newTableSink(ctx, req.t)
	defer sink.release(ctx)
	acc := &batchAccumulator{sink: sink}
	out := make([][]any, 0, len(files))
	for _, f := range files {
		prog.startFile(f.path)
		var n int64
		if req.format == "csv" {
			n, err = s.importCSV(ctx, store, f, req, sink, prog)
		} else {
			n, err = s.importParquet(ctx, store, f, req, acc, prog)
		}
		if err != nil {
			acc.release()
			sink.abort(ctx)
			return nil, importFileError(ctx, err, f.path)
		}
		out = append(out, []any{f.path, n, prog.fileDone(ctx, n)})
	}
	if err := acc.flush(ctx); err != nil {
		sink.abort(ctx)
		return nil, err
	}
	if err := sink.commit(ctx); err != nil {
		return nil, err
	}
	metrics.Imported(prog.rows.Load())
	prog.notice(ctx, "committed")
	return out, nil
}

// importFileError names the file in the context of err.
func importFileError(ctx context.Context, err error, path string) error {
	if ctx.Err() != nil || errors.Is(err, sqlerr.ErrCanceled) {
		return err
	}
	var se *sqlerr.Error
	if !errors.As(err, &se) {
		return &sqlerr.Error{Code: sqlerr.DataCorrupted, Message: fmt.Sprintf("could not import %s: %v", path, err), Err: err}
	}
	out := *se
	out.Where = strings.TrimPrefix(out.Where+"\nlakesoul.import, file "+path, "\n")
	out.Err = err
	return &out
}

// importCSV streams one CSV file through COPY's parser and converters.
func (s *Session) importCSV(ctx context.Context, store objstore.Store, f importFile, req *importReq, sink *tableSink, prog *importProgress) (int64, error) {
	obj, err := store.Open(ctx, f.path)
	if err != nil {
		return 0, err
	}
	defer obj.Close()
	format := pgwire.CopyFormat{Kind: pgwire.CopyCSV, Delimiter: req.delimiter}.WithDefaults(false)
	rows := pgwire.NewCopyRowReader(&countingReader{r: obj, ctx: ctx, prog: prog}, format, pgwire.DefaultMaxRowSize)
	prog.lines = rows.Line
	defer func() { prog.lines = nil }()
	target, err := copyColumns(req.t, nil)
	if err != nil {
		return 0, err
	}
	if req.header {
		fields, err := rows.ReadRow()
		if err == io.EOF {
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
		target = target[:0]
		for _, fld := range fields {
			name := string(fld)
			if req.t.Schema.FieldIndices(name) == nil {
				return 0, sqlerr.New(sqlerr.UndefinedColumn, "column %q of the header does not exist in table %s", name, req.t.QualifiedName())
			}
			if slices.Contains(target, name) {
				return 0, sqlerr.New("42701", "column %q appears twice in the header", name)
			}
			target = append(target, name)
		}
	}
	st, err := s.newCopyFrom(ctx, req.t, target, format)
	if err != nil {
		return 0, err
	}
	convs, err := st.converters(s.timeZone(), s.settings["intervalstyle"].value)
	if err != nil {
		return 0, err
	}
	return st.ingest(ctx, rows, convs, sink)
}

// countingReader counts the bytes read into the import's progress and
// reports it now and then (on the statement's goroutine, which reads).
type countingReader struct {
	r    io.Reader
	ctx  context.Context
	prog *importProgress
}

func (c *countingReader) Read(p []byte) (int, error) {
	c.prog.tick(c.ctx) // before a read that may wait, so the rows parsed so far show
	n, err := c.r.Read(p)
	c.prog.fileBytes.Add(int64(n))
	return n, err
}

// importParquet reads one Parquet file batch by batch, matching its columns
// to the table's by name.
func (s *Session) importParquet(ctx context.Context, store objstore.Store, f importFile, req *importReq, acc *batchAccumulator, prog *importProgress) (int64, error) {
	t := req.t
	props := parquet.NewReaderProperties(memory.DefaultAllocator)
	props.BufferedStreamEnabled, props.BufferSize = true, 1<<20
	pq, err := openImportParquet(ctx, store, t, f.path, props, 64<<10)
	if err != nil {
		return 0, err
	}
	defer pq.close()
	fr, fsch := pq.fr, pq.schema
	// The written columns, in table order, as COPY writes them: columns
	// the file lacks are left out of primary-key tables' files (their
	// values are kept), NULL in append tables.
	var fields []arrow.Field
	var src []int // index in want, or -1 for NULL
	var want []int
	for _, tf := range t.Schema.Fields() {
		idx := fsch.FieldIndices(tf.Name)
		if len(idx) == 0 {
			if slices.Contains(t.PKCols, tf.Name) {
				return 0, sqlerr.New(sqlerr.NotNullViolation, "%s has no column %q of the primary key of %s", f.path, tf.Name, t.QualifiedName())
			}
			if t.HasPK() && !slices.Contains(t.RangeCols, tf.Name) {
				continue
			}
			src = append(src, -1)
		} else {
			ft := fsch.Field(idx[0]).Type
			if !arrow.TypeEqual(ft, tf.Type) && !reader.CanWiden(ft, tf.Type) {
				return 0, sqlerr.New(sqlerr.DatatypeMismatch, "column %q is %s in %s, %s in table %s", tf.Name, ft, f.path, tf.Type, t.QualifiedName())
			}
			src = append(src, len(want))
			want = append(want, idx[0])
		}
		fields = append(fields, arrow.Field{Name: tf.Name, Type: tf.Type, Nullable: tf.Nullable, Metadata: tf.Metadata})
	}
	recSchema := arrow.NewSchema(fields, nil)
	rr, err := fr.GetRecordReader(ctx, want, nil)
	if err != nil {
		return 0, sqlerr.Wrap(sqlerr.DataCorrupted, err, fmt.Sprintf("could not read %s", f.path))
	}
	defer rr.Release()
	var n int64
	for rr.Next() {
		b := rr.RecordBatch()
		cols := make([]arrow.Array, len(fields))
		for i, si := range src {
			if si < 0 {
				cols[i] = array.MakeArrayOfNull(memory.DefaultAllocator, fields[i].Type, int(b.NumRows()))
				continue
			}
			col := b.Column(si)
			if !arrow.TypeEqual(col.DataType(), fields[i].Type) {
				w, err := reader.Widen(memory.DefaultAllocator, col, fields[i].Type)
				if err != nil {
					releaseAll(cols)
					return 0, sqlerr.Wrap(sqlerr.DatatypeMismatch, err, fmt.Sprintf("column %q of %s", fields[i].Name, f.path))
				}
				cols[i] = w
			} else {
				col.Retain()
				cols[i] = col
			}
		}
		rec := array.NewRecordBatch(recSchema, cols, b.NumRows())
		releaseAll(cols)
		n += b.NumRows()
		if err := acc.add(ctx, rec); err != nil {
			return 0, err
		}
		prog.fileRows.Store(n)
		prog.tick(ctx)
	}
	if err := rr.Err(); err != nil && err != io.EOF {
		return 0, sqlerr.Wrap(sqlerr.DataCorrupted, err, fmt.Sprintf("could not read %s", f.path))
	}
	prog.fileBytes.Store(pq.obj.Size())
	return n, nil
}

func releaseAll(arrs []arrow.Array) {
	for _, a := range arrs {
		if a != nil {
			a.Release()
		}
	}
}

// batchAccumulator gathers the small batches a Parquet reader yields into
// batches of COPY's size (ingestBatchRows / ingestBatchBytes) for the sink,
// so an import makes files as large as a COPY's; it holds at most one
// batch's worth, then concatenates it (for a moment, twice that).
type batchAccumulator struct {
	sink        *tableSink
	recs        []arrow.RecordBatch
	rows, bytes int64
}

func (a *batchAccumulator) add(ctx context.Context, rec arrow.RecordBatch) error {
	if len(a.recs) > 0 && !a.recs[0].Schema().Equal(rec.Schema()) {
		if err := a.flush(ctx); err != nil {
			rec.Release()
			return err
		}
	}
	a.recs = append(a.recs, rec)
	a.rows += rec.NumRows()
	for _, c := range rec.Columns() {
		for _, b := range c.Data().Buffers() {
			if b != nil {
				a.bytes += int64(b.Len())
			}
		}
	}
	if a.rows >= ingestBatchRows || a.bytes >= ingestBatchBytes {
		return a.flush(ctx)
	}
	return nil
}

// flush hands what was gathered to the sink as one batch.
func (a *batchAccumulator) flush(ctx context.Context) error {
	if len(a.recs) == 0 {
		return nil
	}
	recs := a.recs
	a.recs, a.rows, a.bytes = nil, 0, 0
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	if len(recs) == 1 {
		recs[0].Retain()
		return a.sink.write(ctx, recs[0])
	}
	sch := recs[0].Schema()
	cols := make([]arrow.Array, sch.NumFields())
	var rows int64
	for _, r := range recs {
		rows += r.NumRows()
	}
	for i := range cols {
		parts := make([]arrow.Array, len(recs))
		for j, r := range recs {
			parts[j] = r.Column(i)
		}
		c, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			releaseAll(cols)
			return err
		}
		cols[i] = c
	}
	rec := array.NewRecordBatch(sch, cols, rows)
	releaseAll(cols)
	return a.sink.write(ctx, rec)
}

func (a *batchAccumulator) release() {
	for _, r := range a.recs {
		r.Release()
	}
	a.recs = nil
}

// registerFiles commits Parquet files in place (register => true).
func (s *Session) registerFiles(ctx context.Context, req *importReq, store objstore.Store, files []importFile, prog *importProgress) ([][]any, error) {
	t := req.t
	switch {
	case req.format != "parquet":
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "register => true registers Parquet files")
	case t.HasPK():
		return nil, sqlerr.New(sqlerr.InvalidParameterValue,
			"register => true is for tables without a primary key: a primary-key table's files must be bucketed and sorted by the key (import without register rewrites them)")
	case len(t.RangeCols) > 0:
		return nil, sqlerr.Unsupported("register => true into a partitioned table", "import without register, which writes each row into its partition")
	}
	ops := make([]catalog.FileOp, 0, len(files))
	out := make([][]any, 0, len(files))
	for _, f := range files {
		prog.startFile(f.path)
		if err := layout.CheckWithin(t.Path, f.path); err != nil {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue,
				"register => true registers files in place, and %s is not inside the table's directory %s (import without register copies it in)", f.path, t.Path)
		}
		op, rows, err := registeredFile(ctx, store, t, f.path)
		if err != nil {
			return nil, importFileError(ctx, err, f.path)
		}
		ops = append(ops, op)
		prog.fileRows.Store(rows)
		prog.fileBytes.Store(op.Size)
		out = append(out, []any{f.path, rows, prog.fileDone(ctx, rows)})
	}
	parts := []catalog.PartitionCommit{{Desc: layout.NonPartitioned, CommitID: uuid.New(), Ops: ops}}
	// No write intent: the files were not written under one (their names
	// are the user's), and an intent protects only the files named after
	// it. Not commitWrite either: a failed commit must not delete the
	// user's files.
	if _, err := s.cat.Commit(ctx, nil, t.ID, catalog.AppendCommit, parts); err != nil {
		return nil, err
	}
	metrics.Imported(prog.rows.Load())
	prog.notice(ctx, "registered")
	return out, nil
}

// registeredFile checks that a file's columns are the table's, with the
// same types, and returns its file operation and row count.
func registeredFile(ctx context.Context, store objstore.Store, t *catalog.Table, path string) (catalog.FileOp, int64, error) {
	pq, err := openImportParquet(ctx, store, t, path, nil, 0)
	if err != nil {
		return catalog.FileOp{}, 0, err
	}
	defer pq.close()
	var cols []string
	for _, ff := range pq.schema.Fields() {
		idx := t.Schema.FieldIndices(ff.Name)
		if tt := t.Schema.Field(idx[0]).Type; !arrow.TypeEqual(ff.Type, tt) {
			return catalog.FileOp{}, 0, sqlerr.New(sqlerr.DatatypeMismatch,
				"column %q is %s in %s, %s in table %s: a registered file must have the table's types (import without register converts)", ff.Name, ff.Type, path, tt, t.QualifiedName())
		}
		cols = append(cols, ff.Name)
	}
	return catalog.FileOp{Path: path, Op: "add", Size: pq.obj.Size(), ExistCols: cols}, pq.pf.NumRows(), nil
}

// importParquetFile is a Parquet file of an import, open for reading.
type importParquetFile struct {
	obj    objstore.Reader
	pf     *file.Reader
	fr     *pqarrow.FileReader
	schema *arrow.Schema
}

// openImportParquet opens path as a Parquet file (props nil: the defaults;
// batchRows 0: pqarrow's default) and checks that every column it holds is
// a column of t (42703); a file that is not Parquet is XX001.
func openImportParquet(ctx context.Context, store objstore.Store, t *catalog.Table, path string, props *parquet.ReaderProperties, batchRows int64) (*importParquetFile, error) {
	obj, err := store.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	var opts []file.ReadOption
	if props != nil {
		opts = append(opts, file.WithReadProps(props))
	}
	pf, err := file.NewParquetReader(obj, opts...)
	if err != nil {
		obj.Close()
		return nil, sqlerr.Wrap(sqlerr.DataCorrupted, err, fmt.Sprintf("could not read %s as a Parquet file", path))
	}
	pq := &importParquetFile{obj: obj, pf: pf}
	pq.fr, err = pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: batchRows}, memory.DefaultAllocator)
	if err != nil {
		pq.close()
		return nil, sqlerr.Wrap(sqlerr.DataCorrupted, err, fmt.Sprintf("could not read %s as a Parquet file", path))
	}
	if pq.schema, err = pq.fr.Schema(); err != nil {
		pq.close()
		return nil, sqlerr.Wrap(sqlerr.DataCorrupted, err, fmt.Sprintf("could not read the schema of %s", path))
	}
	for _, ff := range pq.schema.Fields() {
		if t.Schema.FieldIndices(ff.Name) == nil {
			pq.close()
			return nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q of %s does not exist in table %s", ff.Name, path, t.QualifiedName())
		}
	}
	return pq, nil
}

// close closes the file; it was only read, so there is nothing to lose.
func (pq *importParquetFile) close() {
	pq.pf.Close()
	pq.obj.Close()
}
