package cdc

import (
	"bytes"
	"fmt"
)

// copyRowWriter splits the data of COPY … TO STDOUT (text format) into rows
// and fields and hands each row to row. PostgreSQL sends one row per
// CopyData message, but the writer does not rely on it.
type copyRowWriter struct {
	ncols   int
	row     func([]value) error
	pending []byte
	vals    []value
	scratch [][]byte
}

func (w *copyRowWriter) Write(p []byte) (int, error) {
	n := len(p)
	if len(w.pending) > 0 {
		w.pending = append(w.pending, p...)
		p = w.pending
	}
	for {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			break
		}
		if err := w.line(p[:i]); err != nil {
			return 0, err
		}
		p = p[i+1:]
	}
	w.pending = append(w.pending[:0], p...)
	return n, nil
}

// finish reports a last row without its newline.
func (w *copyRowWriter) finish() error {
	if len(w.pending) > 0 {
		return fmt.Errorf("COPY data ended inside a row")
	}
	return nil
}

func (w *copyRowWriter) line(l []byte) error {
	if cap(w.vals) < w.ncols {
		w.vals = make([]value, w.ncols)
		w.scratch = make([][]byte, w.ncols)
	}
	vals := w.vals[:w.ncols]
	f := 0
	for {
		if f >= w.ncols {
			return fmt.Errorf("COPY row has more than %d fields", w.ncols)
		}
		i := bytes.IndexByte(l, '\t')
		field := l
		if i >= 0 {
			field = l[:i]
		}
		switch {
		case len(field) == 2 && field[0] == '\\' && field[1] == 'N':
			vals[f] = value{kind: valNull}
		case bytes.IndexByte(field, '\\') >= 0:
			w.scratch[f] = unescapeCopy(w.scratch[f][:0], field)
			vals[f] = value{kind: valText, data: w.scratch[f]}
		default:
			vals[f] = value{kind: valText, data: field}
		}
		f++
		if i < 0 {
			break
		}
		l = l[i+1:]
	}
	if f != w.ncols {
		return fmt.Errorf("COPY row has %d fields, want %d", f, w.ncols)
	}
	return w.row(vals)
}

// unescapeCopy decodes the backslash escapes of COPY's text format.
func unescapeCopy(dst, s []byte) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			dst = append(dst, c)
			continue
		}
		i++
		switch c = s[i]; c {
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
		case 'x':
			v, n := 0, 0
			for n < 2 && i+1 < len(s) && isHex(s[i+1]) {
				i++
				v = v*16 + hexVal(s[i])
				n++
			}
			if n == 0 {
				dst = append(dst, 'x')
			} else {
				dst = append(dst, byte(v))
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := int(c - '0')
			for n := 1; n < 3 && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '7'; n++ {
				i++
				v = v*8 + int(s[i]-'0')
			}
			dst = append(dst, byte(v))
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	}
	return int(c-'A') + 10
}
