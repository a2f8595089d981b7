package pgwire

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
)

// backendKey is the BackendKeyData of a connection: the process ID and secret
// a client quotes in a CancelRequest.
type backendKey struct {
	pid    uint32
	secret [4]byte
}

// keyRegistry maps process IDs to live connections.
//
// Invariant: a pid is in conns exactly while its connection is registered
// (from after authentication to the end of the connection), and pids are
// unique among live connections.
type keyRegistry struct {
	mu    sync.Mutex
	conns map[uint32]*conn
	// accepted counts registrations (Server.SessionsAccepted).
	accepted atomic.Int64
}

// register gives c a fresh random key, stores it in c.key and records it.
// c.key is written under r.mu and never changed afterwards.
func (r *keyRegistry) register(c *conn) (backendKey, error) {
	var k backendKey
	var b [8]byte
	r.mu.Lock()
	defer r.mu.Unlock()
	for {
		if _, err := rand.Read(b[:]); err != nil {
			return k, fmt.Errorf("pgwire: backend key: %w", err)
		}
		// PostgreSQL process IDs are positive int32 values; clients print them so.
		k.pid = binary.BigEndian.Uint32(b[:4]) & 0x7fffffff
		copy(k.secret[:], b[4:])
		if _, taken := r.conns[k.pid]; k.pid != 0 && !taken {
			r.conns[k.pid] = c
			c.key = k
			r.accepted.Add(1)
			return k, nil
		}
	}
}

// unregister forgets k.
func (r *keyRegistry) unregister(k backendKey) {
	r.mu.Lock()
	delete(r.conns, k.pid)
	r.mu.Unlock()
}

// cancel cancels the running call of the connection whose key matches pid and
// secret. It reports whether a connection matched. A request that matches no
// connection, or a connection with no running call, has no effect, as in
// PostgreSQL.
func (r *keyRegistry) cancel(pid uint32, secret []byte) bool {
	r.mu.Lock()
	c := r.conns[pid]
	ok := c != nil && subtle.ConstantTimeCompare(c.key.secret[:], secret) == 1
	r.mu.Unlock()
	if !ok {
		return false
	}
	c.cancelRunningCall(errCancelRequest)
	return true
}
