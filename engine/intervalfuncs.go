package engine

import (
	"database/sql/driver"
	"math"

	"github.com/duckdb/duckdb-go/v2"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Interval arithmetic with PostgreSQL's answers.
//
// DuckDB and PostgreSQL both keep an interval as months, days and
// microseconds, and add, subtract, compare and sort them alike, but they
// part where a computation leaves a fraction of a field: PostgreSQL carries
// a fraction of a month into days (30 to a month) and a fraction of a day
// into time (interval_mul, interval_div), DuckDB truncates each field. And
// DuckDB has no sum or avg of intervals, no justify_*, and its epoch of an
// interval is a double. So:
//   - interval × number and interval ÷ number become lakesoul_interval_mul
//     and lakesoul_interval_div, PostgreSQL's interval_mul and
//     interval_div over float8 (the factor is float8 there too);
//   - justify_hours, justify_days and justify_interval are engine
//     functions of those names, PostgreSQL's algorithms;
//   - sum(interval) is the sum of each field (interval_pl adds field by
//     field), avg(interval) that sum ÷ count(interval) as interval_div;
//   - extract(epoch FROM interval) is numeric, computed from the fields as
//     PostgreSQL does (a year is 365.25 days, a month 30).
// A result that does not fit an interval's fields is 22008, as PostgreSQL's.

const (
	usecsPerDay  = 86400 * 1000000
	daysPerMonth = 30
	secsPerDay   = 86400
)

// intervalMacros are the SQL macros of the rewrites: the months, days and
// microseconds of an interval (DuckDB's date parts split them: year and
// month, hour, minute and microseconds of the minute), the interval of
// three such fields, and an interval's epoch as PostgreSQL's numeric.
var intervalMacros = []string{
	`CREATE MACRO lakesoul_interval_months(i) AS datepart('year', i)::BIGINT * 12 + datepart('month', i)`,
	`CREATE MACRO lakesoul_interval_days(i) AS datepart('day', i)`,
	`CREATE MACRO lakesoul_interval_of(months, days, micros) AS
		to_months(CAST(months AS INTEGER)) + to_days(CAST(days AS INTEGER)) + to_microseconds(CAST(micros AS BIGINT))`,
	`CREATE MACRO lakesoul_interval_micros(i) AS
		datepart('hour', i)::BIGINT * 3600000000 + datepart('minute', i)::BIGINT * 60000000 + datepart('microseconds', i)`,
	`CREATE MACRO lakesoul_interval_epoch(i) AS
		CAST(datepart('year', i) AS DECIMAL(38,0)) * 31557600 + CAST(datepart('month', i) AS DECIMAL(38,0)) * 2592000 +
		CAST(datepart('day', i) AS DECIMAL(38,0)) * 86400 + CAST(lakesoul_interval_micros(i) AS DECIMAL(38,0)) * 0.000001`,
}

var intervalType2 = []duckdb.Type{duckdb.TYPE_INTERVAL, duckdb.TYPE_DOUBLE}

// intervalFunctions are the engine's interval functions (duckFunctions).
var intervalFunctions = map[string]duckScalar{
	"lakesoul_interval_mul": {args: intervalType2, list: -1, result: duckdb.TYPE_INTERVAL,
		fn: func(a []driver.Value) (any, error) { return intervalMul(a[0].(duckdb.Interval), a[1].(float64)) }},
	"lakesoul_interval_div": {args: intervalType2, list: -1, result: duckdb.TYPE_INTERVAL,
		fn: func(a []driver.Value) (any, error) { return intervalDiv(a[0].(duckdb.Interval), a[1].(float64)) }},
	"justify_hours": {args: []duckdb.Type{duckdb.TYPE_INTERVAL}, list: -1, result: duckdb.TYPE_INTERVAL,
		fn: func(a []driver.Value) (any, error) { return justifyHours(a[0].(duckdb.Interval)) }},
	"justify_days": {args: []duckdb.Type{duckdb.TYPE_INTERVAL}, list: -1, result: duckdb.TYPE_INTERVAL,
		fn: func(a []driver.Value) (any, error) { return justifyDays(a[0].(duckdb.Interval)) }},
	"justify_interval": {args: []duckdb.Type{duckdb.TYPE_INTERVAL}, list: -1, result: duckdb.TYPE_INTERVAL,
		fn: func(a []driver.Value) (any, error) { return justifyInterval(a[0].(duckdb.Interval)) }},
}

func init() {
	for name, f := range intervalFunctions {
		duckFunctions[name] = f
	}
	duckMacros = append(duckMacros, intervalMacros...)
}

// tsRound is PostgreSQL's TSROUND: j rounded to microseconds.
func tsRound(j float64) float64 { return math.RoundToEven(j*1e6) / 1e6 }

// int32Field converts a computed field, or fails as out of range.
func int32Field(v float64) (int32, error) {
	if math.IsNaN(v) || v > math.MaxInt32 || v < math.MinInt32 {
		return 0, schema.ErrIntervalRange
	}
	return int32(v), nil // truncates toward zero, as C's cast
}

// scaleInterval is interval_mul (f(x) = x × factor) and interval_div
// (f(x) = x ÷ factor): each field scaled, the fraction of the months
// carried into days, of the days into time.
func scaleInterval(iv duckdb.Interval, f func(float64) float64) (any, error) {
	month, err := int32Field(f(float64(iv.Months)))
	if err != nil {
		return nil, err
	}
	day, err := int32Field(f(float64(iv.Days)))
	if err != nil {
		return nil, err
	}
	monthRemainderDays := tsRound((f(float64(iv.Months)) - float64(month)) * daysPerMonth)
	secRemainder := tsRound((f(float64(iv.Days)) - float64(day) + monthRemainderDays - math.Trunc(monthRemainderDays)) * secsPerDay)
	if math.Abs(secRemainder) >= secsPerDay {
		whole := math.Trunc(secRemainder / secsPerDay)
		day += int32(whole)
		secRemainder -= whole * secsPerDay
	}
	day += int32(monthRemainderDays)
	t := math.RoundToEven(f(float64(iv.Micros)) + secRemainder*1e6)
	if math.IsNaN(t) || t >= math.MaxInt64 || t < math.MinInt64 {
		return nil, schema.ErrIntervalRange
	}
	return duckdb.Interval{Months: month, Days: day, Micros: int64(t)}, nil
}

func intervalMul(iv duckdb.Interval, factor float64) (any, error) {
	if math.IsNaN(factor) {
		return nil, schema.ErrIntervalRange
	}
	return scaleInterval(iv, func(x float64) float64 { return x * factor })
}

func intervalDiv(iv duckdb.Interval, factor float64) (any, error) {
	if factor == 0 {
		return nil, sqlerr.New(sqlerr.DivisionByZero, "division by zero")
	}
	if math.IsNaN(factor) {
		return nil, schema.ErrIntervalRange
	}
	return scaleInterval(iv, func(x float64) float64 { return x / factor })
}

// addDays is days + more, or 22008 when the sum leaves int32.
func addDays(days int32, more int64) (int32, error) {
	s := int64(days) + more
	if s > math.MaxInt32 || s < math.MinInt32 {
		return 0, schema.ErrIntervalRange
	}
	return int32(s), nil
}

func justifyHours(iv duckdb.Interval) (any, error) {
	whole := iv.Micros / usecsPerDay
	iv.Micros -= whole * usecsPerDay
	var err error
	if iv.Days, err = addDays(iv.Days, whole); err != nil {
		return nil, err
	}
	switch {
	case iv.Days > 0 && iv.Micros < 0:
		iv.Micros += usecsPerDay
		iv.Days--
	case iv.Days < 0 && iv.Micros > 0:
		iv.Micros -= usecsPerDay
		iv.Days++
	}
	return iv, nil
}

func justifyDays(iv duckdb.Interval) (any, error) {
	whole := iv.Days / daysPerMonth
	iv.Days -= whole * daysPerMonth
	var err error
	if iv.Months, err = addDays(iv.Months, int64(whole)); err != nil {
		return nil, err
	}
	switch {
	case iv.Months > 0 && iv.Days < 0:
		iv.Days += daysPerMonth
		iv.Months--
	case iv.Months < 0 && iv.Days > 0:
		iv.Days -= daysPerMonth
		iv.Months++
	}
	return iv, nil
}

func justifyInterval(iv duckdb.Interval) (any, error) {
	wholeDay := iv.Micros / usecsPerDay
	iv.Micros -= wholeDay * usecsPerDay
	var err error
	if iv.Days, err = addDays(iv.Days, wholeDay); err != nil {
		return nil, err
	}
	wholeMonth := iv.Days / daysPerMonth
	iv.Days -= wholeMonth * daysPerMonth
	if iv.Months, err = addDays(iv.Months, int64(wholeMonth)); err != nil {
		return nil, err
	}
	switch {
	case iv.Months > 0 && (iv.Days < 0 || (iv.Days == 0 && iv.Micros < 0)):
		iv.Days += daysPerMonth
		iv.Months--
	case iv.Months < 0 && (iv.Days > 0 || (iv.Days == 0 && iv.Micros > 0)):
		iv.Days -= daysPerMonth
		iv.Months++
	}
	switch {
	case iv.Days > 0 && iv.Micros < 0:
		iv.Micros += usecsPerDay
		iv.Days--
	case iv.Days < 0 && iv.Micros > 0:
		iv.Micros -= usecsPerDay
		iv.Days++
	}
	return iv, nil
}

// intervalOperator rewrites interval × number, number × interval and
// interval ÷ number into lakesoul_interval_mul/div; false when a is none
// of them.
func (rw *pgRewriter) intervalOperator(n *pg_query.Node, a *pg_query.A_Expr) bool {
	if a.Kind != pg_query.A_Expr_Kind_AEXPR_OP || a.Lexpr == nil {
		return false
	}
	op := operatorName(a)
	if op != "*" && op != "/" {
		return false
	}
	l, r := rw.ti.typeAt(a.Lexpr), rw.ti.typeAt(a.Rexpr)
	number := func(t pgType) bool { return t.isInteger() || t.isFloat() || t.isNumeric() }
	iv, factor := a.Lexpr, a.Rexpr
	switch {
	case l.oid == schema.OIDInterval && number(r):
	case op == "*" && number(l) && r.oid == schema.OIDInterval:
		iv, factor = a.Rexpr, a.Lexpr
	default:
		return false
	}
	name := "lakesoul_interval_mul"
	if op == "/" {
		name = "lakesoul_interval_div"
	}
	n.Node = makeCall(name, iv, makeCast(factor, "float8")).Node
	return true
}

// intervalAggregate rewrites sum(interval) and avg(interval) (not
// DISTINCT, not windows: those stay DuckDB's, which refuses them).
func (rw *pgRewriter) intervalAggregate(n *pg_query.Node, fc *pg_query.FuncCall, name string) bool {
	if (name != "sum" && name != "avg") || len(fc.Args) != 1 || fc.AggDistinct || fc.Over != nil ||
		len(fc.AggOrder) > 0 || rw.ti.typeAt(fc.Args[0]).oid != schema.OIDInterval {
		return false
	}
	arg := fc.Args[0]
	part := func(macro string) *pg_query.Node {
		return &pg_query.Node{Node: &pg_query.Node_FuncCall{FuncCall: &pg_query.FuncCall{
			Funcname: []*pg_query.Node{pg_query.MakeStrNode("sum")}, Args: []*pg_query.Node{makeCall(macro, arg)},
			AggFilter: fc.AggFilter, Location: -1}}}
	}
	sum := makeCall("lakesoul_interval_of", part("lakesoul_interval_months"), part("lakesoul_interval_days"),
		part("lakesoul_interval_micros"))
	if name == "avg" {
		count := &pg_query.FuncCall{Funcname: []*pg_query.Node{pg_query.MakeStrNode("count")},
			Args: []*pg_query.Node{arg}, AggFilter: fc.AggFilter, Location: -1}
		sum = makeCall("lakesoul_interval_div", sum, makeCast(&pg_query.Node{Node: &pg_query.Node_FuncCall{FuncCall: count}}, "float8"))
	}
	n.Node = sum.Node
	return true
}
