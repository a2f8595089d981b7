package pgwire

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// readServerError reads from a raw socket until it closes and returns the
// SQLSTATE of the ErrorResponse it carried ("" if none).
func readServerError(t *testing.T, c net.Conn) string {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(time.Minute)) // a hang guard only
	b, err := io.ReadAll(c)
	var ne net.Error
	if err != nil && !errors.As(err, &ne) {
		t.Fatalf("read: %v", err)
	}
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the server neither answered nor closed the connection")
	}
	i := bytes.IndexByte(b, 'E')
	if i < 0 {
		return ""
	}
	fe := pgproto3.NewFrontend(bytes.NewReader(b[i:]), io.Discard)
	msg, err := fe.Receive()
	if err != nil {
		t.Fatalf("decode %q: %v", b, err)
	}
	er, ok := msg.(*pgproto3.ErrorResponse)
	if !ok {
		return ""
	}
	return er.Code
}

// startSCRAM sends a startup packet for alice and reads up to the
// AuthenticationSASL request.
func startSCRAM(t *testing.T, c net.Conn) {
	t.Helper()
	if _, err := c.Write(startupPacket(3<<16, "user", testUser, "database", "db")); err != nil {
		t.Fatal(err)
	}
	fe := pgproto3.NewFrontend(c, io.Discard)
	msg, err := fe.Receive()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := msg.(*pgproto3.AuthenticationSASL); !ok {
		t.Fatalf("got %T, want AuthenticationSASL", msg)
	}
}

// TestPreAuthMessageLimit: before authentication a message may be at most
// 64 KiB. A client announcing a 64 MiB SASL response is refused with FATAL
// 08P01 as soon as the header arrives: the server neither waits for nor
// buffers the body.
func TestPreAuthMessageLimit(t *testing.T) {
	h := newHarness(t)
	c := h.dial(t)
	startSCRAM(t, c)
	hdr := binary.BigEndian.AppendUint32([]byte{'p'}, 64<<20+4)
	if _, err := c.Write(hdr); err != nil {
		t.Fatal(err)
	}
	if code := readServerError(t, c); code != "08P01" {
		t.Fatalf("oversized SASL response: got %q, want FATAL 08P01", code)
	}
	// A startup packet beyond PostgreSQL's 10 000 bytes is refused the same way.
	c = h.dial(t)
	if _, err := c.Write(binary.BigEndian.AppendUint32(nil, 10001+4)); err != nil {
		t.Fatal(err)
	}
	if code := readServerError(t, c); code != "08P01" {
		t.Fatalf("oversized startup packet: got %q, want FATAL 08P01", code)
	}
	h.connect(t)
}

// TestAuthTimeout: a socket that sends nothing, or stops in the middle of
// authentication, is closed once AuthTimeout has passed.
func TestAuthTimeout(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.AuthTimeout = 200 * time.Millisecond })
	silent := h.dial(t)
	stalled := h.dial(t)
	startSCRAM(t, stalled)
	for name, c := range map[string]net.Conn{"silent": silent, "stalled in SCRAM": stalled} {
		readServerError(t, c) // returns once the server closed it
		t.Logf("%s socket closed by the server", name)
	}
	h.connect(t)
}

// TestMaxConnections: the session beyond MaxConnections gets FATAL 53300,
// and a slot is free again once a session ends.
func TestMaxConnections(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxConnections = 2 })
	ctx := context.Background()
	a := h.connect(t)
	h.connect(t)
	_, err := pgx.Connect(ctx, h.connString(testUser, testPassword))
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "53300" || pe.Severity != "FATAL" || pe.Message != "sorry, too many clients already" {
		t.Fatalf("third connection: %v, want FATAL 53300", err)
	}
	a.Close(ctx)
	// The slot is given back when the server has finished the connection,
	// just after the client closed it.
	deadline := time.Now().Add(time.Minute)
	for {
		c, err := pgx.Connect(ctx, h.connString(testUser, testPassword))
		if err == nil {
			c.Close(ctx)
			break
		}
		if pgCode(err) != "53300" || time.Now().After(deadline) {
			t.Fatalf("connection after one closed: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestReservedConnections: the last ReservedConnections slots go only to
// roles the Authenticator calls privileged.
func TestReservedConnections(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxConnections = 2; c.ReservedConnections = 1 })
	v, err := NewSCRAMVerifier("adminpw")
	if err != nil {
		t.Fatal(err)
	}
	h.db.verifiers["admin"] = v
	h.db.privileged["admin"] = true
	ctx := context.Background()
	h.connect(t)
	_, err = pgx.Connect(ctx, h.connString(testUser, testPassword))
	if pgCode(err) != "53300" || !strings.Contains(err.Error(), "reserved") {
		t.Fatalf("user in a reserved slot: %v, want FATAL 53300 (reserved)", err)
	}
	admin, err := pgx.Connect(ctx, h.connString("admin", "adminpw"))
	if err != nil {
		t.Fatalf("admin in the reserved slot: %v", err)
	}
	admin.Close(ctx)
}

// TestSocketLimit: sockets are bounded to twice MaxConnections, counting
// those not yet authenticated; the one beyond is answered FATAL 53300 at
// once, and the server goes on when sockets close.
func TestSocketLimit(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxConnections = 1 })
	first, second := h.dial(t), h.dial(t)
	// Make sure both are being served before the third arrives.
	startSCRAM(t, first)
	startSCRAM(t, second)
	if code := readServerError(t, h.dial(t)); code != "53300" {
		t.Fatalf("socket beyond the limit: got %q, want FATAL 53300", code)
	}
	first.Close()
	second.Close()
	deadline := time.Now().Add(time.Minute)
	for {
		c, err := pgx.Connect(context.Background(), h.connString(testUser, testPassword))
		if err == nil {
			c.Close(context.Background())
			break
		}
		if pgCode(err) != "53300" || time.Now().After(deadline) {
			t.Fatalf("connection after the sockets closed: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestAuthFailureDelay: a failed authentication is answered only after
// AuthFailureDelay (a lower bound, which no scheduling can make flaky).
func TestAuthFailureDelay(t *testing.T) {
	const delay = 300 * time.Millisecond
	h := newHarness(t, func(c *Config) { c.AuthFailureDelay = delay })
	start := time.Now()
	_, err := pgx.Connect(context.Background(), h.connString(testUser, "wrong"))
	if pgCode(err) != "28P01" {
		t.Fatalf("wrong password: %v, want 28P01", err)
	}
	if elapsed := time.Since(start); elapsed < delay {
		t.Fatalf("failure answered after %v, before the %v delay", elapsed, delay)
	}
	h.connect(t) // a good password is not delayed into failure
}

// TestDisconnectWithPipelinedInput: a client that pipelined more than the
// read-ahead buffer after a long statement and then went away is noticed
// while the statement runs (its FIN sits behind data the server has not
// read), and the statement's context is cancelled as lost. (The data must
// fit the server's socket receive buffer: a FIN behind data still in the
// client's send queue is not sent before the server reads.)
func TestDisconnectWithPipelinedInput(t *testing.T) {
	if !hangupsWatched {
		t.Skip("hangups are not watched on this platform")
	}
	h := newHarness(t)
	r := h.raw(t)
	r.send(&pgproto3.Query{String: "SLEEP"})
	<-h.db.sleeping
	var more []byte
	for len(more) < inputAhead+inputChunk/2 {
		more, _ = (&pgproto3.Query{String: strings.Repeat("SELECT 1;", 100)}).Encode(more)
	}
	if _, err := r.conn.Write(more); err != nil {
		t.Fatal(err)
	}
	r.conn.Close()
	if cause := <-h.db.slept; !errors.Is(cause, errConnLost) {
		t.Fatalf("SLEEP ended with %v, want the lost connection", cause)
	}
}

// TestCopyRowLimit: a COPY FROM row beyond the row limit fails with 54000
// in every format (a text line longer than the read buffer, a CSV record
// spanning lines, a binary tuple), without reading the rest of the row;
// rows within the limit decode.
func TestCopyRowLimit(t *testing.T) {
	const limit = 1 << 20
	big := strings.Repeat("x", 3*limit)
	var bin bytes.Buffer
	bin.Write(binaryCopySignature)
	bin.Write(make([]byte, 8))
	for _, n := range []int{10, limit/2 + 1, 10} { // the second tuple is over
		binary.Write(&bin, binary.BigEndian, int16(2))
		binary.Write(&bin, binary.BigEndian, int32(n))
		bin.WriteString(big[:n])
		binary.Write(&bin, binary.BigEndian, int32(n))
		bin.WriteString(big[:n])
	}
	for name, tc := range map[string]struct {
		f    CopyFormat
		data string
		ok   int // rows before the long one
	}{
		"text":    {CopyFormat{Kind: CopyText}.WithDefaults(false), "1\ta\n2\t" + big + "\n3\tc\n", 1},
		"csv":     {CopyFormat{Kind: CopyCSV}.WithDefaults(false), "1,a\n2,\"" + strings.Repeat(big[:1000]+"\n", 3*limit/1000) + "\"\n", 1},
		"binary":  {CopyFormat{Kind: CopyBinary}, bin.String(), 1},
		"newline": {CopyFormat{Kind: CopyText}.WithDefaults(false), "1\t" + big[:limit-100] + "\n", 1},
	} {
		r := newCopyRowReader(strings.NewReader(tc.data), tc.f)
		r.maxRow = limit
		var rows int
		var err error
		for {
			if _, err = r.ReadRow(); err != nil {
				break
			}
			rows++
		}
		if name == "newline" {
			if err != io.EOF || rows != 1 {
				t.Errorf("%s: a row within the limit: %d rows, %v", name, rows, err)
			}
			continue
		}
		if sqlerr.Code(err) != sqlerr.ProgramLimitExceeded || rows != tc.ok {
			t.Errorf("%s: %d rows, then %v; want %d rows, then 54000", name, rows, err, tc.ok)
		}
	}
}

// TestResultRowLimit: a result row whose encoding exceeds MaxRowSize fails
// the statement with 54000; the connection goes on.
func TestResultRowLimit(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxRowSize = 1000 })
	r := h.raw(t)
	expectMsgs(t, r.query("BIGROW 900"), "RowDescription s:0", "DataRow "+strings.Repeat("x", 900), "CommandComplete SELECT 1", "ReadyForQuery I")
	expectMsgs(t, r.query("BIGROW 2000"), "RowDescription s:0", "ErrorResponse ERROR 54000", "ReadyForQuery I")
	expectMsgs(t, r.query("SELECT 1"), "RowDescription ?column?:0", "DataRow 1", "CommandComplete SELECT 1", "ReadyForQuery I")
}
