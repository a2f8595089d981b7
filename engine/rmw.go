package engine

import (
	"context"
	"errors"
	"io"
	"maps"
	"os"
	"slices"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/metrics"
	"github.com/lakesoul-go/lakesoul/reader"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Read-modify-write statements: UPDATE, DELETE, INSERT … ON CONFLICT and
// MERGE compute the rows they write from rows they read, at the snapshot the
// statement took. Committing them blindly, as LakeSoul's upserts are, would
// lose every change another writer committed to those rows in between (two
// sessions incrementing one counter). So such a statement commits only if no
// commit since its snapshot changed the rows it writes (or, for a
// copy-on-write rewrite, deletes):
//
//   - On primary-key tables the check is per row. The statement remembers the
//     partition versions it read and the keys it writes (keySet). Its commit
//     states the version it expects (PartitionCommit.ExpectVersion); when
//     other commits landed, the catalog refuses it (catalog.AsPartitionMoved),
//     and the statement reads the keys of the files those commits added
//     (rowsChanged). None of its keys among them: it commits again, expecting
//     the newer version — writers of other rows of a partition never fail each
//     other. One of them: the rows changed. A compaction changes no row; an
//     UpdateCommit or DeleteCommit (copy-on-write, truncate, rollback) may
//     change any.
//   - Copy-on-write rewrites of tables without a key (UPDATE/DELETE of append
//     tables) are checked per partition, by the commit protocol's rules for an
//     UpdateCommit based on the version read (40001 when the partition was
//     rewritten meanwhile; rows appended meanwhile are kept).
//
// When rows changed, what PostgreSQL does at each isolation level follows:
// under READ COMMITTED the statement runs again on a new snapshot (PostgreSQL
// re-checks the updated row and goes on; the user sees neither an error nor
// a lost update), at most rmwMaxAttempts times; under REPEATABLE READ and
// SERIALIZABLE it fails with 40001, as PostgreSQL's "could not serialize
// access due to concurrent update". A re-run first locks the rows the
// previous attempt wrote (sqlfuncs/007_row_locks.sql) in a catalog
// transaction held for the statement, so other read-modify-write writers of
// those rows wait for it and it cannot lose again to them.
//
// Row locks make writers of the same rows wait rather than fail: a commit
// with ExpectVersion also locks its keys (PartitionCommit.LockKeys) before
// the catalog checks the version, so it waits for a transaction block that
// updated or SELECTed … FOR UPDATE those rows, then sees its commit and is
// checked against it. Inside a transaction block the statement's rows are
// locked when it runs and stay locked until the block ends, as PostgreSQL's
// row locks do; the block's held catalog transaction holds them.
//
// Blind writes — INSERT of whole rows into a key table, COPY, CDC apply,
// Flight ingest — read nothing and keep LakeSoul's last-writer-wins: they
// never check, lock or wait.

// rmwMaxAttempts bounds the runs of one read-modify-write statement under
// READ COMMITTED; a statement that still finds its rows changed fails with
// 40001.
const rmwMaxAttempts = 10

// errRowsChanged says that rows a read-modify-write statement read changed
// since its snapshot; it never reaches a client (runRMW).
var errRowsChanged = errors.New("rows changed since the statement's snapshot")

// rmwStatement is the running read-modify-write statement of a session.
type rmwStatement struct {
	table *catalog.Table
	// base are the versions of the table's partitions the statement read
	// (a partition absent from it had none).
	base map[string]int
	// keys are the rows it writes or deletes (primary-key tables).
	keys *keySet
	// descs are the partitions it committed to or tried to (tables without
	// a key are locked by partition).
	descs []string
}

// baseOf is the version of partition desc the statement read (-1: none).
func (r *rmwStatement) baseOf(desc string) int {
	if v, ok := r.base[desc]; ok {
		return v
	}
	return -1
}

// noteRead records the partition versions a read-modify-write statement of
// table t read (a no-op for other statements and tables).
func (s *Session) noteRead(t *catalog.Table, parts []catalog.PartitionFiles) {
	r := s.rmw
	if r == nil || r.table.ID != t.ID {
		return
	}
	r.base = map[string]int{}
	for _, p := range parts {
		if p.Version >= 0 {
			r.base[p.Desc] = p.Version
		}
	}
}

// rmwFor is the running read-modify-write statement if it writes t.
func (s *Session) rmwFor(t *catalog.Table) *rmwStatement {
	if s.rmw != nil && s.rmw.table.ID == t.ID {
		return s.rmw
	}
	return nil
}

// readCommitted reports whether the transaction's isolation level is READ
// COMMITTED (or READ UNCOMMITTED, which PostgreSQL treats as it).
func (s *Session) readCommitted() bool {
	switch s.settings["transaction_isolation"].value {
	case "repeatable read", "serializable":
		return false
	}
	return true
}

// serializationFailure is PostgreSQL's error for a row that changed under a
// statement that may not re-read it.
func serializationFailure() error {
	return sqlerr.New(sqlerr.SerializationFailure, "could not serialize access due to concurrent update")
}

// rowChecksOff, set from LAKESOUL_TEST_NO_ROW_CHECKS, turns the checks off:
// every read-modify-write statement commits blindly. It exists only for the
// mutation test proving that the concurrency tests see lost updates without
// the checks (tests/rmw_test.go); never set it otherwise.
var rowChecksOff = os.Getenv("LAKESOUL_TEST_NO_ROW_CHECKS") == "1"

// runRMW runs body, a read-modify-write statement writing table t, with the
// rules above: body must take its snapshot afresh each time it runs, and
// leave nothing behind when it fails.
//
// keyed says the statement reads no rows but those it writes (its WHERE is on
// key columns): a SERIALIZABLE block then records those rows as what it
// read, else every row of the partitions it read (serializable.go).
func (s *Session) runRMW(ctx context.Context, t *catalog.Table, keyed bool, body func(context.Context) (string, [][]any, error)) (string, [][]any, error) {
	if rowChecksOff {
		return body(ctx)
	}
	// What the previous attempts wrote: locked before the next.
	var written *keySet
	var descs []string
	for attempt := 1; ; attempt++ {
		r := &rmwStatement{table: t}
		if t.HasPK() {
			r.keys = newKeySet(t)
		}
		var release func(commit bool) error
		if attempt > 1 && !s.inBlock {
			var err error
			if release, err = s.lockForRerun(ctx, t, written, descs); err != nil {
				return "", nil, err
			}
		}
		s.rmw = r
		tag, rows, err := body(ctx)
		s.rmw = nil
		if release != nil {
			if endErr := release(err == nil); err == nil && endErr != nil {
				err = endErr
			}
		}
		if !errors.Is(err, errRowsChanged) {
			if err == nil {
				s.noteRMWRead(r, keyed) // serializable.go
			}
			return tag, rows, err
		}
		if !s.readCommitted() || attempt >= rmwMaxAttempts {
			metrics.RowConflict(false)
			return "", nil, serializationFailure()
		}
		metrics.RowConflict(true)
		if r.keys != nil {
			if written == nil {
				written = newKeySet(t)
			}
			written.union(r.keys)
		}
		for _, d := range r.descs {
			if !slices.Contains(descs, d) {
				descs = append(descs, d)
			}
		}
		s.e.log.Debug("read-modify-write statement re-run: its rows changed", "table", t.Name, "attempt", attempt)
	}
}

// lockForRerun opens a catalog transaction for one run of a statement outside
// a block, pins the session's catalog handle to it and locks keys in it (or,
// without keys, every row of the partitions descs); the returned function
// ends it (committing what the statement committed in it, or rolling back).
// Without a free slot for a held transaction it does nothing: the run is
// then checked as the first was.
func (s *Session) lockForRerun(ctx context.Context, t *catalog.Table, keys *keySet, descs []string) (func(bool) error, error) {
	if s.ddlTx != nil {
		return nil, nil
	}
	if _, err := s.e.held.tryAcquire(s.user, s.admin()); err != nil {
		return nil, nil
	}
	base := s.cat
	cat, held, err := base.Hold(ctx)
	if err != nil {
		s.e.held.release(s.user)
		return nil, err
	}
	end := func(commit bool) error {
		s.cat = base
		defer s.e.held.release(s.user)
		if !commit {
			held.Rollback(ctx)
			return nil
		}
		return held.Commit(ctx)
	}
	s.cat = cat
	lock := func(desc string, ids []int64) error {
		_, err := cat.LockRows(ctx, t.ID, desc, ids, true, catalog.RowLockBlock)
		return err
	}
	if keys != nil {
		for _, desc := range keys.descs() {
			if err := lock(desc, keys.lockIDs(desc)); err != nil {
				_ = end(false)
				return nil, err
			}
		}
	} else {
		slices.Sort(descs)
		for _, desc := range descs {
			if err := lock(desc, nil); err != nil {
				_ = end(false)
				return nil, err
			}
		}
	}
	return end, nil
}

// commitRMW commits (or, in a transaction block, stages) the files of a
// read-modify-write statement r once the rows it wrote are known unchanged
// since its snapshot; errRowsChanged (files deleted) when they changed.
func (s *Session) commitRMW(ctx context.Context, t *catalog.Table, op string, parts []catalog.PartitionCommit, r *rmwStatement) error {
	if s.inBlock {
		checked, err := s.checkRowsNow(ctx, t, r, partDescs(parts))
		if err != nil {
			s.deleteFiles(ctx, parts)
			return err
		}
		if t.HasPK() {
			s.rmwChecks = append(s.rmwChecks, rmwCheck{table: t, versions: checked, keys: r.keys})
		}
		return s.stageWrite(ctx, t, op, parts)
	}
	expect := map[string]int{}
	for _, p := range parts {
		expect[p.Desc] = r.baseOf(p.Desc)
		r.descs = append(r.descs, p.Desc)
	}
	if testHookRMWCommit != nil {
		testHookRMWCommit(t)
	}
	if t.HasPK() && s.ddlTx == nil && !s.cat.Pinned() && s.e.commitQueues.get(commitQueueKey{t.ID, s.cat.Role()}).busy() {
		// A contended commit of the table is in flight: a try alone would
		// wait for its lock only to find the partition moved. Join the
		// next group instead (groupcommit.go).
		if err := s.checkMoved(ctx, t, parts, r, expect); err != nil {
			return err
		}
		if done, err := s.commitGrouped(ctx, t, op, parts, r, expect); done {
			return err
		}
	}
	for {
		for i := range parts {
			if t.HasPK() {
				v := expect[parts[i].Desc]
				parts[i].ExpectVersion = &v
			}
			if s.ddlTx == nil && !s.cat.Pinned() {
				// Wait for holders of the rows. (A pinned handle's
				// transaction holds them already.)
				if r.keys != nil {
					parts[i].LockKeys = r.keys.lockIDs(parts[i].Desc)
				} else {
					parts[i].LockRows = true
				}
			}
		}
		_, err := s.cat.Commit(ctx, s.intent, t.ID, op, parts)
		if err == nil {
			s.intent = nil // consumed by the commit
			return nil
		}
		switch {
		case catalog.AsPartitionMoved(err) && s.ddlTx == nil && !s.cat.Pinned():
			// The commits that landed since the snapshot are checked
			// before the partitions are locked, so the locked commit
			// checks only those landing meanwhile: writers contending
			// for a partition hold its lock for their commits, not for
			// reading each other's files.
			if err := s.checkMoved(ctx, t, parts, r, expect); err != nil {
				return err
			}
			if done, err := s.commitGrouped(ctx, t, op, parts, r, expect); done { // groupcommit.go
				return err
			}
			// (No slot for a held transaction: check and race again.)
		case catalog.AsPartitionMoved(err):
		case op == catalog.UpdateCommit && sqlerr.Code(err) == sqlerr.SerializationFailure:
			// A copy-on-write rewrite whose partition was rewritten
			// meanwhile (the commit protocol's rule).
			s.deleteFiles(ctx, parts)
			s.releaseIntent(ctx)
			return errRowsChanged
		default:
			if !errors.Is(err, catalog.ErrCommitOutcomeUnknown) {
				s.deleteFiles(ctx, parts)
			}
			s.releaseIntent(ctx)
			return err
		}
		if err := s.checkMoved(ctx, t, parts, r, expect); err != nil {
			return err
		}
	}
}

// checkMoved moves expect, the partition versions a read-modify-write
// commit's rows are known unchanged at, to the partitions' latest versions,
// reading the commits that landed in between (rowsChanged) without holding
// any lock; errRowsChanged when one of them changed the statement's rows.
// On any error the statement's files are deleted and its intent released.
func (s *Session) checkMoved(ctx context.Context, t *catalog.Table, parts []catalog.PartitionCommit, r *rmwStatement, expect map[string]int) error {
	fail := func(err error) error {
		s.deleteFiles(ctx, parts)
		s.releaseIntent(ctx)
		return err
	}
	cur, err := s.cat.PartitionVersions(ctx, t.ID, slices.Collect(maps.Keys(expect)))
	if err != nil {
		return fail(err)
	}
	for desc, v := range cur {
		if v == expect[desc] {
			continue
		}
		changed, err := s.rowsChanged(ctx, t, desc, expect[desc], v, r.keys)
		if err == nil && changed {
			err = errRowsChanged
		}
		if err != nil {
			return fail(err)
		}
		expect[desc] = v
	}
	return nil
}

// Test hooks, set by tests only: testHookRMWCommit runs before a
// read-modify-write statement outside a block first tries to commit;
// testHookLockedCheck gets the number of versions commitLocked finds landed
// since its expected ones, which it checks while holding the partitions'
// locks.
var (
	testHookRMWCommit   func(t *catalog.Table)
	testHookLockedCheck func(moved int)
)

// commitLocked is the second try of a read-modify-write commit outside a
// block whose partition moved: in one catalog transaction it locks the
// statement's rows, then its partitions (the order commits take them), checks
// the commits landed since the versions in expect and commits — no other
// commit to those partitions can land in between, so writers contending for
// one partition cost each other one check, not a race of retries. done is
// false when no held transaction could be had (nothing was done).
func (s *Session) commitLocked(ctx context.Context, t *catalog.Table, op string, parts []catalog.PartitionCommit,
	r *rmwStatement, expect map[string]int) (done bool, err error) {
	if _, err := s.e.held.tryAcquire(s.user, s.admin()); err != nil {
		return false, nil
	}
	defer s.e.held.release(s.user)
	base := s.cat
	cat, held, err := base.Hold(ctx)
	if err != nil {
		s.deleteFiles(ctx, parts)
		s.releaseIntent(ctx)
		return true, err
	}
	s.cat = cat
	defer func() { s.cat = base }()
	fail := func(err error) (bool, error) {
		held.Rollback(ctx)
		s.deleteFiles(ctx, parts)
		s.releaseIntent(ctx)
		return true, err
	}
	descs := slices.Sorted(maps.Keys(expect))
	for _, desc := range descs {
		var ids []int64 // every row of the partition for a table without a key
		if r.keys != nil {
			ids = r.keys.lockIDs(desc)
		}
		if _, err := cat.LockRows(ctx, t.ID, desc, ids, true, catalog.RowLockBlock); err != nil {
			return fail(err)
		}
	}
	if err := cat.LockPartitions(ctx, t.ID, descs); err != nil {
		return fail(err)
	}
	cur, err := cat.PartitionVersions(ctx, t.ID, descs)
	if err != nil {
		return fail(err)
	}
	if testHookLockedCheck != nil {
		moved := 0
		for desc, v := range cur {
			moved += v - expect[desc]
		}
		testHookLockedCheck(moved)
	}
	for desc, v := range cur {
		if v == expect[desc] {
			continue
		}
		changed, err := s.rowsChanged(ctx, t, desc, expect[desc], v, r.keys)
		if err == nil && changed {
			err = errRowsChanged
		}
		if err != nil {
			return fail(err)
		}
	}
	for i := range parts {
		parts[i].LockKeys, parts[i].LockRows = nil, false
		if t.HasPK() {
			v := cur[parts[i].Desc]
			parts[i].ExpectVersion = &v
		}
	}
	if _, err := cat.Commit(ctx, s.intent, t.ID, op, parts); err != nil {
		if op == catalog.UpdateCommit && sqlerr.Code(err) == sqlerr.SerializationFailure {
			err = errRowsChanged
		}
		return fail(err)
	}
	if err := held.Commit(ctx); err != nil {
		if !errors.Is(err, catalog.ErrCommitOutcomeUnknown) {
			s.deleteFiles(ctx, parts)
		}
		s.releaseIntent(ctx)
		return true, err
	}
	s.intent = nil // consumed by the commit
	return true, nil
}

// checkRowsNow is the check of a read-modify-write statement inside a
// transaction block, when it runs: its rows are locked in the block's held
// catalog transaction (until the block ends), then checked against the
// commits since its snapshot. The block's COMMIT commits inside that
// transaction, while the locks still hold.
//
// A table without a key is locked and checked by partition: rows appended
// since the snapshot are kept after the rewrite (the commit protocol's rule
// for an UpdateCommit), a rewrite since the snapshot is a change.
func (s *Session) checkRowsNow(ctx context.Context, t *catalog.Table, r *rmwStatement, descs []string) (map[string]int, error) {
	if err := s.holdCatalogWait(ctx, true); err != nil {
		return nil, err
	}
	r.descs = append(r.descs, descs...)
	if t.HasPK() {
		for _, desc := range r.keys.descs() {
			if _, err := s.cat.LockRows(ctx, t.ID, desc, r.keys.lockIDs(desc), true, catalog.RowLockBlock); err != nil {
				return nil, err
			}
		}
	} else {
		sorted := slices.Sorted(slices.Values(descs))
		for _, desc := range sorted {
			if _, err := s.cat.LockRows(ctx, t.ID, desc, nil, true, catalog.RowLockBlock); err != nil {
				return nil, err
			}
		}
	}
	cur, err := s.cat.PartitionVersions(ctx, t.ID, descs)
	if err != nil {
		return nil, err
	}
	for desc, v := range cur {
		base := r.baseOf(desc)
		if v == base {
			continue
		}
		var changed bool
		if t.HasPK() {
			changed, err = s.rowsChanged(ctx, t, desc, base, v, r.keys)
		} else {
			changed, err = s.partitionRewritten(ctx, t, desc, base, v)
		}
		if err != nil {
			return nil, err
		}
		if changed {
			return nil, errRowsChanged
		}
	}
	return cur, nil
}

// partitionRewritten reports whether a version of partition desc after from,
// up to to, rewrote or deleted its rows (rather than appending or
// compacting them).
func (s *Session) partitionRewritten(ctx context.Context, t *catalog.Table, desc string, from, to int) (bool, error) {
	changes, err := s.cat.PartitionChanges(ctx, t.ID, desc, from, to)
	if err != nil {
		return false, err
	}
	for _, c := range changes {
		switch c.Op {
		case catalog.CompactionCommit, catalog.MergeCommit, catalog.AppendCommit:
		default:
			return true, nil
		}
	}
	return false, nil
}

func partDescs(parts []catalog.PartitionCommit) []string {
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = p.Desc
	}
	return out
}

// rowsChanged reports whether the versions of partition desc after from, up
// to to, changed any row of keys: whether a file they added holds one of its
// keys (delete markers included), or one of them replaced rows (an update or
// delete commit). Compactions change no row. Without keys any added file
// counts.
func (s *Session) rowsChanged(ctx context.Context, t *catalog.Table, desc string, from, to int, keys *keySet) (bool, error) {
	return s.rowsChangedKnowing(ctx, t, desc, from, to, keys, nil)
}

// rowsChangedKnowing is rowsChanged where known, when set, may tell for a
// version whether it wrote a row of keys (ok) without its files being read.
func (s *Session) rowsChangedKnowing(ctx context.Context, t *catalog.Table, desc string, from, to int, keys *keySet,
	known func(version int) (hit, ok bool)) (bool, error) {
	changes, err := s.cat.PartitionChanges(ctx, t.ID, desc, from, to)
	if err != nil {
		return false, err
	}
	var files []catalog.DataFile
	for _, c := range changes {
		if known != nil {
			if hit, ok := known(c.Version); ok {
				if hit {
					return true, nil
				}
				continue
			}
		}
		switch c.Op {
		case catalog.CompactionCommit:
		case catalog.MergeCommit, catalog.AppendCommit:
			files = append(files, c.Added...)
		default:
			return true, nil
		}
	}
	if len(files) == 0 {
		return false, nil
	}
	if keys == nil {
		return true, nil
	}
	if len(keys.byDesc[desc]) == 0 {
		return false, nil
	}
	scans := s.e.scans
	scan := &reader.Scan{Store: scans.store, Table: t, Partitions: []catalog.PartitionFiles{{Desc: desc, Version: to, Files: files}},
		Mem: scans.mem, Needed: make([]bool, len(t.Schema.Fields())), Unordered: true, KeepCDCDeletes: true, Meta: scans.meta}
	units, err := scan.Units()
	if err != nil {
		return false, err
	}
	for _, u := range units {
		hit, err := unitHits(ctx, scan, u, desc, keys)
		if err != nil {
			// A file a compaction replaced may be gone: the rows may
			// have changed (the statement runs again).
			s.e.log.Debug("read-modify-write check: reading added files failed", "table", t.Name, "err", err)
			return true, nil
		}
		if hit {
			return true, nil
		}
	}
	return false, nil
}

// unitHits reports whether unit u of scan has a row of keys.
func unitHits(ctx context.Context, scan *reader.Scan, u reader.Unit, desc string, keys *keySet) (bool, error) {
	it, err := scan.Open(ctx, u)
	if err != nil {
		return false, err
	}
	defer it.Close()
	for {
		b, err := it.Next(ctx)
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		hit, err := keys.hit(desc, b)
		b.Release()
		if err != nil || hit {
			return hit, err
		}
	}
}

// rmwCheck is what a read-modify-write statement of a transaction block left
// to check at COMMIT: its rows (keys) were unchanged up to versions, by
// partition. Its row locks keep other read-modify-write writers off them
// until the block ends, but blind writers (INSERT, COPY, CDC) take no
// locks, so COMMIT checks the commits since once more.
type rmwCheck struct {
	table    *catalog.Table
	versions map[string]int
	keys     *keySet
}

// blockChecks prepares the block's staged commits for COMMIT: the first
// commit of each checked partition expects the newest version a statement
// checked (PartitionCommit.ExpectVersion), after every other statement's rows
// were checked up to it. errRowsChanged when a check fails.
func (s *Session) blockChecks(ctx context.Context, checks []rmwCheck, commits []catalog.TableCommit) error {
	expect := map[[2]string]int{}
	for _, c := range checks {
		for desc, v := range c.versions {
			k := [2]string{c.table.ID, desc}
			if cur, ok := expect[k]; !ok || v > cur {
				expect[k] = v
			}
		}
	}
	if err := s.checkUpTo(ctx, checks, expect); err != nil {
		return err
	}
	setExpected(commits, expect)
	return nil
}

// checkUpTo checks every statement's rows from the version it checked up to
// the version expect has for its partition, and records that it did.
func (s *Session) checkUpTo(ctx context.Context, checks []rmwCheck, expect map[[2]string]int) error {
	for _, c := range checks {
		for desc, v := range c.versions {
			to, ok := expect[[2]string{c.table.ID, desc}]
			if !ok || to == v {
				continue
			}
			changed, err := s.rowsChanged(ctx, c.table, desc, v, to, c.keys)
			if err != nil {
				return err
			}
			if changed {
				return errRowsChanged
			}
			c.versions[desc] = to
		}
	}
	return nil
}

// setExpected sets ExpectVersion on the first commit of each partition of
// expect (later commits of it in the same transaction build on that one).
func setExpected(commits []catalog.TableCommit, expect map[[2]string]int) {
	seen := map[[2]string]bool{}
	for i := range commits {
		for j := range commits[i].Parts {
			p := &commits[i].Parts[j]
			k := [2]string{commits[i].TableID, p.Desc}
			v, ok := expect[k]
			if !ok || seen[k] {
				continue
			}
			seen[k] = true
			p.ExpectVersion = &v
		}
	}
}

// blockMoved handles a COMMIT refused because a checked partition moved:
// every statement's rows are checked against the commits since, and the
// commits expect the versions now latest. errRowsChanged when a check fails.
func (s *Session) blockMoved(ctx context.Context, checks []rmwCheck, commits []catalog.TableCommit) error {
	byTable := map[string][]string{}
	tables := map[string]*catalog.Table{}
	for _, c := range checks {
		tables[c.table.ID] = c.table
		for desc := range c.versions {
			if !slices.Contains(byTable[c.table.ID], desc) {
				byTable[c.table.ID] = append(byTable[c.table.ID], desc)
			}
		}
	}
	expect := map[[2]string]int{}
	for id, descs := range byTable {
		cur, err := s.cat.PartitionVersions(ctx, id, descs)
		if err != nil {
			return err
		}
		for d, v := range cur {
			expect[[2]string{id, d}] = v
		}
	}
	if err := s.checkUpTo(ctx, checks, expect); err != nil {
		return err
	}
	setExpected(commits, expect)
	return nil
}
