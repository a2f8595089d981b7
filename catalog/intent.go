package catalog

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/layout"
)

// IntentTTL is how long a write intent lives without renewal; an open
// writer renews it every IntentTTL/3. A writer stalled longer (or cut off
// from the catalog) loses it: orphan collection may then delete its files,
// and its commit fails (55000) rather than reference them.
var IntentTTL = 5 * time.Minute

// WriteIntent is a writer's registration in the catalog (migration 000011,
// sqlfuncs/090_write_intents.sql): while it lives, orphan collection leaves
// the files named under it alone, however old they are, and a commit under
// it consumes it and fails if it expired. Every file a writer creates is
// named by FileName of its intent, registered before the first file.
//
// The intent is the server's own bookkeeping: it is registered, renewed and
// released as the catalog owner, whatever the role of the writer, and only
// its token (kept here) lets a commit consume it.
type WriteIntent struct {
	id       string
	token    uuid.UUID
	owner    *Catalog // the owner's handle
	next     atomic.Uint64
	lost     atomic.Bool
	consumed atomic.Bool

	stopOnce sync.Once
	stop     context.CancelFunc
	done     chan struct{}
}

// Every call that registers, renews, claims for or releases an intent runs
// as a catalog transaction of its own (intentOwner: the owner's handle on
// the pool, never a held or snapshot transaction) that does not wait for its
// WAL flush (unflushed: synchronous_commit off for that transaction alone).
// A single-row write waited for one such flush besides its commit's — the
// largest part of its time after the commit's (issue 37). Nothing it
// protects depends on that flush:
//   - the intent is visible to every other catalog session, the orphan
//     collector's included, once the call returns, flushed or not;
//   - a commit that consumes the intent is synchronous, and WAL is flushed
//     in order, so a durable commit implies a durable intent row (and a
//     durable advance of the id sequence: no later intent reuses the id of a
//     committed one's files);
//   - a catalog crash that loses an unflushed intent (or renewal, or claimed
//     path) makes its writer's commit fail with 55000
//     (write_intent_verify), so the files the collector may then take were
//     never referenced. A lost release only leaves the row to expire.
//
// intentOwner is the handle those calls run on.
func (c *Catalog) intentOwner() *Catalog {
	owner := c.As("")
	owner.snap = nil
	return owner
}

// unflushed is the FROM item that makes an intent call's transaction commit
// without waiting for its WAL flush (see intentOwner).
const unflushed = "set_config('synchronous_commit', 'off', true)"

// BeginWrite registers a write intent and renews it until Release (or a
// commit that consumed it).
func (c *Catalog) BeginWrite(ctx context.Context) (*WriteIntent, error) {
	owner := c.intentOwner()
	w := &WriteIntent{owner: owner, done: make(chan struct{})}
	if err := owner.run(ctx, func(q querier) error {
		return q.QueryRow(ctx, "SELECT i.id, i.token FROM lakesoul.write_intent_begin($1) i, "+unflushed, IntentTTL.Milliseconds()).Scan(&w.id, &w.token)
	}); err != nil {
		return nil, fmt.Errorf("register a write intent: %w", err)
	}
	hctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	w.stop = cancel
	safego.Go(func() { w.heartbeat(hctx) })
	return w, nil
}

// ID is the intent's id, the prefix of its files' names.
func (w *WriteIntent) ID() string { return w.id }

// FileName returns a fresh data file name for bucket under the intent
// (layout.IntentFileName). Safe for concurrent use.
func (w *WriteIntent) FileName(bucket int) string {
	return layout.IntentFileName(w.id, w.next.Add(1)-1, bucket)
}

// Claim registers path, a file the writer is about to create under a name
// that does not carry the intent's id (a file moved under its own name), so
// that orphan collection leaves it alone and a commit under the intent may
// add it. Call it before creating the file.
func (w *WriteIntent) Claim(ctx context.Context, path string) error {
	var ok bool
	if err := w.owner.run(ctx, func(q querier) error {
		return q.QueryRow(ctx, "SELECT lakesoul.write_intent_claim_path($1, $2, $3) FROM "+unflushed, w.id, w.token, path).Scan(&ok)
	}); err != nil {
		return fmt.Errorf("claim %s for write intent %s: %w", path, w.id, err)
	}
	if !ok {
		w.lost.Store(true)
		return fmt.Errorf("write intent %s expired", w.id)
	}
	return nil
}

// Lost reports whether a renewal found the intent expired: its files may be
// collected, and a commit under it will fail.
func (w *WriteIntent) Lost() bool { return w.lost.Load() }

func (w *WriteIntent) heartbeat(ctx context.Context) {
	defer close(w.done)
	// Without renewals the intent expires: a panic counts as losing it,
	// so the commit fails at once instead of after the TTL.
	defer safego.RecoverTo(func(error) { w.lost.Store(true) })
	tick := time.NewTicker(max(IntentTTL/3, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		var ok bool
		err := w.owner.run(ctx, func(q querier) error {
			return q.QueryRow(ctx, "SELECT lakesoul.write_intent_renew($1, $2, $3) FROM "+unflushed, w.id, w.token, IntentTTL.Milliseconds()).Scan(&ok)
		})
		if err != nil {
			continue // the catalog is unreachable: try again; the TTL decides
		}
		if !ok {
			w.lost.Store(true)
			return
		}
	}
}

// end stops the renewals.
func (w *WriteIntent) end() {
	w.stopOnce.Do(func() {
		w.stop()
		<-w.done
	})
}

// Release ends the intent: the writer has deleted (or given up on) every
// file it will not commit, and the rest become ordinary orphans. Call it
// only after the writer stopped writing. Releasing an intent a commit
// consumed is a no-op; a failure leaves the intent to expire.
func (w *WriteIntent) Release(ctx context.Context) {
	if w == nil {
		return
	}
	w.end()
	if w.consumed.Load() {
		return
	}
	ctx = context.WithoutCancel(ctx)
	_ = w.owner.run(ctx, func(q querier) error {
		_, err := q.Exec(ctx, "SELECT lakesoul.write_intent_release($1, $2) FROM "+unflushed, w.id, w.token)
		return err
	})
}

// intentArgs are the intent arguments (id, token) of lakesoul.commit,
// commit_many and compaction_commit for w: NULLs without an intent.
func intentArgs(w *WriteIntent) (id, token any) {
	if w == nil {
		return nil, nil
	}
	return w.id, w.token
}

// Consumed tells w that a commit consumed it (it needs no more renewals).
func (w *WriteIntent) Consumed() {
	if w != nil {
		w.consumed.Store(true)
		w.end()
	}
}
