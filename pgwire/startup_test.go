package pgwire

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"io"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
)

// readByte reads one byte from c.
func readByte(t *testing.T, c net.Conn) byte {
	t.Helper()
	var b [1]byte
	if _, err := io.ReadFull(c, b[:]); err != nil {
		t.Fatal(err)
	}
	return b[0]
}

// requestPacket encodes an SSLRequest or GSSEncRequest.
func requestPacket(code uint32) []byte {
	return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 8), code)
}

func TestStartupNegotiation(t *testing.T) {
	h := newHarness(t)
	c := h.dial(t)
	fe := pgproto3.NewFrontend(c, c)
	// GSSEncRequest and SSLRequest are both declined, then startup goes on in
	// the clear.
	c.Write(requestPacket(gssEncRequestCode))
	if b := readByte(t, c); b != 'N' {
		t.Fatalf("GSSEncRequest answered %q", b)
	}
	c.Write(requestPacket(sslRequestCode))
	if b := readByte(t, c); b != 'N' {
		t.Fatalf("SSLRequest answered %q", b)
	}
	// Protocol 3.2 with an extension option is negotiated down to 3.0.
	c.Write(startupPacket(3<<16|2, "user", testUser, "_pq_.frob", "1"))
	m, err := fe.Receive()
	if err != nil {
		t.Fatal(err)
	}
	npv, ok := m.(*pgproto3.NegotiateProtocolVersion)
	if !ok || npv.NewestMinorProtocol != 0 || len(npv.UnrecognizedOptions) != 1 || npv.UnrecognizedOptions[0] != "_pq_.frob" {
		t.Fatalf("got %#v, want NegotiateProtocolVersion", m)
	}
	m, err = fe.Receive()
	if err != nil {
		t.Fatal(err)
	}
	if sasl, ok := m.(*pgproto3.AuthenticationSASL); !ok || len(sasl.AuthMechanisms) != 1 || sasl.AuthMechanisms[0] != "SCRAM-SHA-256" {
		t.Fatalf("got %#v, want AuthenticationSASL [SCRAM-SHA-256]", m)
	}
}

func TestStartupRejections(t *testing.T) {
	h := newHarness(t)
	cases := []struct {
		name   string
		packet []byte
		code   string
	}{
		{"protocol 2", startupPacket(2<<16, "user", testUser), "0A000"},
		{"protocol 4", startupPacket(4<<16, "user", testUser), "0A000"},
		{"no user", startupPacket(3<<16, "database", "db"), "28000"},
		{"bad layout", append(binary.BigEndian.AppendUint32(nil, 13), 0, 3, 0, 0, 'u', 's', 'e', 'r', 0), "08P01"},
		{"too short", []byte{0, 0, 0, 5, 1}, "08P01"},
		{"too long", binary.BigEndian.AppendUint32(nil, 1<<20), "08P01"},
	}
	for _, tc := range cases {
		c := h.dial(t)
		c.Write(tc.packet)
		r := &rawClient{t: t, conn: c, fe: pgproto3.NewFrontend(c, c)}
		got := r.expectClosed()
		want := "ErrorResponse FATAL " + tc.code
		if len(got) != 1 || got[0] != want {
			t.Errorf("%s: got %q, want %q", tc.name, got, want)
		}
	}
	h.connect(t)
}

func TestSCRAMOverTheWireRejectsChannelBinding(t *testing.T) {
	h := newHarness(t)
	c := h.dial(t)
	fe := pgproto3.NewFrontend(c, c)
	c.Write(startupPacket(3<<16, "user", testUser))
	if m, err := fe.Receive(); err != nil {
		t.Fatal(err)
	} else if _, ok := m.(*pgproto3.AuthenticationSASL); !ok {
		t.Fatalf("got %T", m)
	}
	fe.Send(&pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256", Data: []byte("p=tls-server-end-point,,n=,r=abc")})
	fe.Flush()
	r := &rawClient{t: t, conn: c, fe: fe}
	expectMsgs(t, r.expectClosed(), "ErrorResponse FATAL 08P01")
}

// selfSignedTLS returns a server TLS config with a fresh self-signed certificate.
func selfSignedTLS(t *testing.T) *tls.Config {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "localhost"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
}

func TestTLS(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.TLSConfig = selfSignedTLS(t) })
	conn, err := pgx.Connect(context.Background(), "postgres://alice:secret@"+h.addr+"/db?sslmode=require")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, ok := conn.PgConn().Conn().(*tls.Conn); !ok {
		t.Fatalf("connection is %T, not TLS", conn.PgConn().Conn())
	}
	var n int32
	if err := conn.QueryRow(context.Background(), "SELECT 1").Scan(&n); err != nil || n != 1 {
		t.Fatalf("SELECT 1 over TLS: %d %v", n, err)
	}
	// Without TLS configured, sslmode=require fails.
	plain := newHarness(t)
	if _, err := pgx.Connect(context.Background(), "postgres://alice:secret@"+plain.addr+"/db?sslmode=require"); err == nil {
		t.Fatal("sslmode=require succeeded against a server without TLS")
	}
}
