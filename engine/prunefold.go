package engine

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/layout"
)

// Constant folding for pruning terms: `DATE 'd' ± INTERVAL '…'` and
// `DATE 'd' ± n` become the date they denote, so `col < DATE '1994-01-01' +
// INTERVAL '1 year'` prunes as `col < DATE '1995-01-01'`. PostgreSQL types
// date ± interval as timestamp; a date column compares with it as the date
// at midnight, so only intervals of whole days (years, months, weeks, days)
// fold — any time of day leaves the term to DuckDB. Months are added first,
// the day clamped to the month's end, then days, as PostgreSQL adds them.

// intervalMasks are the typmods of `INTERVAL 'n' unit` (PostgreSQL's
// INTERVAL_MASK) for the units that fold, as months and days per n.
var intervalMasks = map[int32][2]int64{1 << 2: {12, 0}, 1 << 1: {1, 0}, 1 << 3: {0, 1}}

// intervalUnits are the unit words of interval text that fold.
var intervalUnits = map[string][2]int64{
	"year": {12, 0}, "years": {12, 0}, "y": {12, 0}, "yr": {12, 0}, "yrs": {12, 0},
	"month": {1, 0}, "months": {1, 0}, "mon": {1, 0}, "mons": {1, 0},
	"week": {0, 7}, "weeks": {0, 7}, "w": {0, 7},
	"day": {0, 1}, "days": {0, 1}, "d": {0, 1},
}

var intervalPart = regexp.MustCompile(`^\s*([+-]?\d+)\s*([a-z]+)\s*`)

// foldDateArith reads `date-constant ± interval-or-integer` (or interval +
// date) as the date constant it denotes.
func foldDateArith(e *pg_query.A_Expr) (pruneArg, bool) {
	if e.Kind != pg_query.A_Expr_Kind_AEXPR_OP || len(e.Name) != 1 || e.Name[0].GetString_() == nil {
		return pruneArg{}, false
	}
	op := e.Name[0].GetString_().Sval
	if op != "+" && op != "-" {
		return pruneArg{}, false
	}
	days, ok := dateConst(e.Lexpr)
	other := e.Rexpr
	if !ok && op == "+" {
		days, ok = dateConst(e.Rexpr)
		other = e.Lexpr
	}
	if !ok {
		return pruneArg{}, false
	}
	months, ndays, ok := wholeDays(other)
	if !ok {
		return pruneArg{}, false
	}
	if op == "-" {
		months, ndays = -months, -ndays
	}
	d := addMonthsDays(days, months, ndays)
	return pruneArg{kind: termCast, cast: "date", text: d.Format("2006-01-02")}, true
}

// dateConst reads a date constant (DATE 'text', 'text'::date, or a folded
// expression) as days since 1970-01-01.
func dateConst(n *pg_query.Node) (int64, bool) {
	if e := n.GetAExpr(); e != nil {
		a, ok := foldDateArith(e)
		if !ok {
			return 0, false
		}
		return parseDate(a.text)
	}
	tc := n.GetTypeCast()
	if tc == nil || tc.TypeName == nil || strings.ToLower(typeNameString(tc.TypeName)) != "date" {
		return 0, false
	}
	c := tc.Arg.GetAConst()
	if c == nil || c.Isnull || c.GetSval() == nil {
		return 0, false
	}
	return parseDate(c.GetSval().Sval)
}

func parseDate(text string) (int64, bool) {
	v, err := layout.ParseValue(text, arrow.FixedWidthTypes.Date32)
	d, isDate := v.(arrow.Date32)
	return int64(d), err == nil && isDate
}

// wholeDays reads an integer constant (days) or an interval constant of
// whole days as months and days.
func wholeDays(n *pg_query.Node) (months, days int64, ok bool) {
	if c := n.GetAConst(); c != nil && c.GetIval() != nil {
		return 0, int64(c.GetIval().Ival), true
	}
	tc := n.GetTypeCast()
	if tc == nil || tc.TypeName == nil || strings.ToLower(typeNameString(tc.TypeName)) != "interval" {
		return 0, 0, false
	}
	c := tc.Arg.GetAConst()
	if c == nil || c.Isnull || c.GetSval() == nil {
		return 0, 0, false
	}
	text := strings.ToLower(strings.TrimSpace(c.GetSval().Sval))
	mods, err := typeMods(tc.TypeName)
	if err != nil || len(mods) > 1 {
		return 0, 0, false
	}
	if len(mods) == 1 {
		// INTERVAL 'n' unit: a bare count of that unit.
		unit, known := intervalMasks[mods[0]]
		n, err := strconv.ParseInt(text, 10, 32)
		if !known || err != nil {
			return 0, 0, false
		}
		return n * unit[0], n * unit[1], true
	}
	if text == "" {
		return 0, 0, false
	}
	for text != "" {
		m := intervalPart.FindStringSubmatch(text)
		if m == nil {
			return 0, 0, false
		}
		unit, known := intervalUnits[m[2]]
		n, err := strconv.ParseInt(m[1], 10, 32)
		if !known || err != nil {
			return 0, 0, false
		}
		months += n * unit[0]
		days += n * unit[1]
		text = text[len(m[0]):]
	}
	return months, days, true
}

// addMonthsDays adds months (the day clamped to the month's last) and then
// days to a date given as days since 1970-01-01.
func addMonthsDays(date, months, days int64) time.Time {
	t := time.Unix(date*86400, 0).UTC()
	y, m, d := t.Date()
	total := int64(y)*12 + int64(m-1) + months
	ny, nm := int(total/12), time.Month(total%12+1)
	if total%12 < 0 {
		ny, nm = int(total/12)-1, time.Month(total%12+13)
	}
	if last := time.Date(ny, nm+1, 0, 0, 0, 0, 0, time.UTC).Day(); d > last {
		d = last
	}
	return time.Date(ny, nm, d, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(days))
}

// isoTimestamp reads the ISO forms of a timestamp without time zone that
// PostgreSQL reads the same way — YYYY-MM-DD, then optionally a space or T,
// HH:MM, :SS and up to six fractional digits — as microseconds since
// 1970-01-01 00:00. Other input (time zones, more digits, which PostgreSQL
// rounds, words like 'now') is not read: the term is left to DuckDB.
func isoTimestamp(text string) (int64, bool) {
	m := isoTimestampForm.FindStringSubmatch(strings.TrimSpace(text))
	if m == nil {
		return 0, false
	}
	layout := "2006-01-02"
	if m[1] != "" {
		layout += m[1][:1] + "15:04"
		if m[2] != "" {
			layout += ":05"
		}
	}
	t, err := time.Parse(layout, m[0][:len(m[0])-len(m[3])])
	if err != nil {
		return 0, false
	}
	us := t.UnixMicro()
	if m[3] != "" {
		frac := m[3][1:] + strings.Repeat("0", 7-len(m[3]))
		n, _ := strconv.ParseInt(frac, 10, 64)
		us += n
	}
	return us, true
}

var isoTimestampForm = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?)?$`)
