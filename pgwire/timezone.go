package pgwire

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// TimeZone settings, read as PostgreSQL reads them.
//
// A TimeZone value is one of:
//   - UTC and its aliases, or an IANA zone name (any case);
//   - a number of hours east of UTC;
//   - a POSIX time-zone specification without daylight-saving rules:
//     an optional abbreviation (letters, or anything inside <…>) and an
//     offset [+-]hh[:mm[:ss]] counted west of Greenwich, so '+05:30' and
//     'EST5' are behind UTC and '<+05>-05' is ahead of it (PostgreSQL, like
//     POSIX, allows the abbreviation to be empty).
//
// SET stores numbers and intervals as PostgreSQL shows them, a POSIX
// specification named after the offset (OffsetTimeZone).

// TimeZoneLocation returns the location a TimeZone setting names, and false
// when PostgreSQL would not accept the name. The location's String() is the
// name as PostgreSQL shows the setting: the zone file's spelling of an IANA
// name, a POSIX specification in upper case, OffsetTimeZone's for a number.
func TimeZoneLocation(name string) (*time.Location, bool) {
	s := strings.TrimSpace(name)
	if s == "" {
		return nil, false
	}
	if h, err := strconv.ParseFloat(s, 64); err == nil {
		// A number of hours east of UTC (SET TIME ZONE 5).
		if h < -168 || h > 168 {
			return nil, false
		}
		return time.FixedZone(OffsetTimeZone(int(h*3600)), int(h*3600)), true
	}
	if off, ok := posixOffset(s); ok {
		return time.FixedZone(strings.ToUpper(s), off), true
	}
	if strings.ContainsAny(s, " \t") || strings.HasPrefix(s, "/") || strings.Contains(s, "..") {
		return nil, false
	}
	for _, n := range []string{s, strings.ToUpper(s), titleZoneName(s)} {
		if l, err := time.LoadLocation(n); err == nil {
			return l, true
		}
	}
	return nil, false
}

// titleZoneName spells an IANA name as the database does ("america/new_york"
// → "America/New_York"), so a name in another case finds its file.
func titleZoneName(s string) string {
	b := []byte(strings.ToLower(s))
	up := true
	for i, c := range b {
		if up && c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
		up = c == '/' || c == '_' || c == '-'
	}
	return string(b)
}

// posixOffset reads a POSIX specification without DST rules: [abbrev]offset,
// and returns its offset in seconds east of UTC.
func posixOffset(s string) (int, bool) {
	rest := s
	switch {
	case strings.HasPrefix(rest, "<"):
		end := strings.IndexByte(rest, '>')
		if end < 0 {
			return 0, false
		}
		rest = rest[end+1:]
	default:
		i := 0
		for i < len(rest) && (rest[i] >= 'a' && rest[i] <= 'z' || rest[i] >= 'A' && rest[i] <= 'Z') {
			i++
		}
		rest = rest[i:]
	}
	if rest == "" {
		return 0, false
	}
	sign := 1
	switch rest[0] {
	case '+':
		rest = rest[1:]
	case '-':
		sign, rest = -1, rest[1:]
	}
	parts := strings.Split(rest, ":")
	if len(parts) > 3 {
		return 0, false
	}
	limits := []int{167, 59, 59} // POSIX allows hours up to 24*7-1
	secs := 0
	for i, p := range parts {
		if p == "" || len(p) > 3 || strings.Trim(p, "0123456789") != "" {
			return 0, false
		}
		v, _ := strconv.Atoi(p)
		if v > limits[i] {
			return 0, false
		}
		secs += v * []int{3600, 60, 1}[i]
	}
	// West of Greenwich is positive in POSIX.
	return -sign * secs, true
}

// OffsetTimeZone names a fixed offset, in seconds east of UTC, as PostgreSQL
// names the zone of SET TIME ZONE 5 or SET TIME ZONE INTERVAL '+05:30' HOUR
// TO MINUTE: a POSIX specification whose abbreviation is the offset,
// "<+05:30>-05:30".
func OffsetTimeZone(eastSeconds int) string {
	abs := eastSeconds
	if abs < 0 {
		abs = -abs
	}
	off := fmt.Sprintf("%02d", abs/3600)
	if rem := abs % 3600; rem != 0 {
		off += fmt.Sprintf(":%02d", rem/60)
		if rem%60 != 0 {
			off += fmt.Sprintf(":%02d", rem%60)
		}
	}
	if eastSeconds < 0 {
		return "<-" + off + ">+" + off
	}
	return "<+" + off + ">-" + off
}
