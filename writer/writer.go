// Package writer turns Arrow batches into committed-ready LakeSoul data files:
// rows → range partition → hash bucket (PK tables) → stable sort by primary
// key → one Parquet file per (partition, bucket) at
// <table_path>/<k=v>/part-<id>_<bucket:04>.parquet.
//
// The writer never commits: it returns the file operations, and the caller
// commits them through the catalog (sqlfuncs). If Write fails, every file it
// created is removed (best effort); files of a write that is never committed are
// orphans, invisible to readers.
package writer

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/google/uuid"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/arrowutil"
	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/layout"
	"github.com/lakesoul-go/lakesoul/metrics"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Writer writes data files of one table.
type Writer struct {
	Store objstore.Store
	Table *catalog.Table
	Mem   memory.Allocator
	// Intent names the files (required). A writer whose files go to a
	// commit uses its catalog.WriteIntent, registered before the write:
	// orphan collection leaves files named under a live intent alone, and
	// the commit under it fails if it expired. layout.RandomNames names
	// files no intent protects (tests, tools).
	Intent FileNamer
	// RowGroupRows and PageBytes override the row group length and the
	// data page size (0: RowGroupRows, DataPageBytes). Tests use small ones
	// for files of many row groups and pages.
	RowGroupRows, PageBytes int
	// Runs makes Write write intermediate sorted runs (runfile.go: Arrow
	// IPC, named layout.RunFileName), cheap to write and to read back. They
	// are not data files: MergeRuns rewrites every one of them (runs.go)
	// before anything is committed.
	Runs bool
	// runs are the runs written so far (paths).
	runs map[string]bool
}

// FileNamer gives the base name of a new data file of bucket.
type FileNamer interface {
	FileName(bucket int) string
}

// Write writes rec, whose columns are a subset of the table's columns (by
// name, table types) that includes every primary-key and range column. Rows
// keep their arrival order among equal keys, so the last-arrived row of a key
// is the last in its file (LakeSoul's stable-sort rule). It returns one
// PartitionCommit per touched partition, with fresh commit ids.
func (w *Writer) Write(ctx context.Context, rec arrow.RecordBatch) (parts []catalog.PartitionCommit, err error) {
	if w.Mem == nil {
		w.Mem = memory.DefaultAllocator
	}
	if w.Intent == nil {
		return nil, errors.New("writer: no write intent names the files")
	}
	t := w.Table
	if err := w.check(rec); err != nil {
		return nil, err
	}
	rec = withCDCOps(t, rec, w.Mem)
	defer rec.Release()
	n := int(rec.NumRows())
	if n == 0 {
		return nil, nil
	}
	if n > math.MaxInt32 {
		return nil, fmt.Errorf("writer: a batch of %d rows is over the limit of %d", n, math.MaxInt32)
	}

	groups, descs, err := w.partition(rec)
	if err != nil {
		return nil, err
	}
	var hashes []uint32
	if t.HasPK() {
		if hashes, err = w.hashes(rec); err != nil {
			return nil, err
		}
	}
	var written []string
	defer func() {
		if err != nil {
			for _, p := range written {
				_ = w.Store.Delete(context.WithoutCancel(ctx), p)
			}
		}
	}()

	fileCols := w.fileColumns(rec)
	names := make([]string, len(fileCols))
	for i, c := range fileCols {
		names[i] = rec.ColumnName(c)
	}
	// One job per (partition, bucket) file; files are sorted and encoded in
	// parallel, and assembled in (partition, bucket) order.
	type writtenFile struct {
		path string
		size int64
	}
	type job struct {
		part, bucket int
		rows         []int32
		path         string
		files        []writtenFile
		err          error
	}
	// pos[r] is row r's place in its bucket's sorted order: buckets hold
	// disjoint rows, so their jobs share it (gather.go's Permutation).
	var pos []int32
	if t.HasPK() {
		pos = make([]int32, n)
	}
	// Partition directories are escaped and confined to the table's
	// directory by layout (paths.go), whatever the values are.
	dirs := make([]string, len(descs))
	for i, desc := range descs {
		if dirs[i], err = partitionPath(t.Path, desc); err != nil {
			return nil, err
		}
	}
	var jobs []*job
	maxRows := w.maxFileRows(rec)
	for pi := range descs {
		byBucket := [][]int32{groups[pi]}
		if t.HasPK() {
			byBucket = bucketRows(hashes, groups[pi], t.HashBucketNum)
		}
		groups[pi] = nil // the buckets hold the rows now
		for b, rows := range byBucket {
			if len(rows) > 0 {
				jobs = append(jobs, &job{part: pi, bucket: b, rows: rows,
					path: objstore.Join(dirs[pi], w.fileName(b))})
			}
		}
	}
	// Arrow computes an array's NULL count on first use and stores it (a
	// slice's is unknown until then): the jobs read rec's columns at once,
	// so the counts are settled here, before they start.
	for _, c := range rec.Columns() {
		c.NullN()
	}
	// write writes one job's files; a panic in it fails the job (and so
	// the write, whose files are then deleted) like an error.
	write := func(j *job) {
		var perm *arrowutil.Permutation
		if t.HasPK() {
			asc := slices.Clone(j.rows) // arrival order is ascending
			if j.err = w.sortByPK(rec, j.rows); j.err != nil {
				return
			}
			if len(j.rows) <= maxRows {
				p := arrowutil.NewPermutation(j.rows, asc, pos)
				perm = &p
			}
		}
		// Files over the size cap are split; they stay in key order
		// within the commit, so a run of equal keys that straddles two
		// files still resolves to its last row.
		for start := 0; start < len(j.rows) && j.err == nil; start += maxRows {
			chunk := j.rows[start:min(start+maxRows, len(j.rows))]
			path := j.path
			if start > 0 {
				path = objstore.Join(dirs[j.part], w.fileName(j.bucket))
			}
			var size int64
			size, j.err = w.writeFile(ctx, path, rec, fileCols, chunk, perm)
			if j.err == nil {
				j.files = append(j.files, writtenFile{path: path, size: size})
			}
		}
	}
	var g safego.Group
	next := make(chan *job)
	for range min(len(jobs), runtime.GOMAXPROCS(0)) {
		g.Start(func() {
			for j := range next {
				if err := safego.Call(func() error { write(j); return nil }); err != nil {
					j.err = err
				}
			}
		})
	}
	for _, j := range jobs {
		next <- j
	}
	close(next)
	g.Wait()
	for _, j := range jobs {
		for _, f := range j.files {
			written = append(written, f.path)
		}
		if j.err != nil && err == nil {
			err = j.err
		}
	}
	if err != nil {
		return nil, err
	}
	if w.Runs {
		if w.runs == nil {
			w.runs = map[string]bool{}
		}
		for _, p := range written {
			w.runs[p] = true
		}
	}
	for pi, desc := range descs {
		pc := catalog.PartitionCommit{Desc: desc, CommitID: uuid.New()}
		if t.HasPK() {
			pc.BucketNum = t.HashBucketNum // checked at commit against re-bucketing
		}
		for _, j := range jobs {
			if j.part == pi {
				for _, f := range j.files {
					pc.Ops = append(pc.Ops, catalog.FileOp{Path: f.path, Op: "add", Size: f.size, ExistCols: names})
				}
			}
		}
		parts = append(parts, pc)
	}
	return parts, nil
}

// DefaultMaxFileBytes caps a data file's uncompressed size; the table option
// max_file_size (bytes) overrides it.
const DefaultMaxFileBytes = 512 << 20

// maxFileRows converts the file size cap into rows, from rec's average row size.
func (w *Writer) maxFileRows(rec arrow.RecordBatch) int {
	limit := int64(DefaultMaxFileBytes)
	if v, err := strconv.ParseInt(w.Table.Properties["max_file_size"], 10, 64); err == nil && v > 0 {
		limit = v
	}
	var bytes int64
	for _, c := range rec.Columns() {
		for _, b := range c.Data().Buffers() {
			if b != nil {
				bytes += int64(b.Len())
			}
		}
	}
	n := rec.NumRows()
	if n == 0 || bytes == 0 {
		return math.MaxInt
	}
	return int(max(1, limit/max(1, bytes/n)))
}

// check validates rec against the table (CheckRecord).
func (w *Writer) check(rec arrow.RecordBatch) error { return CheckRecord(w.Table, rec) }

// CheckRecord validates rows to be written to t: known columns of the right
// types, PK and range columns present, no NULL in a NOT NULL column, CDC ops
// valid. Write checks them itself; callers that hold rows back before
// writing them check them with it first, so the statement fails, not a later
// one.
func CheckRecord(t *catalog.Table, rec arrow.RecordBatch) error {
	seen := map[string]bool{}
	for i, f := range rec.Schema().Fields() {
		idx := t.Schema.FieldIndices(f.Name)
		if len(idx) == 0 {
			return sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", f.Name, t.Name)
		}
		want := t.Schema.Field(idx[0]).Type
		if !arrow.TypeEqual(want, f.Type) {
			return sqlerr.New(sqlerr.DatatypeMismatch, "column %q is of type %s but the written value is %s", f.Name, want, f.Type)
		}
		if seen[f.Name] {
			return sqlerr.New(sqlerr.SyntaxError, "column %q specified more than once", f.Name)
		}
		seen[f.Name] = true
		if !t.Schema.Field(idx[0]).Nullable && rec.Column(i).NullN() > 0 {
			return NotNullViolation(t, f.Name, rec, firstNull(rec.Column(i))) // violation.go
		}
		if err := checkEnum(t, t.Schema.Field(idx[0]), rec.Column(i)); err != nil {
			return err
		}
	}
	for _, c := range slices.Concat(t.PKCols, t.RangeCols) {
		if !seen[c] {
			return sqlerr.New(sqlerr.NotNullViolation, "column %q must be written: it is part of the primary key or partitioning of %q", c, t.QualifiedName())
		}
	}
	if c := t.CDCColumn(); c != "" {
		if idx := rec.Schema().FieldIndices(c); len(idx) > 0 {
			ops := rec.Column(idx[0]).(*array.String)
			for i := 0; i < ops.Len(); i++ {
				if ops.IsValid(i) {
					switch ops.Value(i) {
					case "insert", "update", "delete":
					default:
						return sqlerr.New(sqlerr.CheckViolation, "CDC column %q must be insert, update or delete, not %q", c, ops.Value(i))
					}
				}
			}
		}
	}
	for _, c := range t.PKCols {
		if col := rec.Column(rec.Schema().FieldIndices(c)[0]); col.NullN() > 0 {
			return NotNullViolation(t, c, rec, firstNull(col))
		}
	}
	return nil
}

// checkEnum refuses a value of an enum column that is no label of its type
// (22P02, PostgreSQL's message). Only the types the table was loaded with
// are checked: compaction rewrites stored values without them
// (compaction.outputTable).
func checkEnum(t *catalog.Table, f arrow.Field, col arrow.Array) error {
	e := t.Enums[schema.EnumOID(f)]
	if e == nil {
		return nil
	}
	vals, ok := col.(*array.String)
	if !ok {
		return nil
	}
	labels := make(map[string]struct{}, len(e.Labels))
	for _, l := range e.Labels {
		labels[l] = struct{}{}
	}
	for i := 0; i < vals.Len(); i++ {
		if vals.IsValid(i) {
			if _, ok := labels[vals.Value(i)]; !ok {
				return sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input value for enum %s: \"%s\"", e.Name, vals.Value(i))
			}
		}
	}
	return nil
}

// partition groups row indices by partition_desc, in order of first
// appearance: groups[i] are the rows of descs[i], in arrival order.
func (w *Writer) partition(rec arrow.RecordBatch) (groups [][]int32, descs []string, err error) {
	n := int(rec.NumRows())
	t := w.Table
	if len(t.RangeCols) == 0 {
		all := make([]int32, n)
		for i := range all {
			all[i] = int32(i)
		}
		return [][]int32{all}, []string{layout.NonPartitioned}, nil
	}
	cols := make([]arrow.Array, len(t.RangeCols))
	for i, c := range t.RangeCols {
		cols[i] = rec.Column(rec.Schema().FieldIndices(c)[0])
	}
	index := map[string]int{}
	vals := make([]string, len(cols))
	for r := 0; r < n; r++ {
		for i, a := range cols {
			v, err := layout.FormatValue(a, r)
			if err != nil {
				return nil, nil, fmt.Errorf("partition value of %s: %w", t.RangeCols[i], err)
			}
			vals[i] = v
		}
		d := layout.FormatDesc(t.RangeCols, vals)
		g, ok := index[d]
		if !ok {
			g = len(descs)
			index[d] = g
			descs = append(descs, d)
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], int32(r))
	}
	return groups, descs, nil
}

// hashes computes each row's primary-key hash (LakeSoul's bucket hash).
func (w *Writer) hashes(rec arrow.RecordBatch) ([]uint32, error) {
	t := w.Table
	cols := make([]arrow.Array, len(t.PKCols))
	for i, c := range t.PKCols {
		cols[i] = rec.Column(rec.Schema().FieldIndices(c)[0])
	}
	hashes := make([]uint32, rec.NumRows())
	if err := layout.HashRows(cols, hashes); err != nil {
		return nil, fmt.Errorf("bucket hash: %w", err)
	}
	return hashes, nil
}

// bucketRows splits rows (in arrival order) by the bucket of their hash:
// out[b] are bucket b's rows, in arrival order, each list allocated at its
// exact size.
func bucketRows(hashes []uint32, rows []int32, buckets int) [][]int32 {
	counts := make([]int, buckets)
	for _, r := range rows {
		counts[layout.BucketOf(hashes[r], buckets)]++
	}
	out := make([][]int32, buckets)
	for b, c := range counts {
		out[b] = make([]int32, 0, c)
	}
	for _, r := range rows {
		b := layout.BucketOf(hashes[r], buckets)
		out[b] = append(out[b], r)
	}
	return out
}

// sortByPK sorts row indices, given in ascending (arrival) order, by
// primary key: equal keys keep their arrival order, so the last-arrived row
// of a key is the last in its file.
func (w *Writer) sortByPK(rec arrow.RecordBatch, idx []int32) error {
	t := w.Table
	cols := make([]arrow.Array, len(t.PKCols))
	types := make([]arrow.DataType, len(t.PKCols))
	for i, c := range t.PKCols {
		cols[i] = rec.Column(rec.Schema().FieldIndices(c)[0])
		types[i] = cols[i].DataType()
	}
	if len(cols) == 1 && cols[0].NullN() == 0 {
		switch a := cols[0].(type) {
		case *array.String:
			sortByPrefix(idx, func(r int32) uint64 { return stringPrefix(a.Value(int(r))) },
				func(x, y int32) int { return strings.Compare(a.Value(int(x)), a.Value(int(y))) })
			return nil
		case *array.Int64:
			sortByPrefix(idx, func(r int32) uint64 { return orderedInt(a.Value(int(r))) }, nil)
			return nil
		case *array.Int32:
			sortByPrefix(idx, func(r int32) uint64 { return orderedInt(int64(a.Value(int(r)))) }, nil)
			return nil
		}
	}
	rc, err := arrowutil.NewRowComparer(types)
	if err != nil {
		return err
	}
	// Row numbers break ties, which keeps equal keys in arrival order
	// (stable) at the cost of an unstable sort (SortStableFunc is O(n log² n)).
	slices.SortFunc(idx, func(a, b int32) int {
		if c := rc.Compare(cols, int(a), cols, int(b)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return nil
}

// prefixed is a row with a uint64 that orders like its key (see sortByPrefix).
type prefixed struct {
	prefix uint64
	row    int32
}

// sortByPrefix sorts rows by key, equal keys by row number. prefix(r) must
// order like the keys: prefix(x) < prefix(y) implies key x < key y. When it
// is also injective, full is nil; otherwise full compares two keys whose
// prefixes are equal. idx must be in row order (see sortByPK). The
// prefixes are sorted in one array by a stable radix sort, so equal
// prefixes stay in row order, and the keys themselves are read only to
// order runs of equal prefixes.
func sortByPrefix(idx []int32, prefix func(int32) uint64, full func(x, y int32) int) {
	keys := make([]prefixed, len(idx))
	for i, r := range idx {
		keys[i] = prefixed{prefix(r), r}
	}
	radixSort(keys)
	if full != nil {
		for start := 0; start < len(keys); {
			end := start + 1
			for end < len(keys) && keys[end].prefix == keys[start].prefix {
				end++
			}
			if end-start > 1 {
				slices.SortStableFunc(keys[start:end], func(a, b prefixed) int { return full(a.row, b.row) })
			}
			start = end
		}
	}
	for i, k := range keys {
		idx[i] = k.row
	}
}

// radixSort stably sorts keys by prefix: least significant byte first,
// skipping bytes in which all keys agree (the high bytes of small
// integers, the fixed characters of formatted keys).
func radixSort(keys []prefixed) {
	if len(keys) < 2 {
		return
	}
	src, dst := keys, make([]prefixed, len(keys))
	for shift := 0; shift < 64; shift += 8 {
		var pos [256]int
		for _, k := range src {
			pos[byte(k.prefix>>shift)]++
		}
		if pos[byte(src[0].prefix>>shift)] == len(src) {
			continue
		}
		at := 0
		for d, n := range pos {
			pos[d] = at
			at += n
		}
		for _, k := range src {
			d := byte(k.prefix >> shift)
			dst[pos[d]] = k
			pos[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &keys[0] {
		copy(keys, src)
	}
}

// stringPrefix is s's first 8 bytes as a big-endian number, zero-padded:
// it orders like strings.Compare except among strings that share them.
func stringPrefix(s string) uint64 {
	var b [8]byte
	copy(b[:], s)
	return binary.BigEndian.Uint64(b[:])
}

// orderedInt maps int64 order onto uint64 order (flips the sign bit).
func orderedInt(v int64) uint64 { return uint64(v) ^ (1 << 63) }

// fileColumns are the record's columns that go into data files: all but the
// range-partition columns, whose values live in the partition_desc.
func (w *Writer) fileColumns(rec arrow.RecordBatch) []int {
	var out []int
	for i, f := range rec.Schema().Fields() {
		if !slices.Contains(w.Table.RangeCols, f.Name) {
			out = append(out, i)
		}
	}
	return out
}

// partitionPath is layout.PartitionPath with a SQLSTATE for values whose
// directory name cannot exist (54000: longer than a file name may be).
func partitionPath(tablePath, desc string) (string, error) {
	p, err := layout.PartitionPath(tablePath, desc)
	switch {
	case errors.Is(err, layout.ErrSegmentTooLong):
		return "", sqlerr.Wrap(sqlerr.ProgramLimitExceeded, err, "partition value too long for a partition directory")
	case err != nil:
		return "", sqlerr.Wrap(sqlerr.InvalidParameterValue, err, fmt.Sprintf("partition %q has no directory", desc))
	}
	return p, nil
}

// fileName names a new file of bucket: a data file, or a run when the
// writer writes runs.
func (w *Writer) fileName(bucket int) string {
	if w.Runs {
		return layout.RunFileName(w.Intent.FileName(bucket))
	}
	return w.Intent.FileName(bucket)
}

// writeFile writes the given rows and columns of rec to one Parquet file
// (a run file when the writer writes runs),
// one row group and one column at a time: the rows are gathered into a
// column chunk, encoded and released before the next, which bounds the
// memory a file adds to the batch's to one column chunk.
//
// perm, when set, is the permutation putting rows (all of them) in order;
// the file's columns are then placed in order by it (arrowutil.Permute)
// rather than gathered from rec at random.
func (w *Writer) writeFile(ctx context.Context, path string, rec arrow.RecordBatch, cols []int, rows []int32, perm *arrowutil.Permutation) (int64, error) {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		f := rec.Schema().Field(c)
		fields[i] = arrow.Field{Name: f.Name, Type: f.Type, Nullable: f.Nullable}
	}
	sch := arrow.NewSchema(fields, nil)
	if w.Runs {
		return w.writeRunFile(ctx, path, sch, rec, cols, rows, perm)
	}
	ow, err := w.Store.Create(ctx, path)
	if err != nil {
		return 0, err
	}
	cw := &countingWriter{w: ow}
	ff := newFileFormat(sch, w.Table.PKCols, bloomColumns(w.Table), len(rows), w.RowGroupRows, w.PageBytes)
	if err := writeRowGroups(cw, sch, rec, cols, rows, perm, ff, w.Mem); err != nil {
		return 0, errors.Join(fmt.Errorf("write %s: %w", path, err), ow.Abort())
	}
	if err := ow.Close(); err != nil {
		return 0, err
	}
	metrics.FileWritten(int64(len(rows)), cw.n)
	return cw.n, nil
}

// writeRowGroups writes rows of rec's columns cols as a Parquet file of
// the given schema and format to out (a file of one row group placed by
// perm when set, see writeFile).
func writeRowGroups(out io.Writer, schema *arrow.Schema, rec arrow.RecordBatch, cols []int, rows []int32, perm *arrowutil.Permutation,
	ff fileFormat, mem memory.Allocator) error {
	df, err := newDataFile(out, schema, mem, ff)
	if err != nil {
		return err
	}
	for start := 0; start < len(rows); start += ff.rowGroupRows {
		chunk := rows[start:min(start+ff.rowGroupRows, len(rows))]
		err := df.writeRowGroup(func(i int) (arrow.Array, error) {
			if perm != nil && len(chunk) == len(rows) {
				return arrowutil.Permute(mem, rec.Column(cols[i]), *perm)
			}
			return arrowutil.Take(mem, rec.Column(cols[i]), chunk)
		})
		if err != nil {
			return errors.Join(err, df.abort())
		}
	}
	return df.close()
}

// dataFile is a Parquet data file being written row group by row group,
// with the checksums of its bloom filters put in the file's metadata
// (layout.BloomChecksumsKey) at close.
type dataFile struct {
	fw     *pqarrow.FileWriter
	schema *arrow.Schema
	ff     fileFormat
	mem    memory.Allocator
	groups int
	sums   []layout.BloomChecksum
	// keys checks whether a primary key repeats (nil: no primary key).
	keys *uniqueKeys
}

func newDataFile(out io.Writer, sch *arrow.Schema, mem memory.Allocator, ff fileFormat) (*dataFile, error) {
	var keys *uniqueKeys
	if len(ff.keyCols) > 0 {
		var err error
		if keys, err = newUniqueKeys(sch, ff.keyCols); err != nil {
			return nil, err
		}
	}
	fw, err := newParquetWriter(out, schema.FileSchema(sch), mem, ff)
	if err != nil {
		return nil, err
	}
	return &dataFile{fw: fw, schema: sch, ff: ff, mem: mem, keys: keys}, nil
}

// writeRowGroup writes a row group whose i-th column col(i) builds (one
// column at a time, released once encoded).
func (d *dataFile) writeRowGroup(col func(i int) (arrow.Array, error)) error {
	if err := d.fw.NewRowGroupChecked(); err != nil {
		return err
	}
	for i := range d.schema.NumFields() {
		c, err := col(i)
		if err != nil {
			return fmt.Errorf("gather column %s: %w", d.schema.Field(i).Name, err)
		}
		if slices.Contains(d.ff.bloomCols, i) {
			d.sums = append(d.sums, layout.BloomChecksum{RowGroup: d.groups, Column: i, CRC: d.ff.bloomChecksum(c, d.mem)})
		}
		d.keys.column(i, c)
		err = d.writeColumn(c)
		c.Release()
		if err != nil {
			return err
		}
	}
	d.keys.endRowGroup()
	d.groups++
	return nil
}

// writeColumn writes one column chunk of the current row group. A
// fixed-size list with NULL entries (a vector column with NULLs) goes in as
// pieces that are all NULL or all valid: pqarrow requires the child values
// one piece visits to be one contiguous range, and a NULL fixed-size list
// entry still occupies its slots, so NULLs between valid entries would
// split it (arrow-go: "lists with non-zero length null components are not
// supported").
//
// An interval column is written in its file form (schema.FileSchema).
func (d *dataFile) writeColumn(c arrow.Array) error {
	if schema.IsInterval(c.DataType()) {
		fc := schema.IntervalFileArray(d.mem, c)
		defer fc.Release()
		c = fc
	}
	if _, ok := c.DataType().(*arrow.FixedSizeListType); !ok || c.NullN() == 0 {
		return d.fw.WriteColumnData(c)
	}
	// Each piece is a copy, not a slice: pqarrow writes a sliced
	// fixed-size list's child values from the start of the child array.
	rows := make([]int32, c.Len())
	for i := range rows {
		rows[i] = int32(i)
	}
	var pieces []arrow.Array
	defer func() {
		for _, p := range pieces {
			p.Release()
		}
	}()
	for start := 0; start < c.Len(); {
		end := start + 1
		for end < c.Len() && c.IsNull(end) == c.IsNull(start) {
			end++
		}
		p, err := arrowutil.Take(d.mem, c, rows[start:end])
		if err != nil {
			return err
		}
		pieces = append(pieces, p)
		start = end
	}
	chunked := arrow.NewChunked(c.DataType(), pieces)
	defer chunked.Release()
	return d.fw.WriteColumnChunked(chunked, 0, int64(c.Len()))
}

// close writes the footer.
func (d *dataFile) close() error {
	defer d.keys.release()
	if len(d.sums) > 0 {
		if err := d.fw.AppendKeyValueMetadata(layout.BloomChecksumsKey, layout.FormatBloomChecksums(d.sums)); err != nil {
			return errors.Join(err, d.fw.Close())
		}
	}
	if d.keys.unique() {
		if err := d.fw.AppendKeyValueMetadata(layout.UniqueKeysKey, "true"); err != nil {
			return errors.Join(err, d.fw.Close())
		}
	}
	return d.fw.Close()
}

// abort ends a file whose writing failed.
func (d *dataFile) abort() error {
	d.keys.release()
	return d.fw.Close()
}

type countingWriter struct {
	w objstore.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
