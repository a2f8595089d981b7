package pgwire

import (
	"sync"

	"github.com/jackc/pgx/v5/pgproto3"
)

// Notification is an asynchronous notification (LISTEN/NOTIFY) for the
// client: a NotificationResponse.
type Notification struct {
	// PID is the process ID of the notifying session (the backend key's
	// pid, as PostgreSQL reports it).
	PID     uint32
	Channel string
	Payload string
}

// SessionNotifications may be implemented by a Session whose client can
// LISTEN. pgwire calls SetNotify once, before the session's first
// statement, with the function that queues a notification for the client.
// notify is safe to call from any goroutine and never blocks.
//
// As in PostgreSQL, queued notifications reach the client only between
// transactions: just before a ReadyForQuery that reports an idle session,
// and at once while the session sits idle waiting for the client; never
// inside a statement's results or a transaction block.
type SessionNotifications interface {
	SetNotify(notify func(Notification))
}

// maxQueuedNotifications bounds what a client that never reads can make
// the server hold; beyond it the oldest are dropped.
const maxQueuedNotifications = 1 << 16

// notifyQueue holds a connection's undelivered notifications. It is shared
// between the notifying goroutines and the connection goroutine.
type notifyQueue struct {
	mu      sync.Mutex
	q       []Notification
	dropped int
	// poke wakes the connection goroutine waiting for input (input.poke).
	poke func()
}

func (n *notifyQueue) push(m Notification) {
	n.mu.Lock()
	if len(n.q) >= maxQueuedNotifications {
		n.q = n.q[1:]
		n.dropped++
	}
	n.q = append(n.q, m)
	poke := n.poke
	n.mu.Unlock()
	if poke != nil {
		poke()
	}
}

func (n *notifyQueue) take() ([]Notification, int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	q, d := n.q, n.dropped
	n.q, n.dropped = nil, 0
	return q, d
}

// sendNotifications buffers the queued notifications (not flushed).
func (c *conn) sendNotifications() error {
	q, dropped := c.notes.take()
	if dropped > 0 {
		c.log.Warn("pgwire: client did not read its notifications; dropped the oldest", "dropped", dropped)
	}
	for _, m := range q {
		if err := c.out.send(&pgproto3.NotificationResponse{PID: m.PID, Channel: m.Channel, Payload: m.Payload}); err != nil {
			return err
		}
	}
	return nil
}
