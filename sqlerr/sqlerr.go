// Package sqlerr is the one place where failures become PostgreSQL errors.
//
// Every layer returns ordinary wrapped Go errors; a layer that knows the SQLSTATE a
// client should see wraps its error in an *Error (or returns a *pgconn.PgError from
// the catalog). The wire layer calls From on whatever reaches it, so the mapping of
// Go errors to SQLSTATE lives here and nowhere else.
package sqlerr

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lakesoul-go/lakesoul/internal/safego"
)

// SQLSTATE codes used by the server. Names follow PostgreSQL's errcodes.txt.
const (
	SuccessfulCompletion       = "00000"
	FeatureNotSupported        = "0A000"
	InvalidParameterValue      = "22023"
	InvalidTextRepresentation  = "22P02"
	StringDataRightTruncation  = "22001"
	InvalidDatetimeFormat      = "22007"
	DatetimeFieldOverflow      = "22008"
	DatatypeMismatch           = "42804"
	IndeterminateDatatype      = "42P18"
	CardinalityViolation       = "21000"
	NotNullViolation           = "23502"
	NullValueNotAllowed        = "22004"
	UniqueViolation            = "23505"
	CheckViolation             = "23514"
	GeneratedAlways            = "428C9"
	NoActiveSQLTransaction     = "25P01"
	InvalidSavepointSpec       = "3B001"
	CharacterNotInRepertoire   = "22021"
	InvalidTransactionState    = "25000"
	InFailedSQLTransaction     = "25P02"
	ActiveSQLTransaction       = "25001"
	ReadOnlySQLTransaction     = "25006"
	IdleInTransactionTimeout   = "25P03"
	InvalidSQLStatementName    = "26000"
	DuplicatePreparedStatement = "42P05"
	InvalidObjectDefinition    = "42P17"
	UndefinedParameter         = "42P02"
	InvalidAuthorization       = "28000"
	InvalidPassword            = "28P01"
	InvalidCatalogName         = "3D000"
	InvalidSchemaName          = "3F000"
	SyntaxError                = "42601"
	InsufficientPrivilege      = "42501"
	InvalidGrantOperation      = "0LP01"
	UndefinedColumn            = "42703"
	UndefinedFunction          = "42883"
	DuplicateFunction          = "42723"
	UndefinedTable             = "42P01"
	UndefinedObject            = "42704"
	DuplicateTable             = "42P07"
	DuplicateSchema            = "42P06"
	ReservedName               = "42939"
	DuplicateObject            = "42710"
	DuplicateColumn            = "42701"
	WrongObjectType            = "42809"
	DependentObjectsStillExist = "2BP01"
	AmbiguousColumn            = "42702"
	InvalidColumnDefinition    = "42611"
	DataCorrupted              = "XX001"
	InvalidTableDefinition     = "42P16"
	InvalidName                = "42602"
	NameTooLong                = "42622"
	ProgramLimitExceeded       = "54000"
	DivisionByZero             = "22012"
	NumericValueOutOfRange     = "22003"
	QueryCanceled              = "57014"
	StatementTooComplex        = "54001"
	TooManyConnections         = "53300"
	OutOfMemory                = "53200"
	AdminShutdown              = "57P01"
	ProtocolViolation          = "08P01"
	SerializationFailure       = "40001"
	InternalError              = "XX000"
	IOError                    = "58030"
	UndefinedFile              = "58P01"
	DiskFull                   = "53100"
	ConnectionFailure          = "08006"
	// TransactionResolutionUnknown is a commit whose outcome the server
	// could not learn (the catalog stayed unreachable).
	TransactionResolutionUnknown = "08007"
	// UnableToConnect is a connection the server opens for the client (a
	// subscription's source) that could not be made.
	UnableToConnect              = "08001"
	ObjectNotInPrerequisiteState = "55000"
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
// SQLSTATE become XX000 "internal error": their text, which names Go
// packages, files and addresses, stays in Err for the server log (pgwire logs
// every error it sends) and is not shown to the client. A recovered panic
// (*safego.PanicError) is XX000 whatever wraps it or whatever its value
// says: it is a bug, not the condition its text may resemble.
func From(err error) *Error {
	if err == nil {
		return nil
	}
	if errors.As(err, new(*safego.PanicError)) {
		return &Error{Code: InternalError, Message: "internal error", Err: err}
	}
	var se *Error
	if errors.As(err, &se) {
		return se
	}
	if catalogConnectionLost(err) {
		return &Error{Code: ConnectionFailure, Message: "lost the connection to the catalog database",
			Hint: "The catalog may be restarting; retry the statement.", Err: err}
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return &Error{Code: pe.Code, Message: pe.Message, Detail: pe.Detail, Hint: pe.Hint, Err: err}
	}
	if errors.Is(err, errCanceled) {
		return &Error{Code: QueryCanceled, Message: "canceling statement due to user request", Err: err}
	}
	if e := storageError(err); e != nil {
		return e
	}
	for _, m := range mappers {
		if e := m(err); e != nil {
			return e
		}
	}
	return &Error{Code: InternalError, Message: "internal error", Err: err}
}

// catalogConnectionLost is the one classifier of catalog loss: it reports
// whether err is the failure of a connection to the catalog database rather
// than an answer of it — a connection attempt that failed, a connection that
// broke or was closed, or a FATAL error that ended one (catalog shutdown, a
// terminated backend). Its text names the catalog's address, socket and
// login; the client sees none of it.
//
// Invariant: every byte the server exchanges with its catalog passes through
// a connection the catalog package dialed with CatalogDialer, whose read,
// write and dial errors are marked (CatalogConnError); whatever layer of the
// driver (or of TLS) returns such an error, raw or wrapped, is classified
// here. pgx's own connection-level errors are recognised too. A network
// error without the mark (the object store's, a CDC source's) is not the
// catalog's.
func catalogConnectionLost(err error) bool {
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) || errors.Is(err, pgconn.ErrConnClosed) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Severity == "FATAL" || pe.Severity == "PANIC"
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false // the statement was cancelled or timed out, not the connection
	}
	if errors.As(err, new(*CatalogConnError)) {
		return true
	}
	// pgconn's own connection-level errors (a failed send or receive) say
	// whether they are safe to retry; no other error the server handles does.
	var pgconnErr interface{ SafeToRetry() bool }
	return errors.As(err, &pgconnErr)
}

// CatalogConnError is a failure of the network connection to the catalog
// database (dialing it, reading from it, writing to it): From maps every
// error that wraps one to 08006.
type CatalogConnError struct{ Err error }

func (e *CatalogConnError) Error() string { return e.Err.Error() }
func (e *CatalogConnError) Unwrap() error { return e.Err }

// CatalogDialer wraps dial, the dialer of connections to the catalog
// database, so that every error of dialing, reading or writing such a
// connection is a *CatalogConnError (see catalogConnectionLost). The
// catalog package dials every catalog connection through it.
func CatalogDialer(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, &CatalogConnError{Err: err}
		}
		return catalogConn{c}, nil
	}
}

// catalogConn marks its read and write errors as CatalogConnError. io.EOF
// is marked too: the catalog never ends a connection the server still
// reads, and the driver treats every read error as fatal to the connection.
type catalogConn struct{ net.Conn }

func (c catalogConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if err != nil {
		err = &CatalogConnError{Err: err}
	}
	return n, err
}

func (c catalogConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if err != nil {
		err = &CatalogConnError{Err: err}
	}
	return n, err
}

// storageError maps failures of the warehouse's storage: a full disk or
// quota (53100, as PostgreSQL's "could not extend file"), a missing data
// file (58P01), or another error of a file operation (58030). The message
// is PostgreSQL's shape, with the file's base name only; the full path and
// the operation's context stay in Err for the log.
func storageError(err error) *Error {
	var errno syscall.Errno
	var pathErr *fs.PathError
	name := "a data file"
	if errors.As(err, &pathErr) {
		name = fmt.Sprintf("file %q", filepath.Base(pathErr.Path))
	}
	switch {
	case errors.As(err, &errno) && (errno == syscall.ENOSPC || errno == syscall.EDQUOT):
		return &Error{Code: DiskFull, Message: fmt.Sprintf("could not write %s: %s", name, strerror(errno)),
			Hint: "Check free disk space.", Err: err}
	case errors.Is(err, fs.ErrNotExist):
		return &Error{Code: UndefinedFile, Message: fmt.Sprintf("could not open %s: No such file or directory", name), Err: err}
	case errors.Is(err, fs.ErrPermission):
		return &Error{Code: IOError, Message: fmt.Sprintf("could not access %s: Permission denied", name), Err: err}
	case pathErr != nil:
		msg := pathErr.Err.Error()
		if errors.As(err, &errno) {
			msg = strerror(errno)
		}
		return &Error{Code: IOError, Message: fmt.Sprintf("could not %s %s: %s", pathErr.Op, name, msg), Err: err}
	}
	return nil
}

// strerror is errno's text as C's strerror spells it ("No space left on
// device"), which PostgreSQL's messages carry.
func strerror(errno syscall.Errno) string {
	s := errno.Error()
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
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
