package pgwire

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// connectTraced connects with pgx and returns the trace of the protocol
// messages of the connection (names of messages, one per line).
func connectTraced(t *testing.T, connString string) (*pgx.Conn, *bytes.Buffer, error) {
	t.Helper()
	cfg, err := pgx.ParseConfig(connString)
	if err != nil {
		t.Fatal(err)
	}
	var trace bytes.Buffer
	cfg.BuildFrontend = func(r io.Reader, w io.Writer) *pgproto3.Frontend {
		fe := pgproto3.NewFrontend(r, w)
		fe.Trace(&trace, pgproto3.TracerOptions{SuppressTimestamps: true})
		return fe
	}
	c, err := pgx.ConnectConfig(context.Background(), cfg)
	if err == nil {
		t.Cleanup(func() { c.Close(context.Background()) })
	}
	return c, &trace, err
}

// TestCleartextOverTLS covers PasswordAuthCleartextTLS: TLS connections are
// asked for the password in cleartext and checked against the SCRAM
// verifier; connections without TLS still get SCRAM; failures are FATAL
// 28P01 exactly as with SCRAM.
func TestCleartextOverTLS(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.TLSConfig = selfSignedTLS(t)
		c.PasswordAuth = PasswordAuthCleartextTLS
	})
	url := func(user, password, sslmode string) string {
		return "postgres://" + user + ":" + password + "@" + h.addr + "/db?sslmode=" + sslmode
	}

	conn, trace, err := connectTraced(t, url(testUser, testPassword, "require"))
	if err != nil {
		t.Fatalf("connect over TLS: %v", err)
	}
	if _, ok := conn.PgConn().Conn().(*tls.Conn); !ok {
		t.Errorf("connection is %T, not TLS", conn.PgConn().Conn())
	}
	if tr := trace.String(); !strings.Contains(tr, "AuthenticationCleartextPassword") || strings.Contains(tr, "AuthenticationSASL") {
		t.Errorf("TLS connection did not authenticate with a cleartext password:\n%s", tr)
	}
	var n int32
	if err := conn.QueryRow(context.Background(), "SELECT 1").Scan(&n); err != nil || n != 1 {
		t.Errorf("SELECT 1 = %d, %v", n, err)
	}

	// Without TLS the same server asks for SCRAM, never for a cleartext password.
	_, trace, err = connectTraced(t, url(testUser, testPassword, "disable"))
	if err != nil {
		t.Fatalf("connect without TLS: %v", err)
	}
	if tr := trace.String(); !strings.Contains(tr, "AuthenticationSASL") || strings.Contains(tr, "AuthenticationCleartextPassword") {
		t.Errorf("connection without TLS did not use SCRAM:\n%s", tr)
	}

	for _, c := range []struct{ user, password string }{
		{testUser, "wrong"},
		{testUser, ""},
		{"bob", testPassword},     // unknown role
		{"nologin", testPassword}, // unusable verifier
	} {
		_, _, err := connectTraced(t, url(c.user, c.password, "require"))
		var pe *pgconn.PgError
		want := `password authentication failed for user "` + c.user + `"`
		if !errors.As(err, &pe) || pe.Code != "28P01" || pe.Message != want || pe.Severity != "FATAL" {
			t.Errorf("connect %s/%q over TLS: %v, want FATAL 28P01 %q", c.user, c.password, err, want)
		}
	}

	// The default stays SCRAM, on TLS connections too.
	scram := newHarness(t, func(c *Config) { c.TLSConfig = selfSignedTLS(t) })
	_, trace, err = connectTraced(t, "postgres://alice:secret@"+scram.addr+"/db?sslmode=require")
	if err != nil {
		t.Fatalf("connect over TLS, default auth: %v", err)
	}
	if tr := trace.String(); !strings.Contains(tr, "AuthenticationSASL") || strings.Contains(tr, "AuthenticationCleartextPassword") {
		t.Errorf("default auth over TLS did not use SCRAM:\n%s", tr)
	}
}

func TestMatchesPassword(t *testing.T) {
	for _, pw := range []string{"secret", "pässwörd", "I\u00ADX"} { // U+00AD is mapped to nothing by SASLprep
		s, err := NewSCRAMVerifier(pw)
		if err != nil {
			t.Fatal(err)
		}
		v, err := parseSCRAMVerifier(s)
		if err != nil {
			t.Fatal(err)
		}
		if !v.matchesPassword(pw) {
			t.Errorf("%q does not match its own verifier", pw)
		}
		if v.matchesPassword(pw+"x") || v.matchesPassword("") {
			t.Errorf("verifier of %q matches another password", pw)
		}
	}
	// The verifier of RFC 7677's example, whose exchange TestSCRAMRFC7677Vector checks.
	if !rfcServer(t).verifier.matchesPassword(rfc7677.password) {
		t.Error("RFC 7677 verifier does not match its password")
	}
	if mockSCRAMVerifier(make([]byte, 32), testUser).matchesPassword("") {
		t.Error("the mock verifier matched a password")
	}
}

func TestParsePasswordAuth(t *testing.T) {
	for in, want := range map[string]PasswordAuth{"scram": PasswordAuthSCRAM, "": PasswordAuthSCRAM,
		"cleartext-tls": PasswordAuthCleartextTLS, "Cleartext-TLS": PasswordAuthCleartextTLS} {
		got, err := ParsePasswordAuth(in)
		if err != nil || got != want {
			t.Errorf("ParsePasswordAuth(%q) = %v, %v; want %v", in, got, err, want)
		}
		if back, err := ParsePasswordAuth(got.String()); err != nil || back != got {
			t.Errorf("%v does not round-trip through String: %v, %v", got, back, err)
		}
	}
	if _, err := ParsePasswordAuth("md5"); err == nil {
		t.Error("ParsePasswordAuth(md5) succeeded")
	}
}
