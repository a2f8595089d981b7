package pgwire

import (
	"bytes"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// OID of the pseudo-type "unknown", which an untyped literal or parameter has.
const unknownOID = 705

// decodeParams decodes the parameter values of a Bind message into Go values
// by the statement's parameter types (see decodeParam). A NULL is nil.
func (c *conn) decodeParams(ps *preparedStatement, codes []int16, raw [][]byte) ([]any, error) {
	if len(raw) != len(ps.paramOIDs) {
		return nil, protocolViolation("bind message supplies %d parameters, but prepared statement %q requires %d",
			len(raw), ps.name, len(ps.paramOIDs))
	}
	formats, err := formatCodes(codes, len(raw), "parameter")
	if err != nil {
		return nil, err
	}
	vals := make([]any, len(raw))
	for i, src := range raw {
		if src == nil {
			continue
		}
		if vals[i], err = c.decodeParam(i+1, ps.paramOIDs[i], formats[i], src); err != nil {
			return nil, err
		}
	}
	return vals, nil
}

// decodeParam decodes parameter n (1-based) of type oid. The result is one of
// int16, int32, int64, float32, float64, bool, string, []byte, time.Time,
// [16]byte (uuid), pgtype.Interval; numeric becomes its decimal string, and every other type
// its text representation as a string. Text of an unspecified (0), unknown
// or string type is passed through as a string. src is copied: it is only
// valid until the next message is read.
func (c *conn) decodeParam(n int, oid uint32, format int16, src []byte) (any, error) {
	if format == pgproto3.TextFormat {
		return c.decodeTextParam(oid, src)
	}
	return c.decodeBinaryParam(n, oid, src)
}

// decodeTextParam decodes a parameter in text format.
func (c *conn) decodeTextParam(oid uint32, src []byte) (any, error) {
	var dst any
	switch oid {
	case pgtype.Int2OID:
		dst = new(int16)
	case pgtype.Int4OID:
		dst = new(int32)
	case pgtype.Int8OID:
		dst = new(int64)
	case pgtype.Float4OID:
		dst = new(float32)
	case pgtype.Float8OID:
		dst = new(float64)
	case pgtype.BoolOID:
		dst = new(bool)
	case pgtype.ByteaOID:
		dst = new([]byte)
	case pgtype.DateOID, pgtype.TimestampOID, pgtype.TimestamptzOID:
		dst = new(time.Time)
	case pgtype.UUIDOID:
		dst = new([16]byte)
	case pgtype.NumericOID:
		dst = new(pgtype.Numeric)
	case pgtype.IntervalOID:
		// PostgreSQL's interval input, not pgtype's (which reads only
		// some of its forms).
		iv, err := ParseInterval(string(src), c.reported["IntervalStyle"])
		if err != nil {
			return nil, err
		}
		return iv, nil
	default:
		return validString(src)
	}
	if isTimeOID(oid) {
		if t, ok := parseDateTimeText(oid, string(src), c.tz.location(c.reported["TimeZone"])); ok {
			return t, nil
		}
	}
	text := src
	if oid != pgtype.ByteaOID {
		text = bytes.TrimSpace(src) // PostgreSQL's input functions allow surrounding blanks
	}
	if err := c.types.Scan(oid, pgproto3.TextFormat, text, dst); err != nil {
		if isTimeOID(oid) && isInfinity(text) {
			return string(text), nil
		}
		return nil, &sqlerr.Error{Code: sqlerr.InvalidTextRepresentation,
			Message: fmt.Sprintf("invalid input syntax for type %s: %q", c.typeName(oid), src), Err: err}
	}
	if oid == pgtype.NumericOID {
		return string(text), nil
	}
	return deref(dst), nil
}

// decodeBinaryParam decodes parameter n in binary format.
func (c *conn) decodeBinaryParam(n int, oid uint32, src []byte) (any, error) {
	var dst any
	switch oid {
	case pgtype.Int2OID:
		dst = new(int16)
	case pgtype.Int4OID:
		dst = new(int32)
	case pgtype.Int8OID:
		dst = new(int64)
	case pgtype.Float4OID:
		dst = new(float32)
	case pgtype.Float8OID:
		dst = new(float64)
	case pgtype.BoolOID:
		dst = new(bool)
	case pgtype.ByteaOID:
		return bytes.Clone(src), nil
	case pgtype.DateOID, pgtype.TimestampOID, pgtype.TimestamptzOID:
		dst = new(time.Time)
	case pgtype.UUIDOID:
		dst = new([16]byte)
	case pgtype.NumericOID:
		dst = new(pgtype.Numeric)
	case pgtype.IntervalOID:
		dst = new(pgtype.Interval)
	case pgtype.TextOID, pgtype.VarcharOID, pgtype.BPCharOID, pgtype.NameOID, unknownOID, pgtype.JSONOID:
		// The binary form of a string type is its text.
		return validString(src)
	case pgtype.JSONBOID:
		// Version byte 1, then the JSON text.
		if len(src) == 0 || src[0] != 1 {
			return nil, badBinaryParam(n, fmt.Errorf("unsupported jsonb version"))
		}
		return validString(src[1:])
	default:
		return c.binaryToText(n, oid, src)
	}
	if err := c.types.Scan(oid, pgproto3.BinaryFormat, src, dst); err != nil {
		if isTimeOID(oid) { // ±infinity does not fit a time.Time
			return c.binaryToText(n, oid, src)
		}
		return nil, badBinaryParam(n, err)
	}
	if num, ok := dst.(*pgtype.Numeric); ok {
		v, err := num.Value()
		if err != nil {
			return nil, badBinaryParam(n, err)
		}
		s, ok := v.(string)
		if !ok {
			return nil, badBinaryParam(n, fmt.Errorf("numeric decoded to %T", v))
		}
		return s, nil
	}
	return deref(dst), nil
}

// binaryToText decodes a binary parameter of a type without a dedicated Go
// representation and returns its text form. A type pgtype does not know has
// no binary input: 22P03.
func (c *conn) binaryToText(n int, oid uint32, src []byte) (any, error) {
	t, ok := c.types.TypeForOID(oid)
	if !ok || oid == 0 {
		return nil, &sqlerr.Error{Code: codeInvalidBinaryRepresentation,
			Message: fmt.Sprintf("incorrect binary data format in bind parameter %d", n),
			Detail:  fmt.Sprintf("No binary input is available for type OID %d.", oid)}
	}
	v, err := t.Codec.DecodeValue(c.types, oid, pgproto3.BinaryFormat, src)
	if err != nil {
		return nil, badBinaryParam(n, err)
	}
	if v == nil {
		return nil, nil
	}
	text, err := c.types.Encode(oid, pgproto3.TextFormat, v, nil)
	if err != nil {
		return nil, badBinaryParam(n, err)
	}
	return string(text), nil
}

func badBinaryParam(n int, err error) error {
	return &sqlerr.Error{Code: codeInvalidBinaryRepresentation,
		Message: fmt.Sprintf("incorrect binary data format in bind parameter %d", n), Detail: err.Error(), Err: err}
}

// validString returns src as a string if it is valid UTF-8 (the only client
// encoding the server speaks), 22021 otherwise.
func validString(src []byte) (any, error) {
	if !utf8.Valid(src) {
		return nil, invalidUTF8Error()
	}
	return string(src), nil
}

// invalidUTF8Error is the error for text that is not valid UTF-8.
func invalidUTF8Error() error {
	return sqlerr.New(sqlerr.CharacterNotInRepertoire, `invalid byte sequence for encoding "UTF8"`)
}

func isTimeOID(oid uint32) bool {
	return oid == pgtype.DateOID || oid == pgtype.TimestampOID || oid == pgtype.TimestamptzOID
}

func isInfinity(text []byte) bool {
	return bytes.EqualFold(text, []byte("infinity")) || bytes.EqualFold(text, []byte("-infinity")) ||
		bytes.EqualFold(text, []byte("+infinity"))
}

// typeName names a type for error messages.
func (c *conn) typeName(oid uint32) string {
	if t, ok := c.types.TypeForOID(oid); ok {
		return t.Name
	}
	return fmt.Sprintf("OID %d", oid)
}

// deref returns the value dst points to.
func deref(dst any) any {
	switch p := dst.(type) {
	case *int16:
		return *p
	case *int32:
		return *p
	case *int64:
		return *p
	case *float32:
		return *p
	case *float64:
		return *p
	case *bool:
		return *p
	case *[]byte:
		return *p
	case *time.Time:
		return *p
	case *[16]byte:
		return *p
	case *pgtype.Interval:
		return *p
	}
	panic(fmt.Sprintf("pgwire: deref of %T", dst))
}
