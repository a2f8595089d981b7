package listen

import (
	"fmt"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// The notification queues. PostgreSQL keeps one queue per server (8 GB on
// disk) whose tail the slowest listener holds, and fails a NOTIFY that
// does not fit with 54000 "too many notifications in the NOTIFY queue",
// sending nothing of its transaction. Here each listening session has its
// own queue in memory, and two bounds apply to what they hold:
//   - Limits.Queue, all queues of the server together (the server derives
//     it from its memory budget);
//   - Limits.PerListener, one session's queue, so a session that never
//     reads cannot take the whole server's room: NOTIFYs on its channels
//     fail while it is full, others go on.
//
// A NOTIFY is charged to every listener of its channel when it is sent (or,
// in a transaction block, reserved before COMMIT: Prepare), all of a
// transaction's notifications or none; the charge is given back when the
// connection takes the notification to send it (Take) or the session ends
// (Listener.Close). Commit notices (lakesoul_commits) cannot fail a commit
// that already happened: one that does not fit its listener's queue is
// dropped for that listener and logged — the follower's recipe catches up
// at the table's next notice.

// Limits bound the bytes undelivered notifications hold; a zero field takes
// its default.
type Limits struct {
	// Queue bounds all listeners' queues together (default DefaultQueue).
	Queue int64
	// PerListener bounds one listener's queue (default an eighth of Queue,
	// at least 1 MiB, at most Queue).
	PerListener int64
}

// DefaultQueue is Limits.Queue's default.
const DefaultQueue = 64 << 20

func (l Limits) withDefaults() Limits {
	if l.Queue <= 0 {
		l.Queue = DefaultQueue
	}
	if l.PerListener <= 0 {
		l.PerListener = max(l.Queue/8, 1<<20)
	}
	l.PerListener = min(l.PerListener, l.Queue)
	return l
}

// Notification is one queued notification.
type Notification struct {
	Channel, Payload string
	// PID is the notifying session's process ID.
	PID uint32
}

// notificationOverhead is what a queued notification costs besides its
// channel and payload bytes (the struct, its slot in the queue).
const notificationOverhead = 64

// cost is what n is charged against the bounds.
func (n Notification) cost() int64 {
	return int64(len(n.Channel) + len(n.Payload) + notificationOverhead)
}

// Note is one NOTIFY of a session: a payload on a channel.
type Note struct{ Channel, Payload string }

// queueFull is the error of a NOTIFY that does not fit; pid is the process
// ID of a session whose queue is full, or 0 when the server's is.
func queueFull(pid uint32) error {
	e := sqlerr.New(sqlerr.ProgramLimitExceeded, "too many notifications in the NOTIFY queue")
	if pid != 0 {
		e.Detail = fmt.Sprintf("The server process with PID %d does not read its notifications.", pid)
		e.Hint = "The NOTIFY queue of a session cannot be emptied until that session reads its notifications or ends."
	}
	return e
}

// Pending are a transaction's notifications, charged to their listeners'
// queues but not yet visible: Send queues them, Cancel gives the charge
// back. A Pending is used by one goroutine.
type Pending struct {
	h       *Hub
	entries []pendingEntry
	done    bool
}

type pendingEntry struct {
	l *Listener
	n Notification
}

// Notify sends notes from session pid to every session of this server that
// listens on their channels, the notifying one included (as PostgreSQL
// does): all of them, or — when they do not fit the queues — none, with
// 54000. The caller refuses reserved channels.
func (h *Hub) Notify(pid uint32, notes ...Note) error {
	p, err := h.Prepare(pid, notes, nil, nil)
	if err != nil {
		return err
	}
	p.Send()
	return nil
}

// Prepare charges notes from session pid to the queues of the sessions
// listening on their channels now, without queuing them: a transaction
// block's NOTIFYs before its COMMIT, which fails with 54000 when they do
// not fit. When self (the notifying session's listener) is given, it
// receives the notes of the channels in selfChannels — those it listens on
// once its block's LISTENs and UNLISTENs are done, as PostgreSQL carries
// out a transaction's LISTENs before its notifications — instead of those
// it listens on now. The caller must Send or Cancel the result.
func (h *Hub) Prepare(pid uint32, notes []Note, self *Listener, selfChannels map[string]bool) (*Pending, error) {
	p := &Pending{h: h}
	if len(notes) == 0 {
		return p, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	add := map[*Listener]int64{}
	var total int64
	charge := func(l *Listener, n Notification) {
		p.entries = append(p.entries, pendingEntry{l, n})
		add[l] += n.cost()
		total += n.cost()
	}
	for _, nt := range notes {
		n := Notification{Channel: nt.Channel, Payload: nt.Payload, PID: pid}
		for l := range h.channels[nt.Channel] {
			if !l.closed && (l != self || selfChannels == nil) {
				charge(l, n)
			}
		}
		if self != nil && selfChannels[nt.Channel] && !self.closed {
			charge(self, n)
		}
	}
	for l, b := range add {
		if l.queued+b > h.lim.PerListener {
			p.entries = nil
			return nil, queueFull(l.pid)
		}
	}
	if h.queued+total > h.lim.Queue {
		p.entries = nil
		return nil, queueFull(0)
	}
	for l, b := range add {
		l.queued += b
	}
	h.queued += total
	return p, nil
}

// Send queues the prepared notifications for their sessions (those that
// ended meanwhile are skipped) and wakes the sessions.
func (p *Pending) Send() {
	if p.done {
		return
	}
	p.done = true
	h := p.h
	woken := map[*Listener]bool{}
	h.mu.Lock()
	for _, e := range p.entries {
		if e.l.closed {
			continue // Close gave its charge back
		}
		e.l.queue = append(e.l.queue, e.n)
		woken[e.l] = true
	}
	h.mu.Unlock()
	for l := range woken {
		l.wake()
	}
}

// Cancel gives back what Prepare charged (a block that did not commit);
// after Send it does nothing.
func (p *Pending) Cancel() {
	if p.done {
		return
	}
	p.done = true
	h := p.h
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range p.entries {
		if !e.l.closed { // else Close gave its charge back
			e.l.queued -= e.n.cost()
			h.queued -= e.n.cost()
		}
	}
}

// offer queues n for l if it fits the bounds (a commit notice); false when
// it was dropped.
func (h *Hub) offer(l *Listener, n Notification) bool {
	h.mu.Lock()
	c := n.cost()
	ok := !l.closed && l.queued+c <= h.lim.PerListener && h.queued+c <= h.lim.Queue
	if ok {
		l.queue = append(l.queue, n)
		l.queued += c
		h.queued += c
	}
	h.mu.Unlock()
	if ok {
		l.wake()
	}
	return ok
}

// Take removes the oldest queued notifications, about maxBytes of them (at
// least one when any is queued), and gives their charge back: the caller
// sends them to the client now.
func (l *Listener) Take(maxBytes int) []Notification {
	h := l.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	var n int
	var taken int64
	for n < len(l.queue) && (n == 0 || taken < int64(maxBytes)) {
		taken += l.queue[n].cost()
		n++
	}
	if n == 0 {
		return nil
	}
	out := l.queue[:n:n]
	if n == len(l.queue) {
		l.queue = nil
	} else {
		l.queue = append([]Notification(nil), l.queue[n:]...)
	}
	l.queued -= taken
	h.queued -= taken
	return out
}

// Queued reports the bytes queued for the server's sessions (tests and
// metrics).
func (h *Hub) Queued() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.queued
}
