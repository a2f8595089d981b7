package flightsql

import (
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// flightError turns an engine or catalog error into the gRPC status a Flight
// SQL client sees. The SQLSTATE (sqlerr.From, the one mapping of failures)
// decides the code and leads the message, so a client can still tell 42P01
// from 42704; errors that already are statuses pass unchanged.
func flightError(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	e := sqlerr.From(err)
	return status.Error(grpcCode(e.Code), "SQLSTATE "+e.Code+": "+e.Message)
}

// grpcCode is the gRPC code of a SQLSTATE.
func grpcCode(state string) codes.Code {
	switch state {
	case sqlerr.InsufficientPrivilege:
		return codes.PermissionDenied
	case sqlerr.UndefinedTable, sqlerr.UndefinedObject, sqlerr.InvalidSchemaName, sqlerr.InvalidCatalogName,
		sqlerr.InvalidSQLStatementName, sqlerr.UndefinedFunction:
		return codes.NotFound
	case sqlerr.QueryCanceled:
		return codes.Canceled
	case sqlerr.SerializationFailure:
		return codes.Aborted
	case sqlerr.FeatureNotSupported:
		return codes.Unimplemented
	case sqlerr.IOError, sqlerr.UndefinedFile, sqlerr.InternalError:
		return codes.Internal
	case sqlerr.ConnectionFailure:
		return codes.Unavailable // the catalog is unreachable: retry, as gRPC clients do
	case sqlerr.TransactionResolutionUnknown:
		return codes.Unknown // the commit may have landed: look it up, do not blindly retry
	}
	switch {
	case strings.HasPrefix(state, "28"):
		return codes.Unauthenticated
	case strings.HasPrefix(state, "53"), strings.HasPrefix(state, "54"):
		return codes.ResourceExhausted
	case strings.HasPrefix(state, "25"), strings.HasPrefix(state, "55"), strings.HasPrefix(state, "57"):
		return codes.FailedPrecondition
	case strings.HasPrefix(state, "42"), strings.HasPrefix(state, "22"), strings.HasPrefix(state, "23"),
		strings.HasPrefix(state, "0A"), strings.HasPrefix(state, "08"):
		return codes.InvalidArgument
	}
	return codes.Internal
}
