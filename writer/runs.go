package writer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/arrowutil"
	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/layout"
	"github.com/lakesoul-go/lakesoul/objstore"
)

// Spill-sort. An ingest larger than its memory budget reaches the writer as
// several batches, and each Write leaves one sorted run — a file — per
// (partition, bucket). MergeRuns then merges each bucket's runs into one:
// a k-way merge by primary key in which equal keys keep run order, then row
// order, so the result is exactly the file one Write of all the rows would
// have written (every row kept, the last-arrived of a key last), and
// readers merge one file per ingest instead of one per batch.
//
// Memory is bounded by the number of runs times a small read batch and
// buffer, plus one output row group: never by the ingest's size.

// Read sizes of a run in a merge: a merge holds a batch and a buffer per
// column of every run at once.
const (
	mergeBatchRows   = 2048
	mergeBufferBytes = 64 << 10
)

// MergeRuns rewrites parts — the files of several Writes of one ingest,
// each partition's files in write order — so that every bucket of a
// partition holds one sorted run (split into key-ordered files at the size
// cap, as Write splits). Buckets written once are left as they are unless
// that file is a run (Writer.Runs), and so are runs of different columns
// (a partial write and a full one; Runs must then be off). On
// success the merged runs' files are deleted and the returned commits name
// the new files in their place; on error the files MergeRuns wrote are
// deleted and parts' files are left to the caller. Tables without a
// primary key have no runs: their parts come back unchanged.
func (w *Writer) MergeRuns(ctx context.Context, parts []catalog.PartitionCommit) ([]catalog.PartitionCommit, error) {
	t := w.Table
	if !t.HasPK() {
		return parts, nil
	}
	type job struct {
		part, bucket int
		runs         []catalog.FileOp
		merged       []catalog.FileOp
		err          error
	}
	var jobs []*job
	for pi, p := range parts {
		byBucket := map[int]*job{}
		for _, op := range p.Ops {
			b, ok := layout.BucketOfFile(op.Path)
			if op.Op != "add" || !ok {
				continue
			}
			j := byBucket[b]
			if j == nil {
				j = &job{part: pi, bucket: b}
				byBucket[b] = j
				jobs = append(jobs, j)
			}
			j.runs = append(j.runs, op)
		}
	}
	for _, j := range jobs {
		mixed := slices.ContainsFunc(j.runs, func(op catalog.FileOp) bool { return !slices.Equal(op.ExistCols, j.runs[0].ExistCols) })
		if mixed && slices.ContainsFunc(j.runs, func(op catalog.FileOp) bool { return w.runs[op.Path] }) {
			return nil, fmt.Errorf("writer: runs of bucket %d of partition %s have different columns", j.bucket, parts[j.part].Desc)
		}
	}
	jobs = slices.DeleteFunc(jobs, func(j *job) bool {
		if len(j.runs) == 1 {
			return !w.runs[j.runs[0].Path] // a data file already
		}
		return slices.ContainsFunc(j.runs, func(op catalog.FileOp) bool {
			return !slices.Equal(op.ExistCols, j.runs[0].ExistCols)
		})
	})
	if len(jobs) == 0 {
		return parts, nil
	}
	var g safego.Group
	next := make(chan *job)
	for range min(len(jobs), runtime.GOMAXPROCS(0)) {
		g.Start(func() {
			for j := range next {
				// A panic fails the job like an error: its files and the
				// others' are deleted below.
				j.err = safego.Call(func() (err error) {
					j.merged, err = w.mergeBucket(ctx, parts[j.part].Desc, j.bucket, j.runs)
					return err
				})
			}
		})
	}
	for _, j := range jobs {
		next <- j
	}
	close(next)
	g.Wait()
	var err error
	for _, j := range jobs {
		err = errors.Join(err, j.err)
	}
	cleanup := context.WithoutCancel(ctx)
	if err != nil {
		for _, j := range jobs {
			for _, op := range j.merged {
				_ = w.Store.Delete(cleanup, op.Path)
			}
		}
		return nil, err
	}
	replaced := map[string][]catalog.FileOp{} // first run's path → merged files
	gone := map[string]bool{}
	for _, j := range jobs {
		replaced[j.runs[0].Path] = j.merged
		for _, op := range j.runs {
			gone[op.Path] = true
		}
	}
	out := make([]catalog.PartitionCommit, len(parts))
	for pi, p := range parts {
		out[pi] = p
		out[pi].Ops = nil
		for _, op := range p.Ops {
			switch {
			case replaced[op.Path] != nil:
				out[pi].Ops = append(out[pi].Ops, replaced[op.Path]...)
			case !gone[op.Path]:
				out[pi].Ops = append(out[pi].Ops, op)
			}
		}
	}
	for path := range gone {
		_ = w.Store.Delete(cleanup, path)
	}
	w.runs = nil
	return out, nil
}

// runStream reads one run of a merge batch by batch.
type runStream struct {
	order  int // position among the runs: later runs' keys come after
	path   string
	obj    objstore.Reader
	rr     batchReader
	schema *arrow.Schema
	rows   int64 // the run's rows and uncompressed bytes
	bytes  int64
	b      arrow.RecordBatch // current batch (retained); nil at the end
	bi     int32             // its index in runMerge.batches
	keys   []arrow.Array     // its key columns
	row    int               // its current row
	// prefix is the current row's key as a number ordered like the keys
	// (runMerge.prefixed).
	prefix uint64
}

// batchReader is what a run is read with: a Parquet file's record reader
// or a run file's IPC stream reader.
type batchReader interface {
	Next() bool
	RecordBatch() arrow.RecordBatch
	Err() error
	Release()
}

// plainSchema is s without schema or field metadata (a Parquet reader's
// field ids, a run's row count): the runs of a merge are compared, and the
// merged file written, by names, types and nullability alone, as Write
// writes files.
func plainSchema(s *arrow.Schema) *arrow.Schema {
	fields := make([]arrow.Field, s.NumFields())
	for i, f := range s.Fields() {
		fields[i] = arrow.Field{Name: f.Name, Type: f.Type, Nullable: f.Nullable}
	}
	return arrow.NewSchema(fields, nil)
}

// openRun opens one file of a bucket's merge: a run file (runfile.go) or a
// data file.
func (w *Writer) openRun(ctx context.Context, order int, op catalog.FileOp) (*runStream, error) {
	if layout.IsRunFile(op.Path) {
		return w.openRunFile(ctx, order, op.Path)
	}
	obj, err := w.Store.Open(ctx, op.Path)
	if err != nil {
		return nil, err
	}
	props := parquet.NewReaderProperties(w.Mem)
	props.BufferedStreamEnabled = true
	props.BufferSize = mergeBufferBytes
	pf, err := file.NewParquetReader(obj, file.WithReadProps(props))
	if err != nil {
		obj.Close()
		return nil, fmt.Errorf("read run %s: %w", op.Path, err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: mergeBatchRows}, w.Mem)
	if err != nil {
		obj.Close()
		return nil, fmt.Errorf("read run %s: %w", op.Path, err)
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		obj.Close()
		return nil, fmt.Errorf("read run %s: %w", op.Path, err)
	}
	s := &runStream{order: order, path: op.Path, obj: obj, rr: rr, schema: plainSchema(rr.Schema()), rows: pf.NumRows()}
	for i := range pf.NumRowGroups() {
		s.bytes += pf.MetaData().RowGroup(i).TotalByteSize()
	}
	return s, nil
}

// advance moves to the next non-empty batch (b nil at the end). The
// previous batch is the caller's to release.
func (s *runStream) advance(keyCols []int) error {
	s.b, s.keys, s.row = nil, s.keys[:0], 0
	for s.rr.Next() {
		if b := s.rr.RecordBatch(); b.NumRows() > 0 {
			b.Retain()
			s.b = b
			for _, c := range keyCols {
				s.keys = append(s.keys, b.Column(c))
			}
			return nil
		}
	}
	if err := s.rr.Err(); err != nil {
		return fmt.Errorf("read run %s: %w", s.path, err)
	}
	return nil
}

func (s *runStream) close() {
	if s.b != nil {
		s.b.Release()
		s.b = nil
	}
	s.rr.Release()
	s.obj.Close()
}

// mergeBucket merges the runs of one bucket of partition desc into new
// files of the same bucket, returned in key order.
func (w *Writer) mergeBucket(ctx context.Context, desc string, bucket int, runs []catalog.FileOp) (written []catalog.FileOp, err error) {
	dir, err := partitionPath(w.Table.Path, desc)
	if err != nil {
		return nil, err
	}
	m := &runMerge{w: w, ctx: ctx, dir: dir, bucket: bucket}
	defer m.release()
	defer func() {
		if err != nil {
			for _, op := range m.written {
				_ = w.Store.Delete(context.WithoutCancel(ctx), op.Path)
			}
		}
	}()
	for i, op := range runs {
		s, err := w.openRun(ctx, i, op)
		if err != nil {
			return nil, err
		}
		m.streams = append(m.streams, s)
		if sch := s.schema; m.schema == nil {
			m.schema = sch
		} else if !m.schema.Equal(sch) {
			return nil, fmt.Errorf("merge runs: %s has schema %s, %s has %s", runs[0].Path, m.schema, op.Path, sch)
		}
		m.left += s.rows
		m.bytes += s.bytes
	}
	m.names = runs[0].ExistCols
	if err := m.run(); err != nil {
		return nil, err
	}
	return m.written, nil
}

// runMerge is the merge of one bucket's runs.
type runMerge struct {
	w       *Writer
	ctx     context.Context
	dir     string
	bucket  int
	schema  *arrow.Schema
	names   []string
	streams []*runStream
	heap    []*runStream
	keyCols []int
	cmp     arrowutil.RowComparer
	// prefixed: a single text or integer key, compared by the streams'
	// prefixes first (stringPrefix, orderedInt) — one integer comparison
	// for most heap steps; exact: the prefix is the key (integers).
	prefixed, exact bool
	// left is the number of rows not yet written; bytes the runs'
	// uncompressed size (for the file size cap).
	left, bytes int64
	// pending are the rows of the next row group, in order, as picks of
	// batches: every batch a pending row is in — the streams' current
	// batches and held, those their streams have moved past — with its
	// index in batches (runStream.bi).
	pending []arrowutil.Pick
	batches []arrow.RecordBatch
	held    []arrow.RecordBatch
	cols    []arrow.Array
	// out is the file being written (nil between files), with its rows.
	out     *dataFile
	ow      objstore.Writer
	cw      *countingWriter
	path    string
	outRows int
	written []catalog.FileOp
}

// track gives s's new current batch (if any) its index in m.batches, and
// its first row's prefix.
func (m *runMerge) track(s *runStream) {
	if s.b != nil {
		s.bi = int32(len(m.batches))
		m.batches = append(m.batches, s.b)
		if m.prefixed && s.keys[0].NullN() > 0 {
			m.prefixed = false // keys are never NULL; if one is, compare whole keys
		}
		m.setPrefix(s)
	}
}

// setPrefix sets s.prefix from its current row.
func (m *runMerge) setPrefix(s *runStream) {
	if !m.prefixed {
		return
	}
	switch a := s.keys[0].(type) {
	case *array.String:
		s.prefix = stringPrefix(a.Value(s.row))
	case *array.Int64:
		s.prefix = orderedInt(a.Value(s.row))
	case *array.Int32:
		s.prefix = orderedInt(int64(a.Value(s.row)))
	}
}

func (m *runMerge) run() error {
	for _, c := range m.w.Table.PKCols {
		if idx := m.schema.FieldIndices(c); len(idx) > 0 {
			m.keyCols = append(m.keyCols, idx[0])
		}
	}
	types := make([]arrow.DataType, len(m.keyCols))
	for i, c := range m.keyCols {
		types[i] = m.schema.Field(c).Type
	}
	var err error
	if m.cmp, err = arrowutil.NewRowComparer(types); err != nil {
		return err
	}
	if len(types) == 1 {
		switch types[0].ID() {
		case arrow.STRING:
			m.prefixed = true
		case arrow.INT64, arrow.INT32:
			m.prefixed, m.exact = true, true
		}
	}
	for _, s := range m.streams {
		if err := s.advance(m.keyCols); err != nil {
			return err
		}
		if s.b != nil {
			m.track(s)
			m.heap = append(m.heap, s)
		}
	}
	for i := len(m.heap)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	rowGroup := m.w.RowGroupRows
	if rowGroup <= 0 {
		rowGroup = RowGroupRows
	}
	maxRows := m.maxFileRows()
	for len(m.heap) > 0 {
		s := m.heap[0]
		m.pending = append(m.pending, arrowutil.Pick{Arr: s.bi, Row: int32(s.row)})
		if s.row++; s.row < int(s.b.NumRows()) {
			m.setPrefix(s)
		} else {
			if err := m.ctx.Err(); err != nil {
				return err
			}
			m.held = append(m.held, s.b)
			if err := s.advance(m.keyCols); err != nil {
				return err
			}
			m.track(s)
			if s.b == nil {
				last := len(m.heap) - 1
				m.heap[0] = m.heap[last]
				m.heap = m.heap[:last]
			}
		}
		if len(m.heap) > 0 {
			m.down(0)
		}
		if len(m.pending) == rowGroup || m.outRows+len(m.pending) == maxRows {
			if err := m.flush(maxRows); err != nil {
				return err
			}
		}
	}
	if err := m.flush(maxRows); err != nil {
		return err
	}
	return m.closeFile()
}

// maxFileRows converts the file size cap into rows, as Writer.maxFileRows
// does, from the runs' average row size.
func (m *runMerge) maxFileRows() int {
	limit := int64(DefaultMaxFileBytes)
	if v, err := strconv.ParseInt(m.w.Table.Properties["max_file_size"], 10, 64); err == nil && v > 0 {
		limit = v
	}
	if m.left == 0 || m.bytes == 0 {
		return math.MaxInt
	}
	return int(max(1, limit/max(1, m.bytes/m.left)))
}

// less orders streams by their current key, equal keys by run order.
func (m *runMerge) less(a, b *runStream) bool {
	if m.prefixed {
		if a.prefix != b.prefix {
			return a.prefix < b.prefix
		}
		if m.exact {
			return a.order < b.order
		}
	}
	if c := m.cmp.Compare(a.keys, a.row, b.keys, b.row); c != 0 {
		return c < 0
	}
	return a.order < b.order
}

func (m *runMerge) down(i int) {
	h := m.heap
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		j := l
		if r := l + 1; r < len(h) && m.less(h[r], h[l]) {
			j = r
		}
		if !m.less(h[j], h[i]) {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

// flush writes the pending rows as a row group, in a new file when none is
// open, and closes the file when it reached maxRows.
func (m *runMerge) flush(maxRows int) error {
	if len(m.pending) == 0 {
		return nil
	}
	if m.out == nil {
		m.path = objstore.Join(m.dir, m.w.Intent.FileName(m.bucket))
		ow, err := m.w.Store.Create(m.ctx, m.path)
		if err != nil {
			return err
		}
		m.ow, m.cw = ow, &countingWriter{w: ow}
		ff := newFileFormat(m.schema, m.w.Table.PKCols, bloomColumns(m.w.Table), int(min(m.left, int64(maxRows))), m.w.RowGroupRows, m.w.PageBytes)
		if m.out, err = newDataFile(m.cw, m.schema, m.w.Mem, ff); err != nil {
			return errors.Join(err, ow.Abort())
		}
	}
	err := m.out.writeRowGroup(func(i int) (arrow.Array, error) {
		m.cols = m.cols[:0]
		for _, b := range m.batches {
			m.cols = append(m.cols, b.Column(i))
		}
		return arrowutil.GatherPicks(m.w.Mem, m.schema.Field(i).Type, m.cols, m.pending)
	})
	if err != nil {
		return fmt.Errorf("write %s: %w", m.path, err)
	}
	m.outRows += len(m.pending)
	m.left -= int64(len(m.pending))
	m.pending = m.pending[:0]
	for _, b := range m.held {
		b.Release()
	}
	m.held = m.held[:0]
	// Only the streams' current batches remain to be picked from.
	m.batches = m.batches[:0]
	for _, s := range m.heap {
		m.track(s)
	}
	if m.outRows == maxRows {
		return m.closeFile()
	}
	return nil
}

// closeFile finishes the open file (if any) and records it.
func (m *runMerge) closeFile() error {
	if m.out == nil {
		return nil
	}
	df, ow := m.out, m.ow
	m.out, m.ow, m.outRows = nil, nil, 0
	if err := df.close(); err != nil {
		return errors.Join(fmt.Errorf("write %s: %w", m.path, err), ow.Abort())
	}
	if err := ow.Close(); err != nil {
		return fmt.Errorf("write %s: %w", m.path, err)
	}
	m.written = append(m.written, catalog.FileOp{Path: m.path, Op: "add", Size: m.cw.n, ExistCols: m.names})
	return nil
}

// release frees what the merge holds; a file still open was not finished
// (an error): it is aborted.
func (m *runMerge) release() {
	if m.out != nil {
		_ = m.out.abort()
		_ = m.ow.Abort()
		m.out, m.ow = nil, nil
	}
	for _, b := range m.held {
		b.Release()
	}
	m.held, m.pending, m.batches = nil, nil, nil
	for _, s := range m.streams {
		s.close()
	}
	m.streams = nil
}
