package cdc

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// Source values arrive as text: PostgreSQL's text output (COPY … TO STDOUT
// and pgoutput both), with the session settings the source connections set
// (DateStyle ISO, TimeZone UTC, extra_float_digits 3), and MySQL values
// rendered in the same forms. appendText parses one into the builder of
// its lake column.

var errInfinite = errors.New("infinite dates and timestamps cannot be stored in a lake column")

// appendText appends the text value v to b, whose type is the lake type dt.
func appendText(b array.Builder, dt arrow.DataType, v []byte) error {
	switch t := dt.(type) {
	case *arrow.StringType:
		b.(*array.StringBuilder).BinaryBuilder.Append(v)
	case *arrow.Int64Type:
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			return err
		}
		b.(*array.Int64Builder).Append(n)
	case *arrow.Int32Type:
		n, err := strconv.ParseInt(string(v), 10, 32)
		if err != nil {
			return err
		}
		b.(*array.Int32Builder).Append(int32(n))
	case *arrow.Int16Type:
		n, err := strconv.ParseInt(string(v), 10, 16)
		if err != nil {
			return err
		}
		b.(*array.Int16Builder).Append(int16(n))
	case *arrow.Float64Type:
		f, err := parseFloat(v, 64)
		if err != nil {
			return err
		}
		b.(*array.Float64Builder).Append(f)
	case *arrow.Float32Type:
		f, err := parseFloat(v, 32)
		if err != nil {
			return err
		}
		b.(*array.Float32Builder).Append(float32(f))
	case *arrow.BooleanType:
		switch string(v) {
		case "t", "true", "1":
			b.(*array.BooleanBuilder).Append(true)
		case "f", "false", "0":
			b.(*array.BooleanBuilder).Append(false)
		default:
			return fmt.Errorf("invalid boolean %q", v)
		}
	case *arrow.BinaryType:
		raw, err := decodeBytea(v)
		if err != nil {
			return err
		}
		b.(*array.BinaryBuilder).Append(raw)
	case *arrow.Date32Type:
		days, err := parseDate(v)
		if err != nil {
			return err
		}
		b.(*array.Date32Builder).Append(arrow.Date32(days))
	case *arrow.TimestampType:
		us, err := parseTimestamp(v)
		if err != nil {
			return err
		}
		b.(*array.TimestampBuilder).Append(arrow.Timestamp(us))
	case *arrow.Decimal128Type:
		n, err := decimal128.FromString(string(v), t.Precision, t.Scale)
		if err != nil {
			return fmt.Errorf("numeric %q: %w", v, err)
		}
		b.(*array.Decimal128Builder).Append(n)
	default:
		return fmt.Errorf("no text conversion into %s", dt)
	}
	return nil
}

func parseFloat(v []byte, bits int) (float64, error) {
	switch string(v) {
	case "Infinity":
		return strconv.ParseFloat("+Inf", bits)
	case "-Infinity":
		return strconv.ParseFloat("-Inf", bits)
	}
	return strconv.ParseFloat(string(v), bits)
}

// decodeBytea decodes PostgreSQL's hex bytea output (\x…).
func decodeBytea(v []byte) ([]byte, error) {
	if len(v) < 2 || v[0] != '\\' || v[1] != 'x' {
		return nil, fmt.Errorf("bytea value not in hex format")
	}
	out := make([]byte, hex.DecodedLen(len(v)-2))
	_, err := hex.Decode(out, v[2:])
	return out, err
}

// digits parses n decimal digits at v[i:].
func digits(v []byte, i, n int) (int, bool) {
	if i+n > len(v) {
		return 0, false
	}
	x := 0
	for _, c := range v[i : i+n] {
		if c < '0' || c > '9' {
			return 0, false
		}
		x = x*10 + int(c-'0')
	}
	return x, true
}

// parseDateAt parses YYYY-MM-DD (four or more year digits) and returns the
// days since the epoch and the index after it.
func parseDateAt(v []byte) (days int64, next int, err error) {
	if string(v) == "infinity" || string(v) == "-infinity" {
		return 0, 0, errInfinite
	}
	y := 0
	i := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		y = y*10 + int(v[i]-'0')
		i++
	}
	m, ok1 := digits(v, i+1, 2)
	d, ok2 := digits(v, i+4, 2)
	if i < 4 || !ok1 || !ok2 || v[i] != '-' || v[i+3] != '-' {
		return 0, 0, fmt.Errorf("invalid date %q", v)
	}
	i += 6
	if len(v) >= i+3 && string(v[len(v)-3:]) == " BC" {
		return 0, 0, fmt.Errorf("dates before the common era are not supported: %q", v)
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	return t.Unix() / 86400, i, nil
}

func parseDate(v []byte) (int64, error) {
	days, next, err := parseDateAt(v)
	if err == nil && next != len(v) {
		err = fmt.Errorf("invalid date %q", v)
	}
	return days, err
}

// parseTimestamp parses "YYYY-MM-DD HH:MM:SS[.ffffff][±HH[:MM[:SS]]]" into
// microseconds since the epoch (UTC when an offset is given).
func parseTimestamp(v []byte) (int64, error) {
	days, i, err := parseDateAt(v)
	if err != nil {
		return 0, err
	}
	bad := func() (int64, error) { return 0, fmt.Errorf("invalid timestamp %q", v) }
	if i >= len(v) || (v[i] != ' ' && v[i] != 'T') {
		return bad()
	}
	hh, ok1 := digits(v, i+1, 2)
	mm, ok2 := digits(v, i+4, 2)
	ss, ok3 := digits(v, i+7, 2)
	if !ok1 || !ok2 || !ok3 || v[i+3] != ':' || v[i+6] != ':' {
		return bad()
	}
	i += 9
	us := int64(0)
	if i < len(v) && v[i] == '.' {
		i++
		n := 0
		for i < len(v) && v[i] >= '0' && v[i] <= '9' {
			if n < 6 {
				us = us*10 + int64(v[i]-'0')
			}
			n++
			i++
		}
		for ; n < 6; n++ {
			us *= 10
		}
	}
	total := (days*86400+int64(hh*3600+mm*60+ss))*1_000_000 + us
	if i < len(v) && (v[i] == '+' || v[i] == '-') {
		sign := int64(1)
		if v[i] == '-' {
			sign = -1
		}
		oh, ok := digits(v, i+1, 2)
		if !ok {
			return bad()
		}
		off := int64(oh) * 3600
		i += 3
		for _, unit := range []int64{60, 1} {
			if i < len(v) && v[i] == ':' {
				x, ok := digits(v, i+1, 2)
				if !ok {
					return bad()
				}
				off += int64(x) * unit
				i += 3
			}
		}
		total -= sign * off * 1_000_000
	}
	if i != len(v) {
		return bad()
	}
	return total, nil
}
