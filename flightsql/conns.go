package flightsql

import (
	"context"
	"sync/atomic"

	"google.golang.org/grpc/stats"
)

// connTracker numbers the server's gRPC connections and closes the clients
// made on one when it ends. A client that sends Basic credentials on every
// call (the database/sql driver) gets one client, with its own engine
// session, per connection — as a pgwire connection has its own session —
// so transactions and prepared statements of two connections never meet;
// a handshake's bearer token and its session end with the handshake's
// connection, so clients that connect, log in and leave leave nothing.
type connTracker struct {
	clients *clientRegistry
	seq     atomic.Uint64
}

type connIDKey struct{}

// connID is the number of the connection a call came on (0 if unknown).
func connID(ctx context.Context) uint64 {
	id, _ := ctx.Value(connIDKey{}).(uint64)
	return id
}

func (t *connTracker) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return context.WithValue(ctx, connIDKey{}, t.seq.Add(1))
}

func (t *connTracker) HandleConn(ctx context.Context, s stats.ConnStats) {
	if _, ok := s.(*stats.ConnEnd); ok {
		t.clients.closeConn(connID(ctx))
	}
}

func (t *connTracker) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (t *connTracker) HandleRPC(context.Context, stats.RPCStats)                       {}
