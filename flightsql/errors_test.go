package flightsql

import (
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// A lost catalog is Unavailable to a Flight SQL client (gRPC clients retry
// it) and an unknown commit outcome is Unknown (not to be retried blindly),
// as 08006 and 08007 are to a PostgreSQL client; a protocol violation (08P01)
// stays the client's fault.
func TestConnectionErrorsGRPCCodes(t *testing.T) {
	lost := fmt.Errorf("snapshot: %w", &sqlerr.CatalogConnError{Err: errors.New("unexpected EOF")})
	for _, c := range []struct {
		err  error
		want codes.Code
	}{
		{lost, codes.Unavailable},
		{sqlerr.New(sqlerr.TransactionResolutionUnknown, "the outcome of the commit is unknown"), codes.Unknown},
		{sqlerr.New(sqlerr.ProtocolViolation, "bad message"), codes.InvalidArgument},
	} {
		if got := status.Code(flightError(c.err)); got != c.want {
			t.Errorf("%v: gRPC code %v, want %v", c.err, got, c.want)
		}
	}
}
