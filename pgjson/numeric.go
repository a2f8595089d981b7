package pgjson

import (
	"strconv"
	"strings"
)

// maxExponent bounds a number's decimal exponent, inside numeric's range
// (131072 digits before the point, 16383 after).
const maxExponent = 16383

// decimal is a JSON number as sign, digits and the position of the decimal
// point: the value is 0.digits × 10^point, negated when neg.
type decimal struct {
	neg    bool
	digits string // no leading or trailing zeros; "" for zero
	point  int
	scale  int // numeric's display scale: fractional digits as written, less the exponent
}

// parseDecimal reads a valid JSON number.
func parseDecimal(raw string) (decimal, error) {
	var d decimal
	s := raw
	if s[0] == '-' {
		d.neg, s = true, s[1:]
	}
	exp := 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil || e > maxExponent || e < -maxExponent {
			return d, &RangeError{Num: raw}
		}
		exp, s = e, s[:i]
	}
	intPart, frac, _ := strings.Cut(s, ".")
	all := intPart + frac
	d.scale = max(0, len(frac)-exp)
	d.point = len(intPart) + exp
	trimmed := strings.TrimLeft(all, "0")
	d.point -= len(all) - len(trimmed)
	d.digits = strings.TrimRight(trimmed, "0")
	if d.digits == "" {
		d.neg, d.point = false, 0
	}
	return d, nil
}

// numericText renders a JSON number as PostgreSQL's numeric prints it:
// exponent applied, the display scale kept ("2.50", "1e-2" → "0.01",
// "1.5e1" → "15", "-0" → "0").
func numericText(raw string) (string, error) {
	d, err := parseDecimal(raw)
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	if d.neg {
		sb.WriteByte('-')
	}
	// Integer part.
	switch {
	case d.point <= 0:
		sb.WriteByte('0')
	case d.point >= len(d.digits):
		sb.WriteString(d.digits)
		sb.WriteString(strings.Repeat("0", d.point-len(d.digits)))
	default:
		sb.WriteString(d.digits[:d.point])
	}
	if d.scale > 0 {
		sb.WriteByte('.')
		var frac string
		switch {
		case d.point >= len(d.digits):
		case d.point < 0:
			frac = strings.Repeat("0", -d.point) + d.digits
		default:
			frac = d.digits[d.point:]
		}
		sb.WriteString(frac)
		sb.WriteString(strings.Repeat("0", d.scale-len(frac)))
	}
	return sb.String(), nil
}

// numbersEqual compares two numbers by value (1.0 equals 1).
func numbersEqual(a, b *Value) bool {
	da, errA := parseDecimal(a.Raw)
	db, errB := parseDecimal(b.Raw)
	return errA == nil && errB == nil && da.neg == db.neg && da.digits == db.digits && da.point == db.point
}
