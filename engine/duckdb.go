package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// openDuckDB opens the in-memory DuckDB that executes queries over lake tables,
// registers the lake scan function, and then locks DuckDB down: bounded
// memory and temp space, no configuration changes by users, and no file or
// network access of its own — lake data reaches it only through
// lakesoul_scan, whose files the engine reads (objstore). DuckDB itself
// opens only its spill files in tempDir: disabling external access leaves
// exactly that directory open (DuckDB adds its temp directory to the
// allowed directories itself, and spilling needs it), and tempDir holds
// nothing but DuckDB's spill. That no user statement can name even those
// files is the function gate's part (duckgate.go).
// It returns the names of the functions the engine created.
func openDuckDB(ctx context.Context, reg *scanRegistry, cfg Config, tempDir string) (*sql.DB, map[string]bool, error) {
	connector, err := duckdb.NewConnector("", nil)
	if err != nil {
		return nil, nil, fmt.Errorf("open duckdb: %w", err)
	}
	db := sql.OpenDB(connector)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("open duckdb: %w", err)
	}
	defer conn.Close()
	builtin, err := duckFunctionNames(ctx, conn)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	if err := registerScanFunction(conn, reg); err != nil {
		db.Close()
		return nil, nil, err
	}
	if err := registerDuckFunctions(ctx, conn); err != nil { // duckfuncs.go
		db.Close()
		return nil, nil, err
	}
	// The engine's functions are the names registering added (duckgate.go
	// admits them; lakesoul_scan only with the session's handles).
	funcs, err := duckFunctionNames(ctx, conn)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	for name := range funcs {
		if builtin[name] || name == scanFunctionName {
			delete(funcs, name)
		}
	}
	// GLOBAL: a plain SET is the setup connection's alone, and every
	// session has a connection of its own.
	setup := []string{
		"SET GLOBAL TimeZone = 'UTC'",
		// PostgreSQL divides integers by integers to an integer (7/2 = 3).
		"SET GLOBAL integer_division = true",
		"SET autoinstall_known_extensions = false",
		"SET autoload_known_extensions = false",
		// A large result's memory goes back to the system once the query is
		// done, instead of staying resident in the allocator's caches.
		"SET allocator_background_threads = true",
		// One budget for every session's queries: an operator beyond it
		// spills to the temp directory, and a query beyond both fails
		// with 53200.
		fmt.Sprintf("SET temp_directory = %s", quoteLiteral(tempDir)),
	}
	if cfg.MemoryLimit > 0 {
		setup = append(setup, fmt.Sprintf("SET memory_limit = '%dB'", cfg.MemoryLimit))
	}
	if cfg.TempLimit > 0 {
		setup = append(setup, fmt.Sprintf("SET max_temp_directory_size = '%dB'", cfg.TempLimit))
	}
	if cfg.DuckDBThreads > 0 {
		setup = append(setup, fmt.Sprintf("SET threads = %d", cfg.DuckDBThreads))
	}
	// No file or network access from here on (no allowed_directories or
	// allowed_paths: only DuckDB's own temp directory), and nothing of the
	// above can be changed by a statement.
	setup = append(setup, "SET enable_external_access = false", "SET lock_configuration = true")
	for _, s := range setup {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			db.Close()
			return nil, nil, fmt.Errorf("duckdb setup %q: %w", s, err)
		}
	}
	bulk, err := newBulkBridge(ctx, db)
	if err != nil {
		cfg.Logger.Warn("lakesoul_scan: rows go to DuckDB value by value", "err", err)
	}
	reg.bulk = bulk
	return db, funcs, nil
}

func init() { sqlerr.RegisterMapper(mapDuckDBError) }

// engineErrorCodes are the SQLSTATEs of the errors the engine's own DuckDB
// functions and macros raise (duckfuncs.go), by their message.
var engineErrorCodes = map[string]string{
	"division by zero":                                     sqlerr.DivisionByZero,
	"value overflows numeric format":                       sqlerr.NumericValueOutOfRange,
	"unsupported Unicode escape sequence":                  "22P05",
	"invalid input syntax for type json":                   sqlerr.InvalidTextRepresentation,
	"invalid input syntax for type uuid":                   sqlerr.InvalidTextRepresentation,
	"invalid input syntax for type vector":                 sqlerr.InvalidTextRepresentation,
	"null values cannot be formatted as an SQL identifier": "22004",
	"cannot delete from":                                   sqlerr.InvalidParameterValue,
	"cannot extract elements from":                         sqlerr.InvalidParameterValue,
	"cannot call json":                                     sqlerr.InvalidParameterValue,
	"key must not be null":                                 "22004",
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

var (
	dateTimeTarget = regexp.MustCompile(`(?i)invalid (date|timestamp|time)|to (DATE|TIMESTAMP|TIME)\b`)
	columnNotFound = regexp.MustCompile(`Referenced column "([^"]*)" not found`)
	// scanCall is the engine's FROM item for a lake table as DuckDB quotes
	// it back in messages: its argument is the session's scan handle, an
	// internal name the user never wrote and must not see.
	scanCall = regexp.MustCompile(`lakesoul_scan\('(?:[^']|'')*'\)`)
)

// mapDuckDBError gives DuckDB's errors the SQLSTATE PostgreSQL would use.
func mapDuckDBError(err error) *sqlerr.Error {
	var de *duckdb.Error
	if !errors.As(err, &de) {
		return nil
	}
	if scanErr := scanFailures.recover(de.Msg); scanErr != nil {
		return sqlerr.From(scanErr) // the lake scan's own error (scan.go)
	}
	msg := de.Msg
	code := sqlerr.InternalError
	switch de.Type {
	case duckdb.ErrorTypeParser, duckdb.ErrorTypeSyntax:
		code = sqlerr.SyntaxError
	case duckdb.ErrorTypeConversion, duckdb.ErrorTypeInvalidInput:
		code = sqlerr.InvalidTextRepresentation
		switch {
		case dateTimeTarget.MatchString(msg):
			code = sqlerr.InvalidDatetimeFormat
		}
	case duckdb.ErrorTypeOutOfRange:
		code = sqlerr.NumericValueOutOfRange
	case duckdb.ErrorTypeDivideByZero:
		code = sqlerr.DivisionByZero
	case duckdb.ErrorTypeMismatchType, duckdb.ErrorTypeInvalidType:
		code = sqlerr.DatatypeMismatch
	case duckdb.ErrorTypeNotImplemented:
		code = sqlerr.FeatureNotSupported
	case duckdb.ErrorTypeInterrupt:
		code = sqlerr.QueryCanceled
	case duckdb.ErrorTypeOutOfMemory:
		// The memory limit, or the temp space limit when spilling.
		code = sqlerr.OutOfMemory
	case duckdb.ErrorTypePermission:
		code = sqlerr.InsufficientPrivilege
	case duckdb.ErrorTypeConstraint:
		code = sqlerr.NotNullViolation
	case duckdb.ErrorTypeCatalog:
		switch {
		case strings.Contains(msg, "Function with name"), strings.Contains(msg, "Scalar Function"), strings.Contains(msg, "Table Function"):
			code = sqlerr.UndefinedFunction
		case strings.Contains(msg, "Schema with name"):
			code = sqlerr.InvalidSchemaName
		default:
			code = sqlerr.UndefinedTable
		}
	case duckdb.ErrorTypeBinder:
		switch {
		case strings.Contains(msg, "not found in FROM clause"), strings.Contains(msg, "Referenced column"), strings.Contains(msg, "does not have a column"):
			code = sqlerr.UndefinedColumn
		case strings.Contains(msg, "Referenced table"):
			code = sqlerr.UndefinedTable // PostgreSQL: missing FROM-clause entry
		case strings.Contains(msg, "No function matches"), strings.Contains(msg, "Could not choose a best candidate function"):
			code = sqlerr.UndefinedFunction
		case strings.Contains(msg, "ambiguous"), strings.Contains(msg, "Ambiguous reference"):
			code = sqlerr.AmbiguousColumn
		case strings.Contains(msg, "Cannot compare values of type"), strings.Contains(msg, "Cannot mix values of type"), strings.Contains(msg, "implicit cast"):
			code = sqlerr.DatatypeMismatch
		default:
			code = sqlerr.SyntaxError
		}
	}
	if strings.Contains(msg, "Max expression depth limit") {
		// DuckDB's own nesting bound (max_expression_depth), locked.
		return &sqlerr.Error{Code: sqlerr.StatementTooComplex, Message: "stack depth limit exceeded",
			Hint: "The statement nests expressions too deeply; simplify it.", Err: err}
	}
	// DuckDB prefixes "<Kind> Error: "; PostgreSQL messages have no such prefix.
	if i := strings.Index(msg, " Error: "); i >= 0 && i < 40 {
		msg = msg[i+len(" Error: "):]
	}
	if c, m, ok := engineError(msg); ok { // raised by duckfuncs.go and scans
		code, msg = c, m
	}
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	if m := columnNotFound.FindStringSubmatch(msg); m != nil {
		msg = fmt.Sprintf("column %q does not exist", m[1])
	}
	msg = scanCall.ReplaceAllString(msg, "lake table")
	return &sqlerr.Error{Code: code, Message: msg, Err: err}
}
