package pgwire

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

const (
	testUser     = "alice"
	testPassword = "secret"
)

// harness is a Server on a loopback port backed by the test SQL double.
type harness struct {
	srv     *Server
	addr    string
	db      *testDB
	logs    *logCapture
	served  chan error // Serve's result
	stopped bool
}

// newHarness starts a server; cfg functions may adjust its Config. The server
// is shut down when the test ends.
func newHarness(t testing.TB, cfg ...func(*Config)) *harness {
	t.Helper()
	db := newTestDB()
	v, err := NewSCRAMVerifier(testPassword)
	if err != nil {
		t.Fatal(err)
	}
	db.verifiers[testUser] = v
	db.verifiers["nologin"] = "md5abcdef" // not a SCRAM verifier
	logs := &logCapture{}
	c := Config{Auth: db, Sessions: db, Logger: slog.New(logs)}
	for _, f := range cfg {
		f(&c)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{srv: NewServer(c), addr: ln.Addr().String(), db: db, logs: logs, served: make(chan error, 1)}
	go func() { h.served <- h.srv.Serve(ln) }()
	t.Cleanup(func() {
		if !h.stopped {
			h.shutdown(t)
		}
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	return h
}

// shutdown stops the server and checks that Serve returned ErrServerClosed
// and that every session was closed.
func (h *harness) shutdown(t testing.TB) {
	t.Helper()
	h.stopped = true
	if err := h.srv.Shutdown(context.Background()); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if err := <-h.served; !errors.Is(err, ErrServerClosed) {
		t.Errorf("Serve returned %v, want ErrServerClosed", err)
	}
	if n := h.db.sessions.Load(); n != 0 {
		t.Errorf("%d sessions left open", n)
	}
}

func (h *harness) connString(user, password string) string {
	return fmt.Sprintf("postgres://%s:%s@%s/db?sslmode=disable", user, password, h.addr)
}

// connect opens a pgx connection as the test user.
func (h *harness) connect(t testing.TB) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), h.connString(testUser, testPassword))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// rawClient is an authenticated connection driven message by message.
type rawClient struct {
	t      testing.TB
	conn   net.Conn
	fe     *pgproto3.Frontend
	pid    uint32
	secret []byte
}

// raw authenticates with pgconn and takes the connection over.
func (h *harness) raw(t testing.TB) *rawClient {
	t.Helper()
	pc, err := pgconn.Connect(context.Background(), h.connString(testUser, testPassword))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	hc, err := pc.Hijack()
	if err != nil {
		t.Fatalf("hijack: %v", err)
	}
	t.Cleanup(func() { hc.Conn.Close() })
	return &rawClient{t: t, conn: hc.Conn, fe: hc.Frontend, pid: hc.PID, secret: hc.SecretKey}
}

// send sends msgs and flushes.
func (r *rawClient) send(msgs ...pgproto3.FrontendMessage) {
	r.t.Helper()
	for _, m := range msgs {
		r.fe.Send(m)
	}
	if err := r.fe.Flush(); err != nil {
		r.t.Fatalf("send: %v", err)
	}
}

// sendBytes writes raw bytes.
func (r *rawClient) sendBytes(b []byte) {
	r.t.Helper()
	if _, err := r.conn.Write(b); err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

// recv reads one message and summarises it (see summary).
func (r *rawClient) recv() string {
	r.t.Helper()
	m, err := r.fe.Receive()
	if err != nil {
		r.t.Fatalf("receive: %v", err)
	}
	return summary(m)
}

// until reads messages up to and including the first whose summary starts
// with last, and returns their summaries.
func (r *rawClient) until(last string) []string {
	r.t.Helper()
	var out []string
	for {
		s := r.recv()
		out = append(out, s)
		if strings.HasPrefix(s, last) {
			return out
		}
	}
}

// expectClosed reads until the server closes the connection and returns the
// summaries of what came before.
func (r *rawClient) expectClosed() []string {
	r.t.Helper()
	var out []string
	for {
		m, err := r.fe.Receive()
		if err != nil {
			var ne net.Error
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.As(err, &ne) {
				r.t.Fatalf("receive: %v", err)
			}
			return out
		}
		out = append(out, summary(m))
	}
}

// summary renders a backend message compactly for assertions, e.g.
// "DataRow 1", "CommandComplete SELECT 1", "ErrorResponse ERROR 42P01",
// "RowDescription n:0", "ReadyForQuery I".
func summary(m pgproto3.BackendMessage) string {
	switch m := m.(type) {
	case *pgproto3.DataRow:
		vals := make([]string, len(m.Values))
		for i, v := range m.Values {
			if v == nil {
				vals[i] = "NULL"
			} else {
				vals[i] = string(v)
			}
		}
		return "DataRow " + strings.Join(vals, "|")
	case *pgproto3.RowDescription:
		fields := make([]string, len(m.Fields))
		for i, f := range m.Fields {
			fields[i] = fmt.Sprintf("%s:%d", f.Name, f.Format)
		}
		return "RowDescription " + strings.Join(fields, ",")
	case *pgproto3.CommandComplete:
		return "CommandComplete " + string(m.CommandTag)
	case *pgproto3.ErrorResponse:
		return fmt.Sprintf("ErrorResponse %s %s", m.Severity, m.Code)
	case *pgproto3.ReadyForQuery:
		return "ReadyForQuery " + string(m.TxStatus)
	case *pgproto3.ParameterDescription:
		oids := make([]string, len(m.ParameterOIDs))
		for i, o := range m.ParameterOIDs {
			oids[i] = fmt.Sprint(o)
		}
		return "ParameterDescription " + strings.Join(oids, ",")
	case *pgproto3.ParameterStatus:
		return fmt.Sprintf("ParameterStatus %s=%s", m.Name, m.Value)
	}
	return strings.TrimPrefix(fmt.Sprintf("%T", m), "*pgproto3.")
}

// query runs a simple query and returns the summaries up to ReadyForQuery.
func (r *rawClient) query(sql string) []string {
	r.t.Helper()
	r.send(&pgproto3.Query{String: sql})
	return r.until("ReadyForQuery")
}

// startupPacket encodes a StartupMessage-shaped packet with any version.
func startupPacket(version uint32, params ...string) []byte {
	var body []byte
	body = binary.BigEndian.AppendUint32(body, version)
	for _, p := range params {
		body = append(body, p...)
		body = append(body, 0)
	}
	body = append(body, 0)
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body)+4)), body...)
}

// dial opens a plain TCP connection to the server.
func (h *harness) dial(t testing.TB) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", h.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// logCapture is a slog.Handler that keeps the log text and counts records
// at level Error (the server logs panics there).
type logCapture struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	errors int
}

func (l *logCapture) Enabled(context.Context, slog.Level) bool { return true }

func (l *logCapture) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r.Level >= slog.LevelError {
		l.errors++
	}
	fmt.Fprintf(&l.buf, "%s %s", r.Level, r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&l.buf, " %s", a)
		return true
	})
	l.buf.WriteByte('\n')
	return nil
}

func (l *logCapture) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &logView{root: l, attrs: attrs}
}

func (l *logCapture) WithGroup(string) slog.Handler { return l }

func (l *logCapture) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logCapture) errorCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.errors
}

// logView is a logCapture with attributes attached.
type logView struct {
	root  *logCapture
	attrs []slog.Attr
}

func (v *logView) Enabled(context.Context, slog.Level) bool { return true }

func (v *logView) Handle(ctx context.Context, r slog.Record) error {
	r = r.Clone()
	r.AddAttrs(v.attrs...)
	return v.root.Handle(ctx, r)
}

func (v *logView) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &logView{root: v.root, attrs: append(append([]slog.Attr(nil), v.attrs...), attrs...)}
}

func (v *logView) WithGroup(string) slog.Handler { return v }
