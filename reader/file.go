package reader

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"

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
	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Parquet's zstd pages go through libzstd (see the package doc).
import _ "github.com/lakesoul-go/lakesoul/internal/zstdcodec"

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
	rr    batchReader
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
	// stats counts the rows read (nil: not counted).
	stats *ScanStats
}

// batchReader is what a fileStream reads batches from: a whole file's or
// row groups' record reader, or a rangeReader over selected rows.
type batchReader interface {
	Next() bool
	RecordBatch() arrow.RecordBatch
	Err() error
	Release()
}

// fileOpen is one data file of a unit, opened on first use: a filtered
// scan may decide from cached metadata that it need not be opened at all.
type fileOpen struct {
	ctx   context.Context
	store objstore.Store
	f     catalog.DataFile
	obj   objstore.Reader
}

// open returns the file's reader, opening it the first time.
func (o *fileOpen) open() (objstore.Reader, error) {
	if o.obj == nil {
		obj, err := o.store.Open(o.ctx, o.f.Path)
		if err != nil {
			return nil, err
		}
		o.obj = obj
	}
	return o.obj, nil
}

// source is open as the index readers want it.
func (o *fileOpen) source() (parquet.ReaderAtSeeker, error) { return o.open() }

// close closes the file if it was opened and not handed to a stream.
func (o *fileOpen) close() {
	if o.obj != nil {
		o.obj.Close()
		o.obj = nil
	}
}

// size is the file's size: the catalog's, else the object's.
func (o *fileOpen) size() (int64, error) {
	if o.f.Size > 0 {
		return o.f.Size, nil
	}
	obj, err := o.open()
	if err != nil {
		return 0, err
	}
	return obj.Size(), nil
}

// rowGroupCount reads the number of row groups of a data file of the table
// from its footer (the scan compiled).
func (s *Scan) rowGroupCount(ctx context.Context, f catalog.DataFile) (int, error) {
	if err := checkInTable(s.Table, f.Path); err != nil {
		return 0, err
	}
	fo := &fileOpen{ctx: ctx, store: s.Store, f: f}
	defer fo.close()
	fm, err := s.footer(fo)
	if err != nil {
		return 0, err
	}
	return fm.md.NumRowGroups(), nil
}

// footerError is the error of a footer that does not parse: the storage's
// own error when reading failed; 0A000 naming the file and its format for a
// data file that is no Parquet file (LakeSoul's engines may also write
// Vortex files, file_format = 'vortex' or 'vortex-compact'); else 58030 for
// a damaged file. r reads the file (size bytes), to tell which it is.
func footerError(path string, r io.ReaderAt, size int64, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if format := otherFileFormat(r, size); format != "" {
		return &sqlerr.Error{Code: sqlerr.FeatureNotSupported,
			Message: fmt.Sprintf("could not read file %q: it is a %s file, not Parquet", path, format),
			Hint:    "This server reads Parquet data files only: write the table with file_format = 'parquet' (LakeSoul's Python package: write_arrow(..., format=\"parquet\")).",
			Err:     err}
	}
	return errCorrupt(path, "the Parquet footer", err)
}

// otherFileFormat names the format of a data file that is no Parquet file by
// its magic bytes: "Vortex" (VTXF at both ends), "an unknown format" when
// neither end has Parquet's PAR1; "" for a Parquet file (or one that cannot
// be read), whose footer is then damaged.
func otherFileFormat(r io.ReaderAt, size int64) string {
	if r == nil || size < 8 {
		return ""
	}
	head, tail := make([]byte, 4), make([]byte, 4)
	if _, err := r.ReadAt(head, 0); err != nil {
		return ""
	}
	if n, err := r.ReadAt(tail, size-4); n != 4 || (err != nil && err != io.EOF) {
		return ""
	}
	switch {
	case string(head) == "VTXF" || string(tail) == "VTXF":
		return "Vortex"
	case string(head) != "PAR1" && string(tail) != "PAR1":
		return "non-Parquet"
	}
	return ""
}

// fileMeta returns what is known of the file: from the scan's metadata
// cache, else parsed from its footer (and cached). nil when the scan has
// neither a cache nor a filter and the table no primary key (the stream
// parses the footer itself): a primary-key unit is planned from its files'
// key ranges (unitplan.go).
func (s *Scan) fileMeta(fo *fileOpen) (*fileMeta, error) {
	if s.Meta == nil && s.keys == nil && s.index == nil && (!s.Table.HasPK() || s.mergeAlways) {
		return nil, nil
	}
	return s.footer(fo)
}

// footer is fo's footer: from the scan's metadata cache, else parsed (and
// added to the cache when the scan has one).
func (s *Scan) footer(fo *fileOpen) (*fileMeta, error) {
	size, err := fo.size()
	if err != nil {
		return nil, err
	}
	k := fileKey{path: fo.f.Path, size: size}
	if fm := s.Meta.get(k); fm != nil {
		return fm, nil
	}
	obj, err := fo.open()
	if err != nil {
		return nil, err
	}
	pf, err := file.NewParquetReader(obj, file.WithReadProps(parquet.NewReaderProperties(s.Mem)))
	if err != nil {
		return nil, footerError(fo.f.Path, obj, obj.Size(), err)
	}
	return s.Meta.add(newFileMeta(k, pf.MetaData(), obj.Size())), nil
}

// openFileStream opens a stream over the file fo: the rows sel selects
// (nil: all), with the footer of fm when known, of the table columns need
// selects (Scan.needs for a merge, Scan.needsStreamed for a file read
// alone). pre, when set, is a row filter whose failing rows the stream may
// leave out as it decodes (late materialisation, plainselect.go): only for
// a file whose rows are its unit's rows as they are (an append table's, a
// streamed file's), never one that is merged, where a failing newer version
// must still hide an older one. The rows it leaves out are counted as read
// and merged, as if the filter after the merge had dropped them, and that
// filter still applies to every row the stream yields.
func openFileStream(fo *fileOpen, order int, scan *Scan, mem memory.Allocator,
	batchRows, bufSize int, fm *fileMeta, sel *fileSelection, need func(c int) bool, pre *keyMatcher) (*fileStream, error) {
	ctx, f, t := fo.ctx, fo.f, scan.Table
	ranged := sel != nil && (sel.probe || slices.ContainsFunc(sel.ranges, func(r []rowRange) bool { return r != nil }))
	if fm != nil && !ranged && scan.needsNone(need) {
		// No column is needed (count(*)) and the footer is known: the
		// row counts are all there is to read, and the file stays shut.
		fs := &fileStream{order: order, path: f.Path, mem: mem, stats: scan.Stats, colMap: make([]int, t.Schema.NumFields())}
		for i := range fs.colMap {
			fs.colMap[i] = -1
		}
		var rowGroups []int
		if sel != nil {
			rowGroups = sel.rowGroups
		}
		fs.rr = newCountReader(fm.md, rowGroups, int64(batchRows))
		return fs, nil
	}
	if ranged && scan.Chunks != nil && fm != nil {
		fs, ok, err := openCachedStream(fo, order, scan, batchRows, fm, sel, need)
		if ok || err != nil {
			return fs, err
		}
	}
	obj, err := fo.open()
	if err != nil {
		return nil, err
	}
	fo.obj = nil // the stream owns it now
	if fm != nil && obj.Size() != fm.objSize {
		obj.Close()
		return nil, errCorrupt(f.Path, fmt.Sprintf("the data file (%d bytes, %d when first read)", obj.Size(), fm.objSize), nil)
	}
	fs := &fileStream{order: order, path: f.Path, mem: mem, stats: scan.Stats}
	props := parquet.NewReaderProperties(mem)
	var src parquet.ReaderAtSeeker
	needed := 0
	for i := range t.Schema.NumFields() {
		if need(i) {
			needed++
		}
	}
	if size := obj.Size(); size <= int64(bufSize)*int64(needed) && (!ranged || size <= rangedWholeBytes) {
		// A file no larger than the buffers its column readers would hold
		// is read whole, in one request: a merge of many small upsert files
		// then costs one read per file instead of several per column (and
		// one GET on object stores). Column chunks are cut from it whole.
		// A file read for a few pages is read whole only when small.
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
		// row-group chunks of each would hold gigabytes. Selected pages
		// are read with buffers of about a page.
		fs.obj, src = obj, obj
		props.BufferedStreamEnabled = true
		props.BufferSize = int64(bufSize)
		if ranged {
			props.BufferSize = min(props.BufferSize, rangedBufferBytes)
		}
	}
	opts := []file.ReadOption{file.WithReadProps(props)}
	if fm != nil {
		opts = append(opts, file.WithMetadata(fm.md))
	}
	pf, err := file.NewParquetReader(src, opts...)
	if err != nil {
		err = footerError(f.Path, src, obj.Size(), err)
		fs.close()
		return nil, err
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
	colMap, want, widenTo, err := mapColumns(fsch, scan, f.Path, need)
	if err != nil {
		fs.close()
		return nil, err
	}
	var rowGroups []int
	if sel != nil {
		rowGroups = sel.rowGroups
	}
	seeks := ranged && seekable(pf.MetaData(), want, rowGroups)
	switch {
	case len(want) == 0 && !ranged:
		// No column is needed (count(*)): the row counts are in the footer.
		fs.rr = newCountReader(pf.MetaData(), rowGroups, int64(batchRows))
	case seeks:
		fs.rr, err = newRangeReader(ctx, fr, want, sel, int64(batchRows), mem, scan.probeFor(colMap))
	case plainReadable(pf.MetaData(), fsch, want, rowGroups):
		var pr *plainReader
		if pr, err = newPlainReader(f.Path, pf, fsch, want, rowGroups, int64(batchRows), mem); err == nil {
			fs.rr = pr
			if pre != nil {
				// Columns widened to the table's type are tested after.
				tested := slices.Clone(colMap)
				for c, b := range tested {
					if b >= 0 && widenTo != nil && widenTo[b] != nil {
						tested[c] = -1
					}
				}
				pr.prefilter(pre.preds, tested)
			}
		}
	default:
		fs.rr, err = fr.GetRecordReader(ctx, want, rowGroups)
	}
	if err != nil {
		fs.close()
		return nil, fmt.Errorf("read %s: %w", f.Path, err)
	}
	if fs.whole != nil && !seeks && (pf.NumRowGroups() <= 1 || len(rowGroups) == 1) {
		// The column readers copied their chunks out of the file bytes when
		// they were created; with no further row group to read (and no
		// seek to come back for a page), the bytes are no longer needed.
		mem.Free(fs.whole)
		fs.whole = nil
	}
	fs.colMap, fs.widenTo = colMap, widenTo
	return fs, nil
}

// mapColumns maps the table's columns to the columns of a file of schema
// fsch (a column renamed since the file was written by its former name): colMap (table column → batch column, -1 when the file lacks it or
// need does not select it), the file columns to read (want, in table
// order) and the table types to widen them to (nil entries: the file has
// the table's type; nil: none widens).
func mapColumns(fsch *arrow.Schema, scan *Scan, path string, need func(c int) bool) (colMap, want []int, widenTo []arrow.DataType, err error) {
	t := scan.Table
	colMap = make([]int, t.Schema.NumFields())
	needWiden := false
	for i, tf := range t.Schema.Fields() {
		colMap[i] = -1
		fc := schema.FileColumn(fsch, tf) // by its name or a former one
		if fc < 0 || !need(i) {
			continue
		}
		var to arrow.DataType
		if ft := fsch.Field(fc).Type; !arrow.TypeEqual(ft, tf.Type) {
			if !CanWiden(ft, tf.Type) {
				// Only a file of an older snapshot can hold a column that
				// was dropped and added again with another type (the
				// current files were rewritten without it).
				return nil, nil, nil, &sqlerr.Error{Code: sqlerr.FeatureNotSupported,
					Message: fmt.Sprintf("could not read column %q of file %q: it has type %s in the file, %s in the table", tf.Name, path, ft, tf.Type),
					Hint:    "The file is from before the column was dropped and added again with another type: read that snapshot's other columns."}
			}
			to, needWiden = tf.Type, true
		}
		colMap[i] = len(want)
		want = append(want, fc)
		widenTo = append(widenTo, to)
	}
	if !needWiden {
		widenTo = nil
	}
	return colMap, want, widenTo, nil
}

// nextBatch returns the next non-empty batch (retained: the caller releases
// it) or io.EOF.
func (s *fileStream) nextBatch(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		more := s.rr.Next()
		if pr, ok := s.rr.(*plainReader); ok {
			// Rows the prefilter left out were read (and would have been
			// merged) all the same, whether or not a batch follows.
			d := pr.takeDropped()
			metrics.RowsRead(d)
			if s.stats != nil {
				s.stats.RowsRead.Add(d)
				s.stats.RowsMerged.Add(d)
			}
		}
		if !more {
			if err := s.rr.Err(); err != nil && err != io.EOF {
				return nil, fmt.Errorf("read %s: %w", s.path, err)
			}
			return nil, io.EOF
		}
		b := s.rr.RecordBatch()
		metrics.RowsRead(b.NumRows())
		if s.stats != nil {
			s.stats.RowsRead.Add(b.NumRows())
		}
		if b.NumRows() == 0 {
			continue
		}
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
