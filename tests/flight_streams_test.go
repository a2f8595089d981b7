package tests

import (
	"strconv"
	"testing"
)

// TestFlightWideRows: a computed result (one the engine builds row by row,
// not a lake scan's own arrays) of wide rows reaches a gRPC client that
// takes the default 4 MiB per message: its batches are bounded by bytes as
// well as rows (a batch of 16 Ki rows of 1 kB was 16 MB: ResourceExhausted
// "received message larger than max").
func TestFlightWideRows(t *testing.T) {
	_, addr := flightServerT(t)
	ctx := testCtx(t)
	cl, actx := mustFlight(t, ctx, addr, adminRole, sharedPassword)
	for _, width := range []int{1000, 100_000} {
		rows := 40_000_000 / width
		info, err := cl.Execute(actx, "SELECT g, repeat('x', "+strconv.Itoa(width)+") AS pad FROM generate_series(1, "+strconv.Itoa(rows)+") AS s(g)")
		if err != nil {
			t.Fatal(err)
		}
		n, sum, err := countEndpoint(actx, cl, info.Endpoint[0])
		if err != nil {
			t.Fatalf("rows of %d bytes: %v", width, err)
		}
		if n != int64(rows) || sum != int64(rows)*int64(rows+1)/2 {
			t.Fatalf("rows of %d bytes: %d rows summing to %d, want %d", width, n, sum, rows)
		}
	}
}
