package flightsql

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/lakesoul-go/lakesoul/engine"
	"github.com/lakesoul-go/lakesoul/pgwire"
)

// client is one authenticated Flight SQL client: a bearer token's, or one
// user's Basic credentials'. It owns an engine session opened with the
// user's credential, as a pgwire connection does; sem serialises the
// session's calls (an engine session runs one statement at a time), and
// stmts are its statement handles (query tickets and prepared statements),
// which no other client can name.
type client struct {
	key string
	// conn is the connection a Basic client is bound to (0 for a bearer
	// token's, which any connection may use).
	conn uint64
	user string
	cred pgwire.Credential

	// sem is the session's lock (lock, unlock): one slot, so that a call
	// waiting for it gives up when its context ends.
	sem   chan struct{}
	sess  *engine.Session
	stmts map[string]*handle
	// txn is the id of the open Flight SQL transaction ("" = none).
	txn string
	// running are the cancel functions of the query handles being
	// fetched (under runMu, not the session lock, which their DoGet holds).
	runMu   sync.Mutex
	running map[string]context.CancelFunc
	order   []string // handle ids, oldest first
	used    time.Time
}

// maxHandles bounds a client's open statement handles; the oldest is
// dropped beyond it.
const maxHandles = 64

// clientRegistry holds the live clients.
type clientRegistry struct {
	eng  *engine.Engine
	max  int
	idle time.Duration
	mu   sync.Mutex
	m    map[string]*client
}

func (r *clientRegistry) byKey(key string) *client {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.m[key]
	if c != nil {
		c.used = time.Now()
	}
	return c
}

// open returns the client under key, making it (and its engine session)
// when there is none.
func (r *clientRegistry) open(ctx context.Context, key string, conn uint64, user string, cred pgwire.Credential) (*client, error) {
	if c := r.byKey(key); c != nil {
		return c, nil
	}
	r.mu.Lock()
	full := len(r.m) >= r.max
	r.mu.Unlock()
	if full {
		return nil, status.Errorf(codes.ResourceExhausted, "too many Flight SQL clients (%d)", r.max)
	}
	ps, err := r.eng.NewSession(ctx, map[string]string{"user": user, "database": engine.DatabaseName}, cred)
	if err != nil {
		return nil, err
	}
	c := &client{key: key, conn: conn, user: user, cred: cred, sem: make(chan struct{}, 1), sess: ps.(*engine.Session), stmts: map[string]*handle{}, used: time.Now()}
	r.mu.Lock()
	if old := r.m[key]; old != nil {
		r.mu.Unlock()
		c.sess.Close()
		return old, nil
	}
	r.m[key] = c
	r.mu.Unlock()
	return c, nil
}

// reap closes clients idle for longer than r.idle.
func (r *clientRegistry) reap(now time.Time) {
	r.mu.Lock()
	var idle []*client
	for k, c := range r.m {
		if now.Sub(c.used) > r.idle {
			idle = append(idle, c)
			delete(r.m, k)
		}
	}
	r.mu.Unlock()
	for _, c := range idle {
		c.close()
	}
}

// closeConn closes the clients bound to connection conn, which ended.
func (r *clientRegistry) closeConn(conn uint64) {
	if conn == 0 {
		return
	}
	r.mu.Lock()
	var gone []*client
	for k, c := range r.m {
		if c.conn == conn {
			gone = append(gone, c)
			delete(r.m, k)
		}
	}
	r.mu.Unlock()
	for _, c := range gone {
		c.close()
	}
}

// closeAll closes every client.
func (r *clientRegistry) closeAll() {
	r.mu.Lock()
	all := r.m
	r.m = map[string]*client{}
	r.mu.Unlock()
	for _, c := range all {
		c.close()
	}
}

// lock takes the session for one call, or fails when ctx ends first.
func (c *client) lock(ctx context.Context) error {
	select {
	case c.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return status.FromContextError(ctx.Err()).Err()
	}
}

func (c *client) unlock() { <-c.sem }

func (c *client) close() {
	c.sem <- struct{}{}
	defer c.unlock()
	c.sess.Close()
	c.stmts = nil
}

// handle is a statement kept for a later call: a planned query waiting for
// its DoGet, or a prepared statement with its bound parameters.
type handle struct {
	id       string
	stmt     pgwire.Statement
	params   []any
	prepared bool
}

// addHandle keeps h under a new random id. Call with the session locked.
func (c *client) addHandle(h *handle) (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	h.id = hex.EncodeToString(b[:])
	if c.stmts == nil {
		return "", status.Error(codes.Unavailable, "client closed")
	}
	c.stmts[h.id] = h
	c.order = append(c.order, h.id)
	for len(c.order) > maxHandles {
		delete(c.stmts, c.order[0])
		c.order = c.order[1:]
	}
	return h.id, nil
}

// dropHandle forgets a handle. Call with the session locked.
func (c *client) dropHandle(id string) {
	delete(c.stmts, id)
	for i, x := range c.order {
		if x == id {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
}

// handleOf is the client's handle id, or a NotFound status. Call with the session locked.
func (c *client) handleOf(id string) (*handle, error) {
	h := c.stmts[id]
	if h == nil {
		return nil, status.Error(codes.NotFound, "unknown or expired statement handle")
	}
	return h, nil
}

// startRunning marks query handle id as being fetched under a context of
// its own that cancelRunning cancels; done unmarks it.
func (c *client) startRunning(ctx context.Context, id string) (context.Context, func()) {
	rctx, cancel := context.WithCancel(ctx)
	c.runMu.Lock()
	if c.running == nil {
		c.running = map[string]context.CancelFunc{}
	}
	c.running[id] = cancel
	c.runMu.Unlock()
	return rctx, func() {
		c.runMu.Lock()
		delete(c.running, id)
		c.runMu.Unlock()
		cancel()
	}
}

// cancelRunning cancels the fetch of query handle id; false when none runs.
func (c *client) cancelRunning(id string) bool {
	c.runMu.Lock()
	cancel := c.running[id]
	c.runMu.Unlock()
	if cancel != nil {
		cancel()
	}
	return cancel != nil
}
