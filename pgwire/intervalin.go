package pgwire

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// ParseInterval reads text as PostgreSQL's interval input function does
// (interval_in, PostgreSQL 15): its own format ('1 year 2 mons 3 days
// 04:05:06', '@ 1 day ago', '-1 days +02:00', abbreviations, fractions
// carried down: '1.5 years' is 1 year 6 mons), the SQL standard's ('1-2',
// '3 4:05:06'; under IntervalStyle sql_standard a leading minus applies to
// every field when no other field has a sign) and ISO 8601's ('P1Y2M3DT4H',
// 'P0001-02-03T04:05:06'). style is the session's IntervalStyle. Errors
// are PostgreSQL's: 22007 for malformed text, 22015 for a field out of
// range, 22008 for months beyond int32.
func ParseInterval(text, style string) (pgtype.Interval, error) {
	var it itmIn
	err := decodeIntervalText(text, style == "sql_standard", &it)
	if err == errBadFormat {
		it = itmIn{}
		err = decodeISO8601Interval(text, &it)
	}
	switch err {
	case nil:
	case errBadFormat:
		return pgtype.Interval{}, sqlerr.New(sqlerr.InvalidDatetimeFormat, "invalid input syntax for type interval: %q", text)
	default:
		return pgtype.Interval{}, sqlerr.New(intervalFieldOverflow, "interval field value out of range: %q", text)
	}
	months := int64(it.year)*12 + int64(it.mon)
	if months > math.MaxInt32 || months < math.MinInt32 {
		return pgtype.Interval{}, sqlerr.New(datetimeFieldOverflow, "interval out of range")
	}
	return pgtype.Interval{Months: int32(months), Days: it.mday, Microseconds: it.usec, Valid: true}, nil
}

const (
	intervalFieldOverflow = "22015"
	datetimeFieldOverflow = "22008"
)

var (
	errBadFormat     = fmt.Errorf("bad format")
	errFieldOverflow = fmt.Errorf("field overflow")
)

// itmIn is PostgreSQL's pg_itm_in: the fields an interval's input adds up.
type itmIn struct {
	usec      int64
	mday, mon int32
	year      int32
}

// Field kinds of the tokenizer (ParseDateTime's ftype).
const (
	fNumber = iota
	fString
	fDate
	fTime
	fTZ // a sign, then digits (a signed number, time or year-month)
	fSpecial
)

// Units (DecodeUnits' values) and field mask bits.
const (
	uMicrosec = 1 << iota
	uMillisec
	uSecond
	uMinute
	uHour
	uDay
	uWeek
	uMonth
	uYear
	uDecade
	uCentury
	uMillennium
	uAgo
	uOther // a unit PostgreSQL knows that an interval cannot take
)

const allSecs = uSecond | uMillisec | uMicrosec
const timeMask = uHour | uMinute | allSecs

// intervalUnits is PostgreSQL's deltatktbl (plus the core words that
// DecodeSpecial ignores), matched on the first 10 characters (TOKMAXLEN).
var intervalUnits = map[string]int{
	"ago": uAgo, "c": uCentury, "cent": uCentury, "centuries": uCentury, "century": uCentury,
	"d": uDay, "day": uDay, "days": uDay, "dec": uDecade, "decade": uDecade, "decades": uDecade, "decs": uDecade,
	"h": uHour, "hour": uHour, "hours": uHour, "hr": uHour, "hrs": uHour, "m": uMinute, "microsecon": uMicrosec,
	"mil": uMillennium, "millennia": uMillennium, "millennium": uMillennium, "millisecon": uMillisec, "mils": uMillennium,
	"min": uMinute, "mins": uMinute, "minute": uMinute, "minutes": uMinute, "mon": uMonth, "mons": uMonth,
	"month": uMonth, "months": uMonth, "ms": uMillisec, "msec": uMillisec, "millisecond": uMillisec,
	"mseconds": uMillisec, "msecs": uMillisec, "qtr": uOther, "quarter": uOther, "s": uSecond, "sec": uSecond,
	"second": uSecond, "seconds": uSecond, "secs": uSecond, "timezone": uOther, "timezone_h": uOther,
	"timezone_m": uOther, "us": uMicrosec, "usec": uMicrosec, "microsecond": uMicrosec, "useconds": uMicrosec,
	"usecs": uMicrosec, "w": uWeek, "week": uWeek, "weeks": uWeek, "y": uYear, "year": uYear, "years": uYear,
	"yr": uYear, "yrs": uYear,
}

// coreTokens are the words of PostgreSQL's datetktbl: one of them followed
// by a digit or '+' is a field of its own ('1 d2' is 1 day 2 seconds),
// any other word so followed is a date with a text month.
var coreTokens = map[string]bool{
	"ad": true, "allballs": true, "am": true, "apr": true, "april": true, "at": true, "aug": true, "august": true,
	"bc": true, "d": true, "dec": true, "december": true, "dow": true, "doy": true, "epoch": true, "feb": true,
	"february": true, "fri": true, "friday": true, "h": true, "infinity": true, "isodow": true, "isoyear": true,
	"j": true, "jan": true, "january": true, "jd": true, "jul": true, "julian": true, "july": true, "jun": true,
	"june": true, "m": true, "mar": true, "march": true, "may": true, "mm": true, "mon": true, "monday": true,
	"nov": true, "november": true, "now": true, "oct": true, "october": true, "on": true, "pm": true, "s": true,
	"sat": true, "saturday": true, "sep": true, "sept": true, "september": true, "sun": true, "sunday": true,
	"t": true, "thu": true, "thur": true, "thurs": true, "thursday": true, "today": true, "tomorrow": true,
	"tue": true, "tues": true, "tuesday": true, "wed": true, "wednes": true, "wednesday": true, "weds": true,
	"y": true, "yesterday": true, "z": true, "zulu": true,
}

type dtField struct {
	text string
	kind int
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}
func isPunct(c byte) bool { return c > ' ' && c < 0x7f && !isDigit(c) && !isAlpha(c) }
func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// tokenizeInterval is PostgreSQL's ParseDateTime as interval input uses it.
func tokenizeInterval(s string) ([]dtField, error) {
	var fields []dtField
	for i := 0; i < len(s); {
		c := s[i]
		var b strings.Builder
		kind := fNumber
		switch {
		case isSpace(c):
			i++
			continue
		case isDigit(c):
			for i < len(s) && isDigit(s[i]) {
				b.WriteByte(s[i])
				i++
			}
			switch {
			case i < len(s) && s[i] == ':':
				kind = fTime
				for i < len(s) && (isDigit(s[i]) || s[i] == ':' || s[i] == '.') {
					b.WriteByte(s[i])
					i++
				}
			case i < len(s) && (s[i] == '-' || s[i] == '/' || s[i] == '.'):
				delim := s[i]
				b.WriteByte(delim)
				i++
				if i < len(s) && isDigit(s[i]) {
					kind = fDate
					if delim == '.' {
						kind = fNumber
					}
					for i < len(s) && isDigit(s[i]) {
						b.WriteByte(s[i])
						i++
					}
					if i < len(s) && s[i] == delim {
						kind = fDate
						for i < len(s) && (isDigit(s[i]) || s[i] == delim) {
							b.WriteByte(s[i])
							i++
						}
					}
				} else {
					kind = fDate
					for i < len(s) && (isDigit(s[i]) || isAlpha(s[i]) || s[i] == delim) {
						b.WriteByte(lower(s[i]))
						i++
					}
				}
			}
		case c == '.':
			b.WriteByte(c)
			i++
			for i < len(s) && isDigit(s[i]) {
				b.WriteByte(s[i])
				i++
			}
		case isAlpha(c):
			kind = fString
			for i < len(s) && isAlpha(s[i]) {
				b.WriteByte(lower(s[i]))
				i++
			}
			if i < len(s) && (s[i] == '-' || s[i] == '/' || s[i] == '.' ||
				(s[i] == '+' || isDigit(s[i])) && !coreTokens[b.String()]) {
				// A date with a text month, which no interval is.
				kind = fDate
				for i < len(s) && (s[i] == '+' || s[i] == '-' || s[i] == '/' || s[i] == '_' || s[i] == '.' || s[i] == ':' ||
					isDigit(s[i]) || isAlpha(s[i])) {
					b.WriteByte(lower(s[i]))
					i++
				}
			}
		case c == '+' || c == '-':
			b.WriteByte(c)
			i++
			for i < len(s) && isSpace(s[i]) {
				i++
			}
			switch {
			case i < len(s) && isDigit(s[i]):
				kind = fTZ
				for i < len(s) && (isDigit(s[i]) || s[i] == ':' || s[i] == '.' || s[i] == '-') {
					b.WriteByte(s[i])
					i++
				}
			case i < len(s) && isAlpha(s[i]):
				kind = fSpecial
				for i < len(s) && isAlpha(s[i]) {
					b.WriteByte(lower(s[i]))
					i++
				}
			default:
				return nil, errBadFormat
			}
		case isPunct(c):
			i++ // other punctuation (the '@' prefix) only delimits
			continue
		default:
			return nil, errBadFormat
		}
		if len(fields) == 25 { // MAXDATEFIELDS
			return nil, errBadFormat
		}
		fields = append(fields, dtField{b.String(), kind})
	}
	return fields, nil
}

// parseInt64Prefix is strtoi64(s, &end, 10): an optional sign and the
// digits after it; rest is what follows.
func parseInt64Prefix(s string) (v int64, rest string, err error) {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	j := i
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	if j == i {
		return 0, s, nil // no conversion
	}
	v, perr := strconv.ParseInt(s[:j], 10, 64)
	if perr != nil {
		return 0, s[j:], errFieldOverflow
	}
	return v, s[j:], nil
}

// parseFraction is ParseFraction: s starts with '.'.
func parseFraction(s string) (float64, error) {
	if len(s) == 0 || s[0] != '.' {
		return 0, errBadFormat
	}
	if len(s) == 1 {
		return 0, nil
	}
	for _, c := range []byte(s[1:]) {
		if !isDigit(c) {
			return 0, errBadFormat
		}
	}
	return strconv.ParseFloat("0"+s, 64)
}

// mulAdd adds v × scale (scale > 0) to sum, false on overflow.
func mulAdd(v, scale int64, sum *int64) bool {
	p := v * scale
	if p/scale != v {
		return false
	}
	s := *sum + p
	if (p > 0 && s < *sum) || (p < 0 && s > *sum) {
		return false
	}
	*sum = s
	return true
}

func add32(a int32, b int64, dst *int32) bool {
	s := int64(a) + b
	if s > math.MaxInt32 || s < math.MinInt32 {
		return false
	}
	*dst = int32(s)
	return true
}

func (it *itmIn) fractMicroseconds(frac float64, scale int64) bool {
	if frac == 0 {
		return true
	}
	frac *= float64(scale)
	usec := int64(frac)
	frac -= float64(usec)
	if frac > 0.5 {
		usec++
	} else if frac < -0.5 {
		usec--
	}
	s := it.usec + usec
	if (usec > 0 && s < it.usec) || (usec < 0 && s > it.usec) {
		return false
	}
	it.usec = s
	return true
}

func (it *itmIn) fractDays(frac float64, scale int) bool {
	if frac == 0 {
		return true
	}
	frac *= float64(scale)
	extra := int32(frac)
	if !add32(it.mday, int64(extra), &it.mday) {
		return false
	}
	return it.fractMicroseconds(frac-float64(extra), 86400*1000000)
}

func (it *itmIn) fractYears(frac float64, scale int) bool {
	return add32(it.mon, int64(int32(math.RoundToEven(frac*float64(scale)*12))), &it.mon)
}

func (it *itmIn) microseconds(val int64, fval float64, scale int64) bool {
	return mulAdd(val, scale, &it.usec) && it.fractMicroseconds(fval, scale)
}

func (it *itmIn) days(val int64, mult int64) bool {
	if val < math.MinInt32 || val > math.MaxInt32 {
		return false
	}
	d := val * mult
	if d < math.MinInt32 || d > math.MaxInt32 {
		return false
	}
	return add32(it.mday, d, &it.mday)
}

func (it *itmIn) months(val int64) bool {
	if val < math.MinInt32 || val > math.MaxInt32 {
		return false
	}
	return add32(it.mon, val, &it.mon)
}

func (it *itmIn) years(val int64, mult int64) bool {
	if val < math.MinInt32 || val > math.MaxInt32 {
		return false
	}
	y := val * mult
	if y < math.MinInt32 || y > math.MaxInt32 {
		return false
	}
	return add32(it.year, y, &it.year)
}

// decodeTimeForInterval is DecodeTimeForInterval over DecodeTime with the
// full range: h:m, h:m:s[.f], or m:s.f.
func decodeTimeForInterval(s string, it *itmIn) error {
	hour, rest, err := parseInt64Prefix(s)
	if err != nil {
		return err
	}
	if len(rest) == 0 || rest[0] != ':' {
		return errBadFormat
	}
	min64, rest, err := parseInt64Prefix(rest[1:])
	if err != nil || min64 > math.MaxInt32 || min64 < math.MinInt32 {
		return errFieldOverflow
	}
	var sec int64
	var fsec float64
	switch {
	case rest == "":
	case rest[0] == '.':
		f, err := parseFraction(rest)
		if err != nil {
			return err
		}
		fsec = math.RoundToEven(f * 1e6)
		sec, min64, hour = min64, hour, 0
	case rest[0] == ':':
		if sec, rest, err = parseInt64Prefix(rest[1:]); err != nil || sec > math.MaxInt32 || sec < math.MinInt32 {
			return errFieldOverflow
		}
		if rest != "" {
			if rest[0] != '.' {
				return errBadFormat
			}
			f, err := parseFraction(rest)
			if err != nil {
				return err
			}
			fsec = math.RoundToEven(f * 1e6)
		}
	default:
		return errBadFormat
	}
	if hour < 0 || min64 < 0 || min64 > 59 || sec < 0 || sec > 60 || fsec < 0 || fsec > 1e6 {
		return errFieldOverflow
	}
	it.usec = int64(fsec)
	if !mulAdd(hour, 3600*1000000, &it.usec) || !mulAdd(min64, 60*1000000, &it.usec) || !mulAdd(sec, 1000000, &it.usec) {
		return errFieldOverflow
	}
	return nil
}

// decodeIntervalText is DecodeInterval over ParseDateTime's fields, with
// the full range (a bare number is seconds).
func decodeIntervalText(s string, sqlStandard bool, it *itmIn) error {
	fields, err := tokenizeInterval(s)
	if err != nil {
		return err
	}
	forceNegative := false
	if sqlStandard && len(fields) > 0 && strings.HasPrefix(fields[0].text, "-") {
		forceNegative = true
		for _, f := range fields[1:] {
			if strings.HasPrefix(f.text, "-") || strings.HasPrefix(f.text, "+") {
				forceNegative = false
				break
			}
		}
	}
	const unset = -1
	typ, fmask := unset, 0
	isBefore := false
	for i := len(fields) - 1; i >= 0; i-- {
		f := fields[i]
		tmask := 0
		kind := f.kind
		if kind == fTZ && strings.Contains(f.text[1:], ":") {
			var t itmIn
			t.mday, t.mon, t.year = it.mday, it.mon, it.year
			if decodeTimeForInterval(f.text[1:], &t) == nil {
				if f.text[0] == '-' {
					if t.usec == math.MinInt64 {
						return errFieldOverflow
					}
					t.usec = -t.usec
				}
				if forceNegative && t.usec > 0 {
					t.usec = -t.usec
				}
				it.usec = t.usec
				tmask, typ = timeMask, uDay
				if tmask&fmask != 0 {
					return errBadFormat
				}
				fmask |= tmask
				continue
			}
		}
		switch kind {
		case fTime:
			if err := decodeTimeForInterval(f.text, it); err != nil {
				return err
			}
			if forceNegative && it.usec > 0 {
				it.usec = -it.usec
			}
			tmask, typ = timeMask, uDay
		case fTZ, fDate, fNumber:
			if typ == unset {
				typ = uSecond
			}
			val, rest, err := parseInt64Prefix(f.text)
			if err != nil {
				return err
			}
			var fval float64
			switch {
			case rest != "" && rest[0] == '-':
				// SQL's years-months.
				v2, r2, err := parseInt64Prefix(rest[1:])
				if err != nil || v2 < 0 || v2 >= 12 {
					return errFieldOverflow
				}
				if r2 != "" {
					return errBadFormat
				}
				typ = uMonth
				if f.text[0] == '-' {
					v2 = -v2
				}
				months := int64(0)
				if !mulAdd(val, 12, &months) || !mulAdd(v2, 1, &months) {
					return errFieldOverflow
				}
				val = months
			case rest != "" && rest[0] == '.':
				if fval, err = parseFraction(rest); err != nil {
					return err
				}
				if f.text[0] == '-' {
					fval = -fval
				}
			case rest != "":
				return errBadFormat
			}
			if forceNegative {
				if val > 0 {
					val = -val
				}
				if fval > 0 {
					fval = -fval
				}
			}
			ok := true
			switch typ {
			case uMicrosec:
				ok, tmask = it.microseconds(val, fval, 1), uMicrosec
			case uMillisec:
				ok, tmask = it.microseconds(val, fval, 1000), uMillisec
			case uSecond:
				ok, tmask = it.microseconds(val, fval, 1000000), uSecond
				if fval != 0 {
					tmask = allSecs
				}
			case uMinute:
				ok, tmask = it.microseconds(val, fval, 60*1000000), uMinute
			case uHour:
				ok, tmask, typ = it.microseconds(val, fval, 3600*1000000), uHour, uDay
			case uDay:
				ok, tmask = it.days(val, 1) && it.fractMicroseconds(fval, 86400*1000000), uDay
			case uWeek:
				ok, tmask = it.days(val, 7) && it.fractDays(fval, 7), uWeek
			case uMonth:
				ok, tmask = it.months(val) && it.fractDays(fval, 30), uMonth
			case uYear:
				ok, tmask = it.years(val, 1) && it.fractYears(fval, 1), uYear
			case uDecade:
				ok, tmask = it.years(val, 10) && it.fractYears(fval, 10), uDecade
			case uCentury:
				ok, tmask = it.years(val, 100) && it.fractYears(fval, 100), uCentury
			case uMillennium:
				ok, tmask = it.years(val, 1000) && it.fractYears(fval, 1000), uMillennium
			default:
				return errBadFormat
			}
			if !ok {
				return errFieldOverflow
			}
		case fString, fSpecial:
			key := f.text
			if len(key) > 10 {
				key = key[:10]
			}
			u, known := intervalUnits[key]
			switch {
			case !known:
				return errBadFormat
			case u == uAgo:
				isBefore, typ = true, uOther
			default:
				typ = u // uOther fails at its number
			}
		default:
			return errBadFormat
		}
		if tmask&fmask != 0 {
			return errBadFormat
		}
		fmask |= tmask
	}
	if fmask == 0 {
		return errBadFormat
	}
	if isBefore {
		if it.usec == math.MinInt64 || it.mday == math.MinInt32 || it.mon == math.MinInt32 || it.year == math.MinInt32 {
			return errFieldOverflow
		}
		it.usec, it.mday, it.mon, it.year = -it.usec, -it.mday, -it.mon, -it.year
	}
	return nil
}

// parseISO8601Number is ParseISO8601Number: a decimal number (sign,
// digits, point, exponent) split into its integer part and fraction.
func parseISO8601Number(s string) (ipart int64, fpart float64, rest string, err error) {
	if s == "" || !(isDigit(s[0]) || s[0] == '-' || s[0] == '.') {
		return 0, 0, s, errBadFormat
	}
	i := 0
	if s[i] == '-' {
		i++
	}
	start := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i == start || (i == start+1 && s[start] == '.') {
		return 0, 0, s, errBadFormat
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && isDigit(s[j]) {
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			i = j
		}
	}
	val, perr := strconv.ParseFloat(s[:i], 64)
	if perr != nil || math.IsNaN(val) || val < -1e15 || val > 1e15 {
		return 0, 0, s[i:], errFieldOverflow
	}
	if val >= 0 {
		ipart = int64(math.Floor(val))
	} else {
		ipart = -int64(math.Floor(-val))
	}
	return ipart, val - float64(ipart), s[i:], nil
}

// iso8601IntegerWidth is the number of digits a field starts with (after a
// minus).
func iso8601IntegerWidth(s string) int {
	s = strings.TrimPrefix(s, "-")
	n := 0
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	return n
}

// decodeISO8601Interval is DecodeISO8601Interval: P[nY][nM][nW][nD][T[nH][nM][nS]]
// and the alternative formats P yyyymmdd[Thhmmss] and P y-m-d[Th:m:s].
func decodeISO8601Interval(s string, it *itmIn) error {
	if len(s) < 2 || s[0] != 'P' {
		return errBadFormat
	}
	s = s[1:]
	datePart, haveField := true, false
	fail := func(ok bool) error {
		if !ok {
			return errFieldOverflow
		}
		return nil
	}
	for s != "" {
		if s[0] == 'T' {
			datePart, haveField = false, false
			s = s[1:]
			continue
		}
		fieldStart := s
		val, fval, rest, err := parseISO8601Number(s)
		if err != nil {
			return err
		}
		var unit byte
		if rest != "" {
			unit, rest = rest[0], rest[1:]
		}
		s = rest
		if datePart {
			switch unit {
			case 'Y':
				err = fail(it.years(val, 1) && it.fractYears(fval, 1))
			case 'M':
				err = fail(it.months(val) && it.fractDays(fval, 30))
			case 'W':
				err = fail(it.days(val, 7) && it.fractDays(fval, 7))
			case 'D':
				err = fail(it.days(val, 1) && it.fractMicroseconds(fval, 86400*1000000))
			case 'T', 0, '-':
				if unit != '-' && iso8601IntegerWidth(fieldStart) == 8 && !haveField {
					if err := fail(it.years(val/10000, 1) && it.months((val/100)%100) && it.days(val%100, 1) &&
						it.fractMicroseconds(fval, 86400*1000000)); err != nil {
						return err
					}
					if unit == 0 {
						return nil
					}
					datePart, haveField = false, false
					continue
				}
				if haveField {
					return errBadFormat
				}
				if err := fail(it.years(val, 1) && it.fractYears(fval, 1)); err != nil {
					return err
				}
				if unit == 0 {
					return nil
				}
				if unit == 'T' {
					datePart, haveField = false, false
					continue
				}
				if val, fval, s, err = parseISO8601Number(s); err != nil {
					return err
				}
				if err := fail(it.months(val) && it.fractDays(fval, 30)); err != nil {
					return err
				}
				if s == "" {
					return nil
				}
				if s[0] == 'T' {
					datePart, haveField = false, false
					continue
				}
				if s[0] != '-' {
					return errBadFormat
				}
				if val, fval, s, err = parseISO8601Number(s[1:]); err != nil {
					return err
				}
				if err := fail(it.days(val, 1) && it.fractMicroseconds(fval, 86400*1000000)); err != nil {
					return err
				}
				if s == "" {
					return nil
				}
				if s[0] == 'T' {
					datePart, haveField = false, false
					continue
				}
				return errBadFormat
			default:
				return errBadFormat
			}
		} else {
			switch unit {
			case 'H':
				err = fail(it.microseconds(val, fval, 3600*1000000))
			case 'M':
				err = fail(it.microseconds(val, fval, 60*1000000))
			case 'S':
				err = fail(it.microseconds(val, fval, 1000000))
			case 0, ':':
				if unit == 0 && iso8601IntegerWidth(fieldStart) == 6 && !haveField {
					return fail(it.microseconds(val/10000, 0, 3600*1000000) && it.microseconds((val/100)%100, 0, 60*1000000) &&
						it.microseconds(val%100, fval, 1000000))
				}
				if haveField {
					return errBadFormat
				}
				if err := fail(it.microseconds(val, fval, 3600*1000000)); err != nil {
					return err
				}
				if unit == 0 {
					return nil
				}
				if val, fval, s, err = parseISO8601Number(s); err != nil {
					return err
				}
				if err := fail(it.microseconds(val, fval, 60*1000000)); err != nil {
					return err
				}
				if s == "" {
					return nil
				}
				if s[0] != ':' {
					return errBadFormat
				}
				if val, fval, s, err = parseISO8601Number(s[1:]); err != nil {
					return err
				}
				if err := fail(it.microseconds(val, fval, 1000000)); err != nil {
					return err
				}
				if s == "" {
					return nil
				}
				return errBadFormat
			default:
				return errBadFormat
			}
		}
		if err != nil {
			return err
		}
		haveField = true
	}
	return nil
}
