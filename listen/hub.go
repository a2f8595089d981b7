// Package listen is the server's LISTEN/NOTIFY: which sessions listen on
// which channels, the delivery of NOTIFY between the server's sessions, and
// the fan-out of the catalog's commit notices (channel lakesoul_commits) to
// the sessions whose role may see the table.
//
// Invariants:
//   - a session receives a commit notice only while its role sees the
//     table's workspace (lakesoul.domain_visible_to, asked of the catalog
//     and remembered for visibilityTTL): never a table name of a workspace
//     it cannot see;
//   - the server holds at most one catalog connection for commit notices,
//     opened by the first LISTEN lakesoul_commits and kept until Close;
//     several servers on one catalog each deliver to their own sessions;
//   - channels whose names start with "lakesoul_" are the server's: NOTIFY
//     on them is refused (42501);
//   - delivery never blocks the notifier: notifications wait in their
//     listener's queue until the session's connection takes them
//     (pgwire.SessionNotifications), and what all queues hold is bounded
//     (queue.go): a NOTIFY that would exceed a bound fails with 54000, as
//     PostgreSQL's does when its queue is full, and sends nothing.
package listen

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/safego"
)

// ReservedPrefix starts the channels only the server notifies on.
const ReservedPrefix = "lakesoul_"

// CommitsChannel is the channel of commit notices.
const CommitsChannel = catalog.CommitChannel

// Hub is one server's LISTEN/NOTIFY switchboard.
type Hub struct {
	pool *pgxpool.Pool // the catalog, as its owner
	log  *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu        sync.Mutex
	channels  map[string]map[*Listener]struct{}
	following bool // the catalog listener runs
	// ready is closed (once, readyOnce) when the catalog listener has
	// listened for catalog.ListenerCheckEvery: from then on every committer
	// announces.
	ready     chan struct{}
	readyOnce sync.Once
	// failed is closed when the catalog listener fails to connect or to
	// LISTEN, and replaced when it has connected again; followErr is that
	// failure (nil while connected).
	failed    chan struct{}
	followErr error
	vis       visibility
	// lim bounds the queues; queued is what all listeners' queues and
	// pending reservations hold, in bytes (queue.go; under mu).
	lim    Limits
	queued int64
}

// New returns a hub on the catalog pool (whose role must see every table:
// the catalog owner), its queues bounded by lim (zero fields: the
// defaults). Close stops it.
func New(pool *pgxpool.Pool, log *slog.Logger, lim Limits) *Hub {
	if log == nil {
		log = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Hub{pool: pool, log: log, ctx: ctx, cancel: cancel, channels: map[string]map[*Listener]struct{}{}, ready: make(chan struct{}),
		failed: make(chan struct{}), vis: visibility{pool: pool, known: map[visKey]visEntry{}}, lim: lim.withDefaults()}
}

// Close stops the catalog listener; it returns when it has stopped.
func (h *Hub) Close() {
	h.cancel()
	h.wg.Wait()
}

// Listener is one session's side of the hub. Its methods are called by
// the session's goroutine (Take by its connection's); the hub queues
// notifications for it from other goroutines.
type Listener struct {
	hub  *Hub
	role string
	pid  uint32
	// wake tells the session's connection that notifications are queued;
	// it never blocks.
	wake func()
	// listening, queue, queued and closed are guarded by hub.mu: the
	// channels, the notifications not yet taken, the bytes charged for
	// them and for pending reservations (queue.go), and whether Close ran.
	listening map[string]bool
	queue     []Notification
	queued    int64
	closed    bool
}

// NewListener registers nothing yet: it returns the handle a session of
// role (with process ID pid) LISTENs through; wake is called, from any
// goroutine, when a notification was queued for the session.
func (h *Hub) NewListener(role string, pid uint32, wake func()) *Listener {
	return &Listener{hub: h, role: role, pid: pid, wake: wake, listening: map[string]bool{}}
}

// Listen adds channel to the session's channels (no-op when listening).
// For lakesoul_commits it returns a channel closed once commits that start
// afterwards are announced (the server's first such LISTEN waits for the
// catalog listener), and one closed if the catalog listener is failing
// (Failure says why); nil otherwise.
func (l *Listener) Listen(channel string) (ready, failed <-chan struct{}) {
	h := l.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if channel == CommitsChannel {
		ready, failed = h.ready, h.failed
		if h.ctx.Err() != nil {
			failed = closedChan // a closed hub follows nothing
		}
	}
	if l.listening[channel] {
		return ready, failed
	}
	l.listening[channel] = true
	set := h.channels[channel]
	if set == nil {
		set = map[*Listener]struct{}{}
		h.channels[channel] = set
	}
	set[l] = struct{}{}
	if channel == CommitsChannel && !h.following && h.ctx.Err() == nil {
		h.following = true
		h.wg.Add(1)
		safego.Go(h.follow)
	}
	return ready, failed
}

// closedChan is a closed channel.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Failure is why the catalog listener is not following commits now (nil
// when it is, or has not tried yet).
func (h *Hub) Failure() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ctx.Err() != nil {
		return errors.New("the server is shutting down")
	}
	return h.followErr
}

// setFollowErr records the catalog listener's state: a failure closes
// failed, success after one re-arms it.
func (h *Hub) setFollowErr(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case err != nil && h.followErr == nil:
		h.followErr = err
		close(h.failed)
	case err == nil && h.followErr != nil:
		h.followErr = nil
		h.failed = make(chan struct{})
	}
}

// Unlisten removes channel from the session's channels.
func (l *Listener) Unlisten(channel string) {
	h := l.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	l.unlistenLocked(channel)
}

// UnlistenAll removes every channel (UNLISTEN *). Notifications already
// queued stay queued, as in PostgreSQL.
func (l *Listener) UnlistenAll() {
	h := l.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range l.listening {
		l.unlistenLocked(ch)
	}
}

// Close ends the session's side: every channel is unlistened and the
// notifications queued or reserved for it are dropped, their bytes given
// back.
func (l *Listener) Close() {
	h := l.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range l.listening {
		l.unlistenLocked(ch)
	}
	l.closed = true
	l.queue = nil
	h.queued -= l.queued
	l.queued = 0
}

func (l *Listener) unlistenLocked(channel string) {
	if !l.listening[channel] {
		return
	}
	delete(l.listening, channel)
	set := l.hub.channels[channel]
	delete(set, l)
	if len(set) == 0 {
		delete(l.hub.channels, channel)
	}
}

// Channels returns the session's channels (pg_listening_channels).
func (l *Listener) Channels() []string {
	l.hub.mu.Lock()
	defer l.hub.mu.Unlock()
	out := make([]string, 0, len(l.listening))
	for ch := range l.listening {
		out = append(out, ch)
	}
	return out
}

// Reserved reports whether channel is one only the server notifies on.
func Reserved(channel string) bool { return strings.HasPrefix(channel, ReservedPrefix) }

// listenersOf returns a copy of channel's listeners.
func (h *Hub) listenersOf(channel string) []*Listener {
	h.mu.Lock()
	defer h.mu.Unlock()
	set := h.channels[channel]
	out := make([]*Listener, 0, len(set))
	for l := range set {
		out = append(out, l)
	}
	return out
}
