package pgwire

import (
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgtype"
)

// IntervalStyles are the values of the IntervalStyle setting, as
// PostgreSQL spells them; each is a way AppendIntervalText renders.
var IntervalStyles = []string{"postgres", "postgres_verbose", "sql_standard", "iso_8601"}

// intervalFields is an interval split as PostgreSQL splits it for output:
// years and months from the months, days, then hours, minutes, seconds and
// microseconds from the time, each carrying the sign of its source.
type intervalFields struct {
	year, mon          int64
	day                int64
	hour, min, sec, us int64
}

func splitInterval(iv pgtype.Interval) intervalFields {
	t := iv.Microseconds
	f := intervalFields{year: int64(iv.Months / 12), mon: int64(iv.Months % 12), day: int64(iv.Days)}
	f.hour = t / 3600e6
	t -= f.hour * 3600e6
	f.min = t / 60e6
	t -= f.min * 60e6
	f.sec = t / 1e6
	f.us = t - f.sec*1e6
	return f
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// appendSeconds appends |sec|, zero-padded to two digits when pad, and the
// fraction |us| without trailing zeros.
func appendSeconds(buf []byte, sec, us int64, pad bool) []byte {
	if pad && abs64(sec) < 10 {
		buf = append(buf, '0')
	}
	buf = strconv.AppendInt(buf, abs64(sec), 10)
	if us != 0 {
		frac := strconv.FormatInt(abs64(us)+1e6, 10)[1:] // six digits
		buf = append(buf, '.')
		buf = append(buf, strings.TrimRight(frac, "0")...)
	}
	return buf
}

func appendPadded2(buf []byte, v int64) []byte {
	if v < 10 {
		buf = append(buf, '0')
	}
	return strconv.AppendInt(buf, v, 10)
}

// AppendIntervalText appends an interval as PostgreSQL's interval output
// writes it in IntervalStyle style (one of IntervalStyles; anything else is
// postgres):
//
//	postgres          1 year 2 mons -3 days +04:05:06.5
//	postgres_verbose  @ 1 year 2 mons -3 days 4 hours 5 mins 6.5 secs
//	sql_standard      +1-2 -3 +4:05:06.5
//	iso_8601          P1Y2M-3DT4H5M6.5S
func AppendIntervalText(buf []byte, iv pgtype.Interval, style string) []byte {
	f := splitInterval(iv)
	switch style {
	case "sql_standard":
		return appendIntervalSQLStandard(buf, f)
	case "iso_8601":
		return appendIntervalISO(buf, f)
	case "postgres_verbose":
		return appendIntervalVerbose(buf, f)
	}
	return appendIntervalPostgres(buf, f)
}

func appendIntervalPostgres(buf []byte, f intervalFields) []byte {
	zero, before := true, false
	part := func(v int64, unit string) {
		if v == 0 {
			return
		}
		if !zero {
			buf = append(buf, ' ')
		}
		if before && v > 0 {
			buf = append(buf, '+')
		}
		buf = strconv.AppendInt(buf, v, 10)
		buf = append(buf, ' ')
		buf = append(buf, unit...)
		if v != 1 {
			buf = append(buf, 's')
		}
		// Each nonzero field decides the sign shown before the next one.
		before, zero = v < 0, false
	}
	part(f.year, "year")
	part(f.mon, "mon")
	part(f.day, "day")
	if zero || f.hour != 0 || f.min != 0 || f.sec != 0 || f.us != 0 {
		if !zero {
			buf = append(buf, ' ')
		}
		switch {
		case f.hour < 0 || f.min < 0 || f.sec < 0 || f.us < 0:
			buf = append(buf, '-')
		case before:
			buf = append(buf, '+')
		}
		buf = appendPadded2(buf, abs64(f.hour))
		buf = append(buf, ':')
		buf = appendPadded2(buf, abs64(f.min))
		buf = append(buf, ':')
		buf = appendSeconds(buf, f.sec, f.us, true)
	}
	return buf
}

func appendIntervalVerbose(buf []byte, f intervalFields) []byte {
	buf = append(buf, '@')
	zero, before := true, false
	part := func(v int64, unit string) {
		if v == 0 {
			return
		}
		// The first nonzero field decides: a negative interval is written
		// with positive fields and "ago".
		if zero {
			before = v < 0
			v = abs64(v)
		} else if before {
			v = -v
		}
		buf = append(buf, ' ')
		buf = strconv.AppendInt(buf, v, 10)
		buf = append(buf, ' ')
		buf = append(buf, unit...)
		if v != 1 {
			buf = append(buf, 's')
		}
		zero = false
	}
	part(f.year, "year")
	part(f.mon, "mon")
	part(f.day, "day")
	part(f.hour, "hour")
	part(f.min, "min")
	if f.sec != 0 || f.us != 0 {
		buf = append(buf, ' ')
		if f.sec < 0 || (f.sec == 0 && f.us < 0) {
			if zero {
				before = true
			} else if !before {
				buf = append(buf, '-')
			}
		} else if before {
			buf = append(buf, '-')
		}
		buf = appendSeconds(buf, f.sec, f.us, false)
		buf = append(buf, " sec"...)
		if abs64(f.sec) != 1 || f.us != 0 {
			buf = append(buf, 's')
		}
		zero = false
	}
	if zero {
		buf = append(buf, " 0"...)
	}
	if before {
		buf = append(buf, " ago"...)
	}
	return buf
}

func appendIntervalSQLStandard(buf []byte, f intervalFields) []byte {
	neg := f.year < 0 || f.mon < 0 || f.day < 0 || f.hour < 0 || f.min < 0 || f.sec < 0 || f.us < 0
	pos := f.year > 0 || f.mon > 0 || f.day > 0 || f.hour > 0 || f.min > 0 || f.sec > 0 || f.us > 0
	yearMonth := f.year != 0 || f.mon != 0
	dayTime := f.day != 0 || f.hour != 0 || f.min != 0 || f.sec != 0 || f.us != 0
	standard := !(neg && pos) && !(yearMonth && dayTime)
	if neg && standard {
		// One sign for the whole value.
		buf = append(buf, '-')
		f = intervalFields{-f.year, -f.mon, -f.day, -f.hour, -f.min, -f.sec, -f.us}
	}
	hms := func(buf []byte) []byte {
		buf = strconv.AppendInt(buf, abs64(f.hour), 10)
		buf = append(buf, ':')
		buf = appendPadded2(buf, abs64(f.min))
		buf = append(buf, ':')
		return appendSeconds(buf, f.sec, f.us, true)
	}
	sign := func(negative bool) byte {
		if negative {
			return '-'
		}
		return '+'
	}
	switch {
	case !neg && !pos:
		return append(buf, '0')
	case !standard:
		// Mixed signs, or both year-month and day-time parts: every part
		// carries its sign.
		buf = append(buf, sign(f.year < 0 || f.mon < 0))
		buf = strconv.AppendInt(buf, abs64(f.year), 10)
		buf = append(buf, '-')
		buf = strconv.AppendInt(buf, abs64(f.mon), 10)
		buf = append(buf, ' ', sign(f.day < 0))
		buf = strconv.AppendInt(buf, abs64(f.day), 10)
		buf = append(buf, ' ', sign(f.hour < 0 || f.min < 0 || f.sec < 0 || f.us < 0))
		return hms(buf)
	case yearMonth:
		buf = strconv.AppendInt(buf, f.year, 10)
		buf = append(buf, '-')
		return strconv.AppendInt(buf, f.mon, 10)
	case f.day != 0:
		buf = strconv.AppendInt(buf, f.day, 10)
		buf = append(buf, ' ')
		return hms(buf)
	}
	return hms(buf)
}

func appendIntervalISO(buf []byte, f intervalFields) []byte {
	if f == (intervalFields{}) {
		return append(buf, "PT0S"...)
	}
	buf = append(buf, 'P')
	part := func(v int64, unit byte) {
		if v != 0 {
			buf = strconv.AppendInt(buf, v, 10)
			buf = append(buf, unit)
		}
	}
	part(f.year, 'Y')
	part(f.mon, 'M')
	part(f.day, 'D')
	if f.hour != 0 || f.min != 0 || f.sec != 0 || f.us != 0 {
		buf = append(buf, 'T')
	}
	part(f.hour, 'H')
	part(f.min, 'M')
	if f.sec != 0 || f.us != 0 {
		if f.sec < 0 || f.us < 0 {
			buf = append(buf, '-')
		}
		buf = appendSeconds(buf, f.sec, f.us, false)
		buf = append(buf, 'S')
	}
	return buf
}
