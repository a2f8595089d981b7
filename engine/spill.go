package engine

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/big"
	"os"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Result spills: rows of a result that must outlive what produces them go
// to a file in the server's temp dir, and are read back from there. A held
// cursor is materialised at COMMIT (PostgreSQL's rule: its query's
// transaction, snapshot, catalog connection and DuckDB stream end with the
// transaction), and a DuckDB stream is parked when its connection is
// needed for something else (duckconn.go). Memory stays that of a buffer
// whatever the result's size; disk space is bounded by resultSpace.
//
// A file holds rows of the values portals hand to pgwire (pgwire.Portal's
// value types, arrays and records of them, intervals), and the catalog's
// text of a catalog query's values (catalogText), decoded when read: the
// bytes written are exactly what is read back, so a spilled row reaches the
// client as the row it was. The file is unlinked as soon as it is created,
// so it goes with its descriptor, whatever ends the server.

// resultSpace bounds the disk the server's result spills use at once.
type resultSpace struct {
	dir   string
	limit int64 // bytes; <= 0: none
	used  atomic.Int64
}

// reserve accounts n more bytes, or fails with 53100 when they do not fit.
func (r *resultSpace) reserve(n int64) error {
	if used := r.used.Add(n); r.limit > 0 && used > r.limit {
		r.used.Add(-n)
		return &sqlerr.Error{Code: sqlerr.DiskFull,
			Message: fmt.Sprintf("could not write to temporary file: the server's temp space for results (%d kB) is used up", r.limit/1024),
			Hint:    "Fetch or close held cursors and suspended portals sooner, or raise the server's --temp-space-limit."}
	}
	return nil
}

func (r *resultSpace) release(n int64) { r.used.Add(-n) }

// catalogText is a catalog query's value in the catalog's text form, kept
// as such in a spill and decoded (decodeText) by the column's type when
// read back.
type catalogText []byte

// spillWriter writes rows to a new spill file. It is a pgwire.RowWriter.
type spillWriter struct {
	space *resultSpace
	f     *os.File
	w     *bufio.Writer
	buf   []byte
	size  int64 // bytes reserved (and written)
	rows  int64
}

// newSpill creates an empty spill file.
func (e *Engine) newSpill() (*spillWriter, error) {
	f, err := e.createSpillFile("lakesoul-result-*")
	if err != nil {
		return nil, err
	}
	return &spillWriter{space: &e.results, f: f, w: bufio.NewWriterSize(f, 64<<10)}, nil
}

// createSpillFile creates an empty file (named by pattern, as
// os.CreateTemp) in the temp space's directory, creating the directory if
// it is gone. The file is unlinked at once: the space is given back when it
// is closed, or by the kernel whatever ends the process.
func (e *Engine) createSpillFile(pattern string) (*os.File, error) {
	f, err := os.CreateTemp(e.results.dir, pattern)
	if errors.Is(err, fs.ErrNotExist) && os.MkdirAll(e.results.dir, 0o700) == nil {
		f, err = os.CreateTemp(e.results.dir, pattern)
	}
	if err != nil {
		return nil, sqlerr.From(err)
	}
	_ = os.Remove(f.Name())
	return f, nil
}

// keepsCatalogText tells catalogPortal to hand over its values as the
// catalog's text (catalogText).
func (w *spillWriter) keepsCatalogText() {}

// WriteRow implements pgwire.RowWriter.
func (w *spillWriter) WriteRow(vals []any) error {
	b := binary.AppendUvarint(w.buf[:0], uint64(len(vals)))
	var err error
	for _, v := range vals {
		if b, err = appendSpillValue(b, v); err != nil {
			return err
		}
	}
	w.buf = b
	if err := w.space.reserve(int64(len(b))); err != nil {
		return err
	}
	w.size += int64(len(b))
	if _, err := w.w.Write(b); err != nil {
		return sqlerr.From(err)
	}
	w.rows++
	return nil
}

// finish flushes the file and returns its reader.
func (w *spillWriter) finish() (*spillReader, error) {
	if err := w.w.Flush(); err != nil {
		w.abort()
		return nil, sqlerr.From(err)
	}
	if _, err := w.f.Seek(0, io.SeekStart); err != nil {
		w.abort()
		return nil, sqlerr.From(err)
	}
	return &spillReader{space: w.space, f: w.f, r: bufio.NewReaderSize(w.f, 64<<10), size: w.size, left: w.rows, rows: w.rows}, nil
}

// abort deletes the file.
func (w *spillWriter) abort() {
	w.f.Close()
	w.space.release(w.size)
	w.size = 0
}

// spillReader reads a spill file's rows once, in order.
type spillReader struct {
	space *resultSpace
	f     *os.File
	r     *bufio.Reader
	size  int64
	left  int64 // rows not yet read
	rows  int64 // rows in the file
	// types decodes catalogText values (made on first need).
	types *pgtype.Map
}

// next reads the next row into vals (one per column; catalogText decoded
// by cols' types). False at the end.
func (r *spillReader) next(cols []pgwire.Column, vals []any) (bool, error) {
	if r.left == 0 {
		return false, nil
	}
	n, err := binary.ReadUvarint(r.r)
	if err != nil || int(n) != len(vals) {
		return false, spillCorrupt(err)
	}
	for i := range vals {
		v, err := readSpillValue(r.r)
		if err != nil {
			return false, spillCorrupt(err)
		}
		if t, ok := v.(catalogText); ok {
			if r.types == nil {
				r.types = pgtype.NewMap()
			}
			if v, err = decodeText(r.types, cols[i].TypeOID, t); err != nil {
				return false, err
			}
		}
		vals[i] = v
	}
	r.left--
	return true, nil
}

// rewind makes next read the file's first row again.
func (r *spillReader) rewind() error {
	if _, err := r.f.Seek(0, io.SeekStart); err != nil {
		return sqlerr.From(err)
	}
	r.r.Reset(r.f)
	r.left = r.rows
	return nil
}

// close deletes the file.
func (r *spillReader) close() {
	if r.f != nil {
		r.f.Close()
		r.f = nil
		r.space.release(r.size)
	}
}

func spillCorrupt(err error) error {
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return &sqlerr.Error{Code: sqlerr.IOError, Message: "could not read temporary file of a result", Err: err}
}

// Value tags of spill files.
const (
	spillNull byte = iota
	spillFalse
	spillTrue
	spillInt16
	spillInt32
	spillInt64
	spillFloat32
	spillFloat64
	spillString
	spillBytes
	spillTime
	spillUUID
	spillInterval
	spillNumeric
	spillArray
	spillRecord
	spillCatalogText
)

// appendSpillValue appends v's encoding; values of other types than those
// pgwire encodes are an error.
func appendSpillValue(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, spillNull), nil
	case bool:
		if x {
			return append(b, spillTrue), nil
		}
		return append(b, spillFalse), nil
	case int16:
		return binary.AppendVarint(append(b, spillInt16), int64(x)), nil
	case int32:
		return binary.AppendVarint(append(b, spillInt32), int64(x)), nil
	case int64:
		return binary.AppendVarint(append(b, spillInt64), x), nil
	case float32:
		return binary.LittleEndian.AppendUint32(append(b, spillFloat32), math.Float32bits(x)), nil
	case float64:
		return binary.LittleEndian.AppendUint64(append(b, spillFloat64), math.Float64bits(x)), nil
	case string:
		b = binary.AppendUvarint(append(b, spillString), uint64(len(x)))
		return append(b, x...), nil
	case []byte:
		b = binary.AppendUvarint(append(b, spillBytes), uint64(len(x)))
		return append(b, x...), nil
	case catalogText:
		b = binary.AppendUvarint(append(b, spillCatalogText), uint64(len(x)))
		return append(b, x...), nil
	case time.Time:
		// MarshalBinary keeps the instant and the zone offset, so the
		// wall clock a timestamp is printed by comes back.
		t, err := x.MarshalBinary()
		if err != nil {
			return nil, err
		}
		b = binary.AppendUvarint(append(b, spillTime), uint64(len(t)))
		return append(b, t...), nil
	case [16]byte:
		return append(append(b, spillUUID), x[:]...), nil
	case pgtype.Interval:
		b = append(b, spillInterval, boolByte(x.Valid))
		b = binary.AppendVarint(b, int64(x.Months))
		b = binary.AppendVarint(b, int64(x.Days))
		return binary.AppendVarint(b, x.Microseconds), nil
	case pgtype.Numeric:
		b = append(b, spillNumeric, boolByte(x.Valid), boolByte(x.NaN), byte(x.InfinityModifier))
		b = binary.AppendVarint(b, int64(x.Exp))
		if x.Int == nil {
			return append(b, 0), nil
		}
		b = append(b, byte(x.Int.Sign()+2)) // 1, 2, 3: negative, zero, positive
		mag := x.Int.Bytes()
		b = binary.AppendUvarint(b, uint64(len(mag)))
		return append(b, mag...), nil
	case []any:
		b = binary.AppendUvarint(append(b, spillArray), uint64(len(x)))
		var err error
		for _, e := range x {
			if b, err = appendSpillValue(b, e); err != nil {
				return nil, err
			}
		}
		return b, nil
	case pgwire.Record:
		if len(x.OIDs) != len(x.Values) {
			return nil, fmt.Errorf("spill: record of %d types and %d values", len(x.OIDs), len(x.Values))
		}
		b = binary.AppendUvarint(append(b, spillRecord), uint64(len(x.Values)))
		for _, oid := range x.OIDs {
			b = binary.AppendUvarint(b, uint64(oid))
		}
		var err error
		for _, e := range x.Values {
			if b, err = appendSpillValue(b, e); err != nil {
				return nil, err
			}
		}
		return b, nil
	}
	return nil, fmt.Errorf("spill: a result value of type %T cannot be kept", v)
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// readSpillValue reads one value appendSpillValue wrote.
func readSpillValue(r *bufio.Reader) (any, error) {
	tag, err := r.ReadByte()
	if err != nil {
		return nil, err
	}
	bytesOf := func() ([]byte, error) {
		n, err := binary.ReadUvarint(r)
		if err != nil {
			return nil, err
		}
		if n > math.MaxInt32 {
			return nil, fmt.Errorf("spill: a value of %d bytes", n)
		}
		out := make([]byte, n)
		_, err = io.ReadFull(r, out)
		return out, err
	}
	switch tag {
	case spillNull:
		return nil, nil
	case spillFalse:
		return false, nil
	case spillTrue:
		return true, nil
	case spillInt16, spillInt32, spillInt64:
		v, err := binary.ReadVarint(r)
		switch tag {
		case spillInt16:
			return int16(v), err
		case spillInt32:
			return int32(v), err
		}
		return v, err
	case spillFloat32:
		var x [4]byte
		_, err := io.ReadFull(r, x[:])
		return math.Float32frombits(binary.LittleEndian.Uint32(x[:])), err
	case spillFloat64:
		var x [8]byte
		_, err := io.ReadFull(r, x[:])
		return math.Float64frombits(binary.LittleEndian.Uint64(x[:])), err
	case spillString:
		s, err := bytesOf()
		return string(s), err
	case spillBytes:
		return bytesOf()
	case spillCatalogText:
		s, err := bytesOf()
		return catalogText(s), err
	case spillTime:
		s, err := bytesOf()
		if err != nil {
			return nil, err
		}
		var t time.Time
		return t, t.UnmarshalBinary(s)
	case spillUUID:
		var u [16]byte
		_, err := io.ReadFull(r, u[:])
		return u, err
	case spillInterval:
		valid, err := r.ReadByte()
		if err != nil {
			return nil, err
		}
		months, err1 := binary.ReadVarint(r)
		days, err2 := binary.ReadVarint(r)
		us, err3 := binary.ReadVarint(r)
		return pgtype.Interval{Months: int32(months), Days: int32(days), Microseconds: us, Valid: valid == 1}, errors.Join(err1, err2, err3)
	case spillNumeric:
		var hdr [4]byte
		if _, err := io.ReadFull(r, hdr[:3]); err != nil {
			return nil, err
		}
		exp, err := binary.ReadVarint(r)
		if err != nil {
			return nil, err
		}
		n := pgtype.Numeric{Valid: hdr[0] == 1, NaN: hdr[1] == 1, InfinityModifier: pgtype.InfinityModifier(int8(hdr[2])), Exp: int32(exp)}
		sign, err := r.ReadByte()
		if err != nil || sign == 0 {
			return n, err
		}
		mag, err := bytesOf()
		n.Int = new(big.Int).SetBytes(mag)
		if sign == 1 {
			n.Int.Neg(n.Int)
		}
		return n, err
	case spillArray:
		n, err := binary.ReadUvarint(r)
		if err != nil {
			return nil, err
		}
		if n > math.MaxInt32 {
			return nil, fmt.Errorf("spill: an array of %d elements", n)
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = readSpillValue(r); err != nil {
				return nil, err
			}
		}
		return out, nil
	case spillRecord:
		n, err := binary.ReadUvarint(r)
		if err != nil {
			return nil, err
		}
		if n > math.MaxInt32 {
			return nil, fmt.Errorf("spill: a record of %d fields", n)
		}
		rec := pgwire.Record{OIDs: make([]uint32, n), Values: make([]any, n)}
		for i := range rec.OIDs {
			oid, err := binary.ReadUvarint(r)
			if err != nil {
				return nil, err
			}
			rec.OIDs[i] = uint32(oid)
		}
		for i := range rec.Values {
			if rec.Values[i], err = readSpillValue(r); err != nil {
				return nil, err
			}
		}
		return rec, nil
	}
	return nil, fmt.Errorf("spill: unknown value tag %d", tag)
}

// spillPortal reads the rows of a spill (a held cursor after COMMIT).
type spillPortal struct {
	r    *spillReader
	cols []pgwire.Column
	vals []any
	n    int64
}

func newSpillPortal(r *spillReader, cols []pgwire.Column) *spillPortal {
	return &spillPortal{r: r, cols: cols, vals: make([]any, len(cols))}
}

func (p *spillPortal) Describe(context.Context) ([]pgwire.Column, error) { return p.cols, nil }

func (p *spillPortal) Execute(ctx context.Context, maxRows int, w pgwire.RowWriter) (string, bool, error) {
	for n := 0; maxRows == 0 || n < maxRows; n++ {
		if n%256 == 0 && ctx.Err() != nil {
			return "", true, sqlerr.ErrCanceled
		}
		ok, err := p.r.next(p.cols, p.vals)
		if err != nil {
			return "", true, err
		}
		if !ok {
			return fmt.Sprintf("SELECT %d", p.n), true, nil
		}
		if err := w.WriteRow(p.vals); err != nil {
			return "", true, err
		}
		p.n++
	}
	return "", false, nil
}

func (p *spillPortal) Close() { p.r.close() }
