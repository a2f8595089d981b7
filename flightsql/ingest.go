package flightsql

import (
	"context"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// DoPutCommandStatementIngest writes the client's record batches into an
// existing lake table (engine.IngestArrow): upsert on primary-key tables,
// append otherwise, in bounded batches, one commit at the end; a batch
// whose columns do not match the table, or a failure at any point, commits
// nothing. A batch larger than Config.MaxMessageSize is refused by gRPC
// itself (ResourceExhausted) before it reaches here. Creating or replacing
// tables and temporary tables are not supported. Inside a transaction the
// ingest commits with it.
func (s *Server) DoPutCommandStatementIngest(ctx context.Context, cmd flightsql.StatementIngest, rdr flight.MessageReader) (int64, error) {
	if cmd.GetTemporary() {
		return 0, status.Error(codes.Unimplemented, "ingest into temporary tables is not supported")
	}
	if !catalogMatches(ptr(cmd.GetCatalog())) {
		return 0, status.Errorf(codes.NotFound, "catalog %q does not exist", cmd.GetCatalog())
	}
	if o := cmd.GetTableDefinitionOptions(); o != nil {
		switch o.GetIfExists() {
		case flightsql.TableDefinitionOptionsTableExistsOptionUnspecified, flightsql.TableDefinitionOptionsTableExistsOptionAppend:
		default:
			return 0, status.Error(codes.Unimplemented, "ingest appends to (or upserts into) an existing table; create or replace it with SQL")
		}
	}
	c := clientFrom(ctx)
	if err := c.lockInOrder(ctx); err != nil {
		return 0, err
	}
	defer c.unlock()
	if err := checkTxn(c, cmd.GetTransactionId()); err != nil {
		return 0, err
	}
	n, err := c.sess.IngestArrow(ctx, cmd.GetSchema(), cmd.GetTable(), func() (arrow.RecordBatch, error) {
		if !rdr.Next() {
			if err := rdr.Err(); err != nil && err != io.EOF {
				return nil, status.Errorf(codes.InvalidArgument, "ingest data: %v", err)
			}
			return nil, io.EOF
		}
		return rdr.RecordBatch(), nil
	})
	if err != nil {
		return 0, flightError(err)
	}
	return n, nil
}

func ptr(s string) *string { return &s }
