package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
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

// streamKind is one way a DoGet gets its rows: plan returns the FlightInfo
// of a statement planned on cl and the rows its endpoints hold together.
type streamKind struct {
	name string
	// signed: its tickets are signed units, served to the same user on any
	// client (else they name a handle of the client that planned them).
	signed bool
	// spilled: its rows wait for the DoGet in a spill file.
	spilled bool
	plan    func(ctx context.Context, cl *flightsql.Client) (*flight.FlightInfo, int64, error)
}

// TestFlightStreamLifecycle enumerates what a DoGet can serve — a query
// streamed at its DoGet, a plain scan's signed unit endpoints, a prepared
// query, a result kept in memory and one kept in a spill file (both run
// before the client's next statement) — and, for each, what can become of
// its stream: read whole; cancelled by the client after the first batch;
// cut by the client's connection closing after the first batch; fetched
// after the session that planned it is gone (by a new login of the same
// user: unit tickets are served, handles are NotFound). Every pair runs
// alone and then all together, twice over, on clients of their own; the
// clients that cancelled can query on, and at the end the server answers,
// its goroutines are back to what they were and no spill file is open.
func TestFlightStreamLifecycle(t *testing.T) {
	t.Parallel()
	requirePG(t)
	addr, _, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	maddr, _, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	const pw = "life-Secret1"
	srv, err := startServer(filepath.Join(testBaseDir(t), "data"), pw, "--flight-listen", addr,
		"--metrics-listen", maddr, "--memory-limit", "512MiB")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.stopT(t)
	ctx := testCtx(t)
	admin := srv.connect(t)
	mustExec(t, ctx, admin, "CREATE SCHEMA fls",
		"CREATE TABLE fls.t (id bigint, v text, PRIMARY KEY (id)) WITH (hash_bucket_num = 4)",
		"INSERT INTO fls.t SELECT i, repeat('v', 100) || i FROM range(0, 100000) r(i)",
		"INSERT INTO fls.t SELECT i, 'w' || i FROM range(0, 100000, 3) r(i)")
	open := func() (*flightsql.Client, context.Context, error) {
		cl, err := flightsql.NewClientCtx(ctx, addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return nil, nil, err
		}
		actx, err := cl.Client.AuthenticateBasicToken(ctx, adminRole, pw)
		if err != nil {
			cl.Close()
			return nil, nil, err
		}
		return cl, actx, nil
	}
	execute := func(q string, rows int64) func(context.Context, *flightsql.Client) (*flight.FlightInfo, int64, error) {
		return func(ctx context.Context, cl *flightsql.Client) (*flight.FlightInfo, int64, error) {
			info, err := cl.Execute(ctx, q)
			return info, rows, err
		}
	}
	// kept plans q and sends the next statement, which runs q first.
	kept := func(q string, rows int64) func(context.Context, *flightsql.Client) (*flight.FlightInfo, int64, error) {
		return func(ctx context.Context, cl *flightsql.Client) (*flight.FlightInfo, int64, error) {
			info, err := cl.Execute(ctx, q)
			if err == nil {
				_, err = cl.ExecuteUpdate(ctx, "SET application_name = 'next statement'")
			}
			return info, rows, err
		}
	}
	series := func(rows, width int) string {
		return fmt.Sprintf("SELECT g, repeat('x', %d) AS pad FROM generate_series(1, %d) AS s(g)", width, rows)
	}
	kinds := []streamKind{
		{name: "query stream", plan: execute(series(100_000, 100), 100_000)},
		{name: "unit endpoints", signed: true, plan: execute("SELECT * FROM fls.t", 100_000)},
		{name: "prepared query", plan: func(ctx context.Context, cl *flightsql.Client) (*flight.FlightInfo, int64, error) {
			st, err := cl.Prepare(ctx, series(100_000, 100))
			if err != nil {
				return nil, 0, err
			}
			info, err := st.Execute(ctx)
			return info, 100_000, err
		}},
		{name: "kept in memory", plan: kept(series(2_000, 100), 2_000)},
		// Beyond the 32 MiB all kept results may hold in memory.
		{name: "kept in a spill file", spilled: true, plan: kept(series(40_000, 1000), 40_000)},
	}
	type fate func(ctx context.Context, cl *flightsql.Client, k streamKind, info *flight.FlightInfo, want int64) error
	firstBatchThen := func(ctx context.Context, cl *flightsql.Client, info *flight.FlightInfo, then func()) error {
		rdr, err := cl.DoGet(ctx, info.Endpoint[0].Ticket)
		if err != nil {
			return fmt.Errorf("DoGet: %w", err)
		}
		defer rdr.Release()
		if !rdr.Next() {
			return fmt.Errorf("no first batch: %v", rdr.Err())
		}
		then()
		for rdr.Next() {
		}
		return nil
	}
	fates := []struct {
		name string
		run  fate
	}{
		{"read whole", func(ctx context.Context, cl *flightsql.Client, _ streamKind, info *flight.FlightInfo, want int64) error {
			var total int64
			for _, ep := range info.Endpoint {
				n, _, err := countEndpoint(ctx, cl, ep)
				if err != nil {
					return err
				}
				total += n
			}
			if total != want {
				return fmt.Errorf("%d rows, want %d", total, want)
			}
			return nil
		}},
		{"cancelled after the first batch", func(ctx context.Context, cl *flightsql.Client, _ streamKind, info *flight.FlightInfo, _ int64) error {
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			if err := firstBatchThen(cctx, cl, info, cancel); err != nil {
				return err
			}
			if got, err := flightOne(ctx, cl, "SELECT 1"); err != nil || len(got) != 1 {
				return fmt.Errorf("the client after cancelling: %v, %v", got, err)
			}
			return nil
		}},
		{"connection closed after the first batch", func(ctx context.Context, cl *flightsql.Client, _ streamKind, info *flight.FlightInfo, _ int64) error {
			return firstBatchThen(ctx, cl, info, func() { cl.Close() })
		}},
		{"fetched after its session is gone", func(ctx context.Context, cl *flightsql.Client, k streamKind, info *flight.FlightInfo, want int64) error {
			cl.Close()
			cl2, actx2, err := open()
			if err != nil {
				return err
			}
			defer cl2.Close()
			var total int64
			for _, ep := range info.Endpoint {
				n, _, err := countEndpoint(actx2, cl2, ep)
				if !k.signed {
					if grpcCodeOf(err) != codes.NotFound {
						return fmt.Errorf("another session's handle: %v, want NotFound", err)
					}
					continue
				}
				if err != nil {
					return err
				}
				total += n
			}
			if k.signed && total != want {
				return fmt.Errorf("unit tickets of a closed session: %d rows, want %d", total, want)
			}
			return nil
		}},
	}
	metric := func() float64 { return metricValue(scrape(t, maddr), "go_goroutines", nil) }
	// One client's login and query first, so that what stays (pools,
	// the catalog's connections) is in the baseline.
	if cl, actx, err := open(); err != nil {
		t.Fatal(err)
	} else {
		if _, err := flightOne(actx, cl, "SELECT count(*) FROM fls.t"); err != nil {
			t.Fatal(err)
		}
		cl.Close()
	}
	time.Sleep(500 * time.Millisecond)
	baseline := metric()
	pid := srv.cmd.Process.Pid
	// runPair plans k on a client of its own and gives its stream fate f;
	// alone, it checks that the earlier pairs' spill files are closed (the
	// server ends a stream whose client went a moment later) and that a
	// spilled kind's rows wait in one file.
	runPair := func(k streamKind, f fate, alone bool) error {
		for wait := time.Now().Add(10 * time.Second); alone && openSpillFiles(t, pid) > 0; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(wait) {
				return fmt.Errorf("%d spill files of earlier streams still open", openSpillFiles(t, pid))
			}
		}
		cl, actx, err := open()
		if err != nil {
			return err
		}
		defer cl.Close()
		info, want, err := k.plan(actx, cl)
		if err != nil {
			return fmt.Errorf("plan: %w", err)
		}
		if n := openSpillFiles(t, pid); alone && k.spilled != (n == 1) {
			return fmt.Errorf("%d spill files open before the DoGet", n)
		}
		return f(actx, cl, k, info, want)
	}
	for _, k := range kinds {
		for _, f := range fates {
			if err := runPair(k, f.run, true); err != nil {
				t.Errorf("%s, %s: %v", k.name, f.name, err)
			}
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*len(kinds)*len(fates))
	for range 2 {
		for _, k := range kinds {
			for _, f := range fates {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := runPair(k, f.run, false); err != nil {
						errs <- fmt.Errorf("all at once: %s, %s: %w", k.name, f.name, err)
					}
				}()
			}
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if cl, actx, err := open(); err != nil {
		t.Fatalf("a login after the streams: %v", err)
	} else if got, err := flightOne(actx, cl, "SELECT count(*) FROM fls.t"); err != nil || len(got) != 1 || got[0] != "100000" {
		t.Fatalf("a query after the streams: %v, %v", got, err)
	} else {
		cl.Close()
	}
	// The server notices closed connections a moment later.
	deadline := time.Now().Add(15 * time.Second)
	for {
		g, spills := metric(), openSpillFiles(t, pid)
		if g <= baseline+5 && spills == 0 {
			t.Logf("goroutines: %v at the start, %v at the end", baseline, g)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after every stream ended: %v goroutines (%v at the start), %d spill files open", g, baseline, spills)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// openSpillFiles counts the Arrow spill files (engine.ArrowSpill, unlinked
// when created) process pid holds open. It runs on the test's goroutines
// too, so a failure to list them (the server gone) is an Errorf and 0.
func openSpillFiles(t *testing.T, pid int) int {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Errorf("the server's open files: %v", err)
		return 0
	}
	n := 0
	for _, e := range ents {
		if target, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && strings.Contains(target, "lakesoul-arrow-") {
			n++
		}
	}
	return n
}

// TestFlightRowGroupEndpoints: a plain scan of a one-bucket table whose
// one file holds unique keys in three row groups has an endpoint per row
// group — signed tickets carry the row groups — read in parallel into the
// table's rows, each once.
func TestFlightRowGroupEndpoints(t *testing.T) {
	_, addr := flightServerT(t)
	ctx := testCtx(t)
	cl, actx := mustFlight(t, ctx, addr, adminRole, sharedPassword)
	for _, q := range []string{"CREATE SCHEMA fl_rg",
		"CREATE TABLE fl_rg.t (id bigint, v text, PRIMARY KEY (id)) WITH (hash_bucket_num = 1)",
		"INSERT INTO fl_rg.t SELECT i, md5(i::text) || md5((i + 1)::text) FROM range(300000) r(i)"} {
		if _, err := cl.ExecuteUpdate(actx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	info, err := cl.Execute(actx, "SELECT id, v FROM fl_rg.t")
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Endpoint) != 3 {
		t.Errorf("%d endpoints, want 3 (one per row group)", len(info.Endpoint))
	}
	var (
		mu   sync.Mutex
		ids  = map[int64]int{}
		wg   sync.WaitGroup
		errs = make(chan error, len(info.Endpoint))
	)
	for _, ep := range info.Endpoint {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rdr, err := cl.DoGet(actx, ep.Ticket)
			if err != nil {
				errs <- err
				return
			}
			defer rdr.Release()
			for rdr.Next() {
				col := rdr.RecordBatch().Column(0).(*array.Int64)
				mu.Lock()
				for _, id := range col.Int64Values() {
					ids[id]++
				}
				mu.Unlock()
			}
			if err := rdr.Err(); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for id, n := range ids {
		if n != 1 || id < 0 || id >= 300000 {
			t.Fatalf("id %d read %d times", id, n)
		}
	}
	if len(ids) != 300000 {
		t.Errorf("%d distinct ids, want 300000", len(ids))
	}
}
