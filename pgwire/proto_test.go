package pgwire

import (
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"
)

// expectMsgs fails unless got equals want.
func expectMsgs(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("messages:\n got  %q\n want %q", got, want)
	}
}

func TestSimpleQuery(t *testing.T) {
	h := newHarness(t)
	r := h.raw(t)
	expectMsgs(t, r.query("SELECT 1"),
		"RowDescription ?column?:0", "DataRow 1", "CommandComplete SELECT 1", "ReadyForQuery I")
	expectMsgs(t, r.query(""), "EmptyQueryResponse", "ReadyForQuery I")
	expectMsgs(t, r.query(" ; ; "), "EmptyQueryResponse", "ReadyForQuery I")
	// Several statements; an error skips the rest.
	expectMsgs(t, r.query("GENERATE 2; FAIL; SELECT 1"),
		"RowDescription n:0", "DataRow 1", "DataRow 2", "CommandComplete SELECT 2",
		"ErrorResponse ERROR 22012", "ReadyForQuery I")
	expectMsgs(t, r.query("SELECT * FROM missing"), "ErrorResponse ERROR 42P01", "ReadyForQuery I")
	// Transaction status.
	expectMsgs(t, r.query("BEGIN"), "CommandComplete BEGIN", "ReadyForQuery T")
	expectMsgs(t, r.query("FAIL"), "ErrorResponse ERROR 22012", "ReadyForQuery E")
	expectMsgs(t, r.query("SELECT 1"), "RowDescription ?column?:0", "ErrorResponse ERROR 25P02", "ReadyForQuery E")
	expectMsgs(t, r.query("ROLLBACK"), "CommandComplete ROLLBACK", "ReadyForQuery I")
	// Changed run-time parameters are reported.
	expectMsgs(t, r.query("SET application_name = 'x'; SET TimeZone = 'Europe/Warsaw'"),
		"ParameterStatus application_name=x", "CommandComplete SET",
		"ParameterStatus TimeZone=Europe/Warsaw", "CommandComplete SET", "ReadyForQuery I")
	expectMsgs(t, r.query("SET application_name = 'x'"), "CommandComplete SET", "ReadyForQuery I")
}

func TestTextFormats(t *testing.T) {
	h := newHarness(t)
	r := h.raw(t)
	got := r.query("TYPES")
	want := "DataRow -2|1073741824|1152921504606846976|1.5|0.1|t|héllo|2024-02-29|2024-02-29 13:14:15.123456|2024-02-29 13:14:15.5+00|\\x0001feff|12345678-9abc-def0-0102-030405060708|12345.678|NULL"
	if len(got) != 4 || got[1] != want {
		t.Fatalf("TYPES text row:\n got  %q\n want %q", got, want)
	}
	// timestamptz follows the session's TimeZone.
	r.query("SET TimeZone = 'Asia/Kolkata'")
	got = r.query("TYPES")
	if !strings.Contains(got[1], "|2024-02-29 18:44:15.5+05:30|") {
		t.Errorf("timestamptz in Asia/Kolkata: %q", got[1])
	}
}

func TestFloatText(t *testing.T) {
	cases := []struct {
		f    float64
		bits int
		want string
	}{
		{0.1, 64, "0.1"}, {1e15, 64, "1e+15"}, {1e14, 64, "100000000000000"},
		{0.0001, 64, "0.0001"}, {0.00001, 64, "1e-05"}, {-2.5, 64, "-2.5"},
		{123456789012345678, 64, "1.2345678901234568e+17"}, {1e100, 64, "1e+100"},
		{float64(float32(1e6)), 32, "1e+06"}, {100000, 32, "100000"}, {float64(float32(0.1)), 32, "0.1"},
	}
	for _, c := range cases {
		if got := string(AppendFloatText(nil, c.f, c.bits)); got != c.want {
			t.Errorf("float%d %v = %q, want %q", c.bits, c.f, got, c.want)
		}
	}
}

func TestExecuteMaxRows(t *testing.T) {
	h := newHarness(t)
	r := h.raw(t)
	r.send(
		&pgproto3.Parse{Query: "GENERATE 5"},
		&pgproto3.Bind{},
		&pgproto3.Execute{MaxRows: 2},
		&pgproto3.Flush{},
	)
	expectMsgs(t, r.until("PortalSuspended"),
		"ParseComplete", "BindComplete", "DataRow 1", "DataRow 2", "PortalSuspended")
	r.send(&pgproto3.Execute{MaxRows: 2}, &pgproto3.Execute{}, &pgproto3.Sync{})
	expectMsgs(t, r.until("ReadyForQuery"),
		"DataRow 3", "DataRow 4", "PortalSuspended", "DataRow 5", "CommandComplete SELECT 1", "ReadyForQuery I")
	// The portal died with the implicit transaction at Sync.
	r.send(&pgproto3.Execute{}, &pgproto3.Sync{})
	expectMsgs(t, r.until("ReadyForQuery"), "ErrorResponse ERROR 34000", "ReadyForQuery I")
}

func TestPortalsLiveUntilTransactionEnd(t *testing.T) {
	h := newHarness(t)
	r := h.raw(t)
	r.query("BEGIN")
	r.send(
		&pgproto3.Parse{Name: "s", Query: "GENERATE 4"},
		&pgproto3.Bind{DestinationPortal: "p", PreparedStatement: "s"},
		&pgproto3.Execute{Portal: "p", MaxRows: 3},
		&pgproto3.Sync{},
	)
	expectMsgs(t, r.until("ReadyForQuery"),
		"ParseComplete", "BindComplete", "DataRow 1", "DataRow 2", "DataRow 3", "PortalSuspended", "ReadyForQuery T")
	r.send(&pgproto3.Execute{Portal: "p"}, &pgproto3.Sync{})
	expectMsgs(t, r.until("ReadyForQuery"), "DataRow 4", "CommandComplete SELECT 1", "ReadyForQuery T")
	r.query("COMMIT")
	r.send(&pgproto3.Execute{Portal: "p"}, &pgproto3.Sync{})
	expectMsgs(t, r.until("ReadyForQuery"), "ErrorResponse ERROR 34000", "ReadyForQuery I")
	// The named statement outlives the transaction.
	r.send(&pgproto3.Bind{PreparedStatement: "s"}, &pgproto3.Execute{MaxRows: 1}, &pgproto3.Sync{})
	expectMsgs(t, r.until("ReadyForQuery"), "BindComplete", "DataRow 1", "PortalSuspended", "ReadyForQuery I")
}

func TestErrorMidPipelineSkipsToSync(t *testing.T) {
	h := newHarness(t)
	r := h.raw(t)
	before := h.db.executes.Load()
	r.send(
		&pgproto3.Parse{Query: "SELECT 1"},
		&pgproto3.Bind{},
		&pgproto3.Execute{},
		&pgproto3.Parse{Query: "SELECT * FROM missing"},
		&pgproto3.Bind{},
		&pgproto3.Execute{},
		&pgproto3.Query{String: "SELECT 1"},
		&pgproto3.Flush{},
		&pgproto3.Sync{},
	)
	expectMsgs(t, r.until("ReadyForQuery"),
		"ParseComplete", "BindComplete", "DataRow 1", "CommandComplete SELECT 1",
		"ErrorResponse ERROR 42P01", "ReadyForQuery I")
	if n := h.db.executes.Load() - before; n != 1 {
		t.Errorf("%d executions, want 1", n)
	}
	// An error at Execute time, then a fresh cycle works.
	r.send(&pgproto3.Parse{Query: "FAIL"}, &pgproto3.Bind{}, &pgproto3.Execute{},
		&pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{})
	expectMsgs(t, r.until("ReadyForQuery"), "ParseComplete", "BindComplete", "ErrorResponse ERROR 22012", "ReadyForQuery I")
	expectMsgs(t, r.query("SELECT 1"), "RowDescription ?column?:0", "DataRow 1", "CommandComplete SELECT 1", "ReadyForQuery I")
}

func TestDescribeStatementDoesNotExecute(t *testing.T) {
	h := newHarness(t)
	r := h.raw(t)
	before := h.db.executes.Load()
	r.send(
		&pgproto3.Parse{Name: "g", Query: "GENERATE 3"},
		&pgproto3.Describe{ObjectType: 'S', Name: "g"},
		&pgproto3.Parse{Name: "e", Query: "SELECT $1::int4, $2::text", ParameterOIDs: []uint32{pgtype.Int4OID}},
		&pgproto3.Describe{ObjectType: 'S', Name: "e"},
		&pgproto3.Parse{Name: "b", Query: "BEGIN"},
		&pgproto3.Describe{ObjectType: 'S', Name: "b"},
		&pgproto3.Parse{Name: "empty", Query: ""},
		&pgproto3.Describe{ObjectType: 'S', Name: "empty"},
		&pgproto3.Sync{},
	)
	expectMsgs(t, r.until("ReadyForQuery"),
		"ParseComplete", "ParameterDescription ", "RowDescription n:0",
		"ParseComplete", "ParameterDescription 23,25", "RowDescription c1:0,c2:0",
		"ParseComplete", "ParameterDescription ", "NoData",
		"ParseComplete", "ParameterDescription ", "NoData",
		"ReadyForQuery I")
	if n := h.db.executes.Load(); n != before {
		t.Errorf("Describe S executed %d times", n-before)
	}
	// Describe P reports the bound result formats; nothing runs either.
	r.send(
		&pgproto3.Bind{PreparedStatement: "e", DestinationPortal: "p",
			ParameterFormatCodes: []int16{1, 0}, Parameters: [][]byte{{0, 0, 0, 7}, []byte("seven")},
			ResultFormatCodes: []int16{1, 0}},
		&pgproto3.Describe{ObjectType: 'P', Name: "p"},
		&pgproto3.Bind{PreparedStatement: "b", DestinationPortal: "q"},
		&pgproto3.Describe{ObjectType: 'P', Name: "q"},
		&pgproto3.Bind{PreparedStatement: "empty"},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
	)
	expectMsgs(t, r.until("ReadyForQuery"),
		"BindComplete", "RowDescription c1:1,c2:0", "BindComplete", "NoData",
		"BindComplete", "EmptyQueryResponse", "ReadyForQuery I")
	if n := h.db.executes.Load(); n != before {
		t.Errorf("Describe P executed %d times", n-before)
	}
}

func TestResultFormatsPerColumn(t *testing.T) {
	h := newHarness(t)
	r := h.raw(t)
	r.send(
		&pgproto3.Parse{Query: "SELECT $1::int4, $2::text, $3::bool"},
		&pgproto3.Bind{Parameters: [][]byte{[]byte("258"), []byte("hi"), nil}, ResultFormatCodes: []int16{1, 0, 1}},
		&pgproto3.Execute{},
		&pgproto3.Bind{Parameters: [][]byte{[]byte("1"), []byte("a"), []byte("t")}, ResultFormatCodes: []int16{1}},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
	)
	expectMsgs(t, r.until("ReadyForQuery"),
		"ParseComplete", "BindComplete", "DataRow \x00\x00\x01\x02|hi|NULL", "CommandComplete SELECT 1",
		"BindComplete", "DataRow \x00\x00\x00\x01|a|\x01", "CommandComplete SELECT 1", "ReadyForQuery I")
}

func TestExtendedProtocolErrors(t *testing.T) {
	h := newHarness(t)
	r := h.raw(t)
	cycle := func(msgs ...pgproto3.FrontendMessage) []string {
		r.send(append(msgs, &pgproto3.Sync{})...)
		return r.until("ReadyForQuery")
	}
	expectMsgs(t, cycle(&pgproto3.Parse{Name: "s", Query: "SELECT 1"}, &pgproto3.Parse{Name: "s", Query: "SELECT 1"}),
		"ParseComplete", "ErrorResponse ERROR 42P05", "ReadyForQuery I")
	// The unnamed statement may be replaced.
	expectMsgs(t, cycle(&pgproto3.Parse{Query: "SELECT 1"}, &pgproto3.Parse{Query: "GENERATE 1"},
		&pgproto3.Bind{}, &pgproto3.Execute{}),
		"ParseComplete", "ParseComplete", "BindComplete", "DataRow 1", "CommandComplete SELECT 1", "ReadyForQuery I")
	expectMsgs(t, cycle(&pgproto3.Parse{Query: "SELECT 1; SELECT 1"}),
		"ErrorResponse ERROR 42601", "ReadyForQuery I")
	expectMsgs(t, cycle(&pgproto3.Bind{PreparedStatement: "nope"}), "ErrorResponse ERROR 26000", "ReadyForQuery I")
	expectMsgs(t, cycle(&pgproto3.Describe{ObjectType: 'P', Name: "nope"}), "ErrorResponse ERROR 34000", "ReadyForQuery I")
	expectMsgs(t, cycle(&pgproto3.Close{ObjectType: 'S', Name: "nope"}, &pgproto3.Close{ObjectType: 'P', Name: "nope"},
		&pgproto3.Close{ObjectType: 'S', Name: "s"}, &pgproto3.Bind{PreparedStatement: "s"}),
		"CloseComplete", "CloseComplete", "CloseComplete", "ErrorResponse ERROR 26000", "ReadyForQuery I")
	// Parameter count, format count and format code errors.
	r.send(&pgproto3.Parse{Name: "e", Query: "SELECT $1::int4"}, &pgproto3.Sync{})
	r.until("ReadyForQuery")
	expectMsgs(t, cycle(&pgproto3.Bind{PreparedStatement: "e"}), "ErrorResponse ERROR 08P01", "ReadyForQuery I")
	expectMsgs(t, cycle(&pgproto3.Bind{PreparedStatement: "e", Parameters: [][]byte{[]byte("1")}, ParameterFormatCodes: []int16{0, 0}}),
		"ErrorResponse ERROR 08P01", "ReadyForQuery I")
	expectMsgs(t, cycle(&pgproto3.Bind{PreparedStatement: "e", Parameters: [][]byte{[]byte("1")}, ResultFormatCodes: []int16{0, 1}}),
		"ErrorResponse ERROR 08P01", "ReadyForQuery I")
	expectMsgs(t, cycle(&pgproto3.Bind{PreparedStatement: "e", Parameters: [][]byte{[]byte("1")}, ResultFormatCodes: []int16{7}}),
		"ErrorResponse ERROR 22023", "ReadyForQuery I")
	expectMsgs(t, cycle(&pgproto3.Bind{PreparedStatement: "e", Parameters: [][]byte{{1, 2}}, ParameterFormatCodes: []int16{1}}),
		"ErrorResponse ERROR 22P03", "ReadyForQuery I")
	expectMsgs(t, cycle(&pgproto3.Bind{PreparedStatement: "e", Parameters: [][]byte{[]byte("x")}}),
		"ErrorResponse ERROR 22P02", "ReadyForQuery I")
	// Binary parameter of a type without binary input.
	r.send(&pgproto3.Parse{Name: "u", Query: "SELECT $1::text", ParameterOIDs: []uint32{0}}, &pgproto3.Sync{})
	r.until("ReadyForQuery")
	expectMsgs(t, cycle(&pgproto3.Bind{PreparedStatement: "u", Parameters: [][]byte{{0xff}}, ParameterFormatCodes: []int16{1}}),
		"ErrorResponse ERROR 22021", "ReadyForQuery I")
	// Duplicate named portal.
	r.query("BEGIN")
	expectMsgs(t, cycle(
		&pgproto3.Bind{PreparedStatement: "e", DestinationPortal: "p", Parameters: [][]byte{[]byte("1")}},
		&pgproto3.Bind{PreparedStatement: "e", DestinationPortal: "p", Parameters: [][]byte{[]byte("1")}}),
		"BindComplete", "ErrorResponse ERROR 42P03", "ReadyForQuery T")
	r.query("ROLLBACK")
	// Unknown Describe and Close kinds.
	expectMsgs(t, cycle(&pgproto3.Describe{ObjectType: 'X'}), "ErrorResponse ERROR 08P01", "ReadyForQuery I")
	expectMsgs(t, cycle(&pgproto3.Close{ObjectType: 'X'}), "ErrorResponse ERROR 08P01", "ReadyForQuery I")
	// Fast-path function calls are refused on their own.
	r.send(&pgproto3.FunctionCall{Function: 1})
	expectMsgs(t, r.until("ReadyForQuery"), "ErrorResponse ERROR 0A000", "ReadyForQuery I")
	// COPY messages outside COPY are ignored.
	r.send(&pgproto3.CopyData{Data: []byte("x")}, &pgproto3.CopyDone{})
	expectMsgs(t, r.query("SELECT 1"), "RowDescription ?column?:0", "DataRow 1", "CommandComplete SELECT 1", "ReadyForQuery I")
}

func TestInvalidUTF8Query(t *testing.T) {
	h := newHarness(t)
	r := h.raw(t)
	expectMsgs(t, r.query("SELECT '\xff'"), "ErrorResponse ERROR 22021", "ReadyForQuery I")
	r.send(&pgproto3.Parse{Query: "SELECT '\xc3'"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{})
	expectMsgs(t, r.until("ReadyForQuery"), "ErrorResponse ERROR 22021", "ReadyForQuery I")
	expectMsgs(t, r.query("SELECT 1"), "RowDescription ?column?:0", "DataRow 1", "CommandComplete SELECT 1", "ReadyForQuery I")
}

func TestUnknownMessageTypeIsFatal(t *testing.T) {
	h := newHarness(t)
	other := h.raw(t)
	r := h.raw(t)
	r.sendBytes([]byte{'!', 0, 0, 0, 4})
	expectMsgs(t, r.expectClosed(), "ErrorResponse FATAL 08P01")
	expectMsgs(t, other.query("SELECT 1"), "RowDescription ?column?:0", "DataRow 1", "CommandComplete SELECT 1", "ReadyForQuery I")
	h.connect(t) // new connections are accepted
}

func TestMalformedMessageIsFatal(t *testing.T) {
	h := newHarness(t)
	for _, msg := range [][]byte{
		{'P', 0, 0, 0, 6, 'x', 0},            // Parse without query and parameter count
		{'B', 0, 0, 0, 5, 0},                 // Bind truncated
		{'E', 0, 0, 0, 4},                    // Execute without portal name
		{'Q', 0, 0, 0, 2},                    // length below 4
		{'p', 0, 0, 0, 9, 'p', 'w', 0, 0, 0}, // password message after authentication
	} {
		r := h.raw(t)
		r.sendBytes(msg)
		expectMsgs(t, r.expectClosed(), "ErrorResponse FATAL 08P01")
	}
	h.connect(t)
}

// TestOversizedMessageSkipped: after authentication a message beyond
// MaxMessageSize is skipped unread and answered with ERROR 54000 (simple
// query: then ReadyForQuery; extended protocol: skip to Sync), and the
// connection goes on.
func TestOversizedMessageSkipped(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxMessageSize = 1024 })
	r := h.raw(t)
	r.send(&pgproto3.Query{String: strings.Repeat("x", 1000)})
	expectMsgs(t, r.until("ReadyForQuery"), "ErrorResponse ERROR 42601", "ReadyForQuery I")
	r.send(&pgproto3.Query{String: strings.Repeat("x", 200000)})
	expectMsgs(t, r.until("ReadyForQuery"), "ErrorResponse ERROR 54000", "ReadyForQuery I")
	r.send(&pgproto3.Parse{Query: strings.Repeat("x", 2000)}, &pgproto3.Bind{}, &pgproto3.Describe{ObjectType: 'P'},
		&pgproto3.Execute{}, &pgproto3.Sync{})
	expectMsgs(t, r.until("ReadyForQuery"), "ErrorResponse ERROR 54000", "ReadyForQuery I")
	r.send(&pgproto3.Parse{Query: "SELECT 1"}, &pgproto3.Bind{Parameters: [][]byte{make([]byte, 5000)}}, &pgproto3.Sync{})
	expectMsgs(t, r.until("ReadyForQuery"), "ParseComplete", "ErrorResponse ERROR 54000", "ReadyForQuery I")
	// Outside COPY an oversized CopyData is ignored like any CopyData.
	r.send(&pgproto3.CopyData{Data: make([]byte, 5000)})
	expectMsgs(t, r.query("SELECT 1"), "RowDescription ?column?:0", "DataRow 1", "CommandComplete SELECT 1", "ReadyForQuery I")
	// A length that is not even a length is still fatal.
	r.sendBytes([]byte{'Q', 0, 0, 0, 3})
	expectMsgs(t, r.expectClosed(), "ErrorResponse FATAL 08P01")
	h.connect(t)
}

func TestLargeResultStreams(t *testing.T) {
	h := newHarness(t)
	r := h.raw(t)
	got := r.query("GENERATE 20000; BIGROW 300000")
	if len(got) != 20000+1+1+1+1+1+1 || got[20000] != "DataRow 20000" || len(got[20003]) != len("DataRow ")+300000 {
		t.Fatalf("got %d messages", len(got))
	}
}

// TestPanicInSession: a panic in a Session call fails that statement with
// ERROR XX000, in the simple and the extended protocol, after the rows sent
// before it and without the row it was building; the connection goes on
// serving, and the Session is told (StatementAborter), so a transaction
// block fails as after any error.
func TestPanicInSession(t *testing.T) {
	h := newHarness(t)
	r := h.raw(t)
	expectMsgs(t, r.query("PANIC"), "RowDescription s:0", "DataRow whole", "ErrorResponse ERROR XX000", "ReadyForQuery I")
	if h.logs.errorCount() == 0 {
		t.Error("panic not logged at Error level")
	}
	expectMsgs(t, r.query("SELECT 1"), "RowDescription ?column?:0", "DataRow 1", "CommandComplete SELECT 1", "ReadyForQuery I")

	r.send(&pgproto3.Parse{Query: "PANIC"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{})
	expectMsgs(t, r.until("ReadyForQuery"), "ParseComplete", "BindComplete", "DataRow whole", "ErrorResponse ERROR XX000", "ReadyForQuery I")

	expectMsgs(t, r.query("BEGIN"), "CommandComplete BEGIN", "ReadyForQuery T")
	expectMsgs(t, r.query("PANIC"), "RowDescription s:0", "DataRow whole", "ErrorResponse ERROR XX000", "ReadyForQuery E")
	expectMsgs(t, r.query("ROLLBACK"), "CommandComplete ROLLBACK", "ReadyForQuery I")
	expectMsgs(t, r.query("SELECT 1"), "RowDescription ?column?:0", "DataRow 1", "CommandComplete SELECT 1", "ReadyForQuery I")
	if n := h.db.aborted.Load(); n != 3 {
		t.Errorf("session told of %d aborted statements, want 3", n)
	}
	h.connect(t)
}

// panicCodec decodes nothing: it panics, standing in for a bug in the
// protocol layer's own handling of a message (here Bind's parameters,
// decoded outside any Session call).
type panicCodec struct{ pgtype.TextCodec }

func (panicCodec) DecodeValue(*pgtype.Map, uint32, int16, []byte) (any, error) {
	panic("codec panics")
}

// TestPanicInProtocolHandling: a panic in pgwire's own handling of a
// statement's message is that statement's ERROR XX000 too; the block
// fails, the connection goes on.
func TestPanicInProtocolHandling(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.Types = append(c.Types, &pgtype.Type{Name: "boom", OID: boomOID, Codec: panicCodec{}})
	})
	r := h.raw(t)
	expectMsgs(t, r.query("BEGIN"), "CommandComplete BEGIN", "ReadyForQuery T")
	r.send(&pgproto3.Parse{Query: "SELECT $1::boom"},
		&pgproto3.Bind{ParameterFormatCodes: []int16{pgproto3.BinaryFormat}, Parameters: [][]byte{{1}}},
		&pgproto3.Execute{}, &pgproto3.Sync{})
	expectMsgs(t, r.until("ReadyForQuery"), "ParseComplete", "ErrorResponse ERROR XX000", "ReadyForQuery E")
	expectMsgs(t, r.query("ROLLBACK"), "CommandComplete ROLLBACK", "ReadyForQuery I")
	expectMsgs(t, r.query("SELECT 1"), "RowDescription ?column?:0", "DataRow 1", "CommandComplete SELECT 1", "ReadyForQuery I")
	if n := h.db.aborted.Load(); n != 1 {
		t.Errorf("session told of %d aborted statements, want 1", n)
	}
}

func TestCancelRequestRaw(t *testing.T) {
	h := newHarness(t)
	r := h.raw(t)
	cancelReq := func(pid uint32, secret []byte) {
		c := h.dial(t)
		b, _ := (&pgproto3.CancelRequest{ProcessID: pid, SecretKey: secret}).Encode(nil)
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
		// The server closes the connection once it has acted on the request.
		if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil {
			t.Fatalf("cancel connection answered %d bytes, %v", n, err)
		}
	}
	// A cancel while idle is a no-op and does not affect later statements.
	cancelReq(r.pid, r.secret)
	expectMsgs(t, r.query("SELECT 1"), "RowDescription ?column?:0", "DataRow 1", "CommandComplete SELECT 1", "ReadyForQuery I")

	// A wrong secret matches nothing.
	wrong := append([]byte(nil), r.secret...)
	wrong[0] ^= 0xff
	if h.srv.keys.cancel(r.pid, wrong) {
		t.Error("cancel with a wrong secret matched")
	}

	r.send(&pgproto3.Query{String: "SLEEP"})
	<-h.db.sleeping
	cancelReq(r.pid, r.secret)
	expectMsgs(t, r.until("ReadyForQuery"), "ErrorResponse ERROR 57014", "ReadyForQuery I")
	expectMsgs(t, r.query("SELECT 1"), "RowDescription ?column?:0", "DataRow 1", "CommandComplete SELECT 1", "ReadyForQuery I")
}

func TestClientDisconnectCancelsQuery(t *testing.T) {
	h := newHarness(t)
	r := h.raw(t)
	r.send(&pgproto3.Query{String: "SLEEP"})
	<-h.db.sleeping
	r.conn.Close()
	// The session is closed once the SLEEP has been cancelled; Shutdown (in
	// the cleanup) would otherwise wait, and it checks no session is left.
	h.shutdown(t)
}

func TestShutdown(t *testing.T) {
	h := newHarness(t)
	idle := h.raw(t)
	busy := h.raw(t)
	silent := h.dial(t) // connected, but no startup packet yet
	busy.send(&pgproto3.Query{String: "SLEEP"})
	<-h.db.sleeping
	done := make(chan struct{})
	go func() {
		h.shutdown(t)
		close(done)
	}()
	expectMsgs(t, idle.expectClosed(), "ErrorResponse FATAL 57P01")
	expectMsgs(t, busy.expectClosed(), "ErrorResponse FATAL 57P01")
	if n, err := silent.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Errorf("connection in startup: read %d bytes, %v; want it closed", n, err)
	}
	<-done
	if _, err := net.Dial("tcp", h.addr); err == nil {
		t.Error("server still accepts after Shutdown")
	}
}

func TestDateTimeTextParameters(t *testing.T) {
	h := newHarness(t)
	r := h.raw(t)
	r.query("SET TimeZone = 'Asia/Kolkata'")
	r.send(
		&pgproto3.Parse{Query: "SELECT $1::date, $2::timestamp, $3::timestamptz, $4::timestamptz, $5::date"},
		&pgproto3.Bind{Parameters: [][]byte{
			[]byte("2026-01-01 00:00:00Z"),     // a date from timestamp text
			[]byte("2026-01-01T10:11:12.5+05"), // the offset is ignored
			[]byte("2026-01-01 00:00:00Z"),     // UTC
			[]byte(" 2026-01-01 05:30:00 "),    // the session's time zone
			[]byte("infinity"),                 // passed on as text
		}, ResultFormatCodes: []int16{0}},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
	)
	expectMsgs(t, r.until("ReadyForQuery"), "ParseComplete", "BindComplete",
		"DataRow 2026-01-01|2026-01-01 10:11:12.5|2026-01-01 05:30:00+05:30|2026-01-01 05:30:00+05:30|infinity",
		"CommandComplete SELECT 1", "ReadyForQuery I")
}

// TestErrorBeforeSyncIsSentAtOnce replays postgres.js: Parse, Describe and
// Flush, waiting for the answer before it sends Bind/Execute/Sync. An error
// must reach the client without a Sync (issue 14, item 2), and the
// connection must work after the Sync that follows.
func TestErrorBeforeSyncIsSentAtOnce(t *testing.T) {
	h := newHarness(t)
	r := h.raw(t)
	for _, fail := range [][]pgproto3.FrontendMessage{
		{&pgproto3.Parse{Name: "p1", Query: "SELECT * FROM missing"}, &pgproto3.Describe{ObjectType: 'S', Name: "p1"}},
		{&pgproto3.Parse{Name: "p2", Query: "FAIL"}, &pgproto3.Bind{PreparedStatement: "p2"}, &pgproto3.Execute{}},
		{&pgproto3.Describe{ObjectType: 'S', Name: "nope"}},
		{&pgproto3.Bind{PreparedStatement: "nope"}},
	} {
		r.send(append(fail, &pgproto3.Flush{})...)
		// No Sync sent yet: the error must arrive on its own.
		got := r.until("ErrorResponse")
		if !strings.HasPrefix(got[len(got)-1], "ErrorResponse ERROR ") {
			t.Fatalf("got %q", got)
		}
		r.send(&pgproto3.Sync{})
		expectMsgs(t, r.until("ReadyForQuery"), "ReadyForQuery I")
	}
	expectMsgs(t, r.query("SELECT 1"), "RowDescription ?column?:0", "DataRow 1", "CommandComplete SELECT 1", "ReadyForQuery I")
}

// A Query of several statements is one implicit transaction: the Session
// opens it before each statement outside a block (so a COMMIT in the text
// starts a new one), ends it after the last statement — committing before
// that statement's CommandComplete, so a failed commit is reported in its
// place — or rolls it back at the first error. A single statement is never
// wrapped.
func TestSimpleQueryImplicitTransaction(t *testing.T) {
	h := newHarness(t)
	r := h.raw(t)
	trace := func() string {
		t.Helper()
		got := r.query("TRACE")
		if len(got) != 4 {
			t.Fatalf("TRACE: %q", got)
		}
		return strings.TrimPrefix(got[1], "DataRow ")
	}
	expectMsgs(t, r.query("SELECT 1"), "RowDescription ?column?:0", "DataRow 1", "CommandComplete SELECT 1", "ReadyForQuery I")
	if got := trace(); got != "" {
		t.Errorf("single statement: %q, want no implicit transaction", got)
	}
	expectMsgs(t, r.query("SELECT 1; SELECT 1"), "RowDescription ?column?:0", "DataRow 1", "CommandComplete SELECT 1",
		"RowDescription ?column?:0", "DataRow 1", "CommandComplete SELECT 1", "ReadyForQuery I")
	if got := trace(); got != "implicit,commit" {
		t.Errorf("two statements: %q", got)
	}
	expectMsgs(t, r.query("SELECT 1; FAIL; SELECT 1"), "RowDescription ?column?:0", "DataRow 1", "CommandComplete SELECT 1",
		"ErrorResponse ERROR 22012", "ReadyForQuery I")
	if got := trace(); got != "implicit,rollback" {
		t.Errorf("error: %q", got)
	}
	// The commit's failure replaces the last CommandComplete.
	expectMsgs(t, r.query("SELECT 1; COMMITFAIL"), "RowDescription ?column?:0", "DataRow 1", "CommandComplete SELECT 1",
		"ErrorResponse ERROR 40001", "ReadyForQuery I")
	if got := trace(); got != "implicit,commit failed" {
		t.Errorf("failed commit: %q", got)
	}
	// BEGIN makes it an explicit block, which the end of the text leaves
	// open; after COMMIT the rest is a new implicit transaction.
	expectMsgs(t, r.query("SELECT 1; BEGIN"), "RowDescription ?column?:0", "DataRow 1", "CommandComplete SELECT 1",
		"CommandComplete BEGIN", "ReadyForQuery T")
	expectMsgs(t, r.query("COMMIT; SELECT 1"), "CommandComplete COMMIT",
		"RowDescription ?column?:0", "DataRow 1", "CommandComplete SELECT 1", "ReadyForQuery I")
	if got := trace(); got != "implicit,implicit,commit" {
		t.Errorf("BEGIN … COMMIT: %q", got)
	}
	// A failed explicit block stays failed.
	expectMsgs(t, r.query("BEGIN; FAIL; SELECT 1"), "CommandComplete BEGIN", "ErrorResponse ERROR 22012", "ReadyForQuery E")
	expectMsgs(t, r.query("ROLLBACK"), "CommandComplete ROLLBACK", "ReadyForQuery I")
	if got := trace(); got != "implicit" {
		t.Errorf("failed block: %q", got)
	}
}

// The Executes of a pipeline, up to its Sync, are one implicit transaction
// (pipeline.go): opened before the first Execute unless that statement is
// alone before its Sync, committed at the Sync (a failed commit reported
// before ReadyForQuery), rolled back by any ERROR of the pipeline, ended
// by a Query that finds it open; BEGIN makes it a block, COMMIT ends it and
// the next Execute opens a new one; it stays open while the client makes
// the server wait (Flush).
func TestPipelineImplicitTransaction(t *testing.T) {
	h := newHarness(t)
	r := h.raw(t)
	trace := func() string {
		t.Helper()
		got := r.query("TRACE")
		if len(got) != 4 {
			t.Fatalf("TRACE: %q", got)
		}
		return strings.TrimPrefix(got[1], "DataRow ")
	}
	exec := func(sql string) []pgproto3.FrontendMessage {
		return []pgproto3.FrontendMessage{&pgproto3.Parse{Query: sql}, &pgproto3.Bind{}, &pgproto3.Execute{}}
	}
	pipeline := func(sqls ...string) {
		var msgs []pgproto3.FrontendMessage
		for _, sql := range sqls {
			msgs = append(msgs, exec(sql)...)
		}
		r.send(append(msgs, &pgproto3.Sync{})...)
	}
	stmt := func(tag string, rows ...string) []string {
		return append(append([]string{"ParseComplete", "BindComplete"}, rows...), "CommandComplete "+tag)
	}
	concat := func(parts ...[]string) []string { return slices.Concat(parts...) }

	pipeline("SELECT 1")
	expectMsgs(t, r.until("ReadyForQuery"), concat(stmt("SELECT 1", "DataRow 1"), []string{"ReadyForQuery I"})...)
	if got := trace(); got != "" {
		t.Errorf("single statement: %q, want no implicit transaction", got)
	}

	pipeline("SELECT 1", "SELECT 1")
	expectMsgs(t, r.until("ReadyForQuery"), concat(stmt("SELECT 1", "DataRow 1"), stmt("SELECT 1", "DataRow 1"),
		[]string{"ReadyForQuery I"})...)
	if got := trace(); got != "pipeline,commit" {
		t.Errorf("two statements: %q", got)
	}

	pipeline("SELECT 1", "FAIL", "SELECT 1")
	expectMsgs(t, r.until("ReadyForQuery"), concat(stmt("SELECT 1", "DataRow 1"),
		[]string{"ParseComplete", "BindComplete", "ErrorResponse ERROR 22012", "ReadyForQuery I"})...)
	if got := trace(); got != "pipeline,rollback" {
		t.Errorf("error: %q", got)
	}

	// An ERROR of a message other than Execute rolls back too.
	r.send(append(exec("SELECT 1"), &pgproto3.Bind{PreparedStatement: "nope"}, &pgproto3.Sync{})...)
	expectMsgs(t, r.until("ReadyForQuery"), concat(stmt("SELECT 1", "DataRow 1"),
		[]string{"ErrorResponse ERROR 26000", "ReadyForQuery I"})...)
	if got := trace(); got != "pipeline,rollback" {
		t.Errorf("error at Bind: %q", got)
	}

	// The commit at Sync fails: reported before ReadyForQuery.
	pipeline("SELECT 1", "COMMITFAIL")
	expectMsgs(t, r.until("ReadyForQuery"), concat(stmt("SELECT 1", "DataRow 1"), stmt("COMMITFAIL"),
		[]string{"ErrorResponse ERROR 40001", "ReadyForQuery I"})...)
	if got := trace(); got != "pipeline,commit failed" {
		t.Errorf("failed commit: %q", got)
	}

	// BEGIN makes it a block, which Sync leaves open; after COMMIT the
	// next Execute opens a new implicit transaction.
	pipeline("SELECT 1", "BEGIN")
	expectMsgs(t, r.until("ReadyForQuery"), concat(stmt("SELECT 1", "DataRow 1"), stmt("BEGIN"), []string{"ReadyForQuery T"})...)
	pipeline("COMMIT", "SELECT 1", "SELECT 1")
	expectMsgs(t, r.until("ReadyForQuery"), concat(stmt("COMMIT"), stmt("SELECT 1", "DataRow 1"), stmt("SELECT 1", "DataRow 1"),
		[]string{"ReadyForQuery I"})...)
	if got := trace(); got != "pipeline,pipeline-later,commit" {
		t.Errorf("BEGIN … COMMIT: %q", got)
	}

	// Open while the client waits for results (Flush) and sends the rest
	// later.
	r.send(append(exec("SELECT 1"), &pgproto3.Flush{})...)
	expectMsgs(t, r.until("CommandComplete"), stmt("SELECT 1", "DataRow 1")...)
	r.send(&pgproto3.Sync{})
	expectMsgs(t, r.until("ReadyForQuery"), "ReadyForQuery I")
	if got := trace(); got != "pipeline,commit" {
		t.Errorf("Flush, then Sync: %q", got)
	}

	// A Query that finds it open ends it with the Query's statements.
	r.send(append(exec("SELECT 1"), &pgproto3.Flush{})...)
	expectMsgs(t, r.until("CommandComplete"), stmt("SELECT 1", "DataRow 1")...)
	expectMsgs(t, r.query("SELECT 1"), "RowDescription ?column?:0", "DataRow 1", "CommandComplete SELECT 1", "ReadyForQuery I")
	r.send(&pgproto3.Sync{})
	expectMsgs(t, r.until("ReadyForQuery"), "ReadyForQuery I")
	if got := trace(); got != "pipeline,commit" {
		t.Errorf("Query in the pipeline: %q", got)
	}
	r.send(append(exec("SELECT 1"), &pgproto3.Flush{})...)
	expectMsgs(t, r.until("CommandComplete"), stmt("SELECT 1", "DataRow 1")...)
	expectMsgs(t, r.query("FAIL"), "ErrorResponse ERROR 22012", "ReadyForQuery I")
	r.send(&pgproto3.Sync{})
	expectMsgs(t, r.until("ReadyForQuery"), "ReadyForQuery I")
	if got := trace(); got != "pipeline,rollback" {
		t.Errorf("failing Query in the pipeline: %q", got)
	}
}
