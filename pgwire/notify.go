package pgwire

import (
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
// LISTEN. The session keeps the notifications queued for its client (and
// bounds them); the connection takes them when it can send them.
//
// As in PostgreSQL, queued notifications reach the client only between
// transactions: just before a ReadyForQuery that reports an idle session,
// and at once while the session sits idle waiting for the client; never
// inside a statement's results or a transaction block.
type SessionNotifications interface {
	// WatchNotifications is called once, before the session's first
	// statement, with the function the session calls when it queued a
	// notification; wake is safe from any goroutine and never blocks.
	WatchNotifications(wake func())
	// TakeNotifications removes and returns the oldest queued
	// notifications, about maxBytes of channel and payload (at least one
	// when any is queued). It may be called while no other call of the
	// Session runs.
	TakeNotifications(maxBytes int) []Notification
}

// notifyChunk is about how much the connection takes from the session's
// queue before it writes to the socket: a client that does not read leaves
// the rest in the session's bounded queue, not in the connection's output.
const notifyChunk = 32 << 10

// sendNotifications sends the session's queued notifications, flushing
// after each chunk taken (the last may stay buffered).
func (c *conn) sendNotifications() error {
	if c.notifier == nil {
		return nil
	}
	for {
		q := c.notifier.TakeNotifications(notifyChunk)
		if len(q) == 0 {
			return nil
		}
		for _, m := range q {
			if err := c.out.send(&pgproto3.NotificationResponse{PID: m.PID, Channel: m.Channel, Payload: m.Payload}); err != nil {
				return err
			}
		}
		if err := c.out.flush(); err != nil {
			return err
		}
	}
}
