package cdc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakesoul-go/lakesoul/schema"
)

// The initial copy from PostgreSQL reads COPY … TO STDOUT (FORMAT binary):
// cheaper for the source to produce and for us to decode than text. Columns
// whose binary form the lake column takes as is (integers, floats,
// booleans, strings, bytea, dates, timestamps) come in binary; every other
// column is cast to text in the COPY's query and arrives in its text form,
// as pgoutput sends it (copyColumn).

// binaryCopyable reports whether a source column is copied in binary.
func binaryCopyable(c Column) bool {
	switch c.TypeOID {
	case schema.OIDInt2, schema.OIDInt4, schema.OIDInt8, schema.OIDFloat4, schema.OIDFloat8, schema.OIDBool,
		schema.OIDText, schema.OIDVarchar, schema.OIDBPChar, oidName, schema.OIDBytea,
		schema.OIDDate, schema.OIDTimestamp, schema.OIDTimestamptz:
		return true
	}
	return false
}

// copyColumn is a column's expression in the COPY query.
func copyColumn(c Column) string {
	if binaryCopyable(c) {
		return quoteIdent(c.Name)
	}
	return quoteIdent(c.Name) + "::text"
}

var copySignature = []byte("PGCOPY\n\xff\r\n\x00")

// copyBinaryWriter splits COPY's binary format into rows.
type copyBinaryWriter struct {
	cols    []Column
	row     func([]value) error
	pending []byte
	header  bool
	done    bool
	vals    []value
	kinds   []byte // each column's value kind (copyColumn decides)
}

var errShortTuple = errors.New("short")

func (w *copyBinaryWriter) Write(p []byte) (int, error) {
	n := len(p)
	if len(w.pending) > 0 {
		w.pending = append(w.pending, p...)
		p = w.pending
	}
	for len(p) > 0 && !w.done {
		used, err := w.next(p)
		if errors.Is(err, errShortTuple) {
			break
		}
		if err != nil {
			return 0, err
		}
		p = p[used:]
	}
	w.pending = append(w.pending[:0], p...)
	return n, nil
}

// next decodes the header or one tuple at the start of p and returns the
// bytes it used; errShortTuple when p holds only part of it.
func (w *copyBinaryWriter) next(p []byte) (int, error) {
	if !w.header {
		if len(p) < len(copySignature)+8 {
			return 0, errShortTuple
		}
		if !bytes.Equal(p[:len(copySignature)], copySignature) {
			return 0, fmt.Errorf("COPY binary data: bad signature")
		}
		ext := int(binary.BigEndian.Uint32(p[len(copySignature)+4:]))
		if len(p) < len(copySignature)+8+ext {
			return 0, errShortTuple
		}
		w.header = true
		return len(copySignature) + 8 + ext, nil
	}
	if len(p) < 2 {
		return 0, errShortTuple
	}
	nf := int(int16(binary.BigEndian.Uint16(p)))
	if nf == -1 {
		w.done = true
		return 2, nil
	}
	if nf != len(w.cols) {
		return 0, fmt.Errorf("COPY binary row has %d fields, want %d", nf, len(w.cols))
	}
	if len(w.kinds) != nf {
		w.kinds = make([]byte, nf)
		for i, c := range w.cols {
			w.kinds[i] = valText
			if binaryCopyable(c) {
				w.kinds[i] = valBinary
			}
		}
	}
	if cap(w.vals) < nf {
		w.vals = make([]value, nf)
	}
	vals := w.vals[:nf]
	at := 2
	for i := 0; i < nf; i++ {
		if len(p) < at+4 {
			return 0, errShortTuple
		}
		l := int(int32(binary.BigEndian.Uint32(p[at:])))
		at += 4
		if l < 0 {
			vals[i] = value{kind: valNull}
			continue
		}
		if len(p) < at+l {
			return 0, errShortTuple
		}
		vals[i] = value{kind: w.kinds[i], data: p[at : at+l]}
		at += l
	}
	return at, w.row(vals)
}

// finish reports data that ended inside a row.
func (w *copyBinaryWriter) finish() error {
	if len(w.pending) > 0 || !w.done {
		return fmt.Errorf("COPY binary data ended inside a row")
	}
	return nil
}

// Epoch offsets of PostgreSQL's binary dates and timestamps (2000-01-01).
const (
	pgEpochDays   = 10957
	pgEpochMicros = 946684800000000
)

// appendBinary appends a value in PostgreSQL's binary send format to b, of
// lake type dt (binaryCopyable columns only).
func appendBinary(b array.Builder, dt arrow.DataType, v []byte) error {
	intOf := func() (int64, error) {
		switch len(v) {
		case 2:
			return int64(int16(binary.BigEndian.Uint16(v))), nil
		case 4:
			return int64(int32(binary.BigEndian.Uint32(v))), nil
		case 8:
			return int64(binary.BigEndian.Uint64(v)), nil
		}
		return 0, fmt.Errorf("an integer of %d bytes", len(v))
	}
	switch dt.(type) {
	case *arrow.StringType:
		b.(*array.StringBuilder).BinaryBuilder.Append(v)
	case *arrow.BinaryType:
		b.(*array.BinaryBuilder).Append(v)
	case *arrow.Int64Type:
		n, err := intOf()
		if err != nil {
			return err
		}
		b.(*array.Int64Builder).Append(n)
	case *arrow.Int32Type:
		n, err := intOf()
		if err != nil {
			return err
		}
		b.(*array.Int32Builder).Append(int32(n))
	case *arrow.Int16Type:
		n, err := intOf()
		if err != nil {
			return err
		}
		b.(*array.Int16Builder).Append(int16(n))
	case *arrow.Float64Type:
		if len(v) != 8 {
			return fmt.Errorf("a float8 of %d bytes", len(v))
		}
		b.(*array.Float64Builder).Append(math.Float64frombits(binary.BigEndian.Uint64(v)))
	case *arrow.Float32Type:
		if len(v) != 4 {
			return fmt.Errorf("a float4 of %d bytes", len(v))
		}
		b.(*array.Float32Builder).Append(math.Float32frombits(binary.BigEndian.Uint32(v)))
	case *arrow.BooleanType:
		if len(v) != 1 {
			return fmt.Errorf("a boolean of %d bytes", len(v))
		}
		b.(*array.BooleanBuilder).Append(v[0] != 0)
	case *arrow.Date32Type:
		if len(v) != 4 {
			return fmt.Errorf("a date of %d bytes", len(v))
		}
		d := int32(binary.BigEndian.Uint32(v))
		if d == math.MaxInt32 || d == math.MinInt32 {
			return errInfinite
		}
		b.(*array.Date32Builder).Append(arrow.Date32(d + pgEpochDays))
	case *arrow.TimestampType:
		if len(v) != 8 {
			return fmt.Errorf("a timestamp of %d bytes", len(v))
		}
		us := int64(binary.BigEndian.Uint64(v))
		if us == math.MaxInt64 || us == math.MinInt64 {
			return errInfinite
		}
		b.(*array.TimestampBuilder).Append(arrow.Timestamp(us + pgEpochMicros))
	default:
		return fmt.Errorf("no binary conversion into %s", dt)
	}
	return nil
}
