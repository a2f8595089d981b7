package tests

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
)

// TestFlightIngestEnum: Flight SQL ingest into a column of an enum type
// refuses a value that is no label (InvalidArgument, from 22P02) and
// commits nothing; labels go in.
func TestFlightIngestEnum(t *testing.T) {
	s, addr := flightServerT(t)
	ctx := testCtx(t)
	admin := s.connect(t)
	mustExec(t, ctx, admin, "CREATE SCHEMA fl_enum", "CREATE TYPE fl_enum.mood AS ENUM ('sad', 'ok', 'happy')",
		"CREATE TABLE fl_enum.t (id bigint PRIMARY KEY, m fl_enum.mood)")
	pw, err := s.adminPassword()
	if err != nil {
		t.Fatal(err)
	}
	cl, fctx := mustFlight(t, ctx, addr, adminRole, pw)
	batch := func(labels ...string) arrow.RecordBatch {
		b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{
			{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "m", Type: arrow.BinaryTypes.String, Nullable: true}}, nil))
		defer b.Release()
		for i, l := range labels {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			b.Field(1).(*array.StringBuilder).Append(l)
		}
		return b.NewRecordBatch()
	}
	schemaName := "fl_enum"
	opts := &flightsql.ExecuteIngestOpts{Schema: &schemaName, Table: "t", TableDefinitionOptions: &flightsql.TableDefinitionOptions{
		IfNotExist: flightsql.TableDefinitionOptionsTableNotExistOptionFail, IfExists: flightsql.TableDefinitionOptionsTableExistsOptionAppend}}
	if _, err := cl.ExecuteIngest(fctx, ingestBatches(t, batch("ok", "angry")), opts); grpcCodeOf(err) != codes.InvalidArgument {
		t.Fatalf("ingest of a value that is no label: %v, want InvalidArgument", err)
	}
	wantRows(t, "nothing committed", queryStrings(t, ctx, admin, "SELECT count(*) FROM fl_enum.t"), []string{"0"})
	if n, err := cl.ExecuteIngest(fctx, ingestBatches(t, batch("happy", "sad", "ok")), opts); err != nil || n != 3 {
		t.Fatalf("ingest: %d, %v", n, err)
	}
	wantRows(t, "ingested", queryStrings(t, ctx, admin, "SELECT id FROM fl_enum.t ORDER BY m"), []string{"1", "2", "0"})
}
