package engine

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Group commit of contended read-modify-write statements.
//
// A read-modify-write statement outside a block whose partition moved since
// its snapshot commits under the partition's lock (commitLocked): one
// writer at a time, each paying its own catalog transaction and WAL flush
// while the others wait. Statements of a table (and role) that reach that
// point while such a commit is in flight queue instead; when it ends, the
// first of them commits the whole queue as one group — one catalog
// transaction that takes the rows' and partitions' locks once, commits
// each member in turn and flushes once. A statement that finds no commit
// in flight commits alone, as before: a lone writer waits for nobody.
//
// Each member's outcome is what it would be alone, committed right after
// the members before it:
//   - its rows are checked against the commits that landed since the
//     versions it expects (rowsChanged, read under the group's locks) and
//     against the members committed before it in the group (their key sets:
//     a member that wrote one of its rows changed it); a changed row is
//     errRowsChanged for it alone (it runs again, or fails with 40001);
//   - its commit is lakesoul.commit under its own write intent, expecting
//     the version the members before it left, in a savepoint of the group's
//     transaction: a member whose commit fails gets that error alone;
//   - the group's COMMIT decides for every member committed in it: nil, or
//     the same error (ErrCommitOutcomeUnknown when its outcome is unknown).
// When the group cannot take its locks or a held transaction, no member is
// committed and each commits alone.

// groupMember is a statement waiting in (or leading) a commit group. Its
// session waits while others read its fields; it cleans up after itself.
type groupMember struct {
	s      *Session
	op     string
	parts  []catalog.PartitionCommit
	r      *rmwStatement
	expect map[string]int
	// res gets the member's outcome, or the group it is to lead (buffered:
	// whoever answers never waits for the member).
	res chan groupOutcome
}

// groupOutcome is what a member learns: done (and err) when the group
// decided its commit; !done, nothing happened (it commits alone); lead, the
// group it now commits (itself first).
type groupOutcome struct {
	done bool
	err  error
	lead []*groupMember
}

// commitQueue is the group commit state of one table and role.
type commitQueue struct {
	mu      sync.Mutex
	leading bool // a member is committing; others queue in waiting
	waiting []*groupMember
	// landed are the rows of versions its groups committed, by partition
	// and version (the last knownVersions of each partition): a member
	// checked against those compares key sets instead of reading the
	// files (the same hashes rowsChanged compares).
	landed map[string]map[int]*keySet
}

// knownVersions bounds the versions per partition a queue remembers, and
// knownRows the rows of one it remembers (a larger write is read from its
// files when checked).
const (
	knownVersions = 1024
	knownRows     = rowLocksMax
)

// remember records that version v of partition desc wrote exactly the rows
// keys.
func (q *commitQueue) remember(desc string, v int, keys *keySet) {
	if keys.n > knownRows {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.landed == nil {
		q.landed = map[string]map[int]*keySet{}
	}
	vs := q.landed[desc]
	if vs == nil {
		vs = map[int]*keySet{}
		q.landed[desc] = vs
	}
	vs[v] = keys
	delete(vs, v-knownVersions)
}

// overlapsLanded reports whether versions from+1 … to of partition desc
// wrote a row of keys, when the queue knows every one of them (known).
func (q *commitQueue) overlapsLanded(desc string, from, to int, keys *keySet) (hit, known bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	vs := q.landed[desc]
	for v := from + 1; v <= to; v++ {
		k, ok := vs[v]
		if !ok {
			return false, false
		}
		if !hit && k.overlaps(keys) {
			hit = true
		}
	}
	return hit, true
}

// changedSince is rowsChanged for a member of q's groups: versions q's
// groups committed are checked by their key sets, the others (compactions,
// commits of statements alone or of other servers) as rowsChanged does;
// without a catalog round trip when q knows them all.
func (s *Session) changedSince(ctx context.Context, t *catalog.Table, q *commitQueue, desc string, from, to int, keys *keySet) (bool, error) {
	if hit, known := q.overlapsLanded(desc, from, to, keys); known {
		return hit, nil
	}
	return s.rowsChangedKnowing(ctx, t, desc, from, to, keys, func(v int) (bool, bool) {
		return q.overlapsLanded(desc, v-1, v, keys)
	})
}

type commitQueueKey struct{ table, role string }

// commitQueues holds the engine's commit queues, made on first use.
type commitQueues struct {
	mu sync.Mutex
	m  map[commitQueueKey]*commitQueue
}

func (c *commitQueues) get(k commitQueueKey) *commitQueue {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[commitQueueKey]*commitQueue{}
	}
	q := c.m[k]
	if q == nil {
		q = &commitQueue{}
		c.m[k] = q
	}
	return q
}

// testHookGroupCommitted, set by tests only, gets the size of each group
// committed together (more than one member).
var testHookGroupCommitted func(members int)

// busy reports whether a member of q is committing.
func (q *commitQueue) busy() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.leading
}

// queued is the number of statements waiting in q.
func (q *commitQueue) queued() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.waiting)
}

// commitGrouped commits a contended read-modify-write statement of t (see
// above); done is false when nothing was done and the statement should
// commit alone. On an error its files are deleted and its intent released,
// except when the outcome is unknown (the files stay).
func (s *Session) commitGrouped(ctx context.Context, t *catalog.Table, op string, parts []catalog.PartitionCommit,
	r *rmwStatement, expect map[string]int) (bool, error) {
	m := &groupMember{s: s, op: op, parts: parts, r: r, expect: expect, res: make(chan groupOutcome, 1)}
	q := s.e.commitQueues.get(commitQueueKey{t.ID, s.cat.Role()})
	q.mu.Lock()
	var group []*groupMember
	if q.leading {
		q.waiting = append(q.waiting, m)
		q.mu.Unlock()
		out := <-m.res // a leader always answers (lead hands on what it leaves)
		if out.lead == nil {
			return m.finish(ctx, out)
		}
		group = out.lead
	} else {
		q.leading = true
		q.mu.Unlock()
		group = []*groupMember{m}
	}
	s.lead(ctx, t, q, group)
	return m.finish(ctx, <-m.res)
}

// lead commits group (whose first member is s's) and answers each member,
// then hands the queue to the first statement that queued meanwhile, or
// leaves it idle. Every member is answered whatever happens, a panic
// included (then as not done).
func (s *Session) lead(ctx context.Context, t *catalog.Table, q *commitQueue, group []*groupMember) {
	answered := 0
	defer func() {
		for _, m := range group[answered:] {
			m.res <- groupOutcome{}
		}
		q.mu.Lock()
		next := q.waiting
		q.waiting = nil
		if len(next) == 0 {
			q.leading = false
		}
		q.mu.Unlock()
		if len(next) > 0 {
			next[0].res <- groupOutcome{lead: next}
		}
	}()
	ctx = context.WithoutCancel(ctx) // the other members' commits are in it
	var outs []groupOutcome
	if len(group) == 1 {
		m := group[0]
		done, err := m.s.commitLocked(ctx, t, m.op, m.parts, m.r, m.expect)
		outs = []groupOutcome{{done: done, err: err, lead: nil}}
		// (commitLocked cleaned up after itself: finish must not again.)
		if done && err != nil {
			outs[0].err = cleanedUp{err}
		}
	} else {
		outs = s.commitGroup(ctx, t, q, group)
	}
	for i, m := range group {
		m.res <- outs[i]
		answered++
	}
}

// cleanedUp wraps the error of a commit whose statement already deleted
// its files and released its intent.
type cleanedUp struct{ err error }

func (c cleanedUp) Error() string { return c.err.Error() }
func (c cleanedUp) Unwrap() error { return c.err }

// finish ends a member's commit with the group's outcome, cleaning up
// after a failed one as commitLocked does.
func (m *groupMember) finish(ctx context.Context, out groupOutcome) (bool, error) {
	s := m.s
	if !out.done {
		return false, nil
	}
	var c cleanedUp
	switch {
	case out.err == nil:
		s.intent = nil // consumed by the commit
		return true, nil
	case errors.As(out.err, &c):
		return true, c.err
	case errors.Is(out.err, catalog.ErrCommitOutcomeUnknown):
		s.releaseIntent(ctx)
	default:
		s.deleteFiles(ctx, m.parts)
		s.releaseIntent(ctx)
	}
	return true, out.err
}

// groupDescs are the partitions group's members commit to, sorted.
func groupDescs(group []*groupMember) []string {
	set := map[string]bool{}
	for _, m := range group {
		for desc := range m.expect {
			set[desc] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// commitGroup commits the members of group in one catalog transaction (see
// the top of the file) and returns each one's outcome.
func (s *Session) commitGroup(ctx context.Context, t *catalog.Table, q *commitQueue, group []*groupMember) []groupOutcome {
	outs := make([]groupOutcome, len(group)) // all !done until decided
	for _, m := range group {
		if m.r.keys == nil {
			return outs // (only primary-key tables' commits are contended)
		}
	}
	// Commits that landed while the members queued (groups before this
	// one) are read before the locks are taken, as checkMoved does for a
	// statement alone; under the locks only those landing meanwhile are.
	if pre, err := s.cat.PartitionVersions(ctx, t.ID, groupDescs(group)); err == nil {
		for i, m := range group {
			for desc, v := range pre {
				from, mine := m.expect[desc]
				if !mine || v == from {
					continue
				}
				changed, err := s.changedSince(ctx, t, q, desc, from, v, m.r.keys)
				if err != nil {
					break // (checked again under the locks)
				}
				if changed {
					outs[i] = groupOutcome{done: true, err: errRowsChanged}
					break
				}
				m.expect[desc] = v
			}
		}
	}
	if _, err := s.e.held.tryAcquire(s.user, s.admin()); err != nil {
		return outs
	}
	defer s.e.held.release(s.user)
	base := s.cat
	cat, held, err := base.Hold(ctx)
	if err != nil {
		return outs
	}
	s.cat = cat
	defer func() { s.cat = base }()
	// abandon leaves the members not yet decided to commit alone (those
	// whose rows changed stay decided).
	abandon := func() []groupOutcome {
		held.Rollback(ctx)
		return outs
	}

	rows := map[string]map[int64]bool{}
	for i, m := range group {
		if outs[i].done {
			continue // its rows changed: it neither locks nor commits
		}
		for _, desc := range m.r.keys.descs() {
			if rows[desc] == nil {
				rows[desc] = map[int64]bool{}
			}
			for _, id := range m.r.keys.lockIDs(desc) {
				rows[desc][id] = true
			}
		}
	}
	descs := groupDescs(group)
	for _, desc := range slices.Sorted(maps.Keys(rows)) {
		if _, err := cat.LockRows(ctx, t.ID, desc, slices.Collect(maps.Keys(rows[desc])), true, catalog.RowLockBlock); err != nil {
			return abandon()
		}
	}
	if err := cat.LockPartitions(ctx, t.ID, descs); err != nil {
		return abandon()
	}
	landed, err := cat.PartitionVersions(ctx, t.ID, descs)
	if err != nil {
		return abandon()
	}
	latest := maps.Clone(landed)
	committed := newKeySet(t) // rows of the members committed so far
	var ok []int
	mine := make([]map[string]int, len(group)) // each member's versions
	for i, m := range group {
		if outs[i].done {
			continue
		}
		changed := m.r.keys.overlaps(committed)
		for desc, v := range landed {
			if changed {
				break
			}
			if from, mine := m.expect[desc]; mine && v != from {
				if changed, err = s.changedSince(ctx, t, q, desc, from, v, m.r.keys); err != nil {
					return abandon()
				}
			}
		}
		if changed {
			outs[i] = groupOutcome{done: true, err: errRowsChanged}
			continue
		}
		for j := range m.parts {
			v := latest[m.parts[j].Desc]
			m.parts[j].ExpectVersion = &v
			m.parts[j].LockKeys, m.parts[j].LockRows = nil, false
		}
		versions, err := cat.Commit(ctx, m.s.intent, t.ID, m.op, m.parts)
		if err != nil {
			if m.op == catalog.UpdateCommit && sqlerr.Code(err) == sqlerr.SerializationFailure {
				err = errRowsChanged
			}
			outs[i] = groupOutcome{done: true, err: err}
			continue
		}
		maps.Copy(latest, versions)
		committed.union(m.r.keys)
		ok = append(ok, i)
		mine[i] = versions
	}
	err = held.Commit(ctx)
	for _, i := range ok {
		outs[i] = groupOutcome{done: true, err: err}
		if m := group[i]; err == nil && mergeable(m.op) {
			// (Other ops may change any row: rowsChanged says so.)
			for desc, v := range mine[i] {
				q.remember(desc, v, m.r.keys)
			}
		}
	}
	if testHookGroupCommitted != nil {
		testHookGroupCommitted(len(group))
	}
	return outs
}
