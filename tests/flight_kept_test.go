package tests

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc/codes"
)

// TestFlightKeptResultBounded: a query planned over Flight SQL and fetched
// only after the client's next statement (as the ADBC driver fetches in
// the background) runs before that statement and keeps its rows for the
// DoGet — in memory only within an eighth of the Go heap's share of
// --memory-limit (32 MiB here), the rest in a spill file of the temp
// space. A 200 MB result kept so raises the server's peak RSS by far less
// than its size and comes back whole; a 300 MB one, beyond
// --temp-space-limit 256MiB, is an error 53100 at its DoGet, not an
// out-of-memory end, and its space is given back: the server goes on
// keeping and serving results as large as the first.
func TestFlightKeptResultBounded(t *testing.T) {
	t.Parallel()
	requirePG(t)
	addr, _, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := startServer(filepath.Join(testBaseDir(t), "data"), "kept-Secret1", "--flight-listen", addr,
		"--memory-limit", "512MiB", "--temp-space-limit", "256MiB")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.stopT(t)
	pid := srv.cmd.Process.Pid
	ctx := testCtx(t)
	cl, actx := mustFlight(t, ctx, addr, adminRole, "kept-Secret1")
	query := func(rows int) string {
		return fmt.Sprintf("SELECT g, repeat('x', 1000) AS pad FROM generate_series(1, %d) AS s(g)", rows)
	}
	// keep plans q, then sends the next statement, which runs q first.
	keep := func(q string) *flight.FlightInfo {
		t.Helper()
		info, err := cl.Execute(actx, q)
		if err != nil {
			t.Fatalf("plan: %v", err)
		}
		if _, err := cl.ExecuteUpdate(actx, "SET application_name = 'next statement'"); err != nil {
			t.Fatalf("the statement after: %v", err)
		}
		return info
	}
	fetchKept := func(what string, rows int) {
		t.Helper()
		resetPeakRSS(t, pid)
		before := peakRSS(t, pid) // the RSS now
		info := keep(query(rows))
		n, sum, err := countEndpoint(actx, cl, info.Endpoint[0])
		if err != nil {
			t.Fatalf("%s: DoGet: %v", what, err)
		}
		if want := int64(rows) * int64(rows+1) / 2; n != int64(rows) || sum != want {
			t.Fatalf("%s: %d rows summing to %d, want %d summing to %d", what, n, sum, rows, want)
		}
		grew := peakRSS(t, pid) - before
		t.Logf("%s: server RSS grew by %d MiB for a %d MB result", what, grew>>20, rows/1000)
		if grew > int64(rows)*1000/2 {
			t.Errorf("%s: server RSS grew by %d MiB keeping a %d MB result", what, grew>>20, rows/1000)
		}
	}
	// The same query streamed first, so that what the server's memory
	// grows by below is the kept result's share, not DuckDB's warming up.
	warm, err := cl.Execute(actx, query(200_000))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := countEndpoint(actx, cl, warm.Endpoint[0]); err != nil {
		t.Fatalf("streamed: %v", err)
	}
	fetchKept("200 MB kept", 200_000)

	info := keep(query(300_000))
	_, _, err = countEndpoint(actx, cl, info.Endpoint[0])
	if grpcCodeOf(err) != codes.ResourceExhausted || !strings.Contains(fmt.Sprint(err), "SQLSTATE 53100") {
		t.Fatalf("a 300 MB result kept beyond the 256 MiB temp space: %v, want ResourceExhausted SQLSTATE 53100", err)
	}
	if got, err := flightOne(actx, cl, "SELECT 1"); err != nil || len(got) != 1 {
		t.Fatalf("after the failed result: %v, %v", got, err)
	}
	fetchKept("200 MB kept after the failure", 200_000)
}

// countEndpoint reads an endpoint whose first column is an integer and
// returns its rows and the column's sum.
func countEndpoint(ctx context.Context, cl *flightsql.Client, ep *flight.FlightEndpoint) (rows, sum int64, _ error) {
	rdr, err := cl.DoGet(ctx, ep.Ticket)
	if err != nil {
		return 0, 0, err
	}
	defer rdr.Release()
	for rdr.Next() {
		rec := rdr.RecordBatch()
		switch col := rec.Column(0).(type) {
		case *array.Int64:
			for _, v := range col.Int64Values() {
				sum += v
			}
		case *array.Int32:
			for _, v := range col.Int32Values() {
				sum += int64(v)
			}
		default:
			return 0, 0, fmt.Errorf("first column is %s", col.DataType())
		}
		rows += rec.NumRows()
	}
	return rows, sum, rdr.Err()
}
