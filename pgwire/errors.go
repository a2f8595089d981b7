package pgwire

import (
	"errors"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// SQLSTATE codes this layer raises that sqlerr does not name.
const (
	codeInvalidSQLStatementName     = "26000"
	codeInvalidCursorName           = "34000"
	codeDuplicatePreparedStatement  = "42P05"
	codeDuplicateCursor             = "42P03"
	codeInvalidBinaryRepresentation = "22P03"
	codeProtocolViolation           = sqlerr.ProtocolViolation
)

// Severities of an ErrorResponse.
const (
	severityError = "ERROR"
	severityFatal = "FATAL"
)

// fatalError marks an error after which the connection ends: it is reported
// with severity FATAL and the socket is closed.
type fatalError struct{ err error }

func (e *fatalError) Error() string { return e.err.Error() }
func (e *fatalError) Unwrap() error { return e.err }

// fatal wraps err so that the message loop reports it as FATAL and closes.
func fatal(err error) error { return &fatalError{err: err} }

// connLostError marks an error of the socket itself: nothing more can be
// sent, the connection just ends.
type connLostError struct{ err error }

func (e *connLostError) Error() string { return "connection lost: " + e.err.Error() }
func (e *connLostError) Unwrap() error { return e.err }

// errTerminate is returned by the message loop when the client sent Terminate.
var errTerminate = errors.New("pgwire: client sent Terminate")

// Causes given to cancelled contexts. They are compared with context.Cause.
var (
	errCancelRequest = errors.New("pgwire: canceled by CancelRequest")
	errConnLost      = errors.New("pgwire: client connection lost")
	errAdminShutdown = errors.New("pgwire: server shutting down")
)

// ErrServerClosed is returned by Serve after Shutdown was called.
var ErrServerClosed = errors.New("pgwire: server closed")

// ErrUnknownRole is returned by an Authenticator when the role does not exist,
// may not log in, or has no SCRAM password. The client is told only that
// password authentication failed.
var ErrUnknownRole = errors.New("pgwire: unknown role")

// adminShutdownError is what a connection reports when the server shuts down.
func adminShutdownError() *sqlerr.Error {
	return &sqlerr.Error{Code: sqlerr.AdminShutdown, Message: "terminating connection due to administrator command", Err: errAdminShutdown}
}

// queryCanceledError is what a call cancelled by CancelRequest reports.
func queryCanceledError(cause error) *sqlerr.Error {
	return &sqlerr.Error{Code: sqlerr.QueryCanceled, Message: "canceling statement due to user request", Err: cause}
}

// protocolViolation builds an 08P01 error.
func protocolViolation(format string, args ...any) *sqlerr.Error {
	return sqlerr.New(codeProtocolViolation, format, args...)
}

// errorResponse converts any error into the ErrorResponse a client sees.
// All ErrorResponses of the package are built here, from sqlerr.From.
func errorResponse(err error, severity string) *pgproto3.ErrorResponse {
	e := sqlerr.From(err)
	return &pgproto3.ErrorResponse{
		Severity:            severity,
		SeverityUnlocalized: severity,
		Code:                e.Code,
		Message:             e.Message,
		Detail:              e.Detail,
		Hint:                e.Hint,
		Position:            e.Position,
		Where:               e.Where,
	}
}
