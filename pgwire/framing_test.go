package pgwire

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

func encodeAll(t *testing.T, msgs ...pgproto3.FrontendMessage) []byte {
	t.Helper()
	var b []byte
	for _, m := range msgs {
		var err error
		if b, err = m.Encode(b); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// TestMsgReaderSkipsOversized: an oversized message is skipped whole, so
// the next message decodes; the limit is on the body.
func TestMsgReaderSkipsOversized(t *testing.T) {
	in := encodeAll(t, &pgproto3.Query{String: strings.Repeat("x", 99)}, &pgproto3.Query{String: strings.Repeat("x", 100)},
		&pgproto3.Sync{})
	m := msgReader{r: bytes.NewReader(in), limit: 100, skipOversized: true}
	if msg, err := m.receive(); err != nil || len(msg.(*pgproto3.Query).String) != 99 {
		t.Fatalf("message at the limit: %v %v", msg, err)
	}
	_, err := m.receive()
	tooBig, ok := skippedOversized(err)
	if !ok || tooBig.size != 101 || tooBig.typ != 'Q' || tooBig.sqlError().Code != "54000" {
		t.Fatalf("message over the limit: %v", err)
	}
	if msg, err := m.receive(); err != nil || msg != &m.sync {
		t.Fatalf("message after the skipped one: %v %v", msg, err)
	}
}

// TestMsgReaderRefusesOversizedUnread: before authentication an oversized
// message is refused from its header, without reading the body.
func TestMsgReaderRefusesOversizedUnread(t *testing.T) {
	in := bytes.NewReader([]byte{'p', 0x7f, 0xff, 0xff, 0xff})
	m := msgReader{r: in, limit: maxAuthMessageLen, authType: pgproto3.AuthTypeSASL}
	_, err := m.receive()
	var fe *fatalError
	if !errors.As(err, &fe) || errorResponse(err, severityFatal).Code != "08P01" {
		t.Fatalf("got %v, want a fatal 08P01", err)
	}
	if _, ok := skippedOversized(err); ok {
		t.Fatal("the body was skipped before authentication")
	}
}

// TestMsgReaderLargeBodyNotPinned: a body above reusedBodyLen gets its own
// buffer, so the reader keeps only reusedBodyLen across messages.
func TestMsgReaderLargeBodyNotPinned(t *testing.T) {
	in := encodeAll(t, &pgproto3.Query{String: strings.Repeat("x", 4*reusedBodyLen)}, &pgproto3.Sync{})
	m := msgReader{r: bytes.NewReader(in), limit: 1 << 30, skipOversized: true}
	for range 2 {
		if _, err := m.receive(); err != nil {
			t.Fatal(err)
		}
	}
	if cap(m.buf) > reusedBodyLen {
		t.Fatalf("reused buffer grew to %d bytes", cap(m.buf))
	}
}

// TestMsgReaderTruncated: a stream ending inside a message is a lost
// connection, not a protocol error.
func TestMsgReaderTruncated(t *testing.T) {
	in := encodeAll(t, &pgproto3.Query{String: "SELECT 1"})
	m := msgReader{r: bytes.NewReader(in[:len(in)-2]), limit: 100}
	_, err := m.receive()
	if !errors.As(err, new(*connLostError)) {
		t.Fatalf("got %v, want a lost connection", err)
	}
}
