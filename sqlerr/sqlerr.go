// Package sqlerr is the one place where failures become PostgreSQL errors.
//
// Every layer returns ordinary wrapped Go errors; a layer that knows the SQLSTATE a
// client should see wraps its error in an *Error (or returns a *pgconn.PgError from
// the catalog). The wire layer calls From on whatever reaches it, so the mapping of
// Go errors to SQLSTATE lives here and nowhere else.
package sqlerr

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5/pgconn"
)

// SQLSTATE codes used by the server. Names follow PostgreSQL's errcodes.txt.
const (
	SuccessfulCompletion       = "00000"
	FeatureNotSupported        = "0A000"
	InvalidParameterValue      = "22023"
	InvalidTextRepresentation  = "22P02"
	InvalidDatetimeFormat      = "22007"
	DatatypeMismatch           = "42804"
	NotNullViolation           = "23502"
	UniqueViolation            = "23505"
	CheckViolation             = "23514"
	CharacterNotInRepertoire   = "22021"
	InvalidTransactionState    = "25000"
	InFailedSQLTransaction     = "25P02"
	InvalidAuthorization       = "28000"
	InvalidPassword            = "28P01"
	InvalidCatalogName         = "3D000"
	InvalidSchemaName          = "3F000"
	SyntaxError                = "42601"
	InsufficientPrivilege      = "42501"
	UndefinedColumn            = "42703"
	UndefinedFunction          = "42883"
	UndefinedTable             = "42P01"
	UndefinedObject            = "42704"
	DuplicateTable             = "42P07"
	DuplicateSchema            = "42P06"
	DuplicateObject            = "42710"
	DependentObjectsStillExist = "2BP01"
	AmbiguousColumn            = "42702"
	InvalidColumnDefinition    = "42611"
	InvalidTableDefinition     = "42P16"
	DivisionByZero             = "22012"
	NumericValueOutOfRange     = "22003"
	QueryCanceled              = "57014"
	StatementTooComplex        = "54001"
	ProgramLimitExceeded       = "54000"
	TooManyConnections         = "53300"
	OutOfMemory                = "53200"
	AdminShutdown              = "57P01"
	ProtocolViolation          = "08P01"
	SerializationFailure       = "40001"
	InternalError              = "XX000"
	IOError                    = "58030"
)

// Error is an error with a SQLSTATE, as a client will see it.
type Error struct {
	Code    string
	Message string
	Detail  string
	Hint    string
	// Position is the 1-based character offset into the query text, or 0.
	Position int32
	// Where is the context of the error (PostgreSQL's CONTEXT line), e.g.
	// `COPY t, line 3, column id: "x"`.
	Where string
	// Err is the underlying cause, if any; it is not shown to the client.
	Err error
}

func (e *Error) Error() string {
	if e.Detail != "" {
		return e.Message + ": " + e.Detail
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// New returns an *Error with the given code and formatted message.
func New(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an *Error with the given code whose message is msg and whose cause is err.
// The cause's text is appended as the detail so the client learns why.
func Wrap(code string, err error, msg string) *Error {
	return &Error{Code: code, Message: msg, Detail: err.Error(), Err: err}
}

// Unsupported returns a 0A000 error that says what is supported instead.
func Unsupported(what, supported string) *Error {
	return &Error{Code: FeatureNotSupported, Message: what + " is not supported", Hint: supported}
}

// From converts any error into an *Error for the client. Errors without a known
// SQLSTATE become XX000 with their text.
func From(err error) *Error {
	if err == nil {
		return nil
	}
	var se *Error
	if errors.As(err, &se) {
		return se
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return &Error{Code: pe.Code, Message: pe.Message, Detail: pe.Detail, Hint: pe.Hint, Err: err}
	}
	if errors.Is(err, errCanceled) {
		return &Error{Code: QueryCanceled, Message: "canceling statement due to user request", Err: err}
	}
	// A data file the catalog references is missing or unreadable: an I/O
	// error of the warehouse, not a bug.
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return &Error{Code: IOError, Message: err.Error(), Err: err}
	}
	for _, m := range mappers {
		if e := m(err); e != nil {
			return e
		}
	}
	return &Error{Code: InternalError, Message: err.Error(), Err: err}
}

// Code returns the SQLSTATE From would assign to err ("00000" for nil).
func Code(err error) string {
	if err == nil {
		return SuccessfulCompletion
	}
	return From(err).Code
}

var errCanceled = errors.New("canceled")

// ErrCanceled is returned (wrapped) by work that stopped because the client
// asked it to; From maps it to 57014.
var ErrCanceled = errCanceled

// A Mapper recognises errors of some library and gives them a SQLSTATE; it
// returns nil for errors it does not know. Upper layers (the SQL engine, which
// knows DuckDB's error types) register theirs at init time.
type Mapper func(error) *Error

var mappers []Mapper

// RegisterMapper adds m to the mappers From consults. Call it from init only.
func RegisterMapper(m Mapper) { mappers = append(mappers, m) }
