package pgwire

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Arrays, composite values and intervals, in PostgreSQL's text and binary
// forms. An array value is a []any of its elements (nested []any for each
// further dimension); a composite value is a Record; an interval is a
// pgtype.Interval. Elements and fields are encoded by encodeValue with their
// own type, so their text is PostgreSQL's too (floats, timestamptz in the
// session's time zone, nested arrays and records).

// Record is a composite value (PostgreSQL's record): each field's type and
// value (nil for NULL).
type Record struct {
	OIDs   []uint32
	Values []any
}

// elemOID is the element type of array type oid; 0 when oid is not one.
func (c *conn) elemOID(oid uint32) uint32 {
	t, ok := c.types.TypeForOID(oid)
	if !ok {
		return 0
	}
	if ac, ok := t.Codec.(*pgtype.ArrayCodec); ok && ac.ElementType != nil {
		return ac.ElementType.OID
	}
	return 0
}

// appendArray appends an array of type oid.
func (c *conn) appendArray(oid uint32, format int16, elems []any, buf []byte) ([]byte, error) {
	elem := c.elemOID(oid)
	if elem == 0 {
		return nil, fmt.Errorf("type %d is not an array type", oid)
	}
	if format == pgproto3.TextFormat {
		return c.appendArrayText(elem, elems, buf)
	}
	dims, hasNull, err := arrayDims(elems)
	if err != nil {
		return nil, err
	}
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(dims)))
	flag := uint32(0)
	if hasNull {
		flag = 1
	}
	buf = binary.BigEndian.AppendUint32(buf, flag)
	buf = binary.BigEndian.AppendUint32(buf, elem)
	for _, d := range dims {
		buf = binary.BigEndian.AppendUint32(buf, uint32(d))
		buf = binary.BigEndian.AppendUint32(buf, 1) // lower bound
	}
	return c.appendArrayElems(elem, elems, buf)
}

// appendArrayElems appends the elements of a (rectangular) array in row-major
// order, each as a length-prefixed binary value.
func (c *conn) appendArrayElems(elem uint32, elems []any, buf []byte) ([]byte, error) {
	for _, e := range elems {
		if sub, ok := e.([]any); ok {
			var err error
			if buf, err = c.appendArrayElems(elem, sub, buf); err != nil {
				return nil, err
			}
			continue
		}
		var err error
		if buf, err = c.appendField(elem, pgproto3.BinaryFormat, e, buf); err != nil {
			return nil, err
		}
	}
	return buf, nil
}

// appendField appends a length-prefixed value (-1 for NULL).
func (c *conn) appendField(oid uint32, format int16, v any, buf []byte) ([]byte, error) {
	at := len(buf)
	buf = append(buf, 0, 0, 0, 0)
	enc, err := c.encodeValue(oid, format, v, buf)
	if err != nil {
		return nil, err
	}
	if enc == nil {
		binary.BigEndian.PutUint32(buf[at:], ^uint32(0))
		return buf, nil
	}
	binary.BigEndian.PutUint32(enc[at:], uint32(len(enc)-at-4))
	return enc, nil
}

// arrayDims returns the dimensions of a nested array, which PostgreSQL
// requires to be rectangular.
func arrayDims(elems []any) (dims []int, hasNull bool, err error) {
	if len(elems) == 0 {
		return nil, false, nil
	}
	dims = []int{len(elems)}
	for sub, ok := elems[0].([]any); ok; sub, ok = sub[0].([]any) {
		if len(sub) == 0 {
			break
		}
		dims = append(dims, len(sub))
	}
	var check func(level int, es []any) bool
	check = func(level int, es []any) bool {
		if len(es) != dims[level] {
			return false
		}
		for _, e := range es {
			sub, isArr := e.([]any)
			switch {
			case level+1 < len(dims):
				if !isArr || !check(level+1, sub) {
					return false
				}
			case isArr:
				return false
			case e == nil:
				hasNull = true
			}
		}
		return true
	}
	if !check(0, elems) {
		return nil, false, sqlerr.New("2202E", "multidimensional arrays must have sub-arrays with matching dimensions")
	}
	return dims, hasNull, nil
}

// appendArrayText appends {e1,e2,…} as array_out writes it.
func (c *conn) appendArrayText(elem uint32, elems []any, buf []byte) ([]byte, error) {
	if _, _, err := arrayDims(elems); err != nil {
		return nil, err
	}
	buf = append(buf, '{')
	for i, e := range elems {
		if i > 0 {
			buf = append(buf, ',')
		}
		if sub, ok := e.([]any); ok {
			var err error
			if buf, err = c.appendArrayText(elem, sub, buf); err != nil {
				return nil, err
			}
			continue
		}
		if e == nil {
			buf = append(buf, "NULL"...)
			continue
		}
		text, err := c.encodeValue(elem, pgproto3.TextFormat, e, nil)
		if err != nil {
			return nil, err
		}
		buf = appendQuotedElem(buf, text, strings.EqualFold(string(text), "NULL") || len(text) == 0, `{}",\`, '\\')
	}
	return append(buf, '}'), nil
}

// appendQuotedElem appends an array element or record field: in double
// quotes when must is set or it holds one of special or white space, with
// quotes and backslashes escaped by esc.
func appendQuotedElem(buf, text []byte, must bool, special string, esc byte) []byte {
	if !must {
		for _, b := range text {
			if strings.IndexByte(special, b) >= 0 || b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\v' || b == '\f' {
				must = true
				break
			}
		}
	}
	if !must {
		return append(buf, text...)
	}
	buf = append(buf, '"')
	for _, b := range text {
		if b == '"' || b == '\\' {
			if b == '"' {
				buf = append(buf, esc)
			} else {
				buf = append(buf, '\\')
			}
		}
		buf = append(buf, b)
	}
	return append(buf, '"')
}

// appendRecord appends a composite value: (f1,f2,…) as record_out writes
// it, or the binary form (field count, then each field's OID and value).
func (c *conn) appendRecord(format int16, r Record, buf []byte) ([]byte, error) {
	if format == pgproto3.TextFormat {
		buf = append(buf, '(')
		for i, v := range r.Values {
			if i > 0 {
				buf = append(buf, ',')
			}
			if v == nil {
				continue
			}
			text, err := c.encodeValue(r.OIDs[i], pgproto3.TextFormat, v, nil)
			if err != nil {
				return nil, err
			}
			buf = appendQuotedElem(buf, text, len(text) == 0, `(),"\`, '"')
		}
		return append(buf, ')'), nil
	}
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(r.Values)))
	for i, v := range r.Values {
		buf = binary.BigEndian.AppendUint32(buf, r.OIDs[i])
		var err error
		if buf, err = c.appendField(r.OIDs[i], pgproto3.BinaryFormat, v, buf); err != nil {
			return nil, err
		}
	}
	return buf, nil
}
