package engine

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// DuckDB's errors in PostgreSQL's words. Where DuckDB and PostgreSQL fail
// for the same reason, the client gets PostgreSQL's SQLSTATE and message:
// mapDuckDBError (duckerror.go) consults pgMessageFor with DuckDB's message
// (its "<Kind> Error: " prefix removed).

// duckIntegerTypes names DuckDB's integer types as PostgreSQL does.
var duckIntegerTypes = map[string]string{"INT16": "smallint", "INT32": "integer", "INT64": "bigint"}

// duckInputTypes names DuckDB's float and boolean types as PostgreSQL does.
var duckInputTypes = map[string]string{"DOUBLE": "double precision", "FLOAT": "real", "BOOL": "boolean"}

var (
	duckStringToInt  = regexp.MustCompile(`^Could not convert string '(.*)' to (INT16|INT32|INT64)\b`)
	duckStringToType = regexp.MustCompile(`^Could not convert string '(.*)' to (DOUBLE|FLOAT|BOOL)\b`)
	duckCastRange    = regexp.MustCompile(`^Type \S+ with value .* can't be cast because the value is out of range for the destination type (INT16|INT32|INT64)\b`)
	duckOverflow     = regexp.MustCompile(`^Overflow in (?:addition|subtraction|multiplication|negation) of (INT16|INT32|INT64)\b`)
	duckDateRange    = regexp.MustCompile(`^(?:date|timestamp) field value out of range: ("(?:[^"]|"")*")`)
)

// duckFixedMessages are DuckDB messages (prefixes) with PostgreSQL's
// SQLSTATE and message for the same failure.
var duckFixedMessages = []struct{ duck, code, pg string }{
	{"cannot take square root of a negative number", "2201F", "cannot take square root of a negative number"},
	{"More than one row returned by a subquery used as an expression", "21000", "more than one row returned by a subquery used as an expression"},
	{"interval cannot be 0", sqlerr.InvalidParameterValue, "step size cannot equal zero"},
}

// pgMessageFor returns PostgreSQL's SQLSTATE and message for a DuckDB
// message, if it is one of the failures above.
func pgMessageFor(msg string) (code, message string, ok bool) {
	if m := duckStringToInt.FindStringSubmatch(msg); m != nil {
		name, text := duckIntegerTypes[m[2]], m[1]
		t := strings.TrimSpace(text)
		if d := strings.TrimLeft(t, "+-"); d != "" && len(t)-len(d) <= 1 && strings.Trim(d, "0123456789") == "" {
			return sqlerr.NumericValueOutOfRange, fmt.Sprintf("value %q is out of range for type %s", text, name), true
		}
		return sqlerr.InvalidTextRepresentation, fmt.Sprintf("invalid input syntax for type %s: %q", name, text), true
	}
	if m := duckStringToType.FindStringSubmatch(msg); m != nil {
		return sqlerr.InvalidTextRepresentation, fmt.Sprintf("invalid input syntax for type %s: %q", duckInputTypes[m[2]], m[1]), true
	}
	if m := duckCastRange.FindStringSubmatch(msg); m != nil {
		return sqlerr.NumericValueOutOfRange, duckIntegerTypes[m[1]] + " out of range", true
	}
	if m := duckOverflow.FindStringSubmatch(msg); m != nil {
		return sqlerr.NumericValueOutOfRange, duckIntegerTypes[m[1]] + " out of range", true
	}
	if m := duckDateRange.FindStringSubmatch(msg); m != nil {
		return "22008", "date/time field value out of range: " + m[1], true
	}
	for _, f := range duckFixedMessages {
		if strings.HasPrefix(msg, f.duck) {
			return f.code, f.pg, true
		}
	}
	return "", "", false
}
