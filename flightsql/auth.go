package flightsql

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/lakesoul-go/lakesoul/pgwire"
)

// Authentication. A call carries "authorization: Basic <user:password>"
// (the database/sql driver sends it on every call) or "Bearer <token>", a
// token the Handshake returned for a Basic login. Passwords are checked
// against the role's SCRAM verifier in the catalog, as pgwire's logins are,
// and yield the same SCRAM keys (pgwire.PasswordCredential), with which the
// caller's engine session logs in to the catalog as that role. Every call
// then runs on its client's engine session (clients.go), so it can do
// exactly what the role could do over pgwire. Basic credentials make one
// client per gRPC connection (conns.go), a handshake one per token; either
// ends with the last connection it was used on.

type clientKey struct{}

// clientFrom is the authenticated client of a call.
func clientFrom(ctx context.Context) *client {
	c, _ := ctx.Value(clientKey{}).(*client)
	return c
}

func (s *Server) unaryAuth(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	c, _, err := s.authenticate(ctx, false)
	if err != nil {
		return nil, err
	}
	defer s.clients.leave(c)
	return handler(context.WithValue(ctx, clientKey{}, c), req)
}

func (s *Server) streamAuth(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	handshake := strings.HasSuffix(info.FullMethod, "/Handshake")
	c, token, err := s.authenticate(ss.Context(), handshake)
	if err != nil {
		return err
	}
	defer s.clients.leave(c)
	if handshake {
		if err := ss.SetHeader(metadata.Pairs("authorization", "Bearer "+token)); err != nil {
			return err
		}
	}
	return handler(srv, &authedStream{ServerStream: ss, ctx: context.WithValue(ss.Context(), clientKey{}, c)})
}

type authedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (a *authedStream) Context() context.Context { return a.ctx }

// authenticate finds or makes the client of a call, with the call counted
// on it (the caller calls clients.leave when it ends). A Handshake with
// Basic credentials makes a new client under a new bearer token (returned),
// bound to the handshake's connection and to every connection the token
// is presented on.
func (s *Server) authenticate(ctx context.Context, handshake bool) (*client, string, error) {
	var header string
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		if v := md.Get("authorization"); len(v) > 0 {
			header = v[0]
		}
	}
	scheme, cred, _ := strings.Cut(header, " ")
	cred = strings.TrimLeft(cred, " ")
	switch {
	case strings.EqualFold(scheme, "Bearer") && cred != "" && !handshake:
		if c := s.clients.enter("bearer\x00"+cred, connID(ctx)); c != nil {
			return c, "", nil
		}
		return nil, "", status.Error(codes.Unauthenticated, "invalid or expired bearer token")
	case strings.EqualFold(scheme, "Basic") && cred != "":
		raw, err := base64.StdEncoding.DecodeString(cred)
		if err != nil {
			if raw, err = base64.RawStdEncoding.DecodeString(cred); err != nil {
				return nil, "", status.Error(codes.Unauthenticated, "malformed basic credentials")
			}
		}
		user, password, ok := strings.Cut(string(raw), ":")
		if !ok || user == "" {
			return nil, "", status.Error(codes.Unauthenticated, "malformed basic credentials")
		}
		sum := sha256.Sum256([]byte(user + "\x00" + password))
		conn := connID(ctx)
		key := fmt.Sprintf("basic\x00%x\x00%d", sum, conn)
		if !handshake {
			if c := s.clients.enter(key, conn); c != nil {
				return c, "", nil
			}
		}
		pc, err := s.checkPassword(ctx, user, password)
		if err != nil {
			return nil, "", err
		}
		var token string
		if handshake {
			var b [32]byte
			if _, err := rand.Read(b[:]); err != nil {
				return nil, "", err
			}
			token = base64.RawURLEncoding.EncodeToString(b[:])
			key = "bearer\x00" + token
		}
		c, err := s.clients.open(ctx, key, conn, user, pc)
		if err != nil {
			return nil, "", flightError(err)
		}
		return c, token, nil
	}
	return nil, "", status.Error(codes.Unauthenticated, "authentication required: Basic credentials or a bearer token from the handshake")
}

// checkPassword checks user's password against the role's SCRAM verifier.
// An unknown role, a role that may not log in and a wrong password fail
// alike, after the same key derivation and Config.AuthFailureDelay.
func (s *Server) checkPassword(ctx context.Context, user, password string) (pgwire.Credential, error) {
	verifier, err := s.cfg.Engine.SCRAMVerifier(ctx, user)
	if errors.Is(err, pgwire.ErrUnknownRole) {
		verifier, err = pgwire.MockSCRAMVerifier(), nil
	}
	if err != nil {
		return pgwire.Credential{}, flightError(err)
	}
	if cred, ok := pgwire.PasswordCredential(verifier, password); ok {
		return cred, nil
	}
	s.log.Info("flightsql: password authentication failed", "user", user)
	if d := s.cfg.AuthFailureDelay; d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
	return pgwire.Credential{}, status.Errorf(codes.Unauthenticated, "password authentication failed for user %q", user)
}
