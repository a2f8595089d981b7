package pgwire

import (
	"bytes"
	"crypto/pbkdf2"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"regexp"
	"testing"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// rfc7677 is the SCRAM-SHA-256 example exchange of RFC 7677, section 3.
var rfc7677 = struct {
	password, salt, clientFirst, serverNonce, serverFirst, clientFinal, serverFinal string
}{
	password:    "pencil",
	salt:        "W22ZaJ0SNY7soEsUEjb6gQ==",
	clientFirst: "n,,n=user,r=rOprNGfwEbeRWgbNEkqO",
	serverNonce: "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0",
	serverFirst: "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
	clientFinal: "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
	serverFinal: "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=",
}

func rfcServer(t *testing.T) *scramServer {
	t.Helper()
	salt, _ := base64.StdEncoding.DecodeString(rfc7677.salt)
	v, err := deriveSCRAMVerifier(rfc7677.password, salt, 4096)
	if err != nil {
		t.Fatal(err)
	}
	s := newSCRAMServer(v, false)
	s.newNonce = func() (string, error) { return rfc7677.serverNonce, nil }
	return s
}

func TestSCRAMRFC7677Vector(t *testing.T) {
	s := rfcServer(t)
	first, err := s.clientFirst([]byte(rfc7677.clientFirst))
	if err != nil || string(first) != rfc7677.serverFirst {
		t.Fatalf("server-first = %q, %v", first, err)
	}
	final, err := s.clientFinal([]byte(rfc7677.clientFinal))
	if err != nil || string(final) != rfc7677.serverFinal {
		t.Fatalf("server-final = %q, %v", final, err)
	}
	// The recovered ClientKey is the password's: HMAC(SaltedPassword, "Client Key").
	salt, _ := base64.StdEncoding.DecodeString(rfc7677.salt)
	salted, err := pbkdf2.Key(sha256.New, rfc7677.password, salt, 4096, scramKeyLen)
	if err != nil {
		t.Fatal(err)
	}
	if want := hmacSHA256(salted, []byte("Client Key")); !bytes.Equal(s.clientKey, want) {
		t.Fatalf("recovered ClientKey %x, want %x", s.clientKey, want)
	}
}

func TestSCRAMFailures(t *testing.T) {
	// A wrong proof, a mock verifier and tampered messages.
	s := rfcServer(t)
	s.clientFirst([]byte(rfc7677.clientFirst))
	badProof := rfc7677.clientFinal[:len(rfc7677.clientFinal)-6] + "AAAAA="
	if _, err := s.clientFinal([]byte(badProof)); !errors.Is(err, errSCRAMAuthFailed) {
		t.Errorf("wrong proof: %v", err)
	}
	s = rfcServer(t)
	s.mock = true
	s.clientFirst([]byte(rfc7677.clientFirst))
	if _, err := s.clientFinal([]byte(rfc7677.clientFinal)); !errors.Is(err, errSCRAMAuthFailed) {
		t.Errorf("mock verifier: %v", err)
	}
	for _, tc := range []struct{ first, final, code string }{
		{"p=tls-server-end-point,,n=,r=abc", "", "08P01"},
		{"x,,n=,r=abc", "", "08P01"},
		{"n,a=bob,n=,r=abc", "", "0A000"},
		{"n,,m=ext,n=,r=abc", "", "0A000"},
		{"n,,n=,r=", "", "08P01"},
		{"n,,n=user", "", "08P01"},
		{rfc7677.clientFirst, "c=eSws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=", "08P01"}, // cbind mismatch
		{rfc7677.clientFirst, "c=biws,r=rOprNGfwEbeRWgbNEkqOX,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=", "08P01"},                              // nonce mismatch
		{rfc7677.clientFirst, "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0", "08P01"},                                                // no proof
		{rfc7677.clientFirst, "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=AAAA", "08P01"},                                         // short proof
	} {
		s := rfcServer(t)
		_, err := s.clientFirst([]byte(tc.first))
		if err == nil {
			_, err = s.clientFinal([]byte(tc.final))
		}
		if got := sqlerr.Code(err); got != tc.code {
			t.Errorf("%q / %q: %v (%s), want %s", tc.first, tc.final, err, got, tc.code)
		}
	}
}

func TestNewSCRAMVerifier(t *testing.T) {
	v, err := NewSCRAMVerifier("pencil")
	if err != nil {
		t.Fatal(err)
	}
	// PostgreSQL's pg_authid format: 16-byte salt and 32-byte keys in padded base64.
	re := regexp.MustCompile(`^SCRAM-SHA-256\$4096:[A-Za-z0-9+/]{22}==\$[A-Za-z0-9+/]{43}=:[A-Za-z0-9+/]{43}=$`)
	if !re.MatchString(v) {
		t.Fatalf("verifier %q is not in pg_authid format", v)
	}
	parsed, err := parseSCRAMVerifier(v)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := deriveSCRAMVerifier("pencil", parsed.salt, 4096)
	if again.String() != v {
		t.Errorf("re-derived %q != %q", again, v)
	}
	w, _ := NewSCRAMVerifier("pencil")
	if w == v {
		t.Error("two verifiers share a salt")
	}
	// A verifier made by PostgreSQL parses (SELECT rolpassword after
	// CREATE ROLE … PASSWORD 'pencil' with the RFC's salt has this shape).
	salt, _ := base64.StdEncoding.DecodeString(rfc7677.salt)
	rfc, _ := deriveSCRAMVerifier("pencil", salt, 4096)
	if _, err := parseSCRAMVerifier(rfc.String()); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"md5abc", "SCRAM-SHA-256$x:AA==$AA==:AA==", "SCRAM-SHA-256$4096:AA==$AA==:AA==", "SCRAM-SHA-256$4096:AA=="} {
		if _, err := parseSCRAMVerifier(bad); err == nil {
			t.Errorf("parsed %q", bad)
		}
	}
}

func TestSASLprep(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"pencil", "pencil"},
		{"a\x01b", "a\x01b"},               // ASCII is used as is, even control characters
		{"I\u00ADX", "IX"},                 // soft hyphen is mapped to nothing
		{"a\u00A0b", "a b"},                // non-ASCII space becomes a space
		{"\u2168", "IX"},                   // NFKC: ROMAN NUMERAL NINE
		{"\uFB01x", "fix"},                 // NFKC: ligature
		{"a\u0007\u00e9", "a\u0007\u00e9"}, // prohibited output: unchanged
		{"\u0627\u0031", "\u0627\u0031"},   // bidi rule broken: unchanged
	} {
		if got := saslPrep(c.in); got != c.want {
			t.Errorf("saslPrep(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestPasswordCredential: a cleartext password checked against a stored
// verifier yields the SCRAM keys of that verifier (H(ClientKey) is its
// StoredKey, the ServerKey its own), so a catalog login with them
// succeeds; a wrong, empty or SASLprep-different password and a malformed
// verifier yield nothing.
func TestPasswordCredential(t *testing.T) {
	stored, err := NewSCRAMVerifier("pässword\u00A0x")
	if err != nil {
		t.Fatal(err)
	}
	v, err := parseSCRAMVerifier(stored)
	if err != nil {
		t.Fatal(err)
	}
	cred, ok := PasswordCredential(stored, "pässword x") // SASLprep maps U+00A0 to a space
	if !ok {
		t.Fatal("right password refused")
	}
	if h := sha256.Sum256(cred.SCRAMClientKey); !bytes.Equal(h[:], v.storedKey) || !bytes.Equal(cred.SCRAMServerKey, v.serverKey) {
		t.Error("keys do not match the verifier")
	}
	for _, pw := range []string{"password x", "", "pässword  x"} {
		if _, ok := PasswordCredential(stored, pw); ok {
			t.Errorf("password %q accepted", pw)
		}
	}
	if _, ok := PasswordCredential("md5abc", "pässword x"); ok {
		t.Error("malformed verifier accepted")
	}
	if _, ok := PasswordCredential(MockSCRAMVerifier(), ""); ok {
		t.Error("mock verifier accepted a password")
	}
}
