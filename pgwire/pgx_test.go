package pgwire

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgtype"
)

// pgCode returns the SQLSTATE of a pgx error, or "".
func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

func TestPgxConnectSCRAM(t *testing.T) {
	h := newHarness(t)
	conn := h.connect(t)
	ctx := context.Background()

	var n int32
	if err := conn.QueryRow(ctx, "SELECT 1").Scan(&n); err != nil || n != 1 {
		t.Fatalf("SELECT 1 = %d, %v", n, err)
	}
	pc := conn.PgConn()
	if got := pc.ParameterStatus("server_version"); got != "16.0 (LakeSoul test)" {
		t.Errorf("server_version = %q", got)
	}
	if pc.PID() == 0 {
		t.Error("no BackendKeyData pid")
	}
	// The simple protocol too.
	rows, err := conn.Query(ctx, "GENERATE 3", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	nums, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil || len(nums) != 3 || nums[2] != 3 {
		t.Fatalf("GENERATE 3 = %v, %v", nums, err)
	}
}

func TestPgxAuthFailures(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	cases := []struct{ user, password, msg string }{
		{testUser, "wrong", `password authentication failed for user "alice"`},
		{"bob", testPassword, `password authentication failed for user "bob"`},         // unknown role
		{"nologin", testPassword, `password authentication failed for user "nologin"`}, // unusable verifier
	}
	for _, c := range cases {
		_, err := pgx.Connect(ctx, h.connString(c.user, c.password))
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "28P01" || pe.Message != c.msg || pe.Severity != "FATAL" {
			t.Errorf("connect %s/%s: %v, want FATAL 28P01 %q", c.user, c.password, err, c.msg)
		}
	}
	// The server still serves.
	h.connect(t)
}

func TestPgxNewSessionError(t *testing.T) {
	h := newHarness(t)
	_, err := pgx.Connect(context.Background(), "postgres://alice:secret@"+h.addr+"/nodb?sslmode=disable")
	if pgCode(err) != "3D000" {
		t.Fatalf("connect to nodb: %v, want 3D000", err)
	}
}

func TestPgxBinaryResults(t *testing.T) {
	h := newHarness(t)
	conn := h.connect(t)
	var (
		i2   int16
		i4   int32
		i8   int64
		f4   float32
		f8   float64
		b    bool
		s    string
		d    time.Time
		ts   time.Time
		tstz time.Time
		by   []byte
		u    [16]byte
		num  pgtype.Numeric
		nul  *string
	)
	err := conn.QueryRow(context.Background(), "TYPES").Scan(&i2, &i4, &i8, &f4, &f8, &b, &s, &d, &ts, &tstz, &by, &u, &num, &nul)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range typesRow {
		var got any
		switch c.name {
		case "i2":
			got = i2
		case "i4":
			got = i4
		case "i8":
			got = i8
		case "f4":
			got = f4
		case "f8":
			got = f8
		case "b":
			got = b
		case "t":
			got = s
		case "d":
			got = d
		case "ts":
			got = ts
		case "tstz":
			got = tstz
		case "by":
			if !bytes.Equal(by, c.value.([]byte)) {
				t.Errorf("bytea = %x", by)
			}
			continue
		case "u":
			got = u
		case "num":
			v, _ := num.Value()
			got = v
		case "nul":
			if nul != nil {
				t.Errorf("NULL scanned as %q", *nul)
			}
			continue
		}
		if tm, ok := got.(time.Time); ok {
			if !tm.Equal(c.value.(time.Time)) {
				t.Errorf("column %d (%s) = %v, want %v", i, c.name, tm, c.value)
			}
			continue
		}
		if got != c.value {
			t.Errorf("column %d (%s) = %#v, want %#v", i, c.name, got, c.value)
		}
	}
}

func TestPgxParametersRoundTrip(t *testing.T) {
	h := newHarness(t)
	conn := h.connect(t)
	ctx := context.Background()
	tstz := time.Date(2023, 12, 31, 23, 59, 58, 999999000, time.UTC)
	ts := time.Date(1999, 1, 2, 3, 4, 5, 6000, time.UTC)
	date := time.Date(2000, 2, 29, 0, 0, 0, 0, time.UTC)
	uuid := [16]byte{0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	var num pgtype.Numeric
	if err := num.Scan("-1234.5600"); err != nil {
		t.Fatal(err)
	}

	var (
		i2      int16
		i4      int32
		i8      int64
		f4      float32
		f8      float64
		b       bool
		s       string
		d, t1   time.Time
		t2      time.Time
		by      []byte
		u       [16]byte
		n       pgtype.Numeric
		js      map[string]any
		nullInt *int32
	)
	err := conn.QueryRow(ctx,
		"SELECT $1::int2, $2::int4, $3::int8, $4::float4, $5::float8, $6::bool, $7::text, $8::date, $9::timestamp, $10::timestamptz, $11::bytea, $12::uuid, $13::numeric, $14::jsonb, $15::int4",
		int16(-7), int32(42), int64(-1<<62), float32(2.5), 1e300, true, "zażółć", date, ts, tstz, []byte{9, 8, 0}, uuid, num, map[string]any{"a": 1.0}, nil,
	).Scan(&i2, &i4, &i8, &f4, &f8, &b, &s, &d, &t1, &t2, &by, &u, &n, &js, &nullInt)
	if err != nil {
		t.Fatal(err)
	}
	if i2 != -7 || i4 != 42 || i8 != -1<<62 || f4 != 2.5 || f8 != 1e300 || !b || s != "zażółć" {
		t.Errorf("scalars = %v %v %v %v %v %v %q", i2, i4, i8, f4, f8, b, s)
	}
	if !d.Equal(date) || !t1.Equal(ts) || !t2.Equal(tstz) {
		t.Errorf("times = %v %v %v", d, t1, t2)
	}
	if !bytes.Equal(by, []byte{9, 8, 0}) || u != uuid {
		t.Errorf("bytea/uuid = %x %x", by, u)
	}
	if v, _ := n.Value(); v != "-1234.5600" {
		t.Errorf("numeric = %v", v)
	}
	if js["a"] != 1.0 || nullInt != nil {
		t.Errorf("jsonb = %v, null = %v", js, nullInt)
	}
}

func TestPgxTextParametersAndResults(t *testing.T) {
	h := newHarness(t)
	conn := h.connect(t)
	ctx := context.Background()
	// QueryExecModeExec sends parameters in text format (as strings), and
	// receives text results.
	var i4 int32
	var f8 float64
	var d time.Time
	var s string
	err := conn.QueryRow(ctx, "SELECT $1::int4, $2::float8, $3::date, $4::text", pgx.QueryExecModeExec,
		" 17 ", "-0.25", "2020-01-02", "x").Scan(&i4, &f8, &d, &s)
	if err != nil {
		t.Fatal(err)
	}
	if i4 != 17 || f8 != -0.25 || !d.Equal(time.Date(2020, 1, 2, 0, 0, 0, 0, time.UTC)) || s != "x" {
		t.Errorf("got %v %v %v %q", i4, f8, d, s)
	}
	_, err = conn.Exec(ctx, "SELECT $1::int4", pgx.QueryExecModeExec, "abc")
	if pgCode(err) != "22P02" {
		t.Errorf("bad int text: %v, want 22P02", err)
	}
}

func TestPgxPreparedStatements(t *testing.T) {
	h := newHarness(t)
	conn := h.connect(t)
	ctx := context.Background()
	sd, err := conn.Prepare(ctx, "echo", "SELECT $1::int8, $2::text")
	if err != nil {
		t.Fatal(err)
	}
	if len(sd.ParamOIDs) != 2 || sd.ParamOIDs[0] != pgtype.Int8OID || sd.ParamOIDs[1] != pgtype.TextOID {
		t.Errorf("param OIDs = %v", sd.ParamOIDs)
	}
	if len(sd.Fields) != 2 || sd.Fields[0].DataTypeOID != pgtype.Int8OID {
		t.Errorf("fields = %v", sd.Fields)
	}
	for i := range int64(3) {
		var n int64
		var s string
		if err := conn.QueryRow(ctx, "echo", i, "v").Scan(&n, &s); err != nil || n != i || s != "v" {
			t.Fatalf("echo %d = %d %q %v", i, n, s, err)
		}
	}
	if _, err := conn.Prepare(ctx, "bad", "SELECT * FROM missing"); pgCode(err) != "42P01" {
		t.Errorf("prepare missing: %v, want 42P01", err)
	}
	if err := conn.Deallocate(ctx, "echo"); err != nil {
		t.Errorf("deallocate: %v", err)
	}
}

func TestPgxBatch(t *testing.T) {
	h := newHarness(t)
	conn := h.connect(t)
	ctx := context.Background()

	b := &pgx.Batch{}
	b.Queue("SELECT 1")
	b.Queue("GENERATE 4")
	b.Queue("SELECT $1::text", "batched")
	b.Queue("BEGIN")
	b.Queue("COMMIT")
	br := conn.SendBatch(ctx, b)
	var one int32
	if err := br.QueryRow().Scan(&one); err != nil || one != 1 {
		t.Fatalf("batch SELECT 1: %d %v", one, err)
	}
	rows, err := br.Query()
	if err != nil {
		t.Fatal(err)
	}
	nums, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil || len(nums) != 4 {
		t.Fatalf("batch GENERATE 4: %v %v", nums, err)
	}
	var s string
	if err := br.QueryRow().Scan(&s); err != nil || s != "batched" {
		t.Fatalf("batch echo: %q %v", s, err)
	}
	for _, want := range []string{"BEGIN", "COMMIT"} {
		tag, err := br.Exec()
		if err != nil || tag.String() != want {
			t.Fatalf("batch %s: %v %v", want, tag, err)
		}
	}
	if err := br.Close(); err != nil {
		t.Fatal(err)
	}

	// An error in the middle of a batch fails the rest of it, and the
	// connection is fine afterwards.
	b = &pgx.Batch{}
	b.Queue("SELECT 1")
	b.Queue("FAIL")
	b.Queue("SELECT 1")
	br = conn.SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		t.Fatalf("first: %v", err)
	}
	if _, err := br.Exec(); pgCode(err) != "22012" {
		t.Fatalf("second: %v, want 22012", err)
	}
	br.Close()
	if err := conn.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
		t.Fatalf("after failed batch: %v", err)
	}
}

func TestPgxCancel(t *testing.T) {
	h := newHarness(t)
	cfg, err := pgx.ParseConfig(h.connString(testUser, testPassword))
	if err != nil {
		t.Fatal(err)
	}
	// Cancel through a CancelRequest (not by breaking the socket), and never
	// give up on the socket during the test.
	cfg.BuildContextWatcherHandler = func(pc *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: pc, DeadlineDelay: time.Hour}
	}
	conn, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())

	for range 2 { // twice: a cancelled connection can be cancelled again
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			_, err := conn.Exec(ctx, "SLEEP")
			errc <- err
		}()
		<-h.db.sleeping
		cancel()
		if err := <-errc; pgCode(err) != "57014" {
			t.Fatalf("cancelled SLEEP: %v, want 57014", err)
		}
		var n int32
		if err := conn.QueryRow(context.Background(), "SELECT 1").Scan(&n); err != nil || n != 1 {
			t.Fatalf("after cancel: %d %v", n, err)
		}
	}
}

// pgx sends a statement with arguments as Parse/Bind/Describe/Execute/Sync
// (or Bind/Describe/Execute/Sync once prepared) in one write: the Sync is
// read ahead when the Execute runs, so the statement is not wrapped in a
// pipeline's implicit transaction and costs what it did. A batch is one.
func TestPgxSingleStatementNotWrapped(t *testing.T) {
	h := newHarness(t)
	conn := h.connect(t)
	ctx := context.Background()
	trace := func() string {
		t.Helper()
		var s string
		if err := conn.QueryRow(ctx, "TRACE", pgx.QueryExecModeSimpleProtocol).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	for i := 0; i < 50; i++ {
		var got int64
		if err := conn.QueryRow(ctx, "SELECT $1::int8", int64(i)).Scan(&got); err != nil || got != int64(i) {
			t.Fatalf("SELECT $1 = %d, %v", got, err)
		}
	}
	if got := trace(); got != "" {
		t.Errorf("50 single statements: %q, want no implicit transaction", got)
	}
	b := &pgx.Batch{}
	b.Queue("SELECT $1::int8", int64(1))
	b.Queue("SELECT $1::int8", int64(2))
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		t.Fatal(err)
	}
	if got := trace(); got != "pipeline,commit" {
		t.Errorf("a batch of two: %q, want one pipeline transaction", got)
	}
}
