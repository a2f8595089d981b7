package pgwire

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// TestIntervalStyles renders intervals in every IntervalStyle and compares
// with PostgreSQL 15's output of the same values (captured from psql:
// SET intervalstyle = …; SELECT v::text).
func TestIntervalStyles(t *testing.T) {
	us := func(d time.Duration) int64 { return int64(d / time.Microsecond) }
	values := []pgtype.Interval{
		{},
		{Months: 14, Days: -3, Microseconds: us(4*time.Hour + 5*time.Minute + 6500*time.Millisecond)},
		{Months: -14},
		{Days: -3, Microseconds: -us(4*time.Hour + 5*time.Minute + 6500*time.Millisecond)},
		{Days: 1, Microseconds: us(time.Hour + 2*time.Minute + 3*time.Second)},
		{Microseconds: -1250000},
		{Microseconds: 1},
		{Months: -12, Days: 2},
		{Microseconds: 1e6},
		{Microseconds: us(100 * time.Hour)},
		{Days: -1, Microseconds: 1e6},
		{Months: 1, Microseconds: -1e6},
		{Microseconds: -500000},
		{Months: 24},
	}
	want := map[string][]string{
		"postgres": {"00:00:00", "1 year 2 mons -3 days +04:05:06.5", "-1 years -2 mons", "-3 days -04:05:06.5",
			"1 day 01:02:03", "-00:00:01.25", "00:00:00.000001", "-1 years +2 days", "00:00:01", "100:00:00",
			"-1 days +00:00:01", "1 mon -00:00:01", "-00:00:00.5", "2 years"},
		"postgres_verbose": {"@ 0", "@ 1 year 2 mons -3 days 4 hours 5 mins 6.5 secs", "@ 1 year 2 mons ago",
			"@ 3 days 4 hours 5 mins 6.5 secs ago", "@ 1 day 1 hour 2 mins 3 secs", "@ 1.25 secs ago", "@ 0.000001 secs",
			"@ 1 year -2 days ago", "@ 1 sec", "@ 100 hours", "@ 1 day -1 sec ago", "@ 1 mon -1 sec", "@ 0.5 secs ago",
			"@ 2 years"},
		"sql_standard": {"0", "+1-2 -3 +4:05:06.5", "-1-2", "-3 4:05:06.5", "1 1:02:03", "-0:00:01.25", "0:00:00.000001",
			"-1-0 +2 +0:00:00", "0:00:01", "100:00:00", "+0-0 -1 +0:00:01", "+0-1 +0 -0:00:01", "-0:00:00.5", "2-0"},
		"iso_8601": {"PT0S", "P1Y2M-3DT4H5M6.5S", "P-1Y-2M", "P-3DT-4H-5M-6.5S", "P1DT1H2M3S", "PT-1.25S", "PT0.000001S",
			"P-1Y2D", "PT1S", "PT100H", "P-1DT1S", "P1MT-1S", "PT-0.5S", "P2Y"},
	}
	for _, style := range IntervalStyles {
		for i, v := range values {
			v.Valid = true
			if got := string(AppendIntervalText(nil, v, style)); got != want[style][i] {
				t.Errorf("%s: %+v → %q, PostgreSQL writes %q", style, v, got, want[style][i])
			}
		}
	}
}

// TestTimeZoneSettings: the TimeZone forms PostgreSQL accepts, their
// offsets and the names SHOW gives them.
func TestTimeZoneSettings(t *testing.T) {
	at := time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in, name string
		east     int
	}{
		{"UTC", "UTC", 0},
		{"+00:00", "+00:00", 0},
		{"+05:30", "+05:30", -(5*3600 + 30*60)}, // POSIX: west of Greenwich
		{"-8", "<-08>+08", -8 * 3600},           // a number: hours east
		{"+5", "<+05>-05", 5 * 3600},
		{"AB5", "AB5", -5 * 3600},
		{"5.5", "<+05:30>-05:30", 5*3600 + 30*60},
		{"<+05:30>-05:30", "<+05:30>-05:30", 5*3600 + 30*60},
		{"<-08>+08", "<-08>+08", -8 * 3600},
		{"EST5", "EST5", -5 * 3600},
		{"america/new_york", "America/New_York", -5 * 3600},
		{"Asia/Kolkata", "Asia/Kolkata", 5*3600 + 30*60},
	} {
		loc, ok := TimeZoneLocation(c.in)
		if !ok {
			t.Errorf("%q: refused", c.in)
			continue
		}
		if _, off := at.In(loc).Zone(); off != c.east || loc.String() != c.name {
			t.Errorf("%q: %q at %+d s, want %q at %+d s", c.in, loc.String(), off, c.name, c.east)
		}
	}
	for _, bad := range []string{"", "Mars/Olympus", "+05:99", "Z", "../etc/passwd", "<+05"} {
		if loc, ok := TimeZoneLocation(bad); ok {
			t.Errorf("%q accepted as %v", bad, loc)
		}
	}
	if got := OffsetTimeZone(0); got != "<+00>-00" {
		t.Errorf("OffsetTimeZone(0) = %q", got)
	}
}
