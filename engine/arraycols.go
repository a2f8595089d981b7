package engine

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/duckdb/duckdb-go/v2"

	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Array columns of lake tables (schema/arrays.go): Arrow lists of nullable
// elements. DuckDB sees them as its lists (arrayColumn), which are 1-based
// as PostgreSQL's arrays are; results print as PostgreSQL arrays (pgwire).
// Writes come from DuckDB's list values (appendList) or from COPY in
// PostgreSQL's array text or binary form (arrayCopyConv).

// arrayColumn is the DuckDB type of an array column and its scan setter.
func arrayColumn(t *arrow.ListType) (duckdb.TypeInfo, chunkSetter, error) {
	elemInfo, _, err := duckColumn(t.ElemField())
	if err != nil {
		return nil, nil, err
	}
	ti, err := duckdb.NewListInfo(elemInfo)
	if err != nil {
		return nil, nil, err
	}
	get := directGetter(t.Elem()) // directscan.go: the values DuckDB binds
	if get == nil {
		return nil, nil, fmt.Errorf("type %s cannot be scanned", t)
	}
	return ti, func(chunk duckdb.DataChunk, col, row int, arr arrow.Array, i int) error {
		if arr.IsNull(i) {
			return chunk.SetValue(col, row, nil)
		}
		l := arr.(*array.List)
		start, end := l.ValueOffsets(i)
		vals := l.ListValues()
		out := make([]any, end-start)
		for j := range out {
			if k := int(start) + j; !vals.IsNull(k) {
				out[j] = get(vals, k)
			}
		}
		return chunk.SetValue(col, row, out)
	}, nil
}

// appendList appends a DuckDB list value to an array column's builder;
// false when v or one of its elements is not of the column's type.
func appendList(b *array.ListBuilder, v any) bool {
	l, ok := v.([]any)
	if !ok {
		return false
	}
	b.Append(true)
	vb := b.ValueBuilder()
	for _, e := range l {
		if appendDuckValue(vb, e) != nil {
			return false
		}
	}
	return true
}

// parsePGArray splits PostgreSQL's text form of a one-dimensional array
// ({1,2,NULL}, {"a b",c}) into its elements, nil for NULL: elements may be
// double-quoted, backslash escapes a character, whitespace around an
// element is not part of it, an unquoted NULL (any case) is NULL. Input
// that is no array is 22P02 "malformed array literal", a nested array
// 0A000.
func parsePGArray(s string) ([]*string, error) {
	malformed := func(detail string) error {
		e := sqlerr.New(sqlerr.InvalidTextRepresentation, "malformed array literal: %q", s)
		e.Detail = detail
		return e
	}
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' }
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	if i < len(s) && s[i] == '[' {
		return nil, sqlerr.Unsupported("array literal "+strconv.Quote(s)+" with dimension decoration", "{…} without bounds")
	}
	if i >= len(s) || s[i] != '{' {
		return nil, malformed(`Array value must start with "{" or dimension information.`)
	}
	i++
	var elems []*string
	for {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i >= len(s) {
			return nil, malformed("Unexpected end of input.")
		}
		if s[i] == '}' && len(elems) == 0 {
			i++
			break
		}
		if s[i] == '{' {
			return nil, sqlerr.Unsupported("multidimensional array "+strconv.Quote(s), "one-dimensional arrays")
		}
		var sb strings.Builder
		quoted, sawQuote, escaped := false, false, false
		trail := 0 // unquoted trailing whitespace written to sb
	elem:
		for ; i < len(s); i++ {
			c := s[i]
			switch {
			case c == '\\':
				if i+1 >= len(s) {
					return nil, malformed("Unexpected end of input.")
				}
				i++
				sb.WriteByte(s[i])
				trail, escaped = 0, true
			case c == '"':
				quoted, sawQuote = !quoted, true
				trail = 0
			case quoted:
				sb.WriteByte(c)
			case c == ',' || c == '}':
				break elem
			case c == '{':
				return nil, malformed(`Unexpected "{" character.`)
			case isSpace(c):
				if sb.Len() > 0 || sawQuote {
					sb.WriteByte(c)
					trail++
				}
			default:
				if sawQuote && trail == 0 && !quoted && s[i-1] == '"' {
					return nil, malformed("Incorrectly quoted array element.")
				}
				sb.WriteByte(c)
				trail = 0
			}
		}
		if i >= len(s) {
			return nil, malformed("Unexpected end of input.")
		}
		text := sb.String()
		text = text[:len(text)-trail]
		if !sawQuote && text == "" {
			return nil, malformed("Unexpected " + strconv.Quote(string(s[i])) + " character.")
		}
		if !sawQuote && !escaped && strings.EqualFold(text, "NULL") {
			elems = append(elems, nil)
		} else {
			elems = append(elems, &text)
		}
		c := s[i]
		i++
		if c == '}' {
			break
		}
	}
	for ; i < len(s); i++ {
		if !isSpace(s[i]) {
			return nil, malformed("Junk after closing right brace.")
		}
	}
	return elems, nil
}

// arrayCopyConv converts COPY fields of array column f in PostgreSQL's
// array text or binary form.
func arrayCopyConv(f arrow.Field, binaryForm bool) (fieldConv, error) {
	lt := f.Type.(*arrow.ListType)
	ef := lt.ElemField()
	if binaryForm {
		return func(c *copyColumn, v []byte) error {
			b := c.b.(*array.ListBuilder)
			return decodeBinaryArray(b, ef, v)
		}, nil
	}
	return func(c *copyColumn, v []byte) error {
		elems, err := parsePGArray(string(v))
		if err != nil {
			return err
		}
		b := c.b.(*array.ListBuilder)
		vb := b.ValueBuilder()
		b.Append(true)
		for _, e := range elems {
			if e == nil {
				vb.AppendNull()
				continue
			}
			if err := appendElemText(vb, ef, *e); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// appendElemText appends an array element given as text.
func appendElemText(vb array.Builder, ef arrow.Field, s string) error {
	bad := func() error { return invalidInput(ef, []byte(s)) }
	switch bb := vb.(type) {
	case *array.StringBuilder:
		bb.Append(s)
	case *array.BooleanBuilder:
		x, ok := parseBool(s)
		if !ok {
			return bad()
		}
		bb.Append(x)
	case *array.Float64Builder, *array.Float32Builder:
		bits := 64
		if _, ok := bb.(*array.Float32Builder); ok {
			bits = 32
		}
		x, err := strconv.ParseFloat(strings.TrimSpace(s), bits)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return outOfRange(ef, []byte(s))
			}
			return bad()
		}
		if bits == 32 {
			bb.(*array.Float32Builder).Append(float32(x))
		} else {
			bb.(*array.Float64Builder).Append(x)
		}
	default:
		bits := ef.Type.(arrow.FixedWidthDataType).BitWidth()
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, bits)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return outOfRange(ef, []byte(s))
			}
			return bad()
		}
		appendInt(vb, n)
	}
	return nil
}

// decodeBinaryArray appends an array in PostgreSQL's binary form: ndim,
// has-nulls flag, element OID, (length, lower bound) per dimension, then
// each element as a length (-1 for NULL) and its binary form.
func decodeBinaryArray(b *array.ListBuilder, ef arrow.Field, v []byte) error {
	bad := func() error {
		return sqlerr.New("22P03", "incorrect binary data format for type %s[]", pgTypeName(ef))
	}
	u32 := func() (uint32, bool) {
		if len(v) < 4 {
			return 0, false
		}
		x := binary.BigEndian.Uint32(v)
		v = v[4:]
		return x, true
	}
	ndim, ok1 := u32()
	_, ok2 := u32()
	elemOID, ok3 := u32()
	if !ok1 || !ok2 || !ok3 || ndim > 1 {
		if ndim > 1 {
			return sqlerr.Unsupported("a multidimensional array", "one-dimensional arrays")
		}
		return bad()
	}
	if want, _ := schema.PGTypeOf(ef); elemOID != want && !(want == schema.OIDText && elemOID == schema.OIDVarchar) {
		return sqlerr.New(sqlerr.DatatypeMismatch, "wrong element type")
	}
	n := uint32(0)
	if ndim == 1 {
		var ok bool
		if n, ok = u32(); !ok {
			return bad()
		}
		if _, ok = u32(); !ok {
			return bad()
		}
	}
	b.Append(true)
	vb := b.ValueBuilder()
	for range n {
		l, ok := u32()
		if !ok {
			return bad()
		}
		if int32(l) == -1 {
			vb.AppendNull()
			continue
		}
		if int(l) > len(v) {
			return bad()
		}
		e := v[:l]
		v = v[l:]
		switch bb := vb.(type) {
		case *array.StringBuilder:
			bb.Append(string(e))
		case *array.BooleanBuilder:
			if len(e) != 1 {
				return bad()
			}
			bb.Append(e[0] != 0)
		case *array.Float64Builder:
			if len(e) != 8 {
				return bad()
			}
			bb.Append(math.Float64frombits(binary.BigEndian.Uint64(e)))
		case *array.Float32Builder:
			if len(e) != 4 {
				return bad()
			}
			bb.Append(math.Float32frombits(binary.BigEndian.Uint32(e)))
		case *array.Int64Builder:
			if len(e) != 8 {
				return bad()
			}
			bb.Append(int64(binary.BigEndian.Uint64(e)))
		case *array.Int32Builder:
			if len(e) != 4 {
				return bad()
			}
			bb.Append(int32(binary.BigEndian.Uint32(e)))
		case *array.Int16Builder:
			if len(e) != 2 {
				return bad()
			}
			bb.Append(int16(binary.BigEndian.Uint16(e)))
		default:
			return bad()
		}
	}
	if len(v) != 0 {
		return bad()
	}
	return nil
}
