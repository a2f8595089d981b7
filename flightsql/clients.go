package flightsql

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/lakesoul-go/lakesoul/engine"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// client is one authenticated Flight SQL client: a bearer token's, or one
// user's Basic credentials' on one connection. It owns an engine session
// opened with the user's credential, as a pgwire connection does; sem
// serialises the session's calls (an engine session runs one statement at
// a time), and stmts are its statement handles (query tickets and prepared
// statements), which no other client can name.
//
// A client lives as long as any gRPC connection it was used on is open: a
// Basic client's is the one connection it belongs to; a bearer token's are
// its handshake's connection and every connection the token was presented
// on since, so a client that logs in on one connection and works on another
// (or whose connection is re-established mid-transaction) keeps its session,
// and one that logs in and leaves leaves nothing. It is closed earlier when
// unused for the idle timeout, or idle inside a transaction block for its
// session's idle_in_transaction_session_timeout.
type client struct {
	key string
	// kept is where results that ran before their DoGet are kept (order.go).
	kept *keptResults
	// conns are the open connections the client was used on (under the
	// registry's mu); the client is closed when the last one ends.
	conns map[uint64]bool
	user  string
	cred  pgwire.Credential

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
	// calls counts the calls running on the client and used is when the
	// last one began or ended (under the registry's mu).
	calls int
	used  time.Time
}

// maxHandles bounds a client's open statement handles; the oldest is
// dropped beyond it.
const maxHandles = 64

// clientRegistry holds the live clients: at most max of them, the last
// reserved of which only superusers and the admin may take (as pgwire's
// connection slots); a role's sessions are bounded by the engine
// (engine.Config.SessionsPerRole, CONNECTION LIMIT).
type clientRegistry struct {
	eng      *engine.Engine
	log      *slog.Logger
	max      int
	reserved int
	idle     time.Duration
	kept     *keptResults
	mu       sync.Mutex
	m        map[string]*client
}

// enter returns the client under key with a call on connection conn
// counted on it (leave ends it), or nil.
func (r *clientRegistry) enter(key string, conn uint64) *client {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.m[key]
	if c != nil {
		c.calls++
		c.used = time.Now()
		if conn != 0 {
			c.conns[conn] = true
		}
	}
	return c
}

// leave ends a call enter or open counted.
func (r *clientRegistry) leave(c *client) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c.calls--
	c.used = time.Now()
}

// open returns the client under key, with a call counted on it, making it
// (and its engine session) when there is none. Beyond the registry's
// bounds it fails with 53300, PostgreSQL's answers.
func (r *clientRegistry) open(ctx context.Context, key string, conn uint64, user string, cred pgwire.Credential) (*client, error) {
	if c := r.enter(key, conn); c != nil {
		return c, nil
	}
	r.mu.Lock()
	n := len(r.m)
	r.mu.Unlock()
	if n >= r.max {
		return nil, sqlerr.New(sqlerr.TooManyConnections, "sorry, too many clients already")
	}
	if n >= r.max-r.reserved {
		admin, err := r.eng.Privileged(ctx, user)
		if err != nil {
			return nil, err
		}
		if !admin {
			return nil, sqlerr.New(sqlerr.TooManyConnections, "remaining connection slots are reserved for roles with the SUPERUSER attribute")
		}
	}
	ps, err := r.eng.NewSession(ctx, map[string]string{"user": user, "database": engine.DatabaseName}, cred)
	if err != nil {
		return nil, err
	}
	c := &client{key: key, kept: r.kept, conns: map[uint64]bool{}, user: user, cred: cred, sem: make(chan struct{}, 1), sess: ps.(*engine.Session),
		stmts: map[string]*handle{}, calls: 1, used: time.Now()}
	r.mu.Lock()
	if old := r.m[key]; old != nil {
		old.calls++
		old.used = time.Now()
		if conn != 0 {
			old.conns[conn] = true
		}
		r.mu.Unlock()
		c.sess.Close()
		return old, nil
	}
	if len(r.m) >= r.max {
		r.mu.Unlock()
		c.sess.Close()
		return nil, sqlerr.New(sqlerr.TooManyConnections, "sorry, too many clients already")
	}
	if conn != 0 {
		c.conns[conn] = true
	}
	r.m[key] = c
	r.mu.Unlock()
	return c, nil
}

// reap closes the clients no call runs on that were unused for longer
// than the idle timeout, or than their session's idle-in-transaction
// timeout while it is in a transaction block.
func (r *clientRegistry) reap(now time.Time) {
	r.mu.Lock()
	var idle []*client
	for k, c := range r.m {
		if c.calls > 0 {
			continue
		}
		// No call runs, so nothing else touches the session now (calls
		// begin under r.mu).
		d := now.Sub(c.used)
		iit := c.sess.IdleInTransactionTimeout()
		if d > r.idle || iit > 0 && d > iit {
			idle = append(idle, c)
			delete(r.m, k)
			if iit > 0 && d > iit {
				r.log.Info("flightsql: terminating client due to idle-in-transaction timeout", "user", c.user)
			} else {
				r.log.Debug("flightsql: closing idle client", "user", c.user)
			}
		}
	}
	r.mu.Unlock()
	for _, c := range idle {
		c.close()
	}
}

// closeConn forgets connection conn, which ended, and closes the clients
// it was the last open connection of.
func (r *clientRegistry) closeConn(conn uint64) {
	if conn == 0 {
		return
	}
	r.mu.Lock()
	var gone []*client
	for k, c := range r.m {
		if !c.conns[conn] {
			continue
		}
		delete(c.conns, conn)
		if len(c.conns) == 0 {
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
	for _, h := range c.stmts {
		h.forget()
	}
	c.stmts = nil
}

// forget releases what the handle kept of a statement that ran.
func (h *handle) forget() {
	if h.res != nil {
		h.res.release()
		h.res = nil
	}
}

// handle is a statement kept for a later call: a planned query waiting for
// its DoGet, or a prepared statement with its bound parameters.
type handle struct {
	id       string
	stmt     pgwire.Statement
	params   []any
	prepared bool
	// waiting: planned for a DoGet that has not come; res: what it
	// produced when it ran before that DoGet (order.go).
	waiting bool
	res     *result
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
		c.stmts[c.order[0]].forget()
		delete(c.stmts, c.order[0])
		c.order = c.order[1:]
	}
	return h.id, nil
}

// dropHandle forgets a handle. Call with the session locked.
func (c *client) dropHandle(id string) {
	if h := c.stmts[id]; h != nil {
		h.forget()
	}
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
