package engine

import (
	"context"
	"errors"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/writer"
)

// Transaction blocks. Outside a block every write commits when it executes.
// Inside BEGIN … COMMIT, writes are staged: their data files are written at
// once (so memory stays bounded), but their catalog commits wait in the
// session until COMMIT, which commits every staged write of every table in
// one catalog transaction (lakesoul.commit_many). ROLLBACK, a failed block
// ended by COMMIT, a failed COMMIT and the end of the session delete the
// staged files; nothing of the block becomes visible. Statements of the block
// read their own staged writes (stagedSnapshot).
//
// Writers of every kind must go through commitWrite so they take part.

// stagedWrite is one table's pending commit in a transaction block.
type stagedWrite struct {
	table *catalog.Table
	op    string
	parts []catalog.PartitionCommit
}

// commitWrite commits a write's file operations, or stages them when a
// transaction block is open. If the commit fails, the files are deleted.
//
// A read-modify-write statement's write (rmw.go) is committed only once its
// rows are known unchanged since its snapshot.
func (s *Session) commitWrite(ctx context.Context, t *catalog.Table, op string, parts []catalog.PartitionCommit) error {
	if len(parts) == 0 {
		return nil
	}
	if r := s.rmwFor(t); r != nil {
		return s.commitRMW(ctx, t, op, parts, r)
	}
	if s.inBlock {
		return s.stageWrite(ctx, t, op, parts)
	}
	if _, err := s.cat.Commit(ctx, s.intent, t.ID, op, parts); err != nil {
		// A commit whose outcome is unknown may have landed: its files must
		// stay (if it did not, they are orphans cleanup collects).
		if !errors.Is(err, catalog.ErrCommitOutcomeUnknown) {
			s.deleteFiles(ctx, parts)
		}
		s.releaseIntent(ctx)
		return err
	}
	s.intent = nil // consumed by the commit
	return nil
}

// stageWrite stages a write of the open transaction block.
func (s *Session) stageWrite(ctx context.Context, t *catalog.Table, op string, parts []catalog.PartitionCommit) error {
	// Buffered earlier writes of t go first, so later rows still win.
	if err := s.flushBuffered(ctx, t.ID); err != nil {
		s.deleteFiles(ctx, parts)
		return err
	}
	s.stage(t, op, parts)
	s.wroteInBlock = true
	return nil
}

// writeIntent returns the write intent the session's writers name their
// files under (catalog.WriteIntent): the open block's, or else the running
// statement's, registered on first use. The commit of the block or of the
// statement consumes it; otherwise releaseIntent ends it once the files it
// will not commit are deleted: at ROLLBACK, at the end of a failed block or
// statement (trackedPortal), when the session closes. A file is never
// written before its intent exists, so orphan collection never takes the
// files of an open block or a running COPY for orphans, and a commit whose
// intent expired (a stalled session) fails instead of referencing files a
// collector may have deleted.
func (s *Session) writeIntent(ctx context.Context) (*catalog.WriteIntent, error) {
	if s.intent == nil {
		intent, err := s.cat.BeginWrite(ctx)
		if err != nil {
			return nil, err
		}
		s.intent = intent
	}
	return s.intent, nil
}

// releaseIntent ends the session's write intent, if any; its writers must
// have stopped and deleted what they will not commit.
func (s *Session) releaseIntent(ctx context.Context) {
	if s.intent != nil {
		s.intent.Release(ctx)
		s.intent = nil
	}
}

// mergeable ops accumulate files; their commits of one table in a block
// can be folded into one commit per partition, file order kept.
func mergeable(op string) bool { return op == catalog.AppendCommit || op == catalog.MergeCommit }

func (s *Session) stage(t *catalog.Table, op string, parts []catalog.PartitionCommit) {
	if mergeable(op) {
		for i := len(s.staged) - 1; i >= 0; i-- {
			w := &s.staged[i]
			if w.table.ID != t.ID {
				continue
			}
			if w.op == op {
				w.parts = mergePartitionCommits(w.parts, parts)
				return
			}
			break
		}
	}
	s.staged = append(s.staged, stagedWrite{table: t, op: op, parts: slices.Clone(parts)})
}

// mergePartitionCommits appends the file operations of more to dst, partition
// by partition (a partition seen again keeps its commit id and gets the new
// files after its old ones).
func mergePartitionCommits(dst, more []catalog.PartitionCommit) []catalog.PartitionCommit {
	for _, p := range more {
		i := slices.IndexFunc(dst, func(q catalog.PartitionCommit) bool { return q.Desc == p.Desc })
		if i < 0 {
			p.Ops = slices.Clone(p.Ops)
			dst = append(dst, p)
			continue
		}
		dst[i].Ops = append(dst[i].Ops, p.Ops...)
	}
	return dst
}

// commitStaged commits the block's staged writes together and returns them.
// Whatever happens, nothing stays staged; on failure the files are deleted.
func (s *Session) commitStaged(ctx context.Context) ([]stagedWrite, error) {
	if err := s.flushAllBuffered(ctx); err != nil {
		s.dropBuffered()
		s.discardStaged(ctx)
		return nil, err
	}
	staged := s.staged
	s.staged = nil
	if len(staged) == 0 {
		return nil, nil
	}
	commits := make([]catalog.TableCommit, len(staged))
	for i, w := range staged {
		commits[i] = catalog.TableCommit{TableID: w.table.ID, Op: w.op, Parts: w.parts}
	}
	// The block's read-modify-write statements' rows, checked once more
	// against what blind writers committed since (rmw.go).
	checks, reads := s.rmwChecks, s.readSet
	s.rmwChecks, s.readSet = nil, nil
	err := s.blockChecks(ctx, checks, commits)
	// A SERIALIZABLE block's reads, unchanged (serializable.go).
	var held []catalog.ReadCheck
	if err == nil {
		held, err = s.checkReads(ctx, reads, checks, commits)
	}
	for err == nil {
		if len(commits) == 1 && len(held) == 0 {
			_, err = s.cat.Commit(ctx, s.intent, commits[0].TableID, commits[0].Op, commits[0].Parts)
		} else {
			err = s.cat.CommitManyRead(ctx, s.intent, commits, held)
		}
		if !catalog.AsPartitionMoved(err) {
			break
		}
		if err = s.blockMoved(ctx, checks, commits); err == nil {
			held, err = s.checkReads(ctx, reads, checks, commits)
		}
	}
	if errors.Is(err, errRowsChanged) {
		// A block cannot re-run its statements.
		err = serializationFailure()
	}
	if err != nil {
		if !errors.Is(err, catalog.ErrCommitOutcomeUnknown) {
			for _, w := range staged {
				s.deleteFiles(ctx, w.parts)
			}
		}
		s.releaseIntent(ctx)
		return nil, err
	}
	s.intent = nil // consumed by the commit
	return staged, nil
}

// discardStaged drops the block's staged writes and deletes their files.
func (s *Session) discardStaged(ctx context.Context) {
	s.rmwChecks, s.readSet = nil, nil
	s.dropBuffered()
	for _, w := range s.staged {
		s.deleteFiles(ctx, w.parts)
	}
	s.staged = nil
	s.releaseIntent(ctx)
}

// deleteFiles removes the files a write added (best effort: an undeleted
// file is an orphan nobody reads).
func (s *Session) deleteFiles(ctx context.Context, parts []catalog.PartitionCommit) {
	ctx = context.WithoutCancel(ctx)
	for _, p := range parts {
		for _, f := range p.Ops {
			if f.Op == "add" {
				_ = s.e.store.Delete(ctx, f.Path)
			}
		}
	}
}

// stagedSnapshot adds the files the open block staged for table t to a
// snapshot of t, after the committed files, so the block reads its own
// writes.
func (s *Session) stagedSnapshot(t *catalog.Table, parts []catalog.PartitionFiles) []catalog.PartitionFiles {
	for _, w := range s.staged {
		if w.table.ID != t.ID {
			continue
		}
		for _, p := range w.parts {
			i := slices.IndexFunc(parts, func(q catalog.PartitionFiles) bool { return q.Desc == p.Desc })
			if i < 0 {
				parts = append(parts, catalog.PartitionFiles{Desc: p.Desc, Version: -1})
				i = len(parts) - 1
			} else if len(p.Ops) > 0 {
				parts[i].Files = slices.Clone(parts[i].Files)
			}
			if w.op == catalog.UpdateCommit || w.op == catalog.DeleteCommit {
				// These replace the partition's snapshot.
				parts[i].Files = nil
			}
			for _, f := range p.Ops {
				switch f.Op {
				case "add":
					parts[i].Files = append(parts[i].Files, catalog.DataFile{Path: f.Path, Size: f.Size, ExistCols: f.ExistCols})
				case "del":
					parts[i].Files = slices.DeleteFunc(parts[i].Files, func(d catalog.DataFile) bool { return d.Path == f.Path })
				}
			}
		}
	}
	return parts
}

// bufferedWrite holds the small writes of one table in a transaction block
// that are not written to files yet, in arrival order.
type bufferedWrite struct {
	table *catalog.Table
	recs  []arrow.RecordBatch
	rows  int64
}

// bufferRows keeps a small write of a transaction block in memory (taking
// over rec). The table's buffered rows are written as files when they grow
// past bufferedFlushRows, before any other write or read of the table in the
// block, and at COMMIT.
func (s *Session) bufferRows(ctx context.Context, t *catalog.Table, rec arrow.RecordBatch) error {
	s.wroteInBlock = true
	var b *bufferedWrite
	for _, x := range s.buffered {
		if x.table.ID == t.ID {
			b = x
		}
	}
	if b == nil {
		b = &bufferedWrite{table: t}
		s.buffered = append(s.buffered, b)
	}
	b.recs = append(b.recs, rec)
	b.rows += rec.NumRows()
	if b.rows >= bufferedFlushRows {
		return s.flushBuffered(ctx, t.ID)
	}
	return nil
}

// flushBuffered writes the buffered rows of a table as files and stages
// them: consecutive writes with the same columns go into one write, in order.
func (s *Session) flushBuffered(ctx context.Context, tableID string) error {
	i := slices.IndexFunc(s.buffered, func(b *bufferedWrite) bool { return b.table.ID == tableID })
	if i < 0 {
		return nil
	}
	b := s.buffered[i]
	s.buffered = slices.Delete(s.buffered, i, i+1)
	defer releaseRecords(b.recs)
	intent, err := s.writeIntent(ctx)
	if err != nil {
		return err
	}
	w := &writer.Writer{Store: s.e.store, Table: b.table, Intent: intent}
	for start := 0; start < len(b.recs); {
		end := start + 1
		for end < len(b.recs) && b.recs[end].Schema().Equal(b.recs[start].Schema()) {
			end++
		}
		rec, err := concatRecords(b.recs[start:end])
		if err != nil {
			return err
		}
		parts, err := w.Write(ctx, rec)
		rec.Release()
		if err != nil {
			return err
		}
		if len(parts) > 0 {
			s.stage(b.table, writeOp(b.table), parts)
		}
		start = end
	}
	return nil
}

// flushAllBuffered writes every buffered table.
func (s *Session) flushAllBuffered(ctx context.Context) error {
	for len(s.buffered) > 0 {
		if err := s.flushBuffered(ctx, s.buffered[0].table.ID); err != nil {
			return err
		}
	}
	return nil
}

// dropBuffered forgets the buffered rows (ROLLBACK, end of session).
func (s *Session) dropBuffered() {
	for _, b := range s.buffered {
		releaseRecords(b.recs)
	}
	s.buffered = nil
}

func releaseRecords(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}

// concatRecords joins batches of one schema into one.
func concatRecords(recs []arrow.RecordBatch) (arrow.RecordBatch, error) {
	if len(recs) == 1 {
		recs[0].Retain()
		return recs[0], nil
	}
	sch := recs[0].Schema()
	cols := make([]arrow.Array, sch.NumFields())
	var rows int64
	for _, r := range recs {
		rows += r.NumRows()
	}
	for c := range cols {
		parts := make([]arrow.Array, len(recs))
		for i, r := range recs {
			parts[i] = r.Column(c)
		}
		a, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			for _, done := range cols[:c] {
				done.Release()
			}
			return nil, err
		}
		cols[c] = a
	}
	rec := array.NewRecordBatch(sch, cols, rows)
	for _, a := range cols {
		a.Release()
	}
	return rec, nil
}

// snapshotForBlock prepares a snapshot of t for a read: buffered rows of t
// are written out first, then the block's staged files are added.
func (s *Session) snapshotForBlock(ctx context.Context, t *catalog.Table, parts []catalog.PartitionFiles) ([]catalog.PartitionFiles, error) {
	if err := s.flushBuffered(ctx, t.ID); err != nil {
		return nil, err
	}
	return s.stagedSnapshot(t, parts), nil
}

// supersedeStaged drops the open block's staged writes of partition desc of
// table t, because a rewrite of that partition (which read them) replaces
// them; their files are deleted. Without this, the staged appends would land
// after the rewrite at COMMIT and be read twice.
func (s *Session) supersedeStaged(ctx context.Context, t *catalog.Table, desc string) {
	for i := range s.staged {
		w := &s.staged[i]
		if w.table.ID != t.ID {
			continue
		}
		kept := w.parts[:0]
		var dropped []catalog.PartitionCommit
		for _, p := range w.parts {
			if p.Desc == desc {
				dropped = append(dropped, p)
			} else {
				kept = append(kept, p)
			}
		}
		w.parts = kept
		if len(s.savepoints) > 0 {
			// A savepoint may bring them back (savepoint.go).
			s.superseded = append(s.superseded, dropped...)
			continue
		}
		s.deleteFiles(ctx, dropped)
	}
	s.staged = slices.DeleteFunc(s.staged, func(w stagedWrite) bool { return len(w.parts) == 0 })
}
