package pgwire

import (
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// Date and time text, in and out, the way PostgreSQL (DateStyle ISO) reads
// and writes it.

// Layouts of date/time input that carry a UTC offset ("Z" included). A
// fractional second after the seconds is accepted by time.Parse without
// being in the layout.
var zonedDateTimeLayouts = []string{
	"2006-01-02 15:04:05Z07:00:00",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05Z0700",
	"2006-01-02 15:04:05Z07",
	"2006-01-02 15:04:05 Z07:00",
	"2006-01-02 15:04:05 Z0700",
	"2006-01-02 15:04:05 Z07",
	"2006-01-02 15:04Z07:00",
	"2006-01-02 15:04Z0700",
	"2006-01-02 15:04Z07",
	"2006-01-02 15:04 Z07:00",
	"2006-01-02 15:04 Z07",
	// A date with an offset, as pgjdbc sends setDate values ("2026-01-01 +00").
	"2006-01-02 Z07:00",
	"2006-01-02 Z07",
	"2006-01-02Z07:00",
}

// Layouts of date/time input without an offset.
var localDateTimeLayouts = []string{
	"2006-01-02 15:04:05",
	"2006-01-02 15:04",
	"2006-01-02",
}

// parseDateTimeText reads the text of a date, timestamp or timestamptz
// parameter as PostgreSQL's input functions do for ISO input: any of the
// three forms is accepted for any of the types (a date takes the date part
// as written, a timestamp the wall clock as written, ignoring an offset), an
// ISO 8601 "T" may separate date and time, and a timestamptz without an
// offset is in the session's time zone loc. It reports false for input it
// does not understand (BC dates, "infinity", other DateStyles).
func parseDateTimeText(oid uint32, text string, loc *time.Location) (time.Time, bool) {
	s := strings.TrimSpace(text)
	if len(s) > 10 && (s[10] == 'T' || s[10] == 't') {
		s = s[:10] + " " + s[11:]
	}
	t, ok := parseFirst(s, zonedDateTimeLayouts, nil)
	if !ok {
		if t, ok = parseFirst(s, localDateTimeLayouts, loc); !ok {
			return time.Time{}, false
		}
	}
	switch oid {
	case pgtype.DateOID:
		y, m, d := t.Date()
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC), true
	case pgtype.TimestampOID:
		y, m, d := t.Date()
		return time.Date(y, m, d, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC), true
	}
	return t, true
}

// ParseDateTime is parseDateTimeText for the engine, which re-spells
// date/time literals for DuckDB the way PostgreSQL reads them.
func ParseDateTime(oid uint32, text string, loc *time.Location) (time.Time, bool) {
	return parseDateTimeText(oid, text, loc)
}

// parseFirst parses s with the first layout that fits; loc nil means the
// layout carries its own offset.
func parseFirst(s string, layouts []string, loc *time.Location) (time.Time, bool) {
	for _, l := range layouts {
		var t time.Time
		var err error
		if loc == nil {
			t, err = time.Parse(l, s)
		} else {
			t, err = time.ParseInLocation(l, s, loc)
		}
		if err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// appendTimestamptzText appends t as PostgreSQL prints timestamptz with
// DateStyle ISO: microseconds without trailing zeros, and the UTC offset as
// +HH, +HH:MM or +HH:MM:SS. t must already be in the session's time zone.
func appendTimestamptzText(buf []byte, t time.Time) []byte {
	t = t.Round(time.Microsecond)
	buf = t.AppendFormat(buf, "2006-01-02 15:04:05")
	if us := t.Nanosecond() / 1000; us != 0 {
		frac := fmt.Sprintf(".%06d", us)
		buf = append(buf, strings.TrimRight(frac, "0")...)
	}
	_, off := t.Zone()
	sign := byte('+')
	if off < 0 {
		sign, off = '-', -off
	}
	buf = fmt.Appendf(buf, "%c%02d", sign, off/3600)
	if m, s := off%3600/60, off%60; m != 0 || s != 0 {
		buf = fmt.Appendf(buf, ":%02d", m)
		if s != 0 {
			buf = fmt.Appendf(buf, ":%02d", s)
		}
	}
	return buf
}

// timeZoneCache remembers the location of the session's TimeZone setting.
type timeZoneCache struct {
	name string
	loc  *time.Location
}

// location returns the location named by a TimeZone setting
// (TimeZoneLocation); a name it does not know falls back to UTC.
func (z *timeZoneCache) location(name string) *time.Location {
	if z.loc != nil && z.name == name {
		return z.loc
	}
	loc, ok := TimeZoneLocation(name)
	if !ok {
		loc = time.UTC
	}
	z.name, z.loc = name, loc
	return loc
}
