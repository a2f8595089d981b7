package flightsql

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/lakesoul-go/lakesoul/pgwire"
)

func (s *Server) unitTickets(ctx context.Context, c *client, st pgwire.Statement, sc *arrow.Schema) ([][]byte, bool, error) {
	return nil, false, nil
}

func (s *Server) doGetUnit(ctx context.Context, c *client, raw []byte) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return nil, nil, status.Error(codes.InvalidArgument, "malformed ticket")
}
