package pgwire

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/lakesoul-go/lakesoul/internal/safego"
)

// Defaults of the Config fields left zero.
const (
	// DefaultMaxMessageSize is the largest frontend message body accepted
	// after authentication.
	DefaultMaxMessageSize = 64 << 20
	// DefaultMaxConnections is the number of sessions served at once,
	// PostgreSQL's max_connections default.
	DefaultMaxConnections = 100
	// DefaultAuthTimeout is PostgreSQL's authentication_timeout default.
	DefaultAuthTimeout = time.Minute
	// DefaultMaxRowSize bounds one row in and out: PostgreSQL allows 1 GB
	// per field, which a server holding several copies of a row while it
	// converts it cannot afford per connection.
	DefaultMaxRowSize = 64 << 20
)

// Config configures a Server.
type Config struct {
	// Auth looks up SCRAM verifiers of login roles. Required.
	Auth Authenticator
	// Sessions opens the SQL session of each authenticated connection. Required.
	Sessions SessionFactory
	// Types are types beyond pgx's built-in ones whose text and binary
	// forms the server encodes and decodes, such as extension types whose
	// OIDs the catalog assigned (pgvector's vector).
	Types []*pgtype.Type
	// Logger receives connection and error logs; nil means slog.Default().
	Logger *slog.Logger
	// TLSConfig enables TLS for clients that send SSLRequest; nil = no TLS
	// (SSLRequest is answered 'N').
	TLSConfig *tls.Config
	// PasswordAuth chooses how TLS connections prove the password; the zero
	// value asks every connection for SCRAM-SHA-256. Connections without TLS
	// always use SCRAM-SHA-256, whatever this says.
	PasswordAuth PasswordAuth
	// MaxMessageSize bounds the body of one frontend message in bytes once
	// the client is authenticated: a larger message is skipped and answered
	// with ERROR 54000, and the connection goes on. 0 means
	// DefaultMaxMessageSize. Before authentication the bound is 64 KiB and
	// the startup packet's 10 000 bytes, and exceeding it is fatal.
	MaxMessageSize int
	// MaxRowSize bounds one row: a row of COPY FROM (a text line, a CSV
	// record, a binary tuple) fails the COPY with 54000, and so does a
	// result row (DataRow, or a CopyData of COPY TO) whose encoding is
	// larger. 0 means DefaultMaxRowSize.
	MaxRowSize int
	// MaxConnections bounds the sessions served at once; the next client to
	// authenticate gets FATAL 53300. 0 means DefaultMaxConnections. Sockets
	// are bounded too, to twice as many: beyond that, a new socket gets
	// FATAL 53300 before the server reads anything from it.
	MaxConnections int
	// ReservedConnections of the MaxConnections slots are kept for roles
	// the Authenticator calls privileged (see PrivilegedRoles), so an
	// administrator can still log in when users took all others.
	ReservedConnections int
	// AuthTimeout bounds startup and authentication, as PostgreSQL's
	// authentication_timeout does: a client that has not completed them in
	// time is disconnected. 0 means DefaultAuthTimeout.
	AuthTimeout time.Duration
	// AuthFailureDelay is waited before a failed authentication is
	// answered (PostgreSQL's auth_delay); 0 answers at once.
	AuthFailureDelay time.Duration
}

// PrivilegedRoles may be implemented by an Authenticator to say which roles
// may take the slots Config.ReservedConnections keeps free. Without it no
// role can, and the reserved slots just lower the limit.
type PrivilegedRoles interface {
	// Privileged reports whether role is an administrator.
	Privileged(ctx context.Context, role string) (bool, error)
}

// Server accepts PostgreSQL wire protocol connections and serves each on its
// own goroutine. Its methods are safe for concurrent use.
type Server struct {
	cfg       Config
	log       *slog.Logger
	tlsConfig *tls.Config // cfg.TLSConfig with the "postgresql" ALPN protocol, or nil
	keys      keyRegistry
	// mockKey derives the stable fake salt shown to unknown roles.
	mockKey [32]byte

	shuttingDown atomic.Bool
	mu           sync.Mutex
	listeners    map[net.Listener]struct{}
	conns        map[*conn]struct{}
	// sessions counts the connections holding a session slot (conn.slot);
	// len(conns) is the number of sockets served.
	sessions int
	wg       sync.WaitGroup // one count per live connection goroutine
	// lingering bounds the refused sockets being drained (refuseSocket).
	lingering chan struct{}
}

// NewServer returns a Server for cfg. It panics if Auth or Sessions is nil,
// which is a programming error.
func NewServer(cfg Config) *Server {
	if cfg.Auth == nil || cfg.Sessions == nil {
		panic("pgwire: NewServer needs Config.Auth and Config.Sessions")
	}
	if cfg.MaxMessageSize <= 0 {
		cfg.MaxMessageSize = DefaultMaxMessageSize
	}
	if cfg.MaxRowSize <= 0 {
		cfg.MaxRowSize = DefaultMaxRowSize
	}
	if cfg.MaxConnections <= 0 {
		cfg.MaxConnections = DefaultMaxConnections
	}
	cfg.ReservedConnections = min(max(cfg.ReservedConnections, 0), cfg.MaxConnections)
	if cfg.AuthTimeout <= 0 {
		cfg.AuthTimeout = DefaultAuthTimeout
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &Server{
		cfg:       cfg,
		log:       log,
		listeners: make(map[net.Listener]struct{}),
		conns:     make(map[*conn]struct{}),
		lingering: make(chan struct{}, maxLingering),
	}
	if cfg.TLSConfig != nil {
		s.tlsConfig = cfg.TLSConfig.Clone()
		if !slices.Contains(s.tlsConfig.NextProtos, "postgresql") {
			s.tlsConfig.NextProtos = append(s.tlsConfig.NextProtos, "postgresql")
		}
	}
	s.keys.conns = make(map[uint32]*conn)
	if _, err := rand.Read(s.mockKey[:]); err != nil {
		panic(fmt.Sprintf("pgwire: read random: %v", err))
	}
	return s
}

// Serve accepts connections on l until l is closed or Shutdown is called. It
// returns ErrServerClosed after Shutdown, and otherwise the error that made
// Accept fail for good. Serve closes l when it returns.
func (s *Server) Serve(l net.Listener) error {
	if !s.trackListener(l) {
		l.Close()
		return ErrServerClosed
	}
	defer s.untrackListener(l)

	var backoff time.Duration
	for {
		nc, err := l.Accept()
		if err != nil {
			if s.shuttingDown.Load() {
				return ErrServerClosed
			}
			if isTemporary(err) {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.log.Warn("pgwire: accept failed; retrying", "err", err, "retry_in", backoff)
				time.Sleep(backoff)
				continue
			}
			return fmt.Errorf("pgwire: accept: %w", err)
		}
		backoff = 0
		c := newConn(s, nc)
		switch s.trackConn(c) {
		case errShuttingDown:
			nc.Close()
			continue
		case errTooManySockets:
			s.refuseSocket(nc)
			continue
		}
		safego.Go(c.serve)
	}
}

// isTemporary reports whether an Accept error is worth retrying (too many
// open files, aborted handshakes, …).
func isTemporary(err error) bool {
	if errors.Is(err, net.ErrClosed) {
		return false
	}
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

// Shutdown stops accepting, tells every connection that the server is going
// away (FATAL 57P01; a running statement is cancelled first) and waits for the
// connections to end. If ctx ends first, the remaining sockets are closed and
// ctx's error is returned.
func (s *Server) Shutdown(ctx context.Context) error {
	s.shuttingDown.Store(true)
	s.mu.Lock()
	for l := range s.listeners {
		l.Close()
	}
	for c := range s.conns {
		c.requestShutdown()
	}
	s.mu.Unlock()

	done := make(chan struct{})
	safego.Go(func() {
		s.wg.Wait()
		close(done)
	})
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		s.mu.Lock()
		for c := range s.conns {
			c.raw.Close()
		}
		s.mu.Unlock()
		return fmt.Errorf("pgwire: shutdown: %w", ctx.Err())
	}
}

func (s *Server) trackListener(l net.Listener) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shuttingDown.Load() {
		return false
	}
	s.listeners[l] = struct{}{}
	return true
}

func (s *Server) untrackListener(l net.Listener) {
	s.mu.Lock()
	delete(s.listeners, l)
	s.mu.Unlock()
	l.Close()
}

// trackConn registers c. It fails with errShuttingDown once Shutdown has
// begun and with errTooManySockets when twice Config.MaxConnections sockets
// are served already. A registered connection must call untrackConn when its
// goroutine ends.
func (s *Server) trackConn(c *conn) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shuttingDown.Load() {
		return errShuttingDown
	}
	if len(s.conns) >= 2*s.cfg.MaxConnections {
		return errTooManySockets
	}
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	return nil
}

func (s *Server) untrackConn(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.wg.Done()
}
