package pgwire

import (
	"encoding/binary"
	"fmt"

	"github.com/jackc/pgx/v5/pgproto3"
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
}

// WriteRow implements RowWriter.
func (w *rowWriter) WriteRow(values []any) error {
	out := &w.c.out
	if out.err != nil {
		return out.err
	}
	if len(values) != len(w.cols) {
		return fmt.Errorf("pgwire: row has %d values but the statement has %d columns", len(values), len(w.cols))
	}
	buf := out.buf
	start := len(buf)
	buf = append(buf, 'D', 0, 0, 0, 0)
	buf = binary.BigEndian.AppendUint16(buf, uint16(len(values)))
	for i, v := range values {
		lenAt := len(buf)
		buf = append(buf, 0, 0, 0, 0)
		enc, err := w.c.encodeValue(w.cols[i].TypeOID, w.formats[i], v, buf)
		if err != nil {
			return fmt.Errorf("pgwire: encode column %q: %w", w.cols[i].Name, err)
		}
		if enc == nil { // SQL NULL
			binary.BigEndian.PutUint32(buf[lenAt:], ^uint32(0))
			continue
		}
		buf = enc
		binary.BigEndian.PutUint32(buf[lenAt:], uint32(len(buf)-lenAt-4))
	}
	binary.BigEndian.PutUint32(buf[start+1:], uint32(len(buf)-start-1))
	out.buf = buf
	return out.maybeFlush()
}
