package engine

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// DuckDB's errors as PostgreSQL's. Every error DuckDB raises while running
// a statement reaches the client through mapDuckDBError (registered with
// sqlerr), and none in DuckDB's words: a message is either one the engine
// raised itself in PostgreSQL's wording (engineErrorCodes), or DuckDB's
// message rewritten into PostgreSQL's by one of duckMessages, or — when no
// rule knows it — the SQLSTATE's generic PostgreSQL message
// (genericMessages). DuckDB's own text is kept in the error's cause, which
// only the server log shows.

// engineErrorCodes are the SQLSTATEs of the errors the engine's own DuckDB
// functions and macros raise (duckfuncs.go), by their message; those
// messages are PostgreSQL's already.
var engineErrorCodes = map[string]string{
	"division by zero":                                     sqlerr.DivisionByZero,
	"value overflows numeric format":                       sqlerr.NumericValueOutOfRange,
	"interval out of range":                                sqlerr.DatetimeFieldOverflow,
	"unsupported Unicode escape sequence":                  "22P05",
	"invalid input syntax for type json":                   sqlerr.InvalidTextRepresentation,
	"invalid input syntax for type uuid":                   sqlerr.InvalidTextRepresentation,
	"invalid input syntax for type vector":                 sqlerr.InvalidTextRepresentation,
	"null values cannot be formatted as an SQL identifier": "22004",
	"cannot delete from":                                   sqlerr.InvalidParameterValue,
	"cannot extract elements from":                         sqlerr.InvalidParameterValue,
	"cannot call json":                                     sqlerr.InvalidParameterValue,
	"key must not be null":                                 "22004",
	keyUpdateMessage:                                       sqlerr.FeatureNotSupported,
	"value too long for type":                              sqlerr.StringDataRightTruncation,
	"ON CONFLICT DO UPDATE " + affectTwiceMessage:          sqlerr.CardinalityViolation,
	"MERGE " + affectTwiceMessage:                          sqlerr.CardinalityViolation,
}

// engineErrorHints are PostgreSQL's hints to engine errors, by message.
var engineErrorHints = map[string]string{
	"ON CONFLICT DO UPDATE " + affectTwiceMessage: "Ensure that no rows proposed for insertion within the same command have duplicate constrained values.",
	"MERGE " + affectTwiceMessage:                 "Ensure that not more than one source row matches any one target row.",
}

// engineError finds an engine error in a DuckDB message: its SQLSTATE and
// its own message (without what DuckDB and duckdb-go put before it).
func engineError(msg string) (code, message string, ok bool) {
	for m, code := range engineErrorCodes {
		if i := strings.Index(msg, m); i >= 0 {
			return code, msg[i:], true
		}
	}
	return "", "", false
}

// duckTypeNames are DuckDB's type names as PostgreSQL names the types in
// messages.
var duckTypeNames = map[string]string{
	"BOOLEAN": "boolean", "BOOL": "boolean", "TINYINT": "smallint", "SMALLINT": "smallint", "INT16": "smallint",
	"INT8": "smallint", "INTEGER": "integer", "INT32": "integer", "BIGINT": "bigint", "INT64": "bigint",
	"HUGEINT": "numeric", "INT128": "numeric", "UTINYINT": "smallint", "USMALLINT": "integer", "UINTEGER": "bigint",
	"UBIGINT": "numeric", "FLOAT": "real", "DOUBLE": "double precision", "DECIMAL": "numeric", "VARCHAR": "text",
	"STRING_LITERAL": "unknown", "INTEGER_LITERAL": "integer", "DATE": "date", "TIME": "time without time zone",
	"TIMESTAMP": "timestamp without time zone", "TIMESTAMP WITH TIME ZONE": "timestamp with time zone",
	"TIMESTAMP_NS": "timestamp without time zone", "TIMESTAMP_MS": "timestamp without time zone",
	"TIMESTAMP_S": "timestamp without time zone", "INTERVAL": "interval", "UUID": "uuid", "BLOB": "bytea",
	"JSON": "json", "NULL": "unknown", "\"NULL\"": "unknown",
}

// duckTypeMessageName names a DuckDB type ("DECIMAL(10,2)", "INTEGER[]") as
// PostgreSQL's messages do; types it does not know become "unknown".
func duckTypeMessageName(duck string) string {
	d := strings.TrimSpace(duck)
	if strings.HasSuffix(d, "[]") {
		return duckTypeMessageName(strings.TrimSuffix(d, "[]")) + "[]"
	}
	if i := strings.IndexByte(d, '('); i > 0 {
		d = d[:i]
	}
	if n, ok := duckTypeNames[strings.ToUpper(d)]; ok {
		return n
	}
	return "unknown"
}

// pgTypeList renames a comma-separated list of DuckDB types.
func pgTypeList(list string) string {
	var out []string
	depth, start := 0, 0
	for i := 0; i <= len(list); i++ {
		if i < len(list) {
			switch list[i] {
			case '(':
				depth++
				continue
			case ')':
				depth--
				continue
			case ',':
				if depth > 0 {
					continue
				}
			default:
				continue
			}
		}
		if part := strings.TrimSpace(list[start:i]); part != "" {
			out = append(out, duckTypeMessageName(part))
		}
		start = i + 1
	}
	return strings.Join(out, ", ")
}

// isOperatorName reports whether a DuckDB function name is an operator
// (+, ||, ~~ …).
func isOperatorName(name string) bool {
	return name != "" && strings.Trim(name, "+-*/%<>=~!@#^&|`?") == ""
}

// signature renders name(args) as PostgreSQL's messages name a function or
// an operator call: "lower(integer)", "integer + text".
func signature(name, args string) (text string, operator bool) {
	types := strings.Split(pgTypeList(args), ", ")
	if isOperatorName(name) {
		switch len(types) {
		case 1:
			return name + " " + types[0], true
		case 2:
			return types[0] + " " + name + " " + types[1], true
		}
	}
	return name + "(" + strings.Join(types, ", ") + ")", false
}

const castHint = "You might need to add explicit type casts."

// duckMessage rewrites one kind of DuckDB message into PostgreSQL's.
type duckMessage struct {
	re *regexp.Regexp
	pg func(m []string) *sqlerr.Error
}

var duckMessages = []duckMessage{
	{regexp.MustCompile(`^Could not convert string '(.*)' to ([A-Z0-9_ ]+?)(?:\s|$)`), func(m []string) *sqlerr.Error {
		typ := duckTypeMessageName(m[2])
		if strings.HasSuffix(typ, "int") || typ == "smallint" || typ == "integer" || typ == "bigint" {
			if digits := strings.TrimLeft(strings.TrimSpace(m[1]), "+-"); digits != "" && strings.Trim(digits, "0123456789") == "" {
				// A number, but too large for the type.
				return sqlerr.New(sqlerr.NumericValueOutOfRange, "value %q is out of range for type %s", m[1], typ)
			}
		}
		code := sqlerr.InvalidTextRepresentation
		if strings.HasPrefix(typ, "date") || strings.HasPrefix(typ, "time") {
			code = sqlerr.InvalidDatetimeFormat
		}
		return sqlerr.New(code, "invalid input syntax for type %s: %q", typ, m[1])
	}},
	{regexp.MustCompile(`(?i)^invalid (date|timestamp|time)(?: field)? format: "(.*?)"`), func(m []string) *sqlerr.Error {
		return sqlerr.New(sqlerr.InvalidDatetimeFormat, "invalid input syntax for type %s: %q", strings.ToLower(m[1]), m[2])
	}},
	{regexp.MustCompile(`(?i)^(?:date|timestamp|time) field value out of range: "(.*?)"`), func(m []string) *sqlerr.Error {
		return sqlerr.New("22008", "date/time field value out of range: %q", m[1])
	}},
	{regexp.MustCompile(`^Referenced column "([^"]*)" not found`), func(m []string) *sqlerr.Error {
		if systemColumns[m[1]] {
			return systemColumnError(m[1]) // systemcols.go
		}
		return sqlerr.New(sqlerr.UndefinedColumn, "column %q does not exist", m[1])
	}},
	{regexp.MustCompile(`^Values list "([^"]*)" does not have a column named "([^"]*)"`), func(m []string) *sqlerr.Error {
		return sqlerr.New(sqlerr.UndefinedColumn, "column %s.%s does not exist", m[1], m[2])
	}},
	{regexp.MustCompile(`^Table "([^"]*)" does not have a column named "([^"]*)"`), func(m []string) *sqlerr.Error {
		if systemColumns[m[2]] {
			return systemColumnError(m[2])
		}
		return sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", m[2], m[1])
	}},
	{regexp.MustCompile(`^Referenced table "([^"]*)" not found`), func(m []string) *sqlerr.Error {
		return sqlerr.New(sqlerr.UndefinedTable, "missing FROM-clause entry for table %q", m[1])
	}},
	{regexp.MustCompile(`^Ambiguous reference to (?:column name|table) "([^"]*)"`), func(m []string) *sqlerr.Error {
		return sqlerr.New(sqlerr.AmbiguousColumn, "column reference %q is ambiguous", m[1])
	}},
	{regexp.MustCompile(`^Table with name (\S+?)!? does not exist`), func(m []string) *sqlerr.Error {
		return sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", m[1])
	}},
	{regexp.MustCompile(`^Schema with name (\S+?)!? does not exist`), func(m []string) *sqlerr.Error {
		return sqlerr.New(sqlerr.InvalidSchemaName, "schema %q does not exist", m[1])
	}},
	{regexp.MustCompile(`^(?:Scalar |Table |Aggregate |Macro )?Function with name (\S+?)!? does not exist`), func(m []string) *sqlerr.Error {
		return &sqlerr.Error{Code: sqlerr.UndefinedFunction, Message: fmt.Sprintf("function %s does not exist", m[1]),
			Hint: "No function matches the given name and argument types. " + castHint}
	}},
	{regexp.MustCompile(`^No function matches the given name and argument types '([^(]*)\((.*)\)'`), func(m []string) *sqlerr.Error {
		sig, op := signature(m[1], m[2])
		if op {
			return &sqlerr.Error{Code: sqlerr.UndefinedFunction, Message: "operator does not exist: " + sig,
				Hint: "No operator matches the given name and argument types. " + castHint}
		}
		return &sqlerr.Error{Code: sqlerr.UndefinedFunction, Message: fmt.Sprintf("function %s does not exist", sig),
			Hint: "No function matches the given name and argument types. " + castHint}
	}},
	{regexp.MustCompile(`^Could not choose a best candidate function for the function call "([^(]*)\((.*)\)"`), func(m []string) *sqlerr.Error {
		sig, op := signature(m[1], m[2])
		if op {
			return &sqlerr.Error{Code: "42725", Message: "operator is not unique: " + sig,
				Hint: "Could not choose a best candidate operator. " + castHint}
		}
		return &sqlerr.Error{Code: "42725", Message: fmt.Sprintf("function %s is not unique", sig),
			Hint: "Could not choose a best candidate function. " + castHint}
	}},
	{regexp.MustCompile(`^Cannot (?:compare|mix) values of type (.+?) and(?: type)? (.+?)(?: -|$| in)`), func(m []string) *sqlerr.Error {
		return &sqlerr.Error{Code: sqlerr.UndefinedFunction,
			Message: fmt.Sprintf("operator does not exist: %s = %s", duckTypeMessageName(m[1]), duckTypeMessageName(m[2])),
			Hint:    "No operator matches the given name and argument types. " + castHint}
	}},
	{regexp.MustCompile(`^Overflow in (?:addition|subtraction|multiplication|negation|division) of (\w+)`), func(m []string) *sqlerr.Error {
		return sqlerr.New(sqlerr.NumericValueOutOfRange, "%s out of range", duckTypeMessageName(m[1]))
	}},
	{regexp.MustCompile(`out of range for the destination type (\w+)`), func(m []string) *sqlerr.Error {
		return sqlerr.New(sqlerr.NumericValueOutOfRange, "%s out of range", duckTypeMessageName(m[1]))
	}},
	{regexp.MustCompile(`^Unimplemented type for cast \((.+?) -> (.+?)\)`), func(m []string) *sqlerr.Error {
		return sqlerr.New("42846", "cannot cast type %s to %s", duckTypeMessageName(m[1]), duckTypeMessageName(m[2]))
	}},
	{regexp.MustCompile(`^column "([^"]*)" must appear in the GROUP BY clause`), func(m []string) *sqlerr.Error {
		return sqlerr.New("42803", "column %q must appear in the GROUP BY clause or be used in an aggregate function", m[1])
	}},
	{regexp.MustCompile(`^aggregate function calls cannot be nested`), func([]string) *sqlerr.Error {
		return sqlerr.New("42803", "aggregate function calls cannot be nested")
	}},
	{regexp.MustCompile(`^NOT NULL constraint failed: (?:[^.]*\.)?(\S+)`), func(m []string) *sqlerr.Error {
		return sqlerr.New(sqlerr.NotNullViolation, "null value in column %q violates not-null constraint", m[1])
	}},
	{regexp.MustCompile(`^(?i:division by zero)`), func([]string) *sqlerr.Error {
		return sqlerr.New(sqlerr.DivisionByZero, "division by zero")
	}},
	// DuckDB's parser is PostgreSQL's: its syntax errors are worded alike.
	{regexp.MustCompile(`^(syntax error at (?:or near "[^"]*"|end of input))`), func(m []string) *sqlerr.Error {
		return sqlerr.New(sqlerr.SyntaxError, "%s", m[1])
	}},
}

// genericMessages are PostgreSQL's words for an error of each SQLSTATE a
// DuckDB error class maps to, for messages no rule of duckMessages knows.
var genericMessages = map[string]string{
	sqlerr.SyntaxError:               "syntax error",
	sqlerr.InvalidTextRepresentation: "invalid input syntax",
	sqlerr.InvalidDatetimeFormat:     "invalid input syntax for a date/time value",
	sqlerr.NumericValueOutOfRange:    "value out of range",
	sqlerr.DivisionByZero:            "division by zero",
	sqlerr.DatatypeMismatch:          "argument types do not match",
	sqlerr.FeatureNotSupported:       "feature not supported",
	sqlerr.QueryCanceled:             "canceling statement due to user request",
	sqlerr.OutOfMemory:               "out of memory",
	sqlerr.InsufficientPrivilege:     "permission denied",
	sqlerr.NotNullViolation:          "null value violates not-null constraint",
	sqlerr.UndefinedFunction:         "function does not exist",
	sqlerr.InvalidSchemaName:         "schema does not exist",
	sqlerr.UndefinedTable:            "relation does not exist",
	sqlerr.UndefinedColumn:           "column does not exist",
	sqlerr.AmbiguousColumn:           "column reference is ambiguous",
	sqlerr.InvalidParameterValue:     "invalid parameter value",
	sqlerr.InternalError:             "internal error",
}

// duckErrorCode is the SQLSTATE of a DuckDB error class (and, within a
// class, of some messages) when no rule of duckMessages knows the message.
func duckErrorCode(t duckdb.ErrorType, msg string) string {
	switch t {
	case duckdb.ErrorTypeParser, duckdb.ErrorTypeSyntax:
		return sqlerr.SyntaxError
	case duckdb.ErrorTypeConversion, duckdb.ErrorTypeInvalidInput:
		if dateTimeTarget.MatchString(msg) {
			return sqlerr.InvalidDatetimeFormat
		}
		return sqlerr.InvalidTextRepresentation
	case duckdb.ErrorTypeOutOfRange, duckdb.ErrorTypeDecimal:
		return sqlerr.NumericValueOutOfRange
	case duckdb.ErrorTypeDivideByZero:
		return sqlerr.DivisionByZero
	case duckdb.ErrorTypeMismatchType, duckdb.ErrorTypeInvalidType:
		return sqlerr.DatatypeMismatch
	case duckdb.ErrorTypeNotImplemented:
		return sqlerr.FeatureNotSupported
	case duckdb.ErrorTypeInterrupt:
		return sqlerr.QueryCanceled
	case duckdb.ErrorTypeOutOfMemory:
		// The memory limit, or the temp space limit when spilling.
		return sqlerr.OutOfMemory
	case duckdb.ErrorTypePermission:
		return sqlerr.InsufficientPrivilege
	case duckdb.ErrorTypeConstraint:
		return sqlerr.NotNullViolation
	case duckdb.ErrorTypeCatalog:
		switch {
		case strings.Contains(msg, "Function with name"), strings.Contains(msg, "Scalar Function"), strings.Contains(msg, "Table Function"):
			return sqlerr.UndefinedFunction
		case strings.Contains(msg, "Schema with name"):
			return sqlerr.InvalidSchemaName
		}
		return sqlerr.UndefinedTable
	case duckdb.ErrorTypeBinder:
		switch {
		case strings.Contains(msg, "not found in FROM clause"), strings.Contains(msg, "Referenced column"), strings.Contains(msg, "does not have a column"):
			return sqlerr.UndefinedColumn
		case strings.Contains(msg, "Referenced table"):
			return sqlerr.UndefinedTable // PostgreSQL: missing FROM-clause entry
		case strings.Contains(msg, "No function matches"), strings.Contains(msg, "Could not choose a best candidate function"):
			return sqlerr.UndefinedFunction
		case strings.Contains(msg, "ambiguous"), strings.Contains(msg, "Ambiguous reference"):
			return sqlerr.AmbiguousColumn
		case strings.Contains(msg, "Cannot compare values of type"), strings.Contains(msg, "Cannot mix values of type"), strings.Contains(msg, "implicit cast"):
			return sqlerr.DatatypeMismatch
		}
		return sqlerr.SyntaxError
	case duckdb.ErrorTypeSettings, duckdb.ErrorTypeParameterNotResolved, duckdb.ErrorTypeParameterNotAllowed:
		return sqlerr.InvalidParameterValue
	}
	return sqlerr.InternalError
}

var (
	dateTimeTarget = regexp.MustCompile(`(?i)invalid (date|timestamp|time)|to (DATE|TIMESTAMP|TIME)\b`)
	// scanCall is the engine's FROM item for a lake table as DuckDB quotes
	// it back in messages: its argument is the session's scan handle, an
	// internal name the user never wrote and must not see.
	scanCall = regexp.MustCompile(`lakesoul_scan\('(?:[^']|'')*'\)`)
)

// mapDuckDBError gives DuckDB's errors the SQLSTATE and the wording
// PostgreSQL would use (see the top of this file).
func mapDuckDBError(err error) *sqlerr.Error {
	var de *duckdb.Error
	if !errors.As(err, &de) {
		return nil
	}
	if scanErr := scanFailures.recover(de.Msg); scanErr != nil {
		return sqlerr.From(scanErr) // the lake scan's own error (scan.go)
	}
	msg := de.Msg
	if strings.Contains(msg, "Max expression depth limit") {
		// DuckDB's own nesting bound (max_expression_depth), locked.
		return &sqlerr.Error{Code: sqlerr.StatementTooComplex, Message: "stack depth limit exceeded",
			Hint: "The statement nests expressions too deeply; simplify it.", Err: err}
	}
	// DuckDB prefixes "<Kind> Error: "; PostgreSQL messages have no such
	// prefix, and what follows the first line is DuckDB's context.
	if i := strings.Index(msg, " Error: "); i >= 0 && i < 40 {
		msg = msg[i+len(" Error: "):]
	}
	if c, m, ok := engineError(msg); ok { // raised by duckfuncs.go and scans
		if i := strings.IndexByte(m, '\n'); i >= 0 {
			m = m[:i]
		}
		return &sqlerr.Error{Code: c, Message: m, Hint: engineErrorHints[m], Err: err}
	}
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	msg = strings.TrimSpace(msg)
	if c, m, ok := pgMessageFor(msg); ok { // duckmessages.go
		return &sqlerr.Error{Code: c, Message: m, Err: err}
	}
	for _, r := range duckMessages {
		if m := r.re.FindStringSubmatch(msg); m != nil {
			e := r.pg(m)
			e.Message = scanCall.ReplaceAllString(e.Message, "lake table")
			e.Err = err
			return e
		}
	}
	code := duckErrorCode(de.Type, msg)
	return &sqlerr.Error{Code: code, Message: genericMessages[code], Err: err}
}
