package pgwire

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// PasswordAuth is how a client proves its password to the server.
type PasswordAuth int

const (
	// PasswordAuthSCRAM asks every connection for SCRAM-SHA-256 (the default).
	PasswordAuthSCRAM PasswordAuth = iota
	// PasswordAuthCleartextTLS asks connections that negotiated TLS for the
	// password itself (AuthenticationCleartextPassword), checked against the
	// role's SCRAM verifier; connections without TLS still use SCRAM-SHA-256,
	// so a password never crosses the network in the clear.
	PasswordAuthCleartextTLS
)

// ParsePasswordAuth parses "scram" or "cleartext-tls" (as String renders them).
func ParsePasswordAuth(s string) (PasswordAuth, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "scram", "":
		return PasswordAuthSCRAM, nil
	case "cleartext-tls":
		return PasswordAuthCleartextTLS, nil
	}
	return 0, fmt.Errorf("pgwire: password authentication %q: want scram or cleartext-tls", s)
}

func (p PasswordAuth) String() string {
	switch p {
	case PasswordAuthSCRAM:
		return "scram"
	case PasswordAuthCleartextTLS:
		return "cleartext-tls"
	}
	return fmt.Sprintf("PasswordAuth(%d)", int(p))
}

// authFailedError is the one failure a client sees for a wrong password, an
// unknown role or a role without a usable SCRAM secret.
func authFailedError(user string) error {
	return sqlerr.New(sqlerr.InvalidPassword, "password authentication failed for user %q", user)
}

// authenticate checks user's password: with cleartext password
// authentication on a TLS connection when Config.PasswordAuth asks for it,
// with SCRAM-SHA-256 over SASL otherwise. On success the last authentication
// messages (AuthenticationOk, after AuthenticationSASLFinal for SCRAM) are
// buffered, not yet flushed. Every failure is fatal for the connection.
//
// An unknown role goes through the same exchange with a mock verifier and
// fails at the same point as a wrong password, so a client cannot tell which
// roles exist.
func (c *conn) authenticate(ctx context.Context, user string) (Credential, error) {
	verifier, mock, err := c.lookupVerifier(ctx, user)
	if err != nil {
		return Credential{}, fatal(err)
	}
	if c.tls && c.srv.cfg.PasswordAuth == PasswordAuthCleartextTLS {
		return c.authenticateCleartext(user, verifier, mock)
	}
	return c.authenticateSCRAM(user, verifier, mock)
}

// authenticateCleartext asks for the password (AuthenticationCleartextPassword)
// and checks it against verifier. Only called on TLS connections.
func (c *conn) authenticateCleartext(user string, verifier *scramVerifier, mock bool) (Credential, error) {
	if err := c.out.send(&pgproto3.AuthenticationCleartextPassword{}); err != nil {
		return Credential{}, err
	}
	if err := c.out.flush(); err != nil {
		return Credential{}, err
	}
	c.rd.authType = pgproto3.AuthTypeCleartextPassword
	msg, err := c.rd.receive()
	if err != nil {
		return Credential{}, c.receiveError(err)
	}
	pm, ok := msg.(*pgproto3.PasswordMessage)
	if !ok {
		return Credential{}, fatal(protocolViolation("expected password response, got message type %T", msg))
	}
	// The key derivation runs for an unknown role and an empty password too,
	// so neither answers faster than a wrong password.
	match := verifier.matchesPassword(pm.Password)
	if !match || mock || pm.Password == "" {
		reason := "wrong password"
		switch {
		case mock:
			reason = "role does not exist, cannot log in, or has no usable SCRAM secret"
		case pm.Password == "":
			reason = "empty password"
		}
		return Credential{}, c.authenticationFailed(user, "password", reason)
	}
	c.log.Debug("pgwire: authenticated", "method", "password")
	c.rd.authType = pgproto3.AuthTypeOk
	return Credential{Password: pm.Password}, c.out.send(&pgproto3.AuthenticationOk{})
}

// authenticateSCRAM runs the SCRAM-SHA-256 exchange against verifier.
func (c *conn) authenticateSCRAM(user string, verifier *scramVerifier, mock bool) (Credential, error) {
	scram := newSCRAMServer(verifier, mock)

	if err := c.out.send(&pgproto3.AuthenticationSASL{AuthMechanisms: []string{scramMechanism}}); err != nil {
		return Credential{}, err
	}
	if err := c.out.flush(); err != nil {
		return Credential{}, err
	}
	data, err := c.receiveSASL(pgproto3.AuthTypeSASL)
	if err != nil {
		return Credential{}, err
	}
	serverFirst, err := scram.clientFirst(data)
	if err != nil {
		return Credential{}, fatal(err)
	}
	if err := c.out.send(&pgproto3.AuthenticationSASLContinue{Data: serverFirst}); err != nil {
		return Credential{}, err
	}
	if err := c.out.flush(); err != nil {
		return Credential{}, err
	}
	data, err = c.receiveSASL(pgproto3.AuthTypeSASLContinue)
	if err != nil {
		return Credential{}, err
	}
	serverFinal, err := scram.clientFinal(data)
	if errors.Is(err, errSCRAMAuthFailed) {
		reason := "wrong password"
		if mock {
			reason = "role does not exist, cannot log in, or has no usable SCRAM secret"
		}
		return Credential{}, c.authenticationFailed(user, scramMechanism, reason)
	}
	if err != nil {
		return Credential{}, fatal(err)
	}
	c.log.Debug("pgwire: authenticated", "method", scramMechanism)
	if err := c.out.send(&pgproto3.AuthenticationSASLFinal{Data: serverFinal}); err != nil {
		return Credential{}, err
	}
	c.rd.authType = pgproto3.AuthTypeOk
	cred := Credential{SCRAMClientKey: scram.clientKey, SCRAMServerKey: verifier.serverKey}
	return cred, c.out.send(&pgproto3.AuthenticationOk{})
}

// authenticationFailed logs a failed authentication and returns its fatal
// error once Config.AuthFailureDelay has passed, as PostgreSQL's auth_delay
// does: a client guessing passwords gets one answer per delay and socket.
// The wait holds nothing but this connection (no session slot, no catalog
// connection); Shutdown cuts it short.
func (c *conn) authenticationFailed(user, method, reason string) error {
	c.log.Info("pgwire: password authentication failed", "method", method, "reason", reason)
	if d := c.srv.cfg.AuthFailureDelay; d > 0 {
		err := c.call(c.ctx, func(ctx context.Context) error {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		if err != nil && endsConnection(err) {
			return err
		}
	}
	return fatal(authFailedError(user))
}

// lookupVerifier asks the Authenticator for user's verifier. For a role that
// cannot log in it returns a mock verifier and mock=true.
func (c *conn) lookupVerifier(ctx context.Context, user string) (v *scramVerifier, mock bool, err error) {
	var stored string
	err = c.call(ctx, func(ctx context.Context) error {
		var err error
		stored, err = c.srv.cfg.Auth.SCRAMVerifier(ctx, user)
		return err
	})
	if errors.Is(err, ErrUnknownRole) {
		return mockSCRAMVerifier(c.srv.mockKey[:], user), true, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("pgwire: look up SCRAM verifier of %q: %w", user, err)
	}
	v, err = parseSCRAMVerifier(stored)
	if err != nil {
		c.log.Warn("pgwire: role has an unusable SCRAM verifier", "err", err)
		return mockSCRAMVerifier(c.srv.mockKey[:], user), true, nil
	}
	return v, false, nil
}

// receiveSASL reads the client's next SASL message (initial response when
// authType is AuthTypeSASL, a plain response otherwise) and returns its data.
func (c *conn) receiveSASL(authType uint32) ([]byte, error) {
	c.rd.authType = authType
	msg, err := c.rd.receive()
	if err != nil {
		return nil, c.receiveError(err)
	}
	switch m := msg.(type) {
	case *pgproto3.SASLInitialResponse:
		if authType != pgproto3.AuthTypeSASL {
			break
		}
		if m.AuthMechanism != scramMechanism {
			return nil, fatal(protocolViolation("client selected an invalid SASL authentication mechanism"))
		}
		return m.Data, nil
	case *pgproto3.SASLResponse:
		if authType == pgproto3.AuthTypeSASL {
			break
		}
		return m.Data, nil
	}
	return nil, fatal(protocolViolation("expected SASL response, got message type %T", msg))
}
