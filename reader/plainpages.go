package reader

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/bits"
	"net"
	"slices"
	"syscall"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	pqschema "github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/lakesoul-go/lakesoul/internal/arrowutil"
)

// Plain page decoding. The files this server writes hold flat columns of
// PLAIN-encoded pages (writer/parquet.go: no dictionary). pqarrow's record
// reader decodes such a page value by value through a generic builder —
// for a short string that costs several times the copy itself, and on a
// full read of a wide text table it is the largest cost after
// decompression. plainReader decodes those pages straight into Arrow
// buffers instead: a run of non-null values of a fixed-width column is one
// copy, a string is a length read and a copy, and a definition level run
// covering a whole page (no nulls) is one bit-range set.
//
// It reads a file only when every column it wants is eligible
// (plainReadable): a flat leaf (no repetition, at most one definition
// level) whose chunks, in every selected row group, have no dictionary page
// and only PLAIN values (RLE levels), of a physical type whose values are
// the Arrow type's as they are. Every other file — dictionary-encoded files
// of other writers, nested or converted types — goes through pqarrow, as
// does every seek (rangeReader). Both produce the same batches
// (TestPlainReaderMatchesPqarrow).
//
// Invariant: a page whose contents contradict its header (lengths past its
// end, more levels or values than it declares, an encoding the metadata did
// not announce) is an error naming the file (58030), never a short or
// shifted batch, and so is a page arrow-go cannot decompress or parse; a
// storage failure keeps its own error.

// plainKind is how a column's values are laid out in a PLAIN page.
type plainKind uint8

const (
	plainFixed     plainKind = iota // little-endian values of a fixed width
	plainByteArray                  // 4-byte little-endian length, then the bytes
	plainBoolean                    // one bit per value, least significant first
	// plainDecimal: little-endian INT32 or INT64 values (width bytes) of a
	// DECIMAL, each widened to Arrow's 16-byte two's complement decimal.
	plainDecimal
)

// decimalBytes is the width of an Arrow DECIMAL128 value.
const decimalBytes = 16

// plainLayout returns the PLAIN layout of a leaf holding Arrow type dt:
// its kind and, for fixed widths, the width in bytes. ok is false when the
// leaf's values are not dt's as stored (a conversion pqarrow would apply).
func plainLayout(col *pqschema.Column, dt arrow.DataType) (kind plainKind, width int, ok bool) {
	phys := col.PhysicalType()
	switch dt.ID() {
	case arrow.STRING, arrow.BINARY:
		return plainByteArray, 0, phys == parquet.Types.ByteArray
	case arrow.INT64:
		return plainFixed, 8, phys == parquet.Types.Int64 && plainIntOK(col, 64)
	case arrow.INT32:
		return plainFixed, 4, phys == parquet.Types.Int32 && plainIntOK(col, 32)
	case arrow.DATE32:
		_, isDate := col.LogicalType().(pqschema.DateLogicalType)
		return plainFixed, 4, phys == parquet.Types.Int32 && isDate
	case arrow.DECIMAL128:
		dec, isDec := col.LogicalType().(pqschema.DecimalLogicalType)
		want := dt.(*arrow.Decimal128Type)
		if !isDec || dec.Precision() != want.Precision || dec.Scale() != want.Scale {
			return 0, 0, false
		}
		switch phys {
		case parquet.Types.Int32:
			return plainDecimal, 4, true
		case parquet.Types.Int64:
			return plainDecimal, 8, true
		}
		return 0, 0, false
	case arrow.FLOAT64:
		return plainFixed, 8, phys == parquet.Types.Double
	case arrow.FLOAT32:
		return plainFixed, 4, phys == parquet.Types.Float
	case arrow.BOOL:
		return plainBoolean, 0, phys == parquet.Types.Boolean
	case arrow.TIMESTAMP:
		ts, isTS := col.LogicalType().(pqschema.TimestampLogicalType)
		if !isTS || phys != parquet.Types.Int64 {
			return 0, 0, false
		}
		var unit arrow.TimeUnit
		switch ts.TimeUnit() {
		case pqschema.TimeUnitMillis:
			unit = arrow.Millisecond
		case pqschema.TimeUnitMicros:
			unit = arrow.Microsecond
		case pqschema.TimeUnitNanos:
			unit = arrow.Nanosecond
		default:
			return 0, 0, false
		}
		return plainFixed, 8, dt.(*arrow.TimestampType).Unit == unit
	}
	return 0, 0, false
}

// plainIntOK reports whether an integer leaf's values are signed integers
// of the given bit width as stored (no logical type, or a signed INT of
// that width).
func plainIntOK(col *pqschema.Column, width int8) bool {
	switch lt := col.LogicalType().(type) {
	case nil, pqschema.NoLogicalType:
		return true
	case pqschema.IntLogicalType:
		return lt.IsSigned() && lt.BitWidth() == width
	}
	return false
}

// plainReadable reports whether plainReader can read the leaves of the row
// groups (nil: all) of a file with footer md and Arrow schema fsch, whose
// field i is leaf i (a flat schema).
func plainReadable(md *metadata.FileMetaData, fsch *arrow.Schema, leaves, rowGroups []int) bool {
	if md.Schema.NumColumns() != fsch.NumFields() || len(leaves) == 0 {
		return false
	}
	for _, l := range leaves {
		col := md.Schema.Column(l)
		if col.MaxRepetitionLevel() != 0 || col.MaxDefinitionLevel() > 1 || col.ColumnPath().String() != fsch.Field(l).Name {
			return false
		}
		if _, _, ok := plainLayout(col, fsch.Field(l).Type); !ok {
			return false
		}
	}
	check := func(rg int) bool {
		rgm := md.RowGroup(rg)
		for _, l := range leaves {
			cc, err := rgm.ColumnChunk(l)
			if err != nil || cc.HasDictionaryPage() || cc.CryptoMetadata() != nil {
				return false
			}
			for _, e := range cc.Encodings() {
				if e != parquet.Encodings.Plain && e != parquet.Encodings.RLE {
					return false
				}
			}
		}
		return true
	}
	if rowGroups == nil {
		for rg := range md.NumRowGroups() {
			if !check(rg) {
				return false
			}
		}
		return true
	}
	for _, rg := range rowGroups {
		if !check(rg) {
			return false
		}
	}
	return true
}

// plainReader reads batches of the selected leaves of a file's row groups
// (see above). Batches end at row group boundaries.
type plainReader struct {
	path      string
	pf        *file.Reader
	sc        *arrow.Schema
	cols      []*plainColumn
	rowGroups []int
	next      int   // index into rowGroups of the row group after the current one
	left      int64 // rows of the current row group not yet read
	batch     int64
	mem       memory.Allocator
	rec       arrow.RecordBatch
	err       error
	// pre is the prefilter (prefilter; nil: none), preCol marks the
	// columns it tests, rows is scratch for the passing rows, dropped
	// counts rows decoded and left out (takeDropped).
	pre     []rowPred
	preCol  []bool
	rows    []int
	dropped int64
	// tested and passed count the rows the prefilter tested and passed.
	tested, passed int64
}

// newPlainReader reads the leaves (fields of fsch) of pf's row groups (nil:
// all) in batches of batch rows. The first row group's pages are opened at
// once, so a file read whole into memory gives up its bytes as pqarrow's
// readers do (openFileStream).
func newPlainReader(path string, pf *file.Reader, fsch *arrow.Schema, leaves, rowGroups []int, batch int64, mem memory.Allocator) (*plainReader, error) {
	if rowGroups == nil {
		rowGroups = make([]int, pf.NumRowGroups())
		for i := range rowGroups {
			rowGroups[i] = i
		}
	}
	fields := make([]arrow.Field, len(leaves))
	r := &plainReader{path: path, pf: pf, rowGroups: rowGroups, batch: max(batch, 1), mem: mem}
	for i, l := range leaves {
		fields[i] = fsch.Field(l)
		col := pf.MetaData().Schema.Column(l)
		kind, width, _ := plainLayout(col, fields[i].Type)
		r.cols = append(r.cols, &plainColumn{leaf: l, dt: fields[i].Type, kind: kind, width: width,
			nullable: col.MaxDefinitionLevel() > 0})
	}
	r.sc = arrow.NewSchema(fields, nil)
	if err := r.openRowGroup(); err != nil {
		r.Release()
		return nil, err
	}
	return r, nil
}

// openRowGroup opens the page readers of the next row group with rows.
func (r *plainReader) openRowGroup() error {
	for r.left == 0 && r.next < len(r.rowGroups) {
		rg := r.pf.RowGroup(r.rowGroups[r.next])
		r.next++
		for _, c := range r.cols {
			c.closePages()
			pages, err := rg.GetColumnPageReader(c.leaf)
			if err != nil {
				return err
			}
			c.pages = pages
		}
		r.left = rg.NumRows()
	}
	return nil
}

func (r *plainReader) Next() bool {
	if r.rec != nil {
		r.rec.Release()
		r.rec = nil
	}
	for r.err == nil {
		if r.left == 0 {
			if r.err = r.openRowGroup(); r.err != nil || r.left == 0 {
				return false
			}
		}
		n := int(min(r.batch, r.left))
		r.rec, r.err = r.readBatch(n)
		if r.err == nil {
			r.left -= int64(n)
		}
		if r.rec != nil {
			return true
		}
	}
	return false
}

// readBatch decodes the next n rows of every column: those passing the
// prefilter (all without one), or nil when none does.
func (r *plainReader) readBatch(n int) (arrow.RecordBatch, error) {
	arrs := make([]arrow.Array, len(r.cols))
	defer releaseAll(arrs)
	var rows []int // the passing rows; nil: all n
	if r.pre != nil {
		for i, c := range r.cols {
			if !r.preCol[i] {
				continue
			}
			a, err := c.read(n, r.mem)
			if err != nil {
				return nil, r.columnError(i, err)
			}
			arrs[i] = a
		}
		rows = slices.Grow(r.rows[:0], n)[:n]
		for i := range rows {
			rows[i] = i
		}
		for _, p := range r.pre {
			rows = p.pred.filter(arrs[p.pos], rows)
		}
		r.rows = rows
		r.dropped += int64(n - len(rows))
		r.tested += int64(n)
		r.passed += int64(len(rows))
		if r.tested >= prefilterTrialRows && r.passed*4 > r.tested*3 {
			// Most rows pass: picking them out saves less than testing
			// them twice costs (the filter after the merge tests them
			// again), so the rest of the file is decoded whole.
			r.pre = nil
		}
		if len(rows) == n {
			rows = nil
		}
	}
	for i, c := range r.cols {
		if arrs[i] != nil {
			if rows != nil {
				// A filter column: decoded whole, its passing rows taken.
				a, err := arrowutil.Take(r.mem, arrs[i], rows)
				if err != nil {
					return nil, err
				}
				arrs[i].Release()
				arrs[i] = a
			}
			continue
		}
		var a arrow.Array
		var err error
		if rows == nil {
			a, err = c.read(n, r.mem)
		} else {
			a, err = c.readRows(n, rows, r.mem)
		}
		if err != nil {
			return nil, r.columnError(i, err)
		}
		arrs[i] = a
	}
	out := int64(n)
	if rows != nil {
		out = int64(len(rows))
	}
	if out == 0 {
		return nil, nil
	}
	return array.NewRecordBatch(r.sc, arrs, out), nil
}

// columnError is the error of a failed read of column i's pages.
func (r *plainReader) columnError(i int, err error) error {
	var re pageReadError
	if errors.As(err, &re) && storageFailure(re.err) {
		// Not the file's fault: the failure keeps its own SQLSTATE
		// (sqlerr's storage mapping), as through pqarrow.
		return fmt.Errorf("read %s: %w", r.path, re.err)
	}
	return errCorrupt(r.path, fmt.Sprintf("a data page of column %s", r.sc.Field(i).Name), err)
}

// prefilter makes the reader drop the rows failing preds (row-filter
// predicates on table columns; colMap maps table columns to the reader's
// columns) as it decodes them: each batch's tested columns are decoded
// first, and the other columns only at the rows that pass. Predicates on
// columns the reader does not have are left out: whoever reads the rows
// still applies the whole filter.
func (r *plainReader) prefilter(preds []keyPred, colMap []int) {
	for i := range preds {
		pos := colMap[preds[i].col]
		if pos < 0 {
			continue
		}
		if r.preCol == nil {
			r.preCol = make([]bool, len(r.cols))
		}
		r.pre = append(r.pre, rowPred{pos: pos, pred: &preds[i]})
		r.preCol[pos] = true
	}
}

// prefilterTrialRows is how many rows a prefilter tests before it may
// give up: past them, a filter that passes more than three rows in four
// is dropped for the rest of the file.
// (A variable: tests lower it.)
var prefilterTrialRows int64 = 32 << 10

// rowPred is a predicate of a prefilter: pred tests the reader's column pos.
type rowPred struct {
	pos  int
	pred *keyPred
}

// takeDropped returns the rows the prefilter left out since its last call.
func (r *plainReader) takeDropped() int64 {
	d := r.dropped
	r.dropped = 0
	return d
}

func (r *plainReader) RecordBatch() arrow.RecordBatch { return r.rec }

func (r *plainReader) Err() error { return r.err }

func (r *plainReader) Release() {
	if r.rec != nil {
		r.rec.Release()
		r.rec = nil
	}
	for _, c := range r.cols {
		c.closePages()
	}
}

// plainColumn decodes one leaf's pages. Within the current page, levels
// and data are what is left to read.
type plainColumn struct {
	leaf     int
	dt       arrow.DataType
	kind     plainKind
	width    int
	nullable bool
	pages    file.PageReader
	// left counts the current page's entries (rows) not yet read; levels
	// are their definition levels (nullable leaves), data their values.
	left   int
	levels rleBits
	data   []byte
	// bit is the next value's bit in data (boolean leaves).
	bit int
	// dataHint is the last batch's value bytes (byte arrays), the first
	// guess for the next one's.
	dataHint int
	// levelScratch holds a page chunk's definition levels for readRows.
	levelScratch []byte
}

func (c *plainColumn) closePages() {
	if c.pages != nil {
		c.pages.Close()
		c.pages = nil
	}
	c.left, c.data = 0, nil
}

// pageReadError is an error of arrow-go's page reader: a failure to read
// the bytes (storageFailure), or bytes that do not decompress or parse — a
// corrupt page, as plainColumn's own findings are.
type pageReadError struct{ err error }

func (e pageReadError) Error() string { return e.err.Error() }
func (e pageReadError) Unwrap() error { return e.err }

// storageFailure reports whether err is a failure to reach a file's bytes —
// a file system or network error, a missing object, a cancelled read —
// rather than bytes that do not decode.
func storageFailure(err error) bool {
	var pathErr *fs.PathError
	var errno syscall.Errno
	var netErr net.Error
	return errors.As(err, &pathErr) || errors.As(err, &errno) || errors.As(err, &netErr) ||
		errors.Is(err, fs.ErrNotExist) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// nextPage moves to the next data page of the chunk.
func (c *plainColumn) nextPage() error {
	if !c.pages.Next() {
		if err := c.pages.Err(); err != nil {
			return pageReadError{err}
		}
		return io.ErrUnexpectedEOF // the chunk has fewer rows than its row group
	}
	var data []byte
	var levelBytes int
	switch p := c.pages.Page().(type) {
	case *file.DataPageV1:
		if parquet.Encoding(p.Encoding()) != parquet.Encodings.Plain {
			return fmt.Errorf("page encoding %s, want PLAIN", parquet.Encoding(p.Encoding()))
		}
		data = p.Data()
		c.left = int(p.NumValues())
		if c.nullable {
			if p.DefinitionLevelEncoding() != parquet.Encodings.RLE {
				return fmt.Errorf("definition levels encoded %s, want RLE", p.DefinitionLevelEncoding())
			}
			if len(data) < 4 {
				return errors.New("page too short for its definition levels")
			}
			levelBytes = int(binary.LittleEndian.Uint32(data))
			data = data[4:]
		}
	case *file.DataPageV2:
		if parquet.Encoding(p.Encoding()) != parquet.Encodings.Plain {
			return fmt.Errorf("page encoding %s, want PLAIN", parquet.Encoding(p.Encoding()))
		}
		data = p.Data()
		c.left = int(p.NumValues())
		if p.RepetitionLevelByteLen() != 0 {
			return errors.New("repetition levels in a flat column")
		}
		levelBytes = int(p.DefinitionLevelByteLen())
		if !c.nullable && levelBytes != 0 {
			return errors.New("definition levels in a required column")
		}
	default:
		return fmt.Errorf("unexpected %T in a column without a dictionary", p)
	}
	if c.left < 0 || levelBytes < 0 || levelBytes > len(data) {
		return errors.New("page header does not match its data")
	}
	c.levels = rleBits{}
	if c.nullable {
		c.levels = rleBits{data: data[:levelBytes], left: c.left}
	}
	c.data, c.bit = data[levelBytes:], 0
	return nil
}

// read decodes the next n rows into a new array.
func (c *plainColumn) read(n int, mem memory.Allocator) (arrow.Array, error) {
	var valid *memory.Buffer
	nulls := 0
	if c.nullable {
		valid = memory.NewResizableBuffer(mem)
		valid.Resize(int(bitutil.BytesForBits(int64(n))))
		clear(valid.Bytes())
	}
	out := plainOut{c: c}
	out.start(n, mem)
	defer out.release()
	for pos := 0; pos < n; {
		if c.left == 0 {
			if err := c.nextPage(); err != nil {
				if valid != nil {
					valid.Release()
				}
				return nil, err
			}
			continue
		}
		k := min(n-pos, c.left)
		var err error
		if valid == nil {
			err = out.appendValid(pos, k)
		} else {
			var defined int
			defined, err = c.levels.read(valid.Bytes(), pos, k)
			if err == nil {
				nulls += k - defined
				if defined == k {
					err = out.appendValid(pos, k)
				} else {
					err = out.appendSpaced(valid.Bytes(), pos, k)
				}
			}
		}
		if err != nil {
			if valid != nil {
				valid.Release()
			}
			return nil, err
		}
		c.left -= k
		pos += k
	}
	if valid != nil && nulls == 0 {
		valid.Release()
		valid = nil
	}
	return out.finish(valid, nulls), nil
}

// plainOut builds one array of n rows of a column.
type plainOut struct {
	c *plainColumn
	n int
	// values holds fixed-width values or bits, or a byte array's bytes;
	// offsets a byte array's n+1 offsets.
	values, offsets *memory.Buffer
	used            int // bytes of values written (byte arrays)
}

func (o *plainOut) start(n int, mem memory.Allocator) {
	o.n = n
	o.values = memory.NewResizableBuffer(mem)
	switch o.c.kind {
	case plainFixed:
		o.values.Resize(n * o.c.width)
	case plainDecimal:
		o.values.Resize(n * decimalBytes)
	case plainBoolean:
		o.values.Resize(int(bitutil.BytesForBits(int64(n))))
		clear(o.values.Bytes())
	case plainByteArray:
		o.offsets = memory.NewResizableBuffer(mem)
		o.offsets.Resize((n + 1) * 4)
		binary.LittleEndian.PutUint32(o.offsets.Bytes(), 0)
		o.values.Reserve(max(o.c.dataHint, 64))
	}
}

func (o *plainOut) release() {
	if o.values != nil {
		o.values.Release()
	}
	if o.offsets != nil {
		o.offsets.Release()
	}
}

// finish hands the buffers over to a new array.
func (o *plainOut) finish(valid *memory.Buffer, nulls int) arrow.Array {
	var bufs []*memory.Buffer
	switch o.c.kind {
	case plainByteArray:
		o.values.Resize(o.used)
		o.c.dataHint = o.used
		bufs = []*memory.Buffer{valid, o.offsets, o.values}
	default:
		bufs = []*memory.Buffer{valid, o.values}
	}
	d := array.NewData(o.c.dt, o.n, bufs, nil, nulls, 0)
	a := array.MakeFromData(d)
	d.Release()
	if valid != nil {
		valid.Release()
	}
	return a
}

// appendValid writes the next k values of the page at rows [pos, pos+k),
// all of them non-null.
func (o *plainOut) appendValid(pos, k int) error {
	c := o.c
	switch c.kind {
	case plainFixed:
		size := k * c.width
		if len(c.data) < size {
			return errors.New("page ends before its values")
		}
		copy(o.values.Bytes()[pos*c.width:], c.data[:size])
		c.data = c.data[size:]
	case plainDecimal:
		size := k * c.width
		if len(c.data) < size {
			return errors.New("page ends before its values")
		}
		out := o.values.Bytes()[pos*decimalBytes : (pos+k)*decimalBytes]
		for i := range k {
			var v int64
			if c.width == 4 {
				v = int64(int32(binary.LittleEndian.Uint32(c.data[4*i:])))
			} else {
				v = int64(binary.LittleEndian.Uint64(c.data[8*i:]))
			}
			binary.LittleEndian.PutUint64(out[decimalBytes*i:], uint64(v))
			binary.LittleEndian.PutUint64(out[decimalBytes*i+8:], uint64(v>>63)) // the sign, extended
		}
		c.data = c.data[size:]
	case plainBoolean:
		if (c.bit+k+7)/8 > len(c.data) {
			return errors.New("page ends before its values")
		}
		bitutil.CopyBitmap(c.data, c.bit, k, o.values.Bytes(), pos)
		c.bit += k
	case plainByteArray:
		if len(c.data) > plainOneScanBytes {
			// A large page: first the lengths, to size the copy exactly.
			if err := o.grow(byteArrayTotal(c.data, k)); err != nil {
				return err
			}
		} else if err := o.grow(len(c.data)); err != nil {
			// Every value byte of the page's rest is in c.data: room for
			// all of it (and the copies' slack) is room enough.
			return err
		}
		offs := o.offsets.Bytes()[4*(pos+1):]
		vals := o.values.Buf()
		used, data := o.used, c.data
		for i := range k {
			if len(data) < 4 {
				return errors.New("page ends before its values")
			}
			l := int(binary.LittleEndian.Uint32(data))
			src := data[4:]
			if l > len(src) {
				return errors.New("a value runs past the end of its page")
			}
			if l <= 16 && len(src) >= 16 {
				// Short values move as one 16-byte block (grow left the
				// slack); the bytes past l are overwritten by the next.
				*(*[16]byte)(vals[used : used+16]) = *(*[16]byte)(src)
			} else {
				copy(vals[used:used+l], src[:l])
			}
			used += l
			data = src[l:]
			binary.LittleEndian.PutUint32(offs[4*i:], uint32(used))
		}
		o.used, c.data = used, data
	}
	return nil
}

// appendSpaced writes rows [pos, pos+k), whose validity bits are set in
// valid: the next value of the page for each valid row; null rows get a
// zero value or an empty string.
func (o *plainOut) appendSpaced(valid []byte, pos, k int) error {
	c := o.c
	for i := pos; i < pos+k; {
		// A run of valid rows, then one of nulls.
		j := i
		for j < pos+k && bitutil.BitIsSet(valid, j) {
			j++
		}
		if j > i {
			if err := o.appendValid(i, j-i); err != nil {
				return err
			}
		}
		i = j
		for j < pos+k && !bitutil.BitIsSet(valid, j) {
			j++
		}
		if j > i {
			switch c.kind {
			case plainFixed:
				clear(o.values.Bytes()[i*c.width : j*c.width])
			case plainDecimal:
				clear(o.values.Bytes()[i*decimalBytes : j*decimalBytes])
			case plainByteArray:
				offs := o.offsets.Bytes()
				for r := i; r < j; r++ {
					binary.LittleEndian.PutUint32(offs[4*(r+1):], uint32(o.used))
				}
			}
		}
		i = j
	}
	return nil
}

// plainOneScanBytes: byte array values are copied in one scan of a page's
// rest up to this size (room reserved for all of it); from a larger page
// their lengths are summed first, so that a batch of a few values does not
// reserve a whole large page.
const plainOneScanBytes = 64 << 10

// byteArrayTotal sums the lengths of the first k values of PLAIN byte
// array data (as far as they are well-formed: the copy checks them).
func byteArrayTotal(data []byte, k int) int {
	total := 0
	for range k {
		if len(data) < 4 {
			break
		}
		l := int(binary.LittleEndian.Uint32(data))
		if l > len(data)-4 {
			break
		}
		total += l
		data = data[4+l:]
	}
	return total
}

// grow makes room for extra more bytes of byte array values, and 16 bytes
// of slack past them for the block copies of short values.
func (o *plainOut) grow(extra int) error {
	need := o.used + extra + 16
	if need > 1<<31-1 {
		return errors.New("byte array values of one batch exceed 2 GiB")
	}
	if need > o.values.Cap() {
		o.values.Reserve(max(need, o.values.Cap()+o.values.Cap()/2))
	}
	return nil
}

// rleBits reads definition levels of bit width 1 in Parquet's RLE /
// bit-packed hybrid encoding (a varint header; an even header h is a run of
// h>>1 copies of the next byte's value, an odd one (h>>1)·8 bit-packed
// values, least significant bit first): 1 = defined, 0 = null.
type rleBits struct {
	data []byte
	// left counts the levels the page still declares.
	left int
	// run is the current run: rle of count copies of value, or count
	// packed bits from bit of data.
	rle   bool
	value bool
	count int
	bit   int
}

// read sets the bits of valid at [pos, pos+k) of the next k levels that
// are 1 (valid's bits there are clear) and returns how many were.
func (r *rleBits) read(valid []byte, pos, k int) (int, error) {
	if k > r.left {
		return 0, errors.New("more rows than definition levels")
	}
	r.left -= k
	defined := 0
	for k > 0 {
		if r.count == 0 {
			if err := r.nextRun(); err != nil {
				return 0, err
			}
			continue
		}
		m := min(k, r.count)
		if r.rle {
			if r.value {
				bitutil.SetBitsTo(valid, int64(pos), int64(m), true)
				defined += m
			}
		} else {
			bitutil.CopyBitmap(r.data, r.bit, m, valid, pos)
			defined += countBits(r.data, r.bit, m)
			r.bit += m
		}
		r.count -= m
		pos += m
		k -= m
	}
	return defined, nil
}

// nextRun decodes the next run's header.
func (r *rleBits) nextRun() error {
	if !r.rle && r.bit > 0 {
		// Leave the bytes of the last bit-packed run.
		r.data = r.data[(r.bit+7)/8:]
		r.bit = 0
	}
	h, n := binary.Uvarint(r.data)
	if n <= 0 || h == 0 {
		return errors.New("bad definition level run")
	}
	r.data = r.data[n:]
	if h&1 == 0 {
		if len(r.data) < 1 || r.data[0] > 1 || h>>1 > 1<<31 {
			return errors.New("bad definition level run")
		}
		r.rle, r.value, r.count = true, r.data[0] == 1, int(h>>1)
		r.data = r.data[1:]
		return nil
	}
	groups := h >> 1
	if groups > uint64(len(r.data)) {
		return errors.New("definition levels run past the end of their region")
	}
	r.rle, r.count, r.bit = false, int(groups)*8, 0
	return nil
}

// countBits counts the set bits of n bits of b from bit off.
func countBits(b []byte, off, n int) int {
	count := 0
	for n > 0 && off%8 != 0 {
		if bitutil.BitIsSet(b, off) {
			count++
		}
		off++
		n--
	}
	for ; n >= 64; n -= 64 {
		count += bits.OnesCount64(binary.LittleEndian.Uint64(b[off/8:]))
		off += 64
	}
	for ; n >= 8; n -= 8 {
		count += bits.OnesCount8(b[off/8])
		off += 8
	}
	for ; n > 0; n-- {
		if bitutil.BitIsSet(b, off) {
			count++
		}
		off++
	}
	return count
}
