package engine

import (
	"context"
	"slices"

	"github.com/lakesoul-go/lakesoul/catalog"
)

// SERIALIZABLE transaction blocks. REPEATABLE READ already gives such a
// block one snapshot and fails a write of a row changed since (rmw.go,
// txsnapshot.go); what it allows and SERIALIZABLE must not is write skew:
// two blocks that each read what the other writes, and both commit. So a
// SERIALIZABLE block that writes records what it read — the partitions and
// versions each statement read, with the rows when a statement read only the
// rows it wrote (a WHERE on key columns), else every row of them — and its
// COMMIT succeeds only if none of that changed since: it checks the commits
// landed since its snapshot (compactions change nothing) and commits with
// the partitions it read locked in shared mode and still at the versions it
// checked (lakesoul.commit_many's p_reads), so no commit to them slips in
// between. Otherwise it fails with 40001, as PostgreSQL's serializable
// snapshot isolation does; like PostgreSQL's coarser predicate locks, this
// may fail a block that would have been serializable, never let one through
// that was not. A block that only reads commits without a check (it read one
// snapshot). A partition created after the snapshot in a table the block read
// whole is a change too (checked before the commit, not under its locks).

// readEntry is what a SERIALIZABLE block read of one table in one statement.
type readEntry struct {
	t *catalog.Table
	// base are the versions of the partitions read (absent: none).
	base map[string]int
	// whole: every partition of the table was listed, so a new one is a
	// change.
	whole bool
	// keys are the rows read, nil for every row of the partitions.
	keys *keySet
}

// serializable reports whether the open block is SERIALIZABLE.
func (s *Session) serializable() bool {
	return s.inBlock && s.settings["transaction_isolation"].value == "serializable"
}

// noteSnapshotReads records the tables a statement of a SERIALIZABLE block
// listed (setSnapshots), but for the running read-modify-write statement's
// target, which noteRMWRead records.
func (s *Session) noteSnapshotReads(tables map[string]*catalog.Table, snap map[string][]catalog.PartitionFiles, specs map[string]*pruneSpec) {
	if !s.serializable() {
		return
	}
	whole := map[string]bool{}
	for handle, t := range tables {
		if specs[handle] == nil {
			whole[t.ID] = true
		}
	}
	for id, parts := range snap {
		var t *catalog.Table
		for _, tt := range tables {
			if tt.ID == id {
				t = tt
			}
		}
		if r := s.rmwFor(t); r != nil {
			continue
		}
		s.readSet = append(s.readSet, readEntry{t: t, base: versionsOf(parts), whole: whole[id]})
	}
}

// noteRMWRead records what a read-modify-write statement of a SERIALIZABLE
// block read of its target.
func (s *Session) noteRMWRead(r *rmwStatement, keyed bool) {
	if !s.serializable() || r.base == nil {
		return
	}
	e := readEntry{t: r.table, base: r.base, whole: true}
	if keyed && r.keys != nil {
		e.keys, e.whole = r.keys, false
	}
	s.readSet = append(s.readSet, e)
}

func versionsOf(parts []catalog.PartitionFiles) map[string]int {
	m := make(map[string]int, len(parts))
	for _, p := range parts {
		if p.Version >= 0 {
			m[p.Desc] = p.Version
		}
	}
	return m
}

// checkReads checks that nothing the block read changed since it read it
// (errRowsChanged when something did). It returns the partitions read but
// not written, at their versions now, for the commit to hold, and makes the
// commits of partitions read and written expect their versions now (the
// block's read-modify-write checks brought up to them). A block that writes
// nothing needs no check.
func (s *Session) checkReads(ctx context.Context, reads []readEntry, checks []rmwCheck, commits []catalog.TableCommit) ([]catalog.ReadCheck, error) {
	if len(reads) == 0 || len(commits) == 0 {
		return nil, nil
	}
	written := map[[2]string]bool{}
	for _, c := range commits {
		for _, p := range c.Parts {
			written[[2]string{c.TableID, p.Desc}] = true
		}
	}
	held, expect := map[[2]string]int{}, map[[2]string]int{}
	for _, e := range reads {
		var cur map[string]int
		var err error
		if e.whole {
			cur, err = s.cat.TableVersions(ctx, e.t.ID)
		} else {
			descs := slices.Collect(func(yield func(string) bool) {
				for d := range e.base {
					if !yield(d) {
						return
					}
				}
			})
			if e.keys != nil {
				for _, d := range e.keys.descs() {
					if !slices.Contains(descs, d) {
						descs = append(descs, d)
					}
				}
			}
			cur, err = s.cat.PartitionVersions(ctx, e.t.ID, descs)
		}
		if err != nil {
			return nil, err
		}
		for desc, v := range cur {
			base, ok := e.base[desc]
			if !ok {
				base = -1
			}
			if v != base {
				var changed bool
				if e.keys != nil {
					changed, err = s.rowsChanged(ctx, e.t, desc, base, v, e.keys)
				} else {
					changed, err = s.partitionChanged(ctx, e.t, desc, base, v)
				}
				if err != nil {
					return nil, err
				}
				if changed {
					return nil, errRowsChanged
				}
			}
			k := [2]string{e.t.ID, desc}
			switch {
			case written[k]:
				expect[k] = v
			case v >= 0:
				held[k] = v
			}
		}
	}
	if len(expect) > 0 {
		if err := s.checkUpTo(ctx, checks, expect); err != nil {
			return nil, err
		}
		setExpected(commits, expect)
	}
	out := make([]catalog.ReadCheck, 0, len(held))
	for k, v := range held {
		out = append(out, catalog.ReadCheck{TableID: k[0], Desc: k[1], Version: v})
	}
	return out, nil
}

// partitionChanged reports whether a version of partition desc after from,
// up to to, changed any row: anything but a compaction.
func (s *Session) partitionChanged(ctx context.Context, t *catalog.Table, desc string, from, to int) (bool, error) {
	changes, err := s.cat.PartitionChanges(ctx, t.ID, desc, from, to)
	if err != nil {
		return false, err
	}
	for _, c := range changes {
		if c.Op != catalog.CompactionCommit {
			return true, nil
		}
	}
	return false, nil
}
