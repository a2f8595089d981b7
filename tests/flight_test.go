package tests

import (
	"context"
	"crypto/tls"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql/driver"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/lakesoul-go/lakesoul/internal/pgtest"
)

// flightServer is a server of its own serving Flight SQL too (the shared
// one does not), started once for the Flight tests.
var flightShared struct {
	once sync.Once
	srv  *server
	addr string
	err  error
}

func flightServerT(t *testing.T) (*server, string) {
	t.Helper()
	requirePG(t)
	flightShared.once.Do(func() {
		base, err := newBaseDir()
		if err != nil {
			flightShared.err = err
			return
		}
		addr, _, err := freeAddr()
		if err != nil {
			flightShared.err = err
			return
		}
		flightShared.addr = addr
		flightShared.srv, flightShared.err = startServer(filepath.Join(base, "data"), sharedPassword, "--flight-listen", addr,
			"--max-message-size", "4MiB")
		if flightShared.err == nil {
			flightShared.srv.base = base
		}
	})
	if flightShared.err != nil {
		t.Fatalf("start flight server: %v", flightShared.err)
	}
	s := flightShared.srv
	return s, flightShared.addr
}

// stopFlightServer stops the Flight tests' server (TestMain, at the end).
func stopFlightServer() {
	if s := flightShared.srv; s != nil {
		if err := s.stop(); err != nil {
			fmt.Fprintf(os.Stderr, "tests: stopping the flight server: %v\n%s\n", err, s.logTail(8000))
		}
		os.RemoveAll(s.base)
	}
}

// flightClient is arrow-go's Flight SQL client logged in as user through
// the Handshake (Basic credentials for a bearer token).
func flightClient(t *testing.T, ctx context.Context, addr, user, password string) (*flightsql.Client, context.Context, error) {
	t.Helper()
	cl, err := flightsql.NewClientCtx(ctx, addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	actx, err := cl.Client.AuthenticateBasicToken(ctx, user, password)
	return cl, actx, err
}

// flightRows runs query over Flight SQL and returns every endpoint's rows
// as text, in order.
func flightRows(ctx context.Context, cl *flightsql.Client, query string) ([]string, *arrow.Schema, error) {
	info, err := cl.Execute(ctx, query)
	if err != nil {
		return nil, nil, err
	}
	var out []string
	var sc *arrow.Schema
	for _, ep := range info.Endpoint {
		rows, s, err := readEndpoint(ctx, cl, ep)
		if err != nil {
			return nil, nil, err
		}
		sc = s
		out = append(out, rows...)
	}
	return out, sc, nil
}

func readEndpoint(ctx context.Context, cl *flightsql.Client, ep *flight.FlightEndpoint) ([]string, *arrow.Schema, error) {
	rdr, err := cl.DoGet(ctx, ep.Ticket)
	if err != nil {
		return nil, nil, err
	}
	defer rdr.Release()
	var out []string
	for rdr.Next() {
		rec := rdr.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			var parts []string
			for _, col := range rec.Columns() {
				if col.IsNull(i) {
					parts = append(parts, "NULL")
				} else {
					parts = append(parts, flightText(col, i))
				}
			}
			out = append(out, strings.Join(parts, "|"))
		}
	}
	return out, rdr.Schema(), rdr.Err()
}

func grpcCodeOf(err error) codes.Code {
	if s, ok := status.FromError(err); ok {
		return s.Code()
	}
	var se interface{ GRPCStatus() *status.Status }
	if errors.As(err, &se) {
		return se.GRPCStatus().Code()
	}
	return codes.Unknown
}

// TestFlightAuth: a wrong password, an unknown role and no credentials are
// Unauthenticated; the right password works through the handshake's bearer
// token and through the driver's Basic credentials on every call; a forged
// bearer token is refused.
func TestFlightAuth(t *testing.T) {
	s, addr := flightServerT(t)
	ctx := testCtx(t)
	admin := s.connect(t)
	mustExec(t, ctx, admin, "SELECT lakesoul.create_workspace('fl_auth')",
		"SELECT lakesoul.create_user('fl_dave', 'dave-pw', 'fl_auth')")

	for _, c := range []struct{ user, pw string }{{"fl_dave", "wrong"}, {"fl_nobody", "x"}, {"fl_dave", ""}} {
		if _, _, err := flightClient(t, ctx, addr, c.user, c.pw); grpcCodeOf(err) != codes.Unauthenticated {
			t.Errorf("login %s/%q: %v, want Unauthenticated", c.user, c.pw, err)
		}
	}
	cl, _ := mustFlight(t, ctx, addr, "fl_dave", "dave-pw")
	if _, err := cl.Execute(ctx, "SELECT 1"); grpcCodeOf(err) != codes.Unauthenticated {
		t.Errorf("call without credentials: %v, want Unauthenticated", err)
	}
	forged := metadataCtx(ctx, "Bearer not-a-token")
	if _, err := cl.Execute(forged, "SELECT 1"); grpcCodeOf(err) != codes.Unauthenticated {
		t.Errorf("forged token: %v, want Unauthenticated", err)
	}
	_, actx := mustFlight(t, ctx, addr, "fl_dave", "dave-pw")
	got, _, err := flightRows(actx, cl, "SELECT current_user, 40 + 2")
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, "bearer login", got, []string{"fl_dave|42"})

	db, err := sql.Open("flightsql", fmt.Sprintf("flightsql://fl_dave:dave-pw@%s", addr))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var who string
	if err := db.QueryRowContext(ctx, "SELECT current_user").Scan(&who); err != nil || who != "fl_dave" {
		t.Fatalf("driver: %q, %v", who, err)
	}
	bad, _ := sql.Open("flightsql", fmt.Sprintf("flightsql://fl_dave:nope@%s", addr))
	defer bad.Close()
	if err := bad.QueryRowContext(ctx, "SELECT 1").Scan(&who); grpcCodeOf(err) != codes.Unauthenticated &&
		!strings.Contains(fmt.Sprint(err), "Unauthenticated") {
		t.Errorf("driver with a wrong password: %v, want Unauthenticated", err)
	}
}

func metadataCtx(ctx context.Context, auth string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", auth)
}

func mustFlight(t *testing.T, ctx context.Context, addr, user, pw string) (*flightsql.Client, context.Context) {
	t.Helper()
	cl, actx, err := flightClient(t, ctx, addr, user, pw)
	if err != nil {
		t.Fatalf("flight login %s: %v", user, err)
	}
	return cl, actx
}

// TestFlightWorkspaces: over Flight SQL another workspace's tables do not
// exist (NotFound, 42P01) and privileges hold (PermissionDenied, 42501),
// exactly as over pgwire; a user's own tables read and write.
func TestFlightWorkspaces(t *testing.T) {
	s, addr := flightServerT(t)
	ctx := testCtx(t)
	admin := s.connect(t)
	mustExec(t, ctx, admin,
		"SELECT lakesoul.create_workspace('fl_wa')", "SELECT lakesoul.create_workspace('fl_wb')",
		"SELECT lakesoul.create_user('fl_alice', 'alice-pw', 'fl_wa', admin => true)",
		"SELECT lakesoul.create_user('fl_bob', 'bob-pw', 'fl_wa')",
		"SELECT lakesoul.create_user('fl_carol', 'carol-pw', 'fl_wb', admin => true)")
	alice, actx := mustFlight(t, ctx, addr, "fl_alice", "alice-pw")
	for _, q := range []string{"CREATE SCHEMA fl_sa", "CREATE TABLE fl_sa.t (id int PRIMARY KEY, v text)",
		"INSERT INTO fl_sa.t VALUES (1, 'a'), (2, 'b')"} {
		if _, err := alice.ExecuteUpdate(actx, q); err != nil {
			t.Fatalf("alice: %s: %v", q, err)
		}
	}
	got, _, err := flightRows(actx, alice, "SELECT id, v FROM fl_sa.t ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, "alice reads", got, []string{"1|a", "2|b"})

	bob, bctx := mustFlight(t, ctx, addr, "fl_bob", "bob-pw")
	if _, err := bob.ExecuteUpdate(bctx, "CREATE SCHEMA fl_bobs"); grpcCodeOf(err) != codes.PermissionDenied {
		t.Errorf("bob creates a schema: %v, want PermissionDenied", err)
	}
	carol, cctx := mustFlight(t, ctx, addr, "fl_carol", "carol-pw")
	if _, err := carol.Execute(cctx, "SELECT * FROM fl_sa.t"); grpcCodeOf(err) != codes.NotFound || !strings.Contains(err.Error(), "42P01") {
		t.Errorf("carol reads rbac_a's table: %v, want NotFound 42P01", err)
	}
	if _, err := carol.ExecuteUpdate(cctx, "INSERT INTO fl_sa.t VALUES (9, 'x')"); grpcCodeOf(err) != codes.NotFound {
		t.Errorf("carol writes rbac_a's table: %v, want NotFound", err)
	}
	if _, err := carol.Execute(cctx, "SELEC 1"); grpcCodeOf(err) != codes.InvalidArgument {
		t.Errorf("syntax error: %v, want InvalidArgument", err)
	}
	// A query handle of alice's is nobody else's: carol's DoGet of it fails.
	info, err := alice.Execute(actx, "SELECT v FROM fl_sa.t ORDER BY v")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := readEndpoint(cctx, carol, info.Endpoint[0]); grpcCodeOf(err) != codes.NotFound {
		t.Errorf("carol fetches alice's ticket: %v, want NotFound", err)
	}
	wantRows(t, "count after refusals", queryStrings(t, ctx, admin, "SELECT count(*) FROM fl_sa.t"), []string{"2"})
}

// TestFlightTypes: every lake column type read over Flight SQL gives the
// values pgx reads from pgwire for the same rows, in the Arrow type of the
// column (int64, decimal128(10,2), timestamp[us, tz=UTC] …), through the
// client and through the database/sql driver.
func TestFlightTypes(t *testing.T) {
	s, addr := flightServerT(t)
	ctx := testCtx(t)
	admin := s.connect(t)
	mustExec(t, ctx, admin, "CREATE SCHEMA IF NOT EXISTS fl_ty",
		`CREATE TABLE fl_ty.t (id bigint PRIMARY KEY, i int, s smallint, f8 double precision, f4 real, b boolean,
			tx text, vc varchar(10), by bytea, d date, ts timestamp, tz timestamptz, n numeric(10,2), u uuid, j json)`,
		`INSERT INTO fl_ty.t VALUES
			(1, -7, 3, 1.5, 2.25, true, 'héllo', 'abc', '\x00ff', '2026-01-31', '2026-01-31 12:34:56.789', '2026-01-31 12:34:56+00', 12345.67, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{"k": [1, 2]}'),
			(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`)
	pw, _ := s.adminPassword()
	cl, actx := mustFlight(t, ctx, addr, adminRole, pw)
	for _, q := range []string{
		"SELECT * FROM fl_ty.t ORDER BY id", // DuckDB route
		"SELECT * FROM fl_ty.t",             // direct scan (merge's arrays)
		"SELECT id, n * 2 AS n2, tx || '!' AS e, d + 1 AS d1 FROM fl_ty.t ORDER BY id", // computed
	} {
		got, _, err := flightRows(actx, cl, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		sort.Strings(got)
		want := pgxRowsText(t, ctx, admin, q)
		sort.Strings(want)
		wantRows(t, q, got, want)
	}
	_, sc, err := flightRows(actx, cl, "SELECT * FROM fl_ty.t")
	if err != nil {
		t.Fatal(err)
	}
	wantTypes := map[string]string{"id": "int64", "i": "int32", "s": "int16", "f8": "float64", "f4": "float32",
		"b": "bool", "tx": "utf8", "by": "binary", "d": "date32", "ts": "timestamp[us]", "tz": "timestamp[us, tz=UTC]",
		"n": "decimal(10, 2)", "u": "utf8", "j": "utf8"}
	for name, w := range wantTypes {
		idx := sc.FieldIndices(name)
		if len(idx) != 1 {
			t.Errorf("column %s: missing from the result schema %s", name, sc)
			continue
		}
		if f := sc.Field(idx[0]); f.Type.String() != w {
			t.Errorf("column %s: Arrow type %s, want %s", f.Name, f.Type, w)
		}
	}

	db, err := sql.Open("flightsql", fmt.Sprintf("flightsql://%s:%s@%s", adminRole, pw, addr))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var (
		id  int64
		tx  string
		n   float64
		cnt int64
	)
	if err := db.QueryRowContext(ctx, "SELECT id, tx, n FROM fl_ty.t WHERE id = $1", 1).Scan(&id, &tx, &n); err != nil {
		t.Fatalf("driver with a parameter: %v", err)
	}
	if id != 1 || tx != "héllo" || n != 12345.67 {
		t.Errorf("driver row: %d %q %v", id, tx, n)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO fl_ty.t (id, tx) VALUES ($1, $2)", 3, "three"); err != nil {
		t.Fatalf("driver prepared insert: %v", err)
	}
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM fl_ty.t").Scan(&cnt); err != nil || cnt != 3 {
		t.Errorf("count after driver insert: %d, %v", cnt, err)
	}
}

// pgxRowsText reads q through pgwire (simple protocol: PostgreSQL's text
// forms) and returns its rows as flightText renders Arrow values.
func pgxRowsText(t *testing.T, ctx context.Context, c *pgx.Conn, q string) []string {
	t.Helper()
	rows, err := c.Query(ctx, q, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatalf("pgx %s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var parts []string
		for _, v := range rows.RawValues() {
			if v == nil {
				parts = append(parts, "NULL")
			} else {
				parts = append(parts, string(v))
			}
		}
		out = append(out, strings.Join(parts, "|"))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// flightText renders value i of col in PostgreSQL's text form (UTC).
func flightText(col arrow.Array, i int) string {
	switch a := col.(type) {
	case *array.Boolean:
		if a.Value(i) {
			return "t"
		}
		return "f"
	case *array.Float64:
		return strconv.FormatFloat(a.Value(i), 'g', -1, 64)
	case *array.Float32:
		return strconv.FormatFloat(float64(a.Value(i)), 'g', -1, 32)
	case *array.Binary:
		return `\x` + hex.EncodeToString(a.Value(i))
	case *array.Date32:
		return a.Value(i).ToTime().Format("2006-01-02")
	case *array.Timestamp:
		tt := a.DataType().(*arrow.TimestampType)
		v := a.Value(i).ToTime(tt.Unit).UTC()
		if tt.TimeZone != "" {
			return v.Format("2006-01-02 15:04:05.999999") + "+00"
		}
		return v.Format("2006-01-02 15:04:05.999999")
	case *array.Decimal128:
		return a.Value(i).ToString(a.DataType().(*arrow.Decimal128Type).Scale)
	}
	return col.ValueStr(i)
}

// TestFlightParallelEndpoints: a plain scan of a partitioned, bucketed PK
// table gets one endpoint per partition × bucket (with a partition predicate,
// that partition's buckets); four goroutines fetching
// them get exactly the rows of the single-stream read (merged: upserts
// win); a unit ticket is its user's alone (PermissionDenied for another),
// a tampered one is InvalidArgument, and after the table is dropped it is
// NotFound; the server stays up.
func TestFlightParallelEndpoints(t *testing.T) {
	s, addr := flightServerT(t)
	ctx := testCtx(t)
	admin := s.connect(t)
	mustExec(t, ctx, admin,
		"SELECT lakesoul.create_workspace('fl_pa')", "SELECT lakesoul.create_workspace('fl_pb')",
		"SELECT lakesoul.create_user('fl_pam', 'pam-pw', 'fl_pa', admin => true)",
		"SELECT lakesoul.create_user('fl_pete', 'pete-pw', 'fl_pb', admin => true)")
	pam, pctx := mustFlight(t, ctx, addr, "fl_pam", "pam-pw")
	for _, q := range []string{"CREATE SCHEMA fl_par",
		"CREATE TABLE fl_par.t (id bigint, d date, v text, PRIMARY KEY (id)) PARTITION BY LIST (d) WITH (hash_bucket_num = 4)",
		"INSERT INTO fl_par.t SELECT i, DATE '2026-01-01' + (i % 2)::int, 'v' || i FROM range(0, 400) r(i)",
		"INSERT INTO fl_par.t SELECT i, DATE '2026-01-01' + (i % 2)::int, 'w' || i FROM range(0, 400, 3) r(i)"} {
		if _, err := pam.ExecuteUpdate(pctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	single, _, err := flightRows(pctx, pam, "SELECT * FROM fl_par.t ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	if len(single) != 400 {
		t.Fatalf("single stream: %d rows, want 400", len(single))
	}
	info, err := pam.Execute(pctx, "SELECT * FROM fl_par.t")
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Endpoint) != 8 {
		t.Fatalf("plain scan: %d endpoints, want 8 (2 partitions × 4 buckets)", len(info.Endpoint))
	}
	var (
		mu   sync.Mutex
		got  []string
		errs []error
		next = make(chan *flight.FlightEndpoint, len(info.Endpoint))
		wg   sync.WaitGroup
	)
	for _, ep := range info.Endpoint {
		next <- ep
	}
	close(next)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ep := range next {
				rows, _, err := readEndpoint(pctx, pam, ep)
				mu.Lock()
				got, errs = append(got, rows...), append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	sort.Strings(single)
	wantRows(t, "4 readers of 8 endpoints", got, single)

	// A prepared plain scan without parameters (the ADBC driver prepares
	// every query) has the same endpoints, which another connection of
	// the user reads.
	prep, err := pam.Prepare(pctx, "SELECT * FROM fl_par.t")
	if err != nil {
		t.Fatal(err)
	}
	pinfo, err := prep.Execute(pctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(pinfo.Endpoint) != 8 {
		t.Fatalf("prepared plain scan: %d endpoints, want 8", len(pinfo.Endpoint))
	}
	pam2, pctx2 := mustFlight(t, ctx, addr, "fl_pam", "pam-pw")
	var prepared []string
	for _, ep := range pinfo.Endpoint {
		rows, _, err := readEndpoint(pctx2, pam2, ep)
		if err != nil {
			t.Fatal(err)
		}
		prepared = append(prepared, rows...)
	}
	sort.Strings(prepared)
	wantRows(t, "a prepared scan's endpoints read on another connection", prepared, single)
	prep.Close(pctx)

	// A partition predicate keeps the scan plain: that partition's buckets.
	info1, err := pam.Execute(pctx, "SELECT * FROM fl_par.t WHERE d = DATE '2026-01-02'")
	if err != nil {
		t.Fatal(err)
	}
	var part []string
	for _, ep := range info1.Endpoint {
		rows, _, err := readEndpoint(pctx, pam, ep)
		if err != nil {
			t.Fatal(err)
		}
		part = append(part, rows...)
	}
	if len(info1.Endpoint) != 4 || len(part) != 200 {
		t.Errorf("one partition: %d endpoints, %d rows; want 4, 200", len(info1.Endpoint), len(part))
	}

	pete, ectx := mustFlight(t, ctx, addr, "fl_pete", "pete-pw")
	if _, _, err := readEndpoint(ectx, pete, info.Endpoint[0]); grpcCodeOf(err) != codes.PermissionDenied {
		t.Errorf("another user's unit ticket: %v, want PermissionDenied", err)
	}
	tampered := &flight.Ticket{Ticket: append([]byte(nil), info.Endpoint[0].Ticket.Ticket...)}
	tampered.Ticket[len(tampered.Ticket)/2] ^= 1
	if _, _, err := readEndpoint(pctx, pam, &flight.FlightEndpoint{Ticket: tampered}); grpcCodeOf(err) != codes.InvalidArgument {
		t.Errorf("tampered ticket: %v, want InvalidArgument", err)
	}
	if _, err := pam.ExecuteUpdate(pctx, "DROP TABLE fl_par.t"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := readEndpoint(pctx, pam, info.Endpoint[1]); grpcCodeOf(err) != codes.NotFound {
		t.Errorf("ticket of a dropped table: %v, want NotFound", err)
	}
	if rows, _, err := flightRows(pctx, pam, "SELECT 1"); err != nil || len(rows) != 1 {
		t.Errorf("server after bad tickets: %v %v", rows, err)
	}
}

// TestFlightLargeResults: a merged scan of many megabytes comes back whole
// to a client with gRPC's default 4 MiB message limit, through the stream
// of a query (the direct scan gathers merged batches into larger record
// batches), through the plain scan's unit endpoints, and with a LIMIT
// that ends inside a gathered batch.
func TestFlightLargeResults(t *testing.T) {
	_, addr := flightServerT(t)
	ctx := testCtx(t)
	cl, actx := mustFlight(t, ctx, addr, adminRole, sharedPassword)
	pad := strings.Repeat("x", 90)
	for _, q := range []string{"CREATE SCHEMA fl_big",
		"CREATE TABLE fl_big.t (id bigint, v text, PRIMARY KEY (id)) WITH (hash_bucket_num = 2)",
		"INSERT INTO fl_big.t SELECT i, '" + pad + "' || i FROM range(0, 200000) r(i)",
		"INSERT INTO fl_big.t SELECT i, 'w' || i FROM range(0, 200000, 3) r(i)"} {
		if _, err := cl.ExecuteUpdate(actx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	check := func(what string, rows []string, want int) {
		t.Helper()
		seen := make(map[string]bool, len(rows))
		for _, r := range rows {
			id, v, _ := strings.Cut(r, "|")
			if seen[id] || (v != "w"+id && v != pad+id) {
				t.Fatalf("%s: row %q repeated or wrong", what, r)
			}
			if n, _ := strconv.Atoi(id); (n%3 == 0) != (v == "w"+id) {
				t.Fatalf("%s: row %q is not the merged row", what, r)
			}
			seen[id] = true
		}
		if len(rows) != want {
			t.Errorf("%s: %d rows, want %d", what, len(rows), want)
		}
	}
	// A prepared statement's FlightInfo has the one stream endpoint.
	stmt, err := cl.Prepare(actx, "SELECT id, v FROM fl_big.t")
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close(actx)
	info, err := stmt.Execute(actx)
	if err != nil {
		t.Fatal(err)
	}
	var streamed []string
	for _, ep := range info.Endpoint {
		rows, _, err := readEndpoint(actx, cl, ep)
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		streamed = append(streamed, rows...)
	}
	check("stream", streamed, 200000)
	units, _, err := flightRows(actx, cl, "SELECT id, v FROM fl_big.t")
	if err != nil {
		t.Fatalf("unit endpoints: %v", err)
	}
	check("unit endpoints", units, 200000)
	limited, _, err := flightRows(actx, cl, "SELECT id, v FROM fl_big.t LIMIT 70001 OFFSET 3")
	if err != nil {
		t.Fatalf("limit: %v", err)
	}
	check("LIMIT 70001 OFFSET 3", limited, 70001)
}

// TestFlightMetadata: GetCatalogs, GetDbSchemas, GetTables (with schemas),
// GetPrimaryKeys, GetSqlInfo and GetXdbcTypeInfo answer from the catalog as
// the caller's role: a workspace's schema and table are listed to its
// users, not to another workspace's; the table schema is SELECT *'s.
func TestFlightMetadata(t *testing.T) {
	s, addr := flightServerT(t)
	ctx := testCtx(t)
	admin := s.connect(t)
	mustExec(t, ctx, admin,
		"SELECT lakesoul.create_workspace('fl_ma')", "SELECT lakesoul.create_workspace('fl_mb')",
		"SELECT lakesoul.create_user('fl_mia', 'mia-pw', 'fl_ma', admin => true)",
		"SELECT lakesoul.create_user('fl_max', 'max-pw', 'fl_mb', admin => true)")
	mia, mctx := mustFlight(t, ctx, addr, "fl_mia", "mia-pw")
	for _, q := range []string{"CREATE SCHEMA fl_meta",
		"CREATE TABLE fl_meta.t_1 (a bigint, b text, n numeric(12,3), PRIMARY KEY (b, a))"} {
		if _, err := mia.ExecuteUpdate(mctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	maxc, xctx := mustFlight(t, ctx, addr, "fl_max", "max-pw")
	read := func(ctx context.Context, cl *flightsql.Client, info *flight.FlightInfo, err error) []string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, ep := range info.Endpoint {
			rows, _, err := readEndpoint(ctx, cl, ep)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, rows...)
		}
		return out
	}
	info, err := mia.GetCatalogs(mctx)
	wantRows(t, "catalogs", read(mctx, mia, info, err), []string{"lakesoul"})
	pat := "fl\\_me%"
	info, err = mia.GetDBSchemas(mctx, &flightsql.GetDBSchemasOpts{DbSchemaFilterPattern: &pat})
	wantRows(t, "mia's schemas", read(mctx, mia, info, err), []string{"lakesoul|fl_meta"})
	info, err = maxc.GetDBSchemas(xctx, &flightsql.GetDBSchemasOpts{DbSchemaFilterPattern: &pat})
	wantRows(t, "max's schemas", read(xctx, maxc, info, err), nil)

	info, err = mia.GetTables(mctx, &flightsql.GetTablesOpts{DbSchemaFilterPattern: &pat, IncludeSchema: true})
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := mia.DoGet(mctx, info.Endpoint[0].Ticket)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rdr.Next() {
		rec := rdr.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			sc, err := flight.DeserializeSchema(rec.Column(4).(*array.Binary).Value(i), nil)
			if err != nil {
				t.Fatal(err)
			}
			var fields []string
			for _, f := range sc.Fields() {
				fields = append(fields, f.Name+":"+f.Type.String())
			}
			tables = append(tables, rec.Column(1).ValueStr(i)+"."+rec.Column(2).ValueStr(i)+" "+rec.Column(3).ValueStr(i)+" "+strings.Join(fields, ","))
		}
	}
	rdr.Release()
	wantRows(t, "mia's tables", tables, []string{"fl_meta.t_1 TABLE a:int64,b:utf8,n:decimal(12, 3)"})
	info, err = maxc.GetTables(xctx, &flightsql.GetTablesOpts{DbSchemaFilterPattern: &pat})
	wantRows(t, "max's tables", read(xctx, maxc, info, err), nil)

	schemaName := "fl_meta"
	info, err = mia.GetPrimaryKeys(mctx, flightsql.TableRef{DBSchema: &schemaName, Table: "t_1"})
	wantRows(t, "primary key", read(mctx, mia, info, err), []string{
		"lakesoul|fl_meta|t_1|b|1|t_1_pkey", "lakesoul|fl_meta|t_1|a|2|t_1_pkey"})
	info, err = maxc.GetPrimaryKeys(xctx, flightsql.TableRef{DBSchema: &schemaName, Table: "t_1"})
	wantRows(t, "max's primary key", read(xctx, maxc, info, err), nil)

	info, err = mia.GetSqlInfo(mctx, []flightsql.SqlInfo{flightsql.SqlInfoFlightSqlServerName})
	if got := read(mctx, mia, info, err); len(got) != 1 || !strings.Contains(got[0], "LakeSoul-Go") {
		t.Errorf("sql info: %v", got)
	}
	info, err = mia.GetXdbcTypeInfo(mctx, nil)
	types := read(mctx, mia, info, err)
	if len(types) < 10 || !strings.HasPrefix(strings.Join(types, "\n"), "boolean|") {
		t.Errorf("xdbc type info: %v", types)
	}
}

// ingestBatches is a reader of record batches for ExecuteIngest.
func ingestBatches(t *testing.T, recs ...arrow.RecordBatch) array.RecordReader {
	t.Helper()
	rdr, err := array.NewRecordReader(recs[0].Schema(), recs)
	if err != nil {
		t.Fatal(err)
	}
	return rdr
}

// idBatch is rows [from, to) of (id bigint, v text, n double).
func idBatch(from, to int, v string, withN bool) arrow.RecordBatch {
	fields := []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: arrow.BinaryTypes.String, Nullable: true}}
	if withN {
		fields = append(fields, arrow.Field{Name: "n", Type: arrow.PrimitiveTypes.Float64, Nullable: true})
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	for i := from; i < to; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("%s%d", v, i))
		if withN {
			b.Field(2).(*array.Float64Builder).Append(float64(i) / 2)
		}
	}
	return b.NewRecordBatch()
}

// TestFlightIngest: CommandStatementIngest upserts a stream of batches
// into a PK table in one commit (a partial batch keeps the other
// columns); a column of the wrong type, a mismatching later batch, an
// oversized batch, an unknown table and another workspace's table are
// each a Flight status error and commit nothing; the server stays up.
func TestFlightIngest(t *testing.T) {
	s, addr := flightServerT(t)
	ctx := testCtx(t)
	admin := s.connect(t)
	mustExec(t, ctx, admin,
		"SELECT lakesoul.create_workspace('fl_ia')", "SELECT lakesoul.create_workspace('fl_ib')",
		"SELECT lakesoul.create_user('fl_ivy', 'ivy-pw', 'fl_ia', admin => true)",
		"SELECT lakesoul.create_user('fl_ian', 'ian-pw', 'fl_ib', admin => true)")
	ivy, ictx := mustFlight(t, ctx, addr, "fl_ivy", "ivy-pw")
	for _, q := range []string{"CREATE SCHEMA fl_ing",
		"CREATE TABLE fl_ing.t (id bigint PRIMARY KEY, v text, n double precision) WITH (hash_bucket_num = 2)"} {
		if _, err := ivy.ExecuteUpdate(ictx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	ingSchema := "fl_ing"
	opts := &flightsql.ExecuteIngestOpts{Schema: &ingSchema, Table: "t", TableDefinitionOptions: &flightsql.TableDefinitionOptions{
		IfNotExist: flightsql.TableDefinitionOptionsTableNotExistOptionFail, IfExists: flightsql.TableDefinitionOptionsTableExistsOptionAppend}}
	cat := s.catalogConn(t)
	versions := func() string {
		return queryStrings(t, ctx, cat, "SELECT count(*) FROM partition_info p JOIN table_info t USING (table_id) WHERE t.table_namespace = 'fl_ing'")[0]
	}
	n, err := ivy.ExecuteIngest(ictx, ingestBatches(t, idBatch(0, 50000, "a", true), idBatch(50000, 100000, "a", true), idBatch(100000, 150000, "a", true)), opts)
	if err != nil || n != 150000 {
		t.Fatalf("ingest: %d, %v", n, err)
	}
	wantRows(t, "rows after ingest", queryStrings(t, ctx, admin, "SELECT count(*), sum(n)::bigint FROM fl_ing.t"), []string{"150000|5624962500"})
	before := versions()
	if n, err := ivy.ExecuteIngest(ictx, ingestBatches(t, idBatch(0, 10, "new", false)), opts); err != nil || n != 10 {
		t.Fatalf("partial upsert: %d, %v", n, err)
	}
	wantRows(t, "partial upsert", queryStrings(t, ctx, admin, "SELECT id, v, n FROM fl_ing.t WHERE id IN (1, 20) ORDER BY id"),
		[]string{"1|new1|0.5", "20|a20|10"})
	if v := versions(); v == before {
		t.Fatalf("partial upsert made no version (%s)", v)
	}
	before = versions()

	wrongType := func() arrow.RecordBatch {
		b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{
			{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil))
		defer b.Release()
		b.Field(0).(*array.Int64Builder).Append(7)
		b.Field(1).(*array.Int64Builder).Append(7)
		return b.NewRecordBatch()
	}
	if _, err := ivy.ExecuteIngest(ictx, ingestBatches(t, wrongType()), opts); grpcCodeOf(err) != codes.InvalidArgument {
		t.Errorf("wrong column type: %v, want InvalidArgument", err)
	}
	// Good batches beyond the sink's batch size (32 MiB: they are written
	// to files first), then one with a NULL key: none may commit.
	nullable := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	nb := array.NewRecordBuilder(memory.DefaultAllocator, nullable)
	var stream []arrow.RecordBatch
	for i := 0; i < 12*30000; i++ {
		nb.Field(0).(*array.Int64Builder).Append(int64(1000000 + i))
		nb.Field(1).(*array.StringBuilder).Append(strings.Repeat("z", 100))
		if (i+1)%30000 == 0 {
			stream = append(stream, nb.NewRecordBatch()) // ≈ 3.3 MiB each
		}
	}
	nb.Field(0).(*array.Int64Builder).AppendNull()
	nb.Field(1).(*array.StringBuilder).Append("null key")
	stream = append(stream, nb.NewRecordBatch())
	nb.Release()
	tableDir := filepath.Join(s.dataDir, "warehouse", "fl_ing", "t")
	filesBefore := len(filesUnder(t, tableDir))
	if filesBefore == 0 {
		t.Fatalf("no files under %s", tableDir)
	}
	if _, err := ivy.ExecuteIngest(ictx, ingestBatches(t, stream...), opts); grpcCodeOf(err) != codes.InvalidArgument {
		t.Errorf("NULL key in the last batch: %v, want InvalidArgument", err)
	}
	if n := len(filesUnder(t, tableDir)); n != filesBefore {
		t.Errorf("the failed ingest left files: %d before, %d after", filesBefore, n)
	}
	big := idBatch(300000, 300000+200000, strings.Repeat("b", 20), true) // ≈ 9 MiB > --max-message-size 4MiB
	if _, err := ivy.ExecuteIngest(ictx, ingestBatches(t, big), opts); grpcCodeOf(err) != codes.ResourceExhausted {
		t.Errorf("oversized batch: %v, want ResourceExhausted", err)
	}
	missing := &flightsql.ExecuteIngestOpts{Schema: &ingSchema, Table: "nope", TableDefinitionOptions: opts.TableDefinitionOptions}
	if _, err := ivy.ExecuteIngest(ictx, ingestBatches(t, idBatch(0, 1, "x", true)), missing); grpcCodeOf(err) != codes.NotFound {
		t.Errorf("unknown table: %v, want NotFound", err)
	}
	ian, nctx := mustFlight(t, ctx, addr, "fl_ian", "ian-pw")
	if _, err := ian.ExecuteIngest(nctx, ingestBatches(t, idBatch(400000, 400010, "i", true)), opts); grpcCodeOf(err) != codes.NotFound {
		t.Errorf("another workspace's table: %v, want NotFound", err)
	}
	wantRows(t, "nothing committed by the failures", queryStrings(t, ctx, admin, "SELECT count(*) FROM fl_ing.t"), []string{"150000"})
	if v := versions(); v != before {
		t.Errorf("failed ingests made versions: %s → %s", before, v)
	}
	if n, err := ivy.ExecuteIngest(ictx, ingestBatches(t, idBatch(150000, 150001, "ok", true)), opts); err != nil || n != 1 {
		t.Errorf("ingest after failures: %d, %v", n, err)
	}
}

// TestFlightCancel: CancelFlightInfo stops a query being fetched (the
// stream ends with an error long before its rows) and a client that
// abandons a stream by cancelling its call frees its session: the same
// client's next statements run. A cancelled query's ticket is gone.
func TestFlightCancel(t *testing.T) {
	s, addr := flightServerT(t)
	ctx := testCtx(t)
	pw, _ := s.adminPassword()
	cl, actx := mustFlight(t, ctx, addr, adminRole, pw)
	const big = "SELECT i, i * 2 AS j FROM generate_series(1, 20000000) g(i)"
	const total = 20000000

	info, err := cl.Execute(actx, big)
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := cl.DoGet(actx, info.Endpoint[0].Ticket)
	if err != nil {
		t.Fatal(err)
	}
	if !rdr.Next() {
		t.Fatalf("no first batch: %v", rdr.Err())
	}
	res, err := cl.CancelFlightInfo(actx, &flight.CancelFlightInfoRequest{Info: info})
	if err != nil || res.GetStatus() != flight.CancelStatusCancelled {
		t.Fatalf("CancelFlightInfo: %v, %v", res.GetStatus(), err)
	}
	rows := rdr.RecordBatch().NumRows()
	for rdr.Next() {
		rows += rdr.RecordBatch().NumRows()
	}
	if rdr.Err() == nil || rows >= total {
		t.Errorf("cancelled stream: %d rows, err %v; want an error before %d rows", rows, rdr.Err(), total)
	}
	rdr.Release()
	if got, _, err := flightRows(actx, cl, "SELECT 1"); err != nil || len(got) != 1 {
		t.Fatalf("after CancelFlightInfo: %v, %v", got, err)
	}

	cctx, cancel := context.WithCancel(actx)
	info, err = cl.Execute(cctx, big)
	if err != nil {
		t.Fatal(err)
	}
	rdr, err = cl.DoGet(cctx, info.Endpoint[0].Ticket)
	if err != nil {
		t.Fatal(err)
	}
	if !rdr.Next() {
		t.Fatalf("no first batch: %v", rdr.Err())
	}
	cancel()
	for rdr.Next() {
	}
	rdr.Release()
	if got, _, err := flightRows(actx, cl, "SELECT 2"); err != nil || len(got) != 1 {
		t.Fatalf("after an abandoned stream: %v, %v", got, err)
	}

	info, err = cl.Execute(actx, "SELECT 3")
	if err != nil {
		t.Fatal(err)
	}
	if res, err := cl.CancelFlightInfo(actx, &flight.CancelFlightInfoRequest{Info: info}); err != nil || res.GetStatus() != flight.CancelStatusCancelled {
		t.Fatalf("cancel before fetch: %v, %v", res.GetStatus(), err)
	}
	if _, _, err := readEndpoint(actx, cl, info.Endpoint[0]); grpcCodeOf(err) != codes.NotFound {
		t.Errorf("ticket of a cancelled query: %v, want NotFound", err)
	}
}

// TestFlightTLS: with --tls-cert/--tls-key, Flight SQL is served over TLS
// (as pgwire's TLS): a TLS client logs in and queries, through the client
// and the driver; a plaintext client gets no answer.
func TestFlightTLS(t *testing.T) {
	t.Parallel()
	requirePG(t)
	base := testBaseDir(t)
	certFile, keyFile := writeSelfSigned(t, base)
	addr, _, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := startServer(filepath.Join(base, "data"), "tls-Secret1", "--tls-cert", certFile, "--tls-key", keyFile,
		"--flight-listen", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.stopT(t)
	ctx := testCtx(t)
	tlsConf := &tls.Config{InsecureSkipVerify: true} // self-signed
	cl, err := flightsql.NewClientCtx(ctx, addr, nil, nil, grpc.WithTransportCredentials(credentials.NewTLS(tlsConf)))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	actx, err := cl.Client.AuthenticateBasicToken(ctx, adminRole, "tls-Secret1")
	if err != nil {
		t.Fatalf("TLS login: %v", err)
	}
	got, _, err := flightRows(actx, cl, "SELECT 7")
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, "over TLS", got, []string{"7"})

	plain, err := flightsql.NewClientCtx(ctx, addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if _, err := plain.Client.AuthenticateBasicToken(ctx, adminRole, "tls-Secret1"); err == nil {
		t.Error("plaintext client logged in to a TLS listener")
	}

	if err := driver.RegisterTLSConfig("flight-test", tlsConf); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("flightsql", fmt.Sprintf("flightsql://%s:%s@%s?tls=flight-test", adminRole, "tls-Secret1", addr))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int64
	if err := db.QueryRowContext(ctx, "SELECT 8").Scan(&n); err != nil || n != 8 {
		t.Errorf("driver over TLS: %d, %v", n, err)
	}
}

// TestFlightTransactions: a Flight SQL transaction is a transaction block:
// through the driver, writes in a Tx are invisible to other connections
// until Commit and gone after Rollback; through the client, a transaction's
// updates commit with it and a statement outside it is refused while it is
// open (FailedPrecondition). Each driver connection has its own session: another connection
// of the same pool runs statements while a Tx is open.
func TestFlightTransactions(t *testing.T) {
	s, addr := flightServerT(t)
	ctx := testCtx(t)
	admin := s.connect(t)
	mustExec(t, ctx, admin, "CREATE SCHEMA IF NOT EXISTS fl_tx", "CREATE TABLE fl_tx.t (id bigint PRIMARY KEY, v text)")
	pw, _ := s.adminPassword()
	db, err := sql.Open("flightsql", fmt.Sprintf("flightsql://%s:%s@%s", adminRole, pw, addr))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	count := func() string { return queryStrings(t, ctx, admin, "SELECT count(*) FROM fl_tx.t")[0] }

	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"INSERT INTO fl_tx.t VALUES (1, 'a')", "INSERT INTO fl_tx.t VALUES (2, 'b')"} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			t.Fatalf("in tx: %s: %v", q, err)
		}
	}
	var inTx int64
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM fl_tx.t").Scan(&inTx); err != nil || inTx != 2 {
		t.Errorf("the tx reads its writes: %d, %v", inTx, err)
	}
	var other int64
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM fl_tx.t").Scan(&other); err != nil || other != 0 {
		t.Errorf("another connection during the tx: %d, %v (want 0)", other, err)
	}
	if c := count(); c != "0" {
		t.Errorf("pgwire sees %s rows before commit", c)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if c := count(); c != "0" {
		t.Errorf("after rollback: %s rows", c)
	}
	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO fl_tx.t VALUES (3, 'c'), (4, 'd')"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if c := count(); c != "2" {
		t.Errorf("after commit: %s rows, want 2", c)
	}

	cl, actx := mustFlight(t, ctx, addr, adminRole, pw)
	txn, err := cl.BeginTransaction(actx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := txn.ExecuteUpdate(actx, "INSERT INTO fl_tx.t VALUES (5, 'e')"); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.ExecuteUpdate(actx, "INSERT INTO fl_tx.t VALUES (6, 'f')"); grpcCodeOf(err) != codes.FailedPrecondition {
		t.Errorf("a statement outside the open transaction: %v, want FailedPrecondition", err)
	}
	if err := txn.Commit(actx); err != nil {
		t.Fatal(err)
	}
	if c := count(); c != "3" {
		t.Errorf("after the client's commit: %s rows, want 3", c)
	}
	if _, err := cl.ExecuteUpdate(actx, "INSERT INTO fl_tx.t VALUES (7, 'g')"); err != nil {
		t.Errorf("autocommit after the transaction: %v", err)
	}
}

// TestFlightStatementOrder: statements take effect in the order a client
// sends them, whenever it fetches their results (the ADBC driver sends
// every statement as a query and fetches its ticket in the background
// while it goes on with ROLLBACK or COMMIT): an INSERT whose ticket is
// never fetched before the block ends belongs to that block — rolled back
// with it or committed with it; a prepared one too; a query planned before
// a write and fetched after it answers as of its place in the sequence;
// RETURNING rows wait for their DoGet; an error comes back at once.
func TestFlightStatementOrder(t *testing.T) {
	s, addr := flightServerT(t)
	ctx := testCtx(t)
	admin := s.connect(t)
	mustExec(t, ctx, admin, "CREATE SCHEMA IF NOT EXISTS fl_ord", "CREATE TABLE fl_ord.t (id bigint, v text)",
		"CREATE TABLE fl_ord.k (id bigint PRIMARY KEY, v text CHECK (v <> 'bad'))")
	pw, _ := s.adminPassword()
	cl, actx := mustFlight(t, ctx, addr, adminRole, pw)

	tx, err := cl.BeginTransaction(actx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Execute(actx, "INSERT INTO fl_ord.t VALUES (1, 'rolled back')"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(actx); err != nil {
		t.Fatal(err)
	}
	tx, err = cl.BeginTransaction(actx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Execute(actx, "INSERT INTO fl_ord.t VALUES (2, 'committed')"); err != nil {
		t.Fatal(err)
	}
	prep, err := tx.Prepare(actx, "INSERT INTO fl_ord.t VALUES (3, 'prepared')")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := prep.Execute(actx); err != nil {
		t.Fatal(err)
	}
	// A query planned now and fetched after the next write counts the
	// rows as they are now.
	countInfo, err := tx.Execute(actx, "SELECT count(*) FROM fl_ord.t")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecuteUpdate(actx, "INSERT INTO fl_ord.t VALUES (4, 'later')"); err != nil {
		t.Fatal(err)
	}
	if got, _, err := readEndpoint(actx, cl, countInfo.Endpoint[0]); err != nil || len(got) != 1 || got[0] != "2" {
		t.Errorf("a count planned before the fourth row, fetched after it: %v, %v; want 2", got, err)
	}
	if err := tx.Commit(actx); err != nil {
		t.Fatal(err)
	}
	prep.Close(actx)
	wantRows(t, "what the client wrote", textRows(t, ctx, admin, "SELECT id, v FROM fl_ord.t ORDER BY id"),
		[]string{"2|committed", "3|prepared", "4|later"})

	// Outside a block: RETURNING rows wait for the DoGet, the write is
	// visible before it.
	info, err := cl.Execute(actx, "INSERT INTO fl_ord.k VALUES (1, 'a'), (2, 'b') RETURNING id, v")
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, "rows before the DoGet", textRows(t, ctx, admin, "SELECT id, v FROM fl_ord.k ORDER BY id"), []string{"1|a", "2|b"})
	if got, _, err := readEndpoint(actx, cl, info.Endpoint[0]); err != nil {
		t.Fatal(err)
	} else {
		sort.Strings(got)
		wantRows(t, "RETURNING", got, []string{"1|a", "2|b"})
	}
	// A failing write fails at once, with its SQLSTATE.
	if _, err := cl.Execute(actx, "INSERT INTO fl_ord.k VALUES (3, 'bad')"); err == nil || !strings.Contains(err.Error(), "23514") {
		t.Errorf("a write breaking a CHECK sent as a query: %v, want SQLSTATE 23514", err)
	}
}

// TestFlightTicketsAcrossServers: two servers on one catalog (whose
// pg_hba.conf demands scram-sha-256 from users, so a Flight login's SCRAM
// keys must log the user in to PostgreSQL itself) and one warehouse: the
// unit tickets one server issues are served by the other, for the same
// user, and give the rows of the single-stream read.
func TestFlightTicketsAcrossServers(t *testing.T) {
	t.Parallel()
	requirePG(t)
	cluster := pgtest.SCRAMCluster(t)
	ctx := testCtx(t)
	if err := cluster.CreateDatabase(ctx, "flx"); err != nil {
		t.Fatal(err)
	}
	url := cluster.ConnString("flx")
	base := testBaseDir(t)
	addrA, _, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	a, err := startServer(filepath.Join(base, "a"), "flx-pw", "--catalog-url", url, "--flight-listen", addrA)
	if err != nil {
		t.Fatal(err)
	}
	defer a.stopT(t)
	addrB, _, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	b, err := startServer(filepath.Join(base, "b"), "flx-pw", "--catalog-url", url, "--flight-listen", addrB,
		"--warehouse", "file://"+filepath.Join(base, "a", "warehouse"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.stopT(t)
	mustExec(t, ctx, a.connect(t), "SELECT lakesoul.create_workspace('flx_w')",
		"SELECT lakesoul.create_user('flx_una', 'una-pw', 'flx_w', admin => true)")

	ca, actx := mustFlight(t, ctx, addrA, "flx_una", "una-pw")
	for _, q := range []string{"CREATE SCHEMA flx",
		"CREATE TABLE flx.t (id bigint PRIMARY KEY, v text) WITH (hash_bucket_num = 3)",
		"INSERT INTO flx.t SELECT i, 'v' || i FROM range(0, 300) r(i)",
		"INSERT INTO flx.t SELECT i, 'w' || i FROM range(0, 300, 7) r(i)"} {
		if _, err := ca.ExecuteUpdate(actx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	single, _, err := flightRows(actx, ca, "SELECT * FROM flx.t ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	info, err := ca.Execute(actx, "SELECT * FROM flx.t")
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Endpoint) != 3 {
		t.Fatalf("%d endpoints, want 3", len(info.Endpoint))
	}
	cb, bctx := mustFlight(t, ctx, addrB, "flx_una", "una-pw")
	var got []string
	for _, ep := range info.Endpoint {
		rows, _, err := readEndpoint(bctx, cb, ep)
		if err != nil {
			t.Fatalf("server B serving server A's ticket: %v", err)
		}
		got = append(got, rows...)
	}
	sort.Strings(got)
	sort.Strings(single)
	wantRows(t, "A's tickets read on B", got, single)
}
