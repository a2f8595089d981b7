package catalog

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/lakesoul-go/lakesoul/internal/safego"
)

// CommitChannel is the catalog's NOTIFY channel of committed versions
// (sqlfuncs/140_notify.sql, lakesoul.notify_commits): each payload is a
// JSON array of CommitNotice.
const CommitChannel = "lakesoul_commits"

// CommitListenerApp is the application_name of a catalog connection that
// LISTENs on CommitChannel. Committers send notices only while such a
// connection exists (asked at most once per ListenerCheckEvery), so commits
// cost nothing extra when nobody follows them; a listener that just
// connected may miss the notices of that long.
const CommitListenerApp = "lakesoul commit listener"

// ListenerCheckEvery is how long a committer uses an answer to "does
// anyone listen?".
const ListenerCheckEvery = time.Second

// CommitNotice is one committed partition version as lakesoul.notify_commits
// announces it.
type CommitNotice struct {
	// Table is the schema-qualified name, quoted as SQL needs it.
	Table   string `json:"table"`
	TableID string `json:"table_id"`
	// Domain is the table's workspace: who may see the notice.
	Domain      string `json:"domain"`
	Partition   string `json:"partition"`
	Version     int    `json:"version"`
	CommitOp    string `json:"commit_op"`
	CommittedAt string `json:"committed_at"`
	// PartitionTruncated: the desc was too long for a payload.
	PartitionTruncated bool `json:"partition_truncated,omitempty"`
}

// committedVersion is lakesoul.notify_commits's argument element.
type committedVersion struct {
	TableID   string `json:"t"`
	Partition string `json:"p"`
	Version   int    `json:"v"`
}

// commitNotifier sends the notices of committed versions after their
// commits, on a goroutine of its own that runs while notices are pending:
// a commit never waits for them, and the notices of many concurrent commits
// go out in one call (one catalog transaction taking PostgreSQL's notify
// lock, without a WAL flush). Notices are hints: one lost to a failing
// catalog is not resent (a follower reads lakesoul.changes from where it
// was, so the next notice of the table catches up).
type commitNotifier struct {
	mu      sync.Mutex
	pending []committedVersion
	running bool
	// listened is the last answer of listenersExist, asked at checked
	// (drain's goroutine only).
	listened bool
	checked  time.Time
}

// maxNoticesPerCall bounds one lakesoul.notify_commits call.
const maxNoticesPerCall = 2000

// NotifyCommitted announces the versions (partition desc → version) a
// commit of tableID created, once they are visible: after the call returns,
// or for a handle pinned to a held transaction when that commits
// (HeldTx.Commit). Commit and CommitMany call it; other committers (the
// compactor) call it after their commits.
func (c *Catalog) NotifyCommitted(tableID string, versions map[string]int) {
	if len(versions) == 0 || c.notifier == nil {
		return
	}
	vs := make([]committedVersion, 0, len(versions))
	for d, v := range versions {
		vs = append(vs, committedVersion{TableID: tableID, Partition: d, Version: v})
	}
	c.notifyVersions(vs)
}

// notifyVersions is NotifyCommitted of versions of any tables.
func (c *Catalog) notifyVersions(vs []committedVersion) {
	if len(vs) == 0 || c.notifier == nil {
		return
	}
	if c.pinned != nil {
		if c.held != nil {
			c.held.committed = append(c.held.committed, vs...)
		}
		return
	}
	c.notifier.enqueue(c, vs)
}

func (n *commitNotifier) enqueue(c *Catalog, vs []committedVersion) {
	n.mu.Lock()
	n.pending = append(n.pending, vs...)
	start := !n.running
	n.running = true
	n.mu.Unlock()
	if start {
		safego.Go(func() { n.drain(c) })
	}
}

// drain sends pending notices until none are left.
func (n *commitNotifier) drain(c *Catalog) {
	for {
		n.mu.Lock()
		batch := n.pending
		if len(batch) > maxNoticesPerCall {
			batch = batch[:maxNoticesPerCall:maxNoticesPerCall]
		}
		n.pending = n.pending[len(batch):]
		if len(batch) == 0 {
			n.pending = nil
			n.running = false
			n.mu.Unlock()
			return
		}
		n.mu.Unlock()
		// A panic loses this batch's notices like a failed send; the
		// sender goes on with the next.
		if err := safego.Call(func() error { return n.send(c, batch) }); err != nil {
			// Notices are hints (followers catch up at the next one), but a
			// failing sender must show.
			slog.Warn("commit notices not sent", "versions", len(batch), "err", err)
		}
	}
}

// send sends one batch of notices, if a commit listener is connected.
func (n *commitNotifier) send(c *Catalog, batch []committedVersion) error {
	if !n.listenersExist(c) {
		return nil
	}
	b, err := json.Marshal(batch)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = c.pool.Exec(ctx, "SELECT lakesoul.notify_commits($1::jsonb)", string(b))
	return err
}

// listenersExist reports whether a commit listener (CommitListenerApp) is
// connected to the catalog, asking at most once per ListenerCheckEvery; an
// error counts as yes.
func (n *commitNotifier) listenersExist(c *Catalog) bool {
	if time.Since(n.checked) < ListenerCheckEvery {
		return n.listened
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var yes bool
	if err := c.pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE application_name = $1)", CommitListenerApp).Scan(&yes); err != nil {
		yes = true
	}
	n.listened, n.checked = yes, time.Now()
	return yes
}
