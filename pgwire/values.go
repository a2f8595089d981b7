package pgwire

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"
)

// encodeValue appends the wire form of v, a value of a column of type oid, in
// format to buf. It returns nil for SQL NULL (the caller writes length -1).
//
// pgtype.Map does the work, with these exceptions where its output differs
// from PostgreSQL's: float4/float8 (PostgreSQL's shortest-exact output,
// "Infinity", "NaN"), timestamptz (rendered in the session's TimeZone, with
// PostgreSQL's offset notation), intervals (in the session's IntervalStyle), arrays
// and records (composite.go: elements encoded by these rules), and numeric
// given as a string in binary format (appendNumericBinary: PostgreSQL's
// normalised form, display scale from the text).
func (c *conn) encodeValue(oid uint32, format int16, v any, buf []byte) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case []any:
		return c.appendArray(oid, format, x, buf)
	case Record:
		return c.appendRecord(format, x, buf)
	case pgtype.Interval:
		if format == pgproto3.TextFormat && x.Valid {
			return AppendIntervalText(buf, x, c.reported["IntervalStyle"]), nil
		}
	}
	if format == pgproto3.TextFormat {
		switch oid {
		case pgtype.Float8OID, pgtype.Float4OID:
			if f, ok := floatValue(v); ok {
				bits := 64
				if oid == pgtype.Float4OID {
					bits = 32
				}
				return AppendFloatText(buf, f, bits), nil
			}
		case pgtype.TimestamptzOID:
			if t, ok := v.(time.Time); ok && t.Year() >= 1 && t.Year() <= 9999 {
				return appendTimestamptzText(buf, t.In(c.tz.location(c.reported["TimeZone"]))), nil
			}
		case pgtype.QCharOID:
			// "char" zero (pg_attribute.attidentity of no identity) is
			// the empty string in text, as PostgreSQL's charout writes it.
			if r, ok := v.(rune); ok && r == 0 {
				if buf == nil {
					return []byte{}, nil // empty, not NULL
				}
				return buf, nil
			}
		}
	} else if oid == pgtype.NumericOID {
		if s, ok := v.(string); ok {
			if out, ok := appendNumericBinary(buf, s); ok {
				return out, nil
			}
			var n pgtype.Numeric
			if err := n.Scan(s); err != nil {
				return nil, fmt.Errorf("numeric value %q: %w", s, err)
			}
			v = n
		}
	}
	return c.types.Encode(oid, format, v, buf)
}

// floatValue returns v as a float64 if it is a float.
func floatValue(v any) (float64, bool) {
	switch f := v.(type) {
	case float64:
		return f, true
	case float32:
		return float64(f), true
	}
	return 0, false
}

// AppendFloatText appends f as PostgreSQL (12 and later) prints a float of
// bits 32 or 64: the shortest digits that read back exactly, in positional
// notation when the decimal exponent is in [-4, precision), where precision
// is 6 for float4 and 15 for float8, and in exponent notation otherwise.
func AppendFloatText(buf []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(buf, "NaN"...)
	case math.IsInf(f, 1):
		return append(buf, "Infinity"...)
	case math.IsInf(f, -1):
		return append(buf, "-Infinity"...)
	case f == 0:
		return strconv.AppendFloat(buf, f, 'f', -1, bits)
	}
	precision := 15
	if bits == 32 {
		precision = 6
	}
	e := strconv.FormatFloat(f, 'e', -1, bits)
	exp, _ := strconv.Atoi(e[strings.LastIndexByte(e, 'e')+1:])
	if exp < -4 || exp >= precision {
		return append(buf, e...)
	}
	return strconv.AppendFloat(buf, f, 'f', -1, bits)
}

// appendNumericBinary appends PostgreSQL's binary form of the numeric
// written as s in plain decimal notation ("-12.50"), as numeric_send
// writes it: base-10000 digits aligned on the decimal point without
// leading or trailing zero digits, the weight of the first, the sign and
// the display scale (the digits after the point in s). false for other
// text (NaN, infinities, exponents), left to pgtype.
func appendNumericBinary(buf []byte, s string) ([]byte, bool) {
	sign := uint16(0)
	if strings.HasPrefix(s, "-") {
		sign, s = 0x4000, s[1:]
	}
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" && frac == "" || len(frac) > 0x3fff {
		return nil, false
	}
	for _, part := range []string{whole, frac} {
		for i := 0; i < len(part); i++ {
			if part[i] < '0' || part[i] > '9' {
				return nil, false
			}
		}
	}
	dscale := len(frac)
	// Pad to whole base-10000 digits on both sides of the point.
	whole = strings.Repeat("0", (4-len(whole)%4)%4) + whole
	frac += strings.Repeat("0", (4-len(frac)%4)%4)
	all := whole + frac
	digits := make([]int16, 0, len(all)/4)
	for i := 0; i < len(all); i += 4 {
		d, _ := strconv.Atoi(all[i : i+4])
		digits = append(digits, int16(d))
	}
	weight := len(whole)/4 - 1
	for len(digits) > 0 && digits[0] == 0 {
		digits, weight = digits[1:], weight-1
	}
	for len(digits) > 0 && digits[len(digits)-1] == 0 {
		digits = digits[:len(digits)-1]
	}
	if len(digits) == 0 {
		weight, sign = 0, 0
	}
	if len(digits) > math.MaxInt16 || weight > math.MaxInt16 || weight < math.MinInt16 {
		return nil, false
	}
	buf = append(buf, byte(len(digits)>>8), byte(len(digits)), byte(uint16(weight)>>8), byte(uint16(weight)),
		byte(sign>>8), byte(sign), byte(dscale>>8), byte(dscale))
	for _, d := range digits {
		buf = append(buf, byte(uint16(d)>>8), byte(d))
	}
	return buf, true
}
