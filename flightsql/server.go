// Package flightsql is LakeSoul's second front door: an Arrow Flight SQL
// server (arrow-go's flightsql framework) over the same engine as pgwire.
// Clients authenticate as the catalog's roles with their passwords, checked
// against the same SCRAM verifiers (auth.go); every call runs on an engine
// session opened with that role's credential (clients.go), so workspaces and
// row-level security hold as over pgwire. Results are the engine's Arrow
// results (engine.ExecuteArrow): the same plans, no second planner.
package flightsql

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/lakesoul-go/lakesoul/engine"
	"github.com/lakesoul-go/lakesoul/internal/safego"
)

// Config configures a Server.
type Config struct {
	// Engine runs the statements and knows the roles' verifiers.
	Engine *engine.Engine
	// TLSConfig, when set, makes the listener TLS only.
	TLSConfig *tls.Config
	// AuthFailureDelay is waited before a failed login is answered.
	AuthFailureDelay time.Duration
	// TicketKey signs the tickets of parallel scans (tickets.go); every
	// server of one catalog has the same (lakesoul.flight_ticket_key).
	// Without it every query has one endpoint.
	TicketKey []byte
	// MaxClients bounds the clients (engine sessions) alive at once
	// (default 100), the last ReservedClients of them kept for superusers
	// and the admin; IdleTimeout closes a client unused that long (default
	// DefaultIdleTimeout). A client also ends with its connection.
	MaxClients      int
	ReservedClients int
	IdleTimeout     time.Duration
	// MaxMessageSize bounds one gRPC message a client sends (a DoPut
	// batch), default 64 MiB.
	MaxMessageSize int
	// KeptResultMemory is the memory all clients' results that ran before
	// their DoGet may hold (order.go); the rest spills to the engine's temp
	// space. Default DefaultKeptResultMemory.
	KeptResultMemory int64
	Logger           *slog.Logger
}

// Server is a Flight SQL server.
type Server struct {
	flightsql.BaseServer
	cfg     Config
	log     *slog.Logger
	clients *clientRegistry
	grpc    *grpc.Server
	mem     memory.Allocator
	stop    chan struct{}
}

// New makes a server; Serve starts it.
func New(cfg Config) (*Server, error) {
	if cfg.Engine == nil {
		return nil, errors.New("flightsql: no engine")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxClients <= 0 {
		cfg.MaxClients = 100
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	cfg.ReservedClients = min(max(cfg.ReservedClients, 0), cfg.MaxClients-1)
	if cfg.MaxMessageSize <= 0 {
		cfg.MaxMessageSize = 64 << 20
	}
	if cfg.KeptResultMemory <= 0 {
		cfg.KeptResultMemory = DefaultKeptResultMemory
	}
	s := &Server{cfg: cfg, log: cfg.Logger, mem: memory.DefaultAllocator, stop: make(chan struct{}),
		clients: &clientRegistry{eng: cfg.Engine, log: cfg.Logger, max: cfg.MaxClients, reserved: cfg.ReservedClients,
			idle: cfg.IdleTimeout, m: map[string]*client{},
			kept: &keptResults{eng: cfg.Engine, mem: memory.DefaultAllocator, limit: cfg.KeptResultMemory}}}
	s.Alloc = s.mem
	if err := s.registerSQLInfo(); err != nil {
		return nil, err
	}
	opts := []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(recoverUnary, s.unaryAuth),
		grpc.ChainStreamInterceptor(recoverStream, s.streamAuth),
		grpc.MaxRecvMsgSize(cfg.MaxMessageSize),
		grpc.StatsHandler(&connTracker{clients: s.clients}),
	}
	if cfg.TLSConfig != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(cfg.TLSConfig)))
	}
	s.grpc = grpc.NewServer(opts...)
	flight.RegisterFlightServiceServer(s.grpc, flightsql.NewFlightServerWithAllocator(s, s.mem))
	return s, nil
}

// Serve accepts connections on ln until Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	safego.Go(s.reapIdle)
	err := s.grpc.Serve(ln)
	if errors.Is(err, grpc.ErrServerStopped) {
		return nil
	}
	return err
}

// DefaultKeptResultMemory is Config.KeptResultMemory's default.
const DefaultKeptResultMemory = 64 << 20

// DefaultIdleTimeout is Config.IdleTimeout's default.
const DefaultIdleTimeout = 10 * time.Minute

// reapIdle closes idle clients (clientRegistry.reap), looking every second
// (more often for an idle timeout under four seconds), so that an
// idle-in-transaction timeout is kept to about a second.
func (s *Server) reapIdle() {
	t := time.NewTicker(min(time.Second, max(s.cfg.IdleTimeout/4, 10*time.Millisecond)))
	defer t.Stop()
	for {
		select {
		case now := <-t.C:
			s.clients.reap(now)
		case <-s.stop:
			return
		}
	}
}

// Shutdown stops accepting calls, waits for running ones until ctx ends
// (then cuts them) and closes every client's session.
func (s *Server) Shutdown(ctx context.Context) error {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	done := make(chan struct{})
	safego.Go(func() {
		defer close(done)
		s.grpc.GracefulStop()
	})
	select {
	case <-done:
	case <-ctx.Done():
		s.grpc.Stop()
		<-done
	}
	s.clients.closeAll()
	return nil
}

// recoverUnary and recoverStream, the outermost interceptors, make a panic
// of any call — its handler, authentication, the framework under them —
// that call's error: SQLSTATE XX000 "internal error" with code Internal,
// logged with its stack where it was recovered. gRPC runs each call on a
// goroutine of its own and recovers nothing: without them one call would
// end the process. The engine recovers its statements' panics itself
// (engine.Session.AbortStatement), so the client's session stays usable;
// the call's stream goroutines deliver theirs as the stream's error.
func recoverUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
	defer safego.RecoverTo(func(p error) { resp, err = nil, flightError(p) })
	return handler(ctx, req)
}

func recoverStream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
	defer safego.RecoverTo(func(p error) { err = flightError(p) })
	return handler(srv, ss)
}
