package pgwire

import (
	"encoding/binary"
	"fmt"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// rowDescription builds the RowDescription of cols; formats gives each
// column's wire format (nil = all text, as in a statement Describe).
func rowDescription(cols []Column, formats []int16) *pgproto3.RowDescription {
	fields := make([]pgproto3.FieldDescription, len(cols))
	for i, col := range cols {
		fields[i] = pgproto3.FieldDescription{
			Name:                 []byte(col.Name),
			TableOID:             col.TableOID,
			TableAttributeNumber: uint16(col.AttrNum),
			DataTypeOID:          col.TypeOID,
			DataTypeSize:         col.TypeSize,
			TypeModifier:         col.TypeModifier,
		}
		if formats != nil {
			fields[i].Format = formats[i]
		}
	}
	return &pgproto3.RowDescription{Fields: fields}
}

// rowWriter is the RowWriter handed to Portal.Execute. It encodes each row
// as a DataRow directly into the connection's output buffer, which flushes
// itself past flushThreshold.
//
// Invariant: the output buffer only ever holds whole messages; a row that
// fails to encode leaves no trace.
type rowWriter struct {
	c       *conn
	cols    []Column
	formats []int16 // one per column
	// rowStart is the offset in the output buffer of the DataRow BeginRow
	// started; field counts the fields appended to it.
	rowStart int
	field    int
}

// RowBuilder is implemented by the RowWriter pgwire hands to Portal.Execute.
// A portal that can encode some of its values itself (a text value's wire
// form is its bytes) builds each DataRow field by field instead of boxing
// every value for WriteRow:
//
//	rb.BeginRow(); rb.AppendField(...); rb.AppendValue(...); rb.AppendNull(); rb.EndRow()
//
// with exactly one Append call per column, in column order. AppendField takes
// a field's encoding in the column's format (Formats); AppendValue encodes v
// as WriteRow would. When AppendValue fails, the row is dropped from the
// output and the caller must not continue it.
type RowBuilder interface {
	RowWriter
	Formats() []int16
	BeginRow()
	AppendField(b []byte)
	AppendNull()
	AppendValue(v any) error
	EndRow() error
}

// Formats implements RowBuilder.
func (w *rowWriter) Formats() []int16 { return w.formats }

// BeginRow implements RowBuilder.
func (w *rowWriter) BeginRow() {
	buf := w.c.out.buf
	w.rowStart = len(buf)
	w.c.out.open = w.rowStart + 1
	w.field = 0
	buf = append(buf, 'D', 0, 0, 0, 0)
	w.c.out.buf = binary.BigEndian.AppendUint16(buf, uint16(len(w.cols)))
}

// AppendField implements RowBuilder.
func (w *rowWriter) AppendField(b []byte) {
	buf := binary.BigEndian.AppendUint32(w.c.out.buf, uint32(len(b)))
	w.c.out.buf = append(buf, b...)
	w.field++
}

// AppendNull implements RowBuilder.
func (w *rowWriter) AppendNull() {
	w.c.out.buf = binary.BigEndian.AppendUint32(w.c.out.buf, ^uint32(0))
	w.field++
}

// AppendValue implements RowBuilder.
func (w *rowWriter) AppendValue(v any) error {
	buf := w.c.out.buf
	lenAt := len(buf)
	buf = append(buf, 0, 0, 0, 0)
	col := w.cols[w.field]
	enc, err := w.c.encodeValue(col.TypeOID, w.formats[w.field], v, buf)
	if err != nil {
		w.c.out.buf, w.c.out.open = w.c.out.buf[:w.rowStart], 0
		return fmt.Errorf("pgwire: encode column %q: %w", col.Name, err)
	}
	if enc == nil { // SQL NULL
		binary.BigEndian.PutUint32(buf[lenAt:], ^uint32(0))
	} else {
		buf = enc
		binary.BigEndian.PutUint32(buf[lenAt:], uint32(len(buf)-lenAt-4))
	}
	w.c.out.buf = buf
	w.field++
	return nil
}

// EndRow implements RowBuilder.
func (w *rowWriter) EndRow() error {
	out := &w.c.out
	out.open = 0 // the row is finished or dropped below
	if w.field != len(w.cols) {
		out.buf = out.buf[:w.rowStart]
		return fmt.Errorf("pgwire: row has %d values but the statement has %d columns", w.field, len(w.cols))
	}
	if out.err != nil {
		out.buf = out.buf[:w.rowStart]
		return out.err
	}
	if err := w.c.checkRowSize(w.rowStart); err != nil {
		return err
	}
	binary.BigEndian.PutUint32(out.buf[w.rowStart+1:], uint32(len(out.buf)-w.rowStart-1))
	return out.maybeFlush()
}

// checkRowSize fails with 54000, dropping the row, when the message started
// at offset start of the output buffer is larger than Config.MaxRowSize.
func (c *conn) checkRowSize(start int) error {
	n := len(c.out.buf) - start
	if n <= c.srv.cfg.MaxRowSize {
		return nil
	}
	c.out.truncate(start)
	return &sqlerr.Error{Code: sqlerr.ProgramLimitExceeded,
		Message: fmt.Sprintf("result row of %d bytes exceeds the maximum row size of %d bytes", n, c.srv.cfg.MaxRowSize),
		Hint:    "Select fewer or smaller values per row, or raise the server's --max-row-size."}
}

// WriteRow implements RowWriter.
func (w *rowWriter) WriteRow(values []any) error {
	if err := w.c.out.err; err != nil {
		return err
	}
	if len(values) != len(w.cols) {
		return fmt.Errorf("pgwire: row has %d values but the statement has %d columns", len(values), len(w.cols))
	}
	w.BeginRow()
	for _, v := range values {
		if err := w.AppendValue(v); err != nil {
			return err
		}
	}
	return w.EndRow()
}
