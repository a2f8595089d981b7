package pgwire

import (
	"crypto/pbkdf2"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
)

// The client side of a PostgreSQL login with SCRAM keys instead of a
// password (the catalog's user sessions, catalog/userconn.go).
//
// A user who logged in to pgwire with SCRAM-SHA-256 proved knowledge of
// ClientKey; the server never learns the password. To open a catalog session
// that PostgreSQL itself authenticates as that user, the server completes
// PostgreSQL's SCRAM exchange with the same keys (ClientProof = ClientKey XOR
// HMAC(H(ClientKey), AuthMessage); the server's signature is checked with
// ServerKey), as connection poolers do. pgx only knows passwords, so
// scramKeyConn sits under pgconn during authentication: pgconn runs the
// exchange with SCRAMKeyPlaceholderPassword, and scramKeyConn replaces its
// proof with the real one on the way out and PostgreSQL's verified signature
// with the one pgconn expects on the way in. After AuthenticationOk it is a
// plain pass-through. This file is the only place outside the server side of
// this package that reads or writes PostgreSQL protocol frames.

// SCRAMKeyPlaceholderPassword is the password pgconn must be configured with
// on a connection wrapped by SCRAMKeyConn: pgconn computes its throw-away
// proof with it; it never leaves the process.
const SCRAMKeyPlaceholderPassword = "lakesoul-scram-key-login"

// maxBackendAuthMessageLen bounds a backend message during a key login's
// authentication.
const maxBackendAuthMessageLen = 64 << 10

// errNeedsPassword is returned when the catalog asks a key login for a
// cleartext or MD5 password, which SCRAM keys cannot answer.
var errNeedsPassword = errors.New("the catalog PostgreSQL asks for a cleartext or MD5 password; " +
	"user logins need scram-sha-256 (or trust) in its pg_hba.conf")

// scramKeyConn is the network connection of a key login.
type scramKeyConn struct {
	net.Conn
	clientKey, serverKey []byte

	authDone bool
	err      error // sticky failure of the exchange

	// Frontend side.
	wbuf        []byte // bytes written by pgconn not yet forwarded (a partial message)
	startupSent bool
	// Backend side.
	rbuf []byte // bytes ready for pgconn

	clientFirstBare string
	serverFirst     string
	salt            []byte
	iterations      int
	// wantSignature is PostgreSQL's expected server signature; fakeSignature
	// is the one pgconn expects for the placeholder password.
	wantSignature, fakeSignature []byte
}

// SCRAMKeyConn wraps c, a fresh connection to PostgreSQL (before the
// startup message), so that a pgconn configured with
// SCRAMKeyPlaceholderPassword authenticates with the SCRAM keys clientKey and
// serverKey (Credential's) instead.
func SCRAMKeyConn(c net.Conn, clientKey, serverKey []byte) net.Conn {
	return &scramKeyConn{Conn: c, clientKey: clientKey, serverKey: serverKey}
}

// Write forwards pgconn's messages, rewriting the SCRAM client-final message.
func (c *scramKeyConn) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if c.authDone && len(c.wbuf) == 0 {
		return c.Conn.Write(p)
	}
	c.wbuf = append(c.wbuf, p...)
	for {
		msg, ok := c.nextFrontendMessage()
		if !ok {
			return len(p), nil
		}
		out, err := c.frontendMessage(msg)
		if err != nil {
			c.err = err
			return 0, err
		}
		if _, err := c.Conn.Write(out); err != nil {
			return 0, err
		}
	}
}

// nextFrontendMessage cuts one complete message off wbuf: the untyped
// startup message first, typed messages after it.
func (c *scramKeyConn) nextFrontendMessage() ([]byte, bool) {
	hdr := 5
	lenAt := 1
	if !c.startupSent {
		hdr, lenAt = 4, 0
	}
	if len(c.wbuf) < hdr {
		return nil, false
	}
	n := int(binary.BigEndian.Uint32(c.wbuf[lenAt:])) + lenAt
	if n < hdr || len(c.wbuf) < n {
		return nil, false
	}
	msg := c.wbuf[:n:n]
	c.wbuf = c.wbuf[n:]
	if len(c.wbuf) == 0 {
		c.wbuf = nil
	}
	c.startupSent = true
	return msg, true
}

// frontendMessage returns msg as it goes to PostgreSQL.
func (c *scramKeyConn) frontendMessage(msg []byte) ([]byte, error) {
	if c.authDone || msg[0] != 'p' || len(msg) < 5 {
		return msg, nil
	}
	body := msg[5:]
	if c.clientFirstBare == "" {
		// SASLInitialResponse: mechanism, int32 length, client-first-message.
		mech, rest, ok := strings.Cut(string(body), "\x00")
		if !ok || len(rest) < 4 || !strings.HasPrefix(mech, "SCRAM-SHA-256") {
			return nil, fmt.Errorf("catalog key login: unexpected SASL initial response")
		}
		first := rest[4:]
		// gs2-header is "<cbind-flag>,[authzid],"; the bare message follows.
		i := strings.IndexByte(first, ',')
		j := -1
		if i >= 0 {
			j = strings.IndexByte(first[i+1:], ',')
		}
		if j < 0 {
			return nil, fmt.Errorf("catalog key login: malformed client-first-message")
		}
		c.clientFirstBare = first[i+1+j+1:]
		return msg, nil
	}
	// SASLResponse: client-final-message with pgconn's placeholder proof.
	final := string(body)
	k := strings.LastIndex(final, ",p=")
	if k < 0 || c.serverFirst == "" {
		return nil, fmt.Errorf("catalog key login: malformed client-final-message")
	}
	withoutProof := final[:k]
	authMessage := []byte(c.clientFirstBare + "," + c.serverFirst + "," + withoutProof)
	storedKey := sha256.Sum256(c.clientKey)
	signature := hmacSHA256(storedKey[:], authMessage)
	proof := make([]byte, len(c.clientKey))
	for i := range proof {
		proof[i] = c.clientKey[i] ^ signature[i]
	}
	c.wantSignature = hmacSHA256(c.serverKey, authMessage)
	fakeSalted, err := pbkdf2.Key(sha256.New, SCRAMKeyPlaceholderPassword, c.salt, c.iterations, sha256.Size)
	if err != nil {
		return nil, fmt.Errorf("catalog key login: %w", err)
	}
	c.fakeSignature = hmacSHA256(hmacSHA256(fakeSalted, []byte("Server Key")), authMessage)

	newBody := withoutProof + ",p=" + base64.StdEncoding.EncodeToString(proof)
	out := make([]byte, 5, 5+len(newBody))
	out[0] = 'p'
	binary.BigEndian.PutUint32(out[1:], uint32(4+len(newBody)))
	return append(out, newBody...), nil
}

// Read hands pgconn PostgreSQL's messages, rewriting the SCRAM server-final
// message once its signature is verified.
func (c *scramKeyConn) Read(p []byte) (int, error) {
	if len(c.rbuf) > 0 {
		n := copy(p, c.rbuf)
		c.rbuf = c.rbuf[n:]
		return n, nil
	}
	if c.err != nil {
		return 0, c.err
	}
	if c.authDone {
		return c.Conn.Read(p)
	}
	msg, err := c.readBackendMessage()
	if err != nil {
		return 0, err
	}
	if msg, err = c.backendMessage(msg); err != nil {
		c.err = err
		return 0, err
	}
	n := copy(p, msg)
	c.rbuf = msg[n:]
	return n, nil
}

func (c *scramKeyConn) readBackendMessage() ([]byte, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(c.Conn, hdr[:]); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint32(hdr[1:]))
	if n < 4 || n > maxBackendAuthMessageLen {
		return nil, fmt.Errorf("catalog key login: backend message of %d bytes during authentication", n)
	}
	msg := make([]byte, 1+n)
	copy(msg, hdr[:])
	if _, err := io.ReadFull(c.Conn, msg[5:]); err != nil {
		return nil, err
	}
	return msg, nil
}

// Authentication request codes (AuthenticationXXX messages).
const (
	authOK                = 0
	authCleartextPassword = 3
	authMD5Password       = 5
	authSASLContinue      = 11
	authSASLFinal         = 12
)

// backendMessage returns msg as pgconn must see it.
func (c *scramKeyConn) backendMessage(msg []byte) ([]byte, error) {
	switch msg[0] {
	case 'E':
		c.authDone = true // pgconn reports the error
		return msg, nil
	case 'R':
	case 'v': // NegotiateProtocolVersion
		return msg, nil
	default:
		return nil, fmt.Errorf("catalog key login: unexpected message %q during authentication", msg[0])
	}
	if len(msg) < 9 {
		return nil, fmt.Errorf("catalog key login: short authentication message")
	}
	data := msg[9:]
	switch binary.BigEndian.Uint32(msg[5:9]) {
	case authOK:
		c.authDone = true
	case authCleartextPassword, authMD5Password:
		return nil, errNeedsPassword
	case authSASLContinue:
		if err := c.parseServerFirst(string(data)); err != nil {
			return nil, err
		}
	case authSASLFinal:
		sig, ok := strings.CutPrefix(string(data), "v=")
		got, err := base64.StdEncoding.DecodeString(sig)
		if !ok || err != nil || c.wantSignature == nil || subtle.ConstantTimeCompare(got, c.wantSignature) != 1 {
			return nil, errors.New("catalog key login: the catalog's SCRAM server signature does not match the user's verifier")
		}
		fake := "v=" + base64.StdEncoding.EncodeToString(c.fakeSignature)
		if len(fake) != len(data) {
			return nil, errors.New("catalog key login: unexpected server-final-message")
		}
		out := append([]byte(nil), msg...)
		copy(out[9:], fake)
		return out, nil
	}
	return msg, nil
}

// parseServerFirst records server-first-message ("r=…,s=salt,i=iterations").
func (c *scramKeyConn) parseServerFirst(m string) error {
	c.serverFirst = m
	for _, attr := range strings.Split(m, ",") {
		switch {
		case strings.HasPrefix(attr, "s="):
			salt, err := base64.StdEncoding.DecodeString(attr[2:])
			if err != nil {
				return fmt.Errorf("catalog key login: malformed salt")
			}
			c.salt = salt
		case strings.HasPrefix(attr, "i="):
			n, err := strconv.Atoi(attr[2:])
			if err != nil || n < 1 || n > 1<<24 {
				return fmt.Errorf("catalog key login: bad iteration count")
			}
			c.iterations = n
		}
	}
	if c.salt == nil || c.iterations == 0 {
		return fmt.Errorf("catalog key login: malformed server-first-message")
	}
	return nil
}
