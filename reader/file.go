package reader

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/layout"
	"github.com/lakesoul-go/lakesoul/metrics"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// CheckFiles refuses (42501) a snapshot with a data file outside t's
// directory. Every file the reader opens passes the same check; the engine
// calls CheckFiles before DuckDB runs a scan, since errors of DuckDB's table
// functions lose their SQLSTATE on the way back.
func CheckFiles(t *catalog.Table, parts []catalog.PartitionFiles) error {
	for _, p := range parts {
		for _, f := range p.Files {
			if err := checkInTable(t, f.Path); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkInTable refuses a data file outside its table's directory
// (layout.Within over the canonical path). The file list comes from the
// catalog, whose rows users of a workspace can write for their own tables:
// a data_commit_info row naming another table's file (or any file of the
// server) must not be read. 42501, as for a table outside its directory
// (engine/paths.go says why).
func checkInTable(t *catalog.Table, path string) error {
	if err := layout.CheckWithin(t.Path, path); err != nil {
		return sqlerr.Wrap(sqlerr.InsufficientPrivilege, err,
			fmt.Sprintf("data file of table %s is outside the table's directory", t.QualifiedName()))
	}
	return nil
}

// fileStream reads one data file batch by batch.
type fileStream struct {
	// order is the file's position in its unit: higher = newer.
	order int
	path  string
	obj   objstore.Reader
	rr    pqarrow.RecordReader
	// colMap maps table column index → column index in the file's batches, or -1
	// when the file does not contain the column (partial upsert, schema evolution).
	colMap []int
	// widenTo holds, per batch column, the table type its values are widened
	// to (nil when the file already has the table's type).
	widenTo []arrow.DataType
	mem     memory.Allocator
	// whole is the file's bytes when it was read whole (then obj is nil),
	// allocated from mem: column chunks are copied out of it, and it is
	// freed once the last row group's chunks are (at open for a file of one
	// row group), else when the stream closes.
	whole []byte
	// complete is set by a merge when the file has every column it needs.
	complete bool
}

func openFileStream(ctx context.Context, store objstore.Store, f catalog.DataFile, order int, scan *Scan, mem memory.Allocator,
	batchRows, bufSize int) (*fileStream, error) {
	t := scan.Table
	if err := checkInTable(t, f.Path); err != nil {
		return nil, err
	}
	obj, err := store.Open(ctx, f.Path)
	if err != nil {
		return nil, err
	}
	fs := &fileStream{order: order, path: f.Path, mem: mem}
	props := parquet.NewReaderProperties(mem)
	var src parquet.ReaderAtSeeker
	needed := 0
	for i := range t.Schema.NumFields() {
		if scan.needs(i) {
			needed++
		}
	}
	if size := obj.Size(); size <= int64(bufSize)*int64(needed) {
		// A file no larger than the buffers its column readers would hold
		// is read whole, in one request: a merge of many small upsert files
		// then costs one read per file instead of several per column (and
		// one GET on object stores). Column chunks are cut from it whole.
		fs.whole = mem.Allocate(int(size))
		n, err := obj.ReadAt(fs.whole, 0)
		obj.Close()
		if n == len(fs.whole) {
			err = nil // io.EOF may come with the last byte
		} else if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			fs.close()
			return nil, fmt.Errorf("read %s: %w", f.Path, err)
		}
		src = bytes.NewReader(fs.whole)
	} else {
		// Stream column chunks page by page instead of loading whole
		// chunks: a bucket may merge hundreds of files at once, and whole
		// row-group chunks of each would hold gigabytes.
		fs.obj, src = obj, obj
		props.BufferedStreamEnabled = true
		props.BufferSize = int64(bufSize)
	}
	pf, err := file.NewParquetReader(src, file.WithReadProps(props))
	if err != nil {
		fs.close()
		return nil, fmt.Errorf("read %s: %w", f.Path, err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: int64(batchRows), PreAllocBinaryData: true}, mem)
	if err != nil {
		fs.close()
		return nil, fmt.Errorf("read %s: %w", f.Path, err)
	}
	fsch, err := fr.Schema()
	if err != nil {
		fs.close()
		return nil, fmt.Errorf("read %s schema: %w", f.Path, err)
	}
	// Read only the file columns the table still has, in table order.
	colMap := make([]int, t.Schema.NumFields())
	var want []int
	var widenTo []arrow.DataType
	needWiden := false
	for i, tf := range t.Schema.Fields() {
		colMap[i] = -1
		idx := fsch.FieldIndices(tf.Name)
		if len(idx) == 0 || !scan.needs(i) {
			continue
		}
		var to arrow.DataType
		if ft := fsch.Field(idx[0]).Type; !arrow.TypeEqual(ft, tf.Type) {
			if !CanWiden(ft, tf.Type) {
				fs.close()
				return nil, fmt.Errorf("read %s: column %s has type %s in the file, %s in the table", f.Path, tf.Name, ft, tf.Type)
			}
			to, needWiden = tf.Type, true
		}
		colMap[i] = len(want)
		want = append(want, idx[0])
		widenTo = append(widenTo, to)
	}
	if !needWiden {
		widenTo = nil
	}
	if len(want) == 0 && fsch.NumFields() > 0 {
		// Nothing needed: read the smallest thing there is to learn row counts.
		want, widenTo = []int{0}, nil
	}
	rr, err := fr.GetRecordReader(ctx, want, nil)
	if err != nil {
		fs.close()
		return nil, fmt.Errorf("read %s: %w", f.Path, err)
	}
	if fs.whole != nil && pf.NumRowGroups() <= 1 {
		// The column readers copied their chunks out of the file bytes when
		// they were created; with no further row group to read, the bytes
		// are no longer needed.
		mem.Free(fs.whole)
		fs.whole = nil
	}
	fs.rr, fs.colMap, fs.widenTo = rr, colMap, widenTo
	return fs, nil
}

// nextBatch returns the next non-empty batch (retained: the caller releases
// it) or io.EOF.
func (s *fileStream) nextBatch(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !s.rr.Next() {
			if err := s.rr.Err(); err != nil && err != io.EOF {
				return nil, fmt.Errorf("read %s: %w", s.path, err)
			}
			return nil, io.EOF
		}
		b := s.rr.RecordBatch()
		if b.NumRows() == 0 {
			continue
		}
		metrics.RowsRead(b.NumRows())
		if s.widenTo != nil {
			return s.widenBatch(b)
		}
		b.Retain()
		return b, nil
	}
}

func (s *fileStream) close() {
	if s.rr != nil {
		s.rr.Release()
		s.rr = nil
	}
	if s.obj != nil {
		s.obj.Close()
		s.obj = nil
	}
	if s.whole != nil {
		s.mem.Free(s.whole)
		s.whole = nil
	}
}

// widenBatch returns a new batch with the columns of older, narrower types
// widened to the table's types.
func (s *fileStream) widenBatch(b arrow.RecordBatch) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, b.NumCols())
	fields := make([]arrow.Field, b.NumCols())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i := range cols {
		f := b.Schema().Field(i)
		if to := s.widenTo[i]; to != nil {
			w, err := widen(s.mem, b.Column(i), to)
			if err != nil {
				return nil, fmt.Errorf("read %s: column %s: %w", s.path, f.Name, err)
			}
			cols[i], f.Type = w, to
		} else {
			cols[i] = b.Column(i)
			cols[i].Retain()
		}
		fields[i] = f
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, b.NumRows()), nil
}
