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
)

// DefaultMaxMessageSize is the largest frontend message body accepted when
// Config.MaxMessageSize is zero.
const DefaultMaxMessageSize = 64 << 20

// Config configures a Server.
type Config struct {
	// Auth looks up SCRAM verifiers of login roles. Required.
	Auth Authenticator
	// Sessions opens the SQL session of each authenticated connection. Required.
	Sessions SessionFactory
	// Logger receives connection and error logs; nil means slog.Default().
	Logger *slog.Logger
	// TLSConfig enables TLS for clients that send SSLRequest; nil = no TLS
	// (SSLRequest is answered 'N').
	TLSConfig *tls.Config
	// PasswordAuth chooses how TLS connections prove the password; the zero
	// value asks every connection for SCRAM-SHA-256. Connections without TLS
	// always use SCRAM-SHA-256, whatever this says.
	PasswordAuth PasswordAuth
	// MaxMessageSize bounds the body of one frontend message in bytes; a
	// larger message ends the connection with FATAL 08P01. 0 means
	// DefaultMaxMessageSize.
	MaxMessageSize int
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
	wg           sync.WaitGroup // one count per live connection goroutine
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
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &Server{
		cfg:       cfg,
		log:       log,
		listeners: make(map[net.Listener]struct{}),
		conns:     make(map[*conn]struct{}),
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
		if !s.trackConn(c) {
			nc.Close()
			continue
		}
		go c.serve()
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
	go func() {
		s.wg.Wait()
		close(done)
	}()
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

// trackConn registers c; it fails once Shutdown has begun. A registered
// connection must call untrackConn when its goroutine ends.
func (s *Server) trackConn(c *conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shuttingDown.Load() {
		return false
	}
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	return true
}

func (s *Server) untrackConn(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.wg.Done()
}
