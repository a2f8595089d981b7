package pgwire

import (
	"net"
	"sync"
	"time"
)

// Activity is what pg_stat_activity shows of one session, as PostgreSQL
// keeps it for a client backend. A zero time is NULL.
type Activity struct {
	// PID is the session's process ID as BackendKeyData reported it.
	PID                   uint32
	User, Database        string
	ApplicationName       string
	ClientAddr            string // the peer's IP address
	ClientPort            int
	BackendStart          time.Time // when the connection was accepted
	XactStart, QueryStart time.Time
	StateChange           time.Time
	State                 string // active, idle, idle in transaction, idle in transaction (aborted)
	Query                 string // the running statement, or the last one
}

// pg_stat_activity's states of a client backend.
const (
	StateActive               = "active"
	StateIdle                 = "idle"
	StateIdleInTransaction    = "idle in transaction"
	StateIdleInTransactionErr = "idle in transaction (aborted)"
)

// activity is a connection's Activity, written by the connection's
// goroutine and read by Server.Activity from others.
type activity struct {
	mu sync.Mutex
	a  Activity
}

// begin fills in who the session is, once it is registered.
func (t *activity) begin(c *conn, params map[string]string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.a.PID, t.a.User, t.a.Database = c.key.pid, c.user, params["database"]
	if t.a.Database == "" {
		t.a.Database = c.user
	}
	t.a.ApplicationName = params["application_name"]
	t.a.BackendStart = c.opened
	if addr, ok := c.raw.RemoteAddr().(*net.TCPAddr); ok {
		t.a.ClientAddr, t.a.ClientPort = addr.IP.String(), addr.Port
	}
}

// run marks the session active with query (at Parse, Bind, Execute and a
// simple Query, as PostgreSQL does), starting a transaction unless one is
// open: idle outside a block ended the last one.
func (t *activity) run(query string) {
	now := time.Now()
	t.mu.Lock()
	if t.a.XactStart.IsZero() {
		t.a.XactStart = now
	}
	t.a.Query, t.a.QueryStart, t.a.StateChange, t.a.State = query, now, now, StateActive
	t.mu.Unlock()
}

// idle marks the session idle (in a transaction or not) at ReadyForQuery.
func (t *activity) idle(txStatus byte) {
	state := StateIdle
	switch txStatus {
	case 'T':
		state = StateIdleInTransaction
	case 'E':
		state = StateIdleInTransactionErr
	}
	t.mu.Lock()
	if state == StateIdle {
		t.a.XactStart = time.Time{}
	}
	if t.a.State != state {
		t.a.State, t.a.StateChange = state, time.Now()
	}
	t.mu.Unlock()
}

// setApplicationName follows SET application_name.
func (t *activity) setApplicationName(v string) {
	t.mu.Lock()
	t.a.ApplicationName = v
	t.mu.Unlock()
}

func (t *activity) snapshot() Activity {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.a
}

// Activity returns the server's sessions (those past authentication), in no
// particular order. Several servers on one catalog each list their own.
func (s *Server) Activity() []Activity {
	s.keys.mu.Lock()
	conns := make([]*conn, 0, len(s.keys.conns))
	for _, c := range s.keys.conns {
		conns = append(conns, c)
	}
	s.keys.mu.Unlock()
	out := make([]Activity, len(conns))
	for i, c := range conns {
		out[i] = c.act.snapshot()
	}
	return out
}

// SessionsAccepted counts the sessions started since the server started.
func (s *Server) SessionsAccepted() int64 { return s.keys.accepted.Load() }

// Signal cancels the running statement of the session with process ID pid
// (as a CancelRequest does: 57014 "canceling statement due to user
// request"), or with terminate ends the session (FATAL 57P01, "terminating
// connection due to administrator command"), as pg_cancel_backend and
// pg_terminate_backend do. It reports whether such a session exists; who
// may signal whom is the caller's decision.
func (s *Server) Signal(pid uint32, terminate bool) bool {
	s.keys.mu.Lock()
	c := s.keys.conns[pid]
	s.keys.mu.Unlock()
	if c == nil {
		return false
	}
	if terminate {
		c.requestShutdown()
	} else {
		c.cancelRunningCall(errCancelRequest)
	}
	return true
}
