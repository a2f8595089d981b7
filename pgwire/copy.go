package pgwire

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// The COPY sub-protocol (see CopyInPortal and CopyOutPortal in handler.go).

// codeBadCopyFileFormat is SQLSTATE 22P04.
const codeBadCopyFileFormat = "22P04"

// maxCopyFieldSize bounds one field of binary COPY data, as PostgreSQL's
// 1 GB limit does.
const maxCopyFieldSize = 1<<30 - 1

// keptRowBuffer is the largest row buffer a COPY reader keeps for the next
// rows.
const keptRowBuffer = 1 << 20

// binaryCopySignature starts every binary COPY stream.
var binaryCopySignature = []byte("PGCOPY\n\xff\r\n\x00")

// copyIn runs COPY … FROM STDIN for pt.
func (c *conn) copyIn(cp CopyInPortal) (string, bool, error) {
	f := cp.CopyInFormat().WithDefaults(true)
	overall := int16(pgproto3.TextFormat)
	if f.Kind == CopyBinary {
		overall = pgproto3.BinaryFormat
	}
	colFormats := make([]uint16, f.Columns)
	for i := range colFormats {
		colFormats[i] = uint16(overall)
	}
	if err := c.out.send(&pgproto3.CopyInResponse{OverallFormat: byte(overall), ColumnFormatCodes: colFormats}); err != nil {
		return "", false, err
	}
	if c.in != nil {
		// The client streams the data: read it far ahead (copyInAhead).
		c.in.setAhead(copyInAhead)
		defer c.in.setAhead(inputAhead)
	}
	if err := c.out.flush(); err != nil {
		return "", false, err
	}
	src := &copyInStream{c: c}
	rr := newCopyRowReader(src, f)
	rr.maxRow = c.srv.cfg.MaxRowSize
	var tag string
	err := c.call(c.ctx, func(ctx context.Context) error {
		src.ctx = ctx
		var err error
		tag, err = cp.CopyIn(ctx, rr)
		return err
	})
	if src.fatal != nil {
		return "", false, src.fatal
	}
	if endsConnection(err) {
		return "", false, err
	}
	if perr := c.reportParameterChanges(); perr != nil {
		return "", false, perr
	}
	if err != nil {
		// Copy messages the client still sends are ignored by the message
		// loop, as PostgreSQL does after a failed COPY.
		return "", false, err
	}
	if !src.ended {
		// The SQL layer stopped early: discard the rest of the data.
		src.ctx = c.ctx
		if _, err := io.Copy(io.Discard, src); err != nil {
			if src.fatal != nil {
				return "", false, src.fatal
			}
			return "", false, err
		}
	}
	return tag, true, nil
}

// copyInStream is the byte stream of the client's CopyData messages. It reads
// messages straight from the connection; CopyDone ends it (io.EOF), CopyFail
// fails it with 57014.
type copyInStream struct {
	c   *conn
	ctx context.Context
	// data is the unread rest of the current CopyData (valid until the next
	// Receive).
	data  []byte
	ended bool
	err   error
	// fatal is set when the connection itself failed: the connection ends.
	fatal error
}

func (s *copyInStream) Read(p []byte) (int, error) {
	for len(s.data) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		if s.ended {
			return 0, io.EOF
		}
		if err := s.ctx.Err(); err != nil {
			// Cancelled: the call's error becomes 57014 (or the shutdown).
			s.err = sqlerr.ErrCanceled
			return 0, s.err
		}
		msg, err := s.c.rd.receive()
		if tooBig, ok := skippedOversized(err); ok {
			// The COPY fails; the client's remaining COPY messages are
			// ignored by the message loop.
			s.err = tooBig.sqlError()
			return 0, s.err
		}
		if err != nil {
			s.fatal = s.c.receiveError(err)
			s.err = s.fatal
			return 0, s.err
		}
		switch m := msg.(type) {
		case *pgproto3.CopyData:
			s.data = m.Data
		case *pgproto3.CopyDone:
			s.ended = true
		case *pgproto3.CopyFail:
			s.ended = true
			s.err = sqlerr.New(sqlerr.QueryCanceled, "COPY from stdin failed: %s", m.Message)
		case *pgproto3.Flush, *pgproto3.Sync:
			// Ignored during COPY FROM STDIN, as in PostgreSQL.
		case *pgproto3.Terminate:
			s.fatal = errTerminate
			s.err = s.fatal
		default:
			s.ended = true
			s.err = protocolViolation("unexpected message type %s during COPY from stdin", messageName(msg))
		}
	}
	n := copy(p, s.data)
	s.data = s.data[n:]
	return n, nil
}

// copyRowReader decodes rows of one COPY FROM stream. It implements
// CopyRowReader.
type copyRowReader struct {
	r      *bufio.Reader
	f      CopyFormat
	line   int64
	fields [][]byte
	// buf holds the current row's bytes (a long line, de-escaped fields,
	// binary values); fields point into it or into the reader's buffer.
	buf    []byte
	rec    []byte // de-escaped (text) or unquoted (CSV) field bytes
	long   []byte // a line longer than the read buffer
	ends   []int  // field boundaries in buf or rec
	nulls  []bool
	header bool // the header line is still to be skipped
	done   bool
	// maxRow bounds the bytes of one row (a text line, a CSV record, a
	// binary tuple's field data); 0 = no bound.
	maxRow int
	// binary state
	binStarted bool
}

func newCopyRowReader(src io.Reader, f CopyFormat) *copyRowReader {
	// buf and rec start non-nil: fields are slices of them, and an empty
	// slice of a nil buffer would be nil, which means NULL.
	return &copyRowReader{r: bufio.NewReaderSize(src, 256<<10), f: f, header: f.Header && f.Kind != CopyBinary,
		buf: make([]byte, 0, 4<<10), rec: make([]byte, 0, 4<<10)}
}

// Line implements CopyRowReader.
func (r *copyRowReader) Line() int64 { return r.line }

// ReadRow implements CopyRowReader.
func (r *copyRowReader) ReadRow() ([][]byte, error) {
	if r.done {
		return nil, io.EOF
	}
	// The buffers of one huge row are not kept for the rest of the COPY.
	if cap(r.buf) > keptRowBuffer {
		r.buf = make([]byte, 0, 4<<10)
	}
	if cap(r.rec) > keptRowBuffer {
		r.rec = make([]byte, 0, 4<<10)
	}
	if cap(r.long) > keptRowBuffer {
		r.long = nil
	}
	var row [][]byte
	var err error
	switch r.f.Kind {
	case CopyBinary:
		row, err = r.readBinary()
	case CopyCSV:
		row, err = r.readCSV()
	default:
		row, err = r.readText()
	}
	if err == io.EOF {
		r.done = true
		// Whatever follows an end marker (\. or the binary trailer) up to
		// CopyDone is discarded.
		if _, derr := io.Copy(io.Discard, r.r); derr != nil {
			return nil, derr
		}
	}
	return row, err
}

// readLine returns the next line without its line ending, or io.EOF. The
// slice is valid until the next call.
func (r *copyRowReader) readLine() ([]byte, error) {
	line, err := r.readRawLine()
	if err != nil {
		return nil, err
	}
	line = bytes.TrimSuffix(line, []byte{'\n'})
	return bytes.TrimSuffix(line, []byte{'\r'}), nil
}

func badCopy(format string, args ...any) error {
	return sqlerr.New(codeBadCopyFileFormat, format, args...)
}

// readText reads one row of the text format.
func (r *copyRowReader) readText() ([][]byte, error) {
	for {
		line, err := r.readLine()
		if err != nil {
			return nil, err
		}
		if r.header {
			r.header = false
			continue
		}
		if len(line) == 2 && line[0] == '\\' && line[1] == '.' {
			return nil, io.EOF
		}
		return r.splitText(line)
	}
}

// splitText splits a text-format line into fields and resolves escapes. A
// field is NULL when its raw text is the NULL marker.
func (r *copyRowReader) splitText(line []byte) ([][]byte, error) {
	d := r.f.Delimiter
	r.fields = r.fields[:0]
	if bytes.IndexByte(line, '\\') < 0 {
		// No escapes (the common case): the fields are the pieces between
		// delimiters, found by IndexByte rather than byte by byte.
		for {
			i := bytes.IndexByte(line, d)
			if i < 0 {
				i = len(line)
			}
			raw := line[:i:i]
			if string(raw) == r.f.Null {
				raw = nil
			}
			r.fields = append(r.fields, raw)
			if i == len(line) {
				return r.fields, nil
			}
			line = line[i+1:]
		}
	}
	scratch := r.rec[:0] // de-escaped fields
	start, i := 0, 0
	escaped := false
	for {
		end := i >= len(line)
		if !end {
			b := line[i]
			if b == '\\' {
				escaped = true
				i += 2
				continue
			}
			if b != d {
				i++
				continue
			}
		}
		raw := line[start:min(i, len(line))]
		switch {
		case string(raw) == r.f.Null:
			r.fields = append(r.fields, nil)
		case escaped:
			from := len(scratch)
			scratch = unescapeText(scratch, raw)
			// Record the offset; slices are taken once scratch stops growing.
			r.fields = append(r.fields, scratch[from:len(scratch):len(scratch)])
		default:
			r.fields = append(r.fields, raw[:len(raw):len(raw)])
		}
		if end {
			break
		}
		i++
		start, escaped = i, false
	}
	r.rec = scratch
	return r.fields, nil
}

// unescapeText appends the de-escaped form of a text-format field to dst. A
// lone backslash at the end stays a backslash.
func unescapeText(dst, raw []byte) []byte {
	for i := 0; i < len(raw); i++ {
		b := raw[i]
		if b != '\\' {
			dst = append(dst, b)
			continue
		}
		i++
		if i >= len(raw) {
			return append(dst, '\\')
		}
		switch c := raw[i]; c {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'v':
			dst = append(dst, '\v')
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := int(c - '0')
			for k := 0; k < 2 && i+1 < len(raw) && raw[i+1] >= '0' && raw[i+1] <= '7'; k++ {
				i++
				v = v*8 + int(raw[i]-'0')
			}
			dst = append(dst, byte(v))
		case 'x':
			if i+1 < len(raw) && isHex(raw[i+1]) {
				i++
				v := hexVal(raw[i])
				if i+1 < len(raw) && isHex(raw[i+1]) {
					i++
					v = v*16 + hexVal(raw[i])
				}
				dst = append(dst, byte(v))
			} else {
				dst = append(dst, 'x')
			}
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

func isHex(b byte) bool {
	return (b >= '0' && b <= '9') || (b >= 'a' && b <= 'f') || (b >= 'A' && b <= 'F')
}

func hexVal(b byte) int {
	switch {
	case b >= '0' && b <= '9':
		return int(b - '0')
	case b >= 'a' && b <= 'f':
		return int(b-'a') + 10
	}
	return int(b-'A') + 10
}

// readRawLine returns the next line with its line ending, or io.EOF.
func (r *copyRowReader) readRawLine() ([]byte, error) {
	line, err := r.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		r.long = append(r.long[:0], line...)
		for err == bufio.ErrBufferFull {
			if r.maxRow > 0 && len(r.long) > r.maxRow {
				return nil, r.rowTooLarge(r.line + 1)
			}
			line, err = r.r.ReadSlice('\n')
			r.long = append(r.long, line...)
		}
		line = r.long
	}
	if err != nil && err != io.EOF {
		return nil, err
	}
	if err == io.EOF && len(line) == 0 {
		return nil, io.EOF
	}
	r.line++
	if r.maxRow > 0 && len(line) > r.maxRow {
		return nil, r.rowTooLarge(r.line)
	}
	return line, nil
}

// rowTooLarge is the error for a row beyond maxRow at line (row) line.
func (r *copyRowReader) rowTooLarge(line int64) error {
	return &sqlerr.Error{Code: sqlerr.ProgramLimitExceeded,
		Message: fmt.Sprintf("COPY row exceeds the maximum row size of %d bytes", r.maxRow),
		Hint:    "Raise the server's --max-row-size to load such rows.",
		Where:   fmt.Sprintf("COPY, line %d", line)}
}

// readCSV reads one CSV record, which may span lines inside quotes.
func (r *copyRowReader) readCSV() ([][]byte, error) {
	for {
		line, err := r.readRawLine()
		if err != nil {
			return nil, err
		}
		if r.header {
			r.header = false
			continue
		}
		if t := bytes.TrimRight(line, "\r\n"); len(t) == 2 && t[0] == '\\' && t[1] == '.' {
			return nil, io.EOF
		}
		return r.splitCSV(line)
	}
}

// splitCSV parses a CSV record starting with line (line ending included);
// a quoted field that continues past the line reads more lines.
func (r *copyRowReader) splitCSV(line []byte) ([][]byte, error) {
	d, q, e := r.f.Delimiter, r.f.Quote, r.f.Escape
	r.fields = r.fields[:0]
	r.ends = r.ends[:0]
	r.nulls = r.nulls[:0]
	rec := r.rec[:0] // the record's unquoted field bytes
	fieldStart := 0
	quoted := false   // the current field had quotes
	inQuotes := false // inside a quoted section
	i := 0
	for {
		if i >= len(line) {
			if inQuotes {
				next, err := r.readRawLine()
				if err == io.EOF {
					return nil, badCopy("unterminated CSV quoted field")
				}
				if err != nil {
					return nil, err
				}
				if r.maxRow > 0 && len(rec) > r.maxRow {
					return nil, r.rowTooLarge(r.line)
				}
				line, i = next, 0
				continue
			}
			r.endCSVField(rec, fieldStart, quoted)
			break
		}
		b := line[i]
		switch {
		case inQuotes && b == e && i+1 < len(line) && (line[i+1] == q || line[i+1] == e) && (e != q || line[i+1] == q):
			rec = append(rec, line[i+1])
			i += 2
			continue
		case inQuotes && b == q:
			inQuotes = false
		case inQuotes:
			rec = append(rec, b)
		case b == q:
			inQuotes, quoted = true, true
		case b == d:
			r.endCSVField(rec, fieldStart, quoted)
			fieldStart, quoted = len(rec), false
		case b == '\n' || b == '\r':
			// The line ending ends the record.
			i = len(line)
			continue
		default:
			rec = append(rec, b)
		}
		i++
	}
	r.rec = rec
	start := 0
	for k, end := range r.ends {
		if r.nulls[k] {
			r.fields = append(r.fields, nil)
		} else {
			r.fields = append(r.fields, rec[start:end:end])
		}
		start = end
	}
	return r.fields, nil
}

func (r *copyRowReader) endCSVField(rec []byte, start int, quoted bool) {
	r.ends = append(r.ends, len(rec))
	r.nulls = append(r.nulls, !quoted && string(rec[start:]) == r.f.Null)
}

// readBinary reads one tuple of the binary format.
func (r *copyRowReader) readBinary() ([][]byte, error) {
	if !r.binStarted {
		r.binStarted = true
		hdr := make([]byte, len(binaryCopySignature)+8)
		if _, err := io.ReadFull(r.r, hdr); err != nil {
			return nil, r.binaryEOF(err, "COPY file signature not recognized")
		}
		if !bytes.Equal(hdr[:len(binaryCopySignature)], binaryCopySignature) {
			return nil, badCopy("COPY file signature not recognized")
		}
		flags := binary.BigEndian.Uint32(hdr[len(binaryCopySignature):])
		if flags&(1<<16) != 0 {
			return nil, badCopy("COPY file with OIDs is not supported")
		}
		if flags&^(1<<16)&0xffff0000 != 0 {
			return nil, badCopy("unrecognized critical flags in COPY file header")
		}
		ext := binary.BigEndian.Uint32(hdr[len(binaryCopySignature)+4:])
		if _, err := r.r.Discard(int(ext)); err != nil {
			return nil, r.binaryEOF(err, "invalid COPY file header (wrong length)")
		}
	}
	var cnt [2]byte
	if _, err := io.ReadFull(r.r, cnt[:]); err != nil {
		if err == io.EOF {
			// No trailer: PostgreSQL accepts a stream that simply ends.
			return nil, io.EOF
		}
		return nil, r.binaryEOF(err, "unexpected EOF in COPY data")
	}
	n := int16(binary.BigEndian.Uint16(cnt[:]))
	if n == -1 {
		return nil, io.EOF
	}
	r.line++
	if n < 0 {
		return nil, badCopy("row field count is %d, expected %d", n, r.f.Columns)
	}
	r.buf = r.buf[:0]
	r.ends = r.ends[:0]
	r.nulls = r.nulls[:0]
	var lenBuf [4]byte
	for k := 0; k < int(n); k++ {
		if _, err := io.ReadFull(r.r, lenBuf[:]); err != nil {
			return nil, r.binaryEOF(err, "unexpected EOF in COPY data")
		}
		l := int32(binary.BigEndian.Uint32(lenBuf[:]))
		if l == -1 {
			r.ends = append(r.ends, len(r.buf))
			r.nulls = append(r.nulls, true)
			continue
		}
		if l < 0 || l > maxCopyFieldSize {
			return nil, badCopy("invalid field size")
		}
		if r.maxRow > 0 && len(r.buf)+int(l) > r.maxRow {
			return nil, r.rowTooLarge(r.line)
		}
		// Grow with the data actually received, not with the claimed size.
		for remaining := int(l); remaining > 0; {
			n := min(remaining, 1<<20)
			from := len(r.buf)
			r.buf = slices.Grow(r.buf, n)[:from+n]
			if _, err := io.ReadFull(r.r, r.buf[from:]); err != nil {
				return nil, r.binaryEOF(err, "unexpected EOF in COPY data")
			}
			remaining -= n
		}
		r.ends = append(r.ends, len(r.buf))
		r.nulls = append(r.nulls, false)
	}
	r.fields = r.fields[:0]
	start := 0
	for k, end := range r.ends {
		if r.nulls[k] {
			r.fields = append(r.fields, nil)
		} else {
			r.fields = append(r.fields, r.buf[start:end:end])
		}
		start = end
	}
	return r.fields, nil
}

// binaryEOF turns a short read of the binary format into 22P04, and passes
// other errors (CopyFail, connection loss) through.
func (r *copyRowReader) binaryEOF(err error, msg string) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return badCopy("%s", msg)
	}
	return err
}

// copyOut runs COPY … TO STDOUT for pt.
func (c *conn) copyOut(pt *portal, cp CopyOutPortal) (string, bool, error) {
	f, cols := cp.CopyOutFormat()
	f = f.WithDefaults(f.Kind != CopyText || f.Null != "")
	if f.Kind == CopyText && f.Null == "" {
		f.Null = `\N`
	}
	overall := int16(pgproto3.TextFormat)
	if f.Kind == CopyBinary {
		overall = pgproto3.BinaryFormat
	}
	colFormats := make([]uint16, len(cols))
	formats := make([]int16, len(cols))
	for i := range colFormats {
		colFormats[i] = uint16(overall)
		formats[i] = overall
	}
	if err := c.out.send(&pgproto3.CopyOutResponse{OverallFormat: byte(overall), ColumnFormatCodes: colFormats}); err != nil {
		return "", false, err
	}
	w := &copyRowWriter{c: c, f: f, cols: cols, formats: formats}
	switch {
	case f.Kind == CopyBinary:
		// The header goes with the first row, or the trailer, in one
		// CopyData message, as PostgreSQL sends it (psycopg 3 reads it so).
		w.pending = append(append([]byte(nil), binaryCopySignature...), 0, 0, 0, 0, 0, 0, 0, 0)
	case f.Header:
		if err := w.writeHeader(); err != nil {
			return "", false, err
		}
	}
	var tag string
	err := c.call(c.ctx, func(ctx context.Context) error {
		var err error
		tag, _, err = pt.p.Execute(ctx, 0, w)
		return err
	})
	if endsConnection(err) {
		return "", false, err
	}
	if perr := c.reportParameterChanges(); perr != nil {
		return "", false, perr
	}
	if err != nil {
		return "", false, err
	}
	if f.Kind == CopyBinary {
		if err := c.out.send(&pgproto3.CopyData{Data: append(w.pending, 0xff, 0xff)}); err != nil {
			return "", false, err
		}
	}
	if err := c.out.send(&pgproto3.CopyDone{}); err != nil {
		return "", false, err
	}
	return tag, true, nil
}

// copyRowWriter writes result rows as CopyData messages straight into the
// output buffer.
type copyRowWriter struct {
	c       *conn
	f       CopyFormat
	cols    []Column
	formats []int16
	scratch []byte
	// pending is what the next CopyData message starts with: the binary
	// header until the first row is written.
	pending []byte
}

// beginMessage starts a CopyData message in the output buffer and returns
// the buffer and the message's start.
func (w *copyRowWriter) beginMessage() ([]byte, int) {
	buf := w.c.out.buf
	start := len(buf)
	return append(buf, 'd', 0, 0, 0, 0), start
}

func (w *copyRowWriter) endMessage(buf []byte, start int) error {
	w.c.out.buf = buf
	if err := w.c.checkRowSize(start); err != nil {
		return err
	}
	binary.BigEndian.PutUint32(buf[start+1:], uint32(len(buf)-start-1))
	return w.c.out.maybeFlush()
}

func (w *copyRowWriter) writeHeader() error {
	buf, start := w.beginMessage()
	for i, col := range w.cols {
		if i > 0 {
			buf = append(buf, w.f.Delimiter)
		}
		buf = w.appendText(buf, []byte(col.Name), true)
	}
	buf = append(buf, '\n')
	return w.endMessage(buf, start)
}

// WriteRow implements RowWriter.
func (w *copyRowWriter) WriteRow(values []any) error {
	if w.c.out.err != nil {
		return w.c.out.err
	}
	if len(values) != len(w.cols) {
		return fmt.Errorf("pgwire: row has %d values but the statement has %d columns", len(values), len(w.cols))
	}
	buf, start := w.beginMessage()
	if w.f.Kind == CopyBinary {
		buf = append(buf, w.pending...)
		buf = binary.BigEndian.AppendUint16(buf, uint16(len(values)))
		for i, v := range values {
			lenAt := len(buf)
			buf = append(buf, 0, 0, 0, 0)
			enc, err := w.c.encodeValue(w.cols[i].TypeOID, pgproto3.BinaryFormat, v, buf)
			if err != nil {
				w.c.out.buf = buf[:start]
				return fmt.Errorf("pgwire: encode column %q: %w", w.cols[i].Name, err)
			}
			if enc == nil {
				binary.BigEndian.PutUint32(buf[lenAt:], ^uint32(0))
				continue
			}
			buf = enc
			binary.BigEndian.PutUint32(buf[lenAt:], uint32(len(buf)-lenAt-4))
		}
		if err := w.endMessage(buf, start); err != nil {
			return err
		}
		w.pending = nil
		return nil
	}
	for i, v := range values {
		if i > 0 {
			buf = append(buf, w.f.Delimiter)
		}
		enc, err := w.c.encodeValue(w.cols[i].TypeOID, pgproto3.TextFormat, v, w.scratch[:0])
		if err != nil {
			w.c.out.buf = buf[:start]
			return fmt.Errorf("pgwire: encode column %q: %w", w.cols[i].Name, err)
		}
		if enc == nil {
			buf = append(buf, w.f.Null...)
			continue
		}
		w.scratch = enc
		buf = w.appendText(buf, enc, false)
	}
	buf = append(buf, '\n')
	return w.endMessage(buf, start)
}

// appendText appends one non-NULL value, escaped (text) or quoted as needed
// (CSV); header names are never NULL markers.
func (w *copyRowWriter) appendText(buf, v []byte, header bool) []byte {
	if w.f.Kind == CopyCSV {
		q, e := w.f.Quote, w.f.Escape
		need := (!header && string(v) == w.f.Null) || (len(w.cols) == 1 && string(v) == `\.`)
		for _, b := range v {
			if b == w.f.Delimiter || b == q || b == '\n' || b == '\r' || b == e {
				need = true
				break
			}
		}
		if !need {
			return append(buf, v...)
		}
		buf = append(buf, q)
		for _, b := range v {
			if b == q || b == e {
				buf = append(buf, e)
			}
			buf = append(buf, b)
		}
		return append(buf, q)
	}
	for _, b := range v {
		switch b {
		case '\\':
			buf = append(buf, '\\', '\\')
		case '\n':
			buf = append(buf, '\\', 'n')
		case '\r':
			buf = append(buf, '\\', 'r')
		case '\t':
			if w.f.Delimiter == '\t' {
				buf = append(buf, '\\', 't')
			} else {
				buf = append(buf, b)
			}
		case '\b':
			buf = append(buf, '\\', 'b')
		case '\f':
			buf = append(buf, '\\', 'f')
		case '\v':
			buf = append(buf, '\\', 'v')
		default:
			if b == w.f.Delimiter {
				buf = append(buf, '\\')
			}
			buf = append(buf, b)
		}
	}
	return buf
}
