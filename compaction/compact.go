package compaction

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/uuid"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/layout"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/reader"
	"github.com/lakesoul-go/lakesoul/writer"
)

// compactor compacts partitions of tables in one catalog and store.
type compactor struct {
	cat   *catalog.Catalog
	store objstore.Store
	opt   Options
}

func newCompactor(cat *catalog.Catalog, store objstore.Store, opt Options) *compactor {
	return &compactor{cat: cat, store: store, opt: opt.withDefaults()}
}

// partitionState is the latest version of a partition as the catalog has it.
type partitionState struct {
	version  int
	commitOp string
	commits  int
}

// read returns the live files of the partition's latest version and that
// version's state, read in one catalog snapshot so that they are of the same
// version however fast commits land (found is false when the partition has
// no version). The compaction then rewrites that version; commits after it
// stay on top (lakesoul.commit's CompactionCommit).
func (c *compactor) read(ctx context.Context, tableID, desc string) (pf catalog.PartitionFiles, st partitionState, found bool, err error) {
	// As the catalog owner, as the state was always read (the caller of
	// CALL lakesoul.compact was authorised for the table already).
	err = c.cat.As("").InSnapshot(ctx, func(snap *catalog.Catalog) error {
		s, ok, err := snap.LatestPartitionState(ctx, tableID, desc)
		if err != nil || !ok {
			return err
		}
		parts, err := snap.LiveFiles(ctx, tableID, []string{desc})
		if err != nil {
			return err
		}
		pf = catalog.PartitionFiles{Desc: desc, Version: s.Version}
		if len(parts) == 1 {
			pf = parts[0]
		}
		if pf.Version != s.Version {
			return fmt.Errorf("partition %s: live files of version %d in a snapshot whose latest version is %d", desc, pf.Version, s.Version)
		}
		st = partitionState{version: s.Version, commitOp: s.CommitOp, commits: s.Commits}
		found = true
		return nil
	})
	if err != nil {
		return catalog.PartitionFiles{}, partitionState{}, false, fmt.Errorf("partition %s: %w", desc, err)
	}
	return pf, st, found, nil
}

// compactPartition compacts one partition of t. token is the job claim (nil:
// no queue); forget are prefixes of dead attempts the caller deleted. force
// compacts a partition that is already one CompactionCommit.
func (c *compactor) compactPartition(ctx context.Context, t *catalog.Table, desc string, token *uuid.UUID, forget []string, force bool) (Result, error) {
	start := time.Now()
	res := Result{Partition: desc, Status: Skipped, ReadVersion: -1, Version: -1, Mode: modeOf(t)}
	if err := c.checkTable(t); err != nil {
		return res, err
	}
	pf, st, found, err := c.read(ctx, t.ID, desc)
	if err != nil || !found {
		return res, err
	}
	res.ReadVersion = pf.Version
	res.FilesIn = len(pf.Files)
	for _, f := range pf.Files {
		res.BytesIn += f.Size
	}
	if len(pf.Files) == 0 {
		return res, nil
	}
	if res.Mode == ModeFull && !force && st.commits == 1 && st.commitOp == catalog.CompactionCommit {
		return res, nil
	}

	var (
		final    []catalog.DataFile
		discards []string
		written  []catalog.FileOp
	)
	// Every output file is named under a write intent, registered before
	// the first one is written: orphan collection leaves them alone while
	// the compaction runs, and the commit consumes the intent (or fails if
	// it expired). Releasing it after the commit is a no-op; after a
	// failure, the files were deleted first.
	intent, err := c.cat.BeginWrite(ctx)
	if err != nil {
		return res, err
	}
	defer intent.Release(ctx)
	ms := time.Now().UnixMilli()
	switch res.Mode {
	case ModeLeveled:
		if err := c.recordOutput(ctx, token, "", forget); err != nil {
			return res, err
		}
		lp := &leveledRun{c: c, t: t, desc: desc, cfg: levelConfigOf(t.Properties), intent: intent}
		final, discards, written, err = lp.run(ctx, pf.Files)
		if err != nil {
			return res, err
		}
		if len(discards) == 0 {
			return res, nil
		}
	default:
		dir := objstore.Join(t.Path, fmt.Sprintf("compact_%d", ms))
		out, err := layout.PartitionPath(dir, desc)
		if err != nil {
			return res, err
		}
		if err := c.recordOutput(ctx, token, out, forget); err != nil {
			return res, err
		}
		var rows int64
		written, rows, err = c.rewrite(ctx, intent, t, desc, pf.Files, dir, t.HashBucketNum, true)
		if err != nil {
			return res, err
		}
		res.Rows = rows
		final = opsToFiles(written)
		for _, f := range pf.Files {
			discards = append(discards, f.Path)
		}
	}
	res.Written = len(written)
	for _, w := range written {
		res.BytesWritten += w.Size
	}
	res.FilesOut = len(final)
	for _, f := range final {
		res.BytesOut += f.Size
	}
	res.Discarded = len(discards)
	if c.opt.beforeCommit != nil {
		c.opt.beforeCommit(ctx, desc, pf.Version)
	}
	readVersion := pf.Version
	pc := catalog.PartitionCommit{Desc: desc, CommitID: uuid.New(), ReadVersion: &readVersion, Ops: filesToOps(final)}
	versions, err := c.commit(ctx, token, intent, t.ID, []catalog.PartitionCommit{pc}, map[string][]string{desc: discards}, 0)
	if err != nil {
		if !errors.Is(err, catalog.ErrCommitOutcomeUnknown) {
			c.deleteFiles(ctx, opsPaths(written))
		}
		return res, err
	}
	v, ok := versions[desc]
	if !ok {
		res.Status = Dropped
		c.deleteFiles(ctx, opsPaths(written))
		res.Elapsed = time.Since(start)
		return res, nil
	}
	res.Status, res.Version = Compacted, v
	res.Elapsed = time.Since(start)
	return res, nil
}

// rewrite merge-reads files (of one partition, in snapshot order) and writes
// the merged rows, named under intent, below dir (laid out like a table root: <dir>/<partition
// dirs>/part-…), hashed into bucketNum buckets. full applies the rules of a
// compaction that reads everything older than its output: CDC deletes are
// dropped and updates become inserts. It returns the written files in
// order; on error it has deleted them.
func (c *compactor) rewrite(ctx context.Context, intent *catalog.WriteIntent, t *catalog.Table, desc string, files []catalog.DataFile, dir string, bucketNum int, full bool) (_ []catalog.FileOp, rows int64, err error) {
	scan := &reader.Scan{Store: c.store, Table: t, Mem: c.opt.Mem,
		Partitions: []catalog.PartitionFiles{{Desc: desc, Files: files}}, KeepCDCDeletes: !full}
	units, err := scan.Units()
	if err != nil {
		return nil, 0, err
	}
	s := &sink{w: &writer.Writer{Store: c.store, Table: outputTable(t, dir, bucketNum), Mem: c.opt.Mem, Intent: intent},
		desc: desc, target: c.opt.TargetFileRows, cdc: -1}
	if full {
		if col := t.CDCColumn(); col != "" {
			if idx := t.Schema.FieldIndices(col); len(idx) > 0 {
				s.cdc = idx[0]
			}
		}
	}
	defer func() {
		if err != nil {
			s.release()
			c.deleteFiles(ctx, opsPaths(s.ops))
		}
	}()
	// Without re-bucketing, each output file holds one bucket's rows: flush
	// at the end of every unit (a unit is one input bucket).
	perUnit := !t.HasPK() || bucketNum == t.HashBucketNum
	for _, u := range units {
		it, err := scan.Open(ctx, u)
		if err != nil {
			return nil, 0, err
		}
		for {
			b, err := it.Next(ctx)
			if err == io.EOF {
				break
			}
			if err != nil {
				it.Close()
				return nil, 0, err
			}
			if err := s.add(ctx, b); err != nil {
				it.Close()
				return nil, 0, err
			}
		}
		it.Close()
		if perUnit {
			if err := s.flush(ctx); err != nil {
				return nil, 0, err
			}
		}
	}
	if err := s.flush(ctx); err != nil {
		return nil, 0, err
	}
	return s.ops, s.rows, nil
}

// outputTable is t as the writer sees it for compacted output: rooted at dir,
// with bucketNum buckets, and every non-key column nullable (a merged row may
// lack a value nobody wrote; the read path yields NULL for it too).
func outputTable(t *catalog.Table, dir string, bucketNum int) *catalog.Table {
	out := *t
	out.Path = dir
	if t.HasPK() && bucketNum > 0 {
		out.HashBucketNum = bucketNum
	}
	fields := slices.Clone(t.Schema.Fields())
	for i := range fields {
		if !slices.Contains(t.PKCols, fields[i].Name) {
			fields[i].Nullable = true
		}
	}
	md := t.Schema.Metadata()
	out.Schema = arrow.NewSchema(fields, &md)
	// Stored enum values are rewritten as they are: they were checked when
	// written, and a label renamed since keeps its former name in the files.
	out.Enums = nil
	return &out
}

// sink gathers merged batches and writes them as files of at most target
// rows (per write; the writer splits them by bucket).
type sink struct {
	w       *writer.Writer
	desc    string
	target  int
	cdc     int // CDC op column to rewrite (update → insert), or -1
	batches []arrow.RecordBatch
	pending int
	rows    int64
	ops     []catalog.FileOp
}

func (s *sink) add(ctx context.Context, b arrow.RecordBatch) error {
	if b.NumRows() == 0 {
		b.Release()
		return nil
	}
	if s.cdc >= 0 {
		nb, err := rewriteUpdates(b, s.cdc, s.w.Mem)
		b.Release()
		if err != nil {
			return err
		}
		b = nb
	}
	s.batches = append(s.batches, b)
	s.pending += int(b.NumRows())
	if s.pending >= s.target {
		return s.flush(ctx)
	}
	return nil
}

func (s *sink) flush(ctx context.Context) error {
	if s.pending == 0 {
		return nil
	}
	rec, err := concatBatches(s.batches, s.w.Mem)
	s.release()
	if err != nil {
		return err
	}
	defer rec.Release()
	parts, err := s.w.Write(ctx, rec)
	if err != nil {
		return err
	}
	for _, p := range parts {
		s.ops = append(s.ops, p.Ops...)
		if p.Desc != s.desc {
			return fmt.Errorf("compaction of partition %s produced rows of partition %s", s.desc, p.Desc)
		}
	}
	s.rows += rec.NumRows()
	return nil
}

func (s *sink) release() {
	for _, b := range s.batches {
		b.Release()
	}
	s.batches, s.pending = nil, 0
}

// concatBatches joins batches of one schema into one.
func concatBatches(batches []arrow.RecordBatch, mem memory.Allocator) (arrow.RecordBatch, error) {
	if len(batches) == 1 {
		batches[0].Retain()
		return batches[0], nil
	}
	sch := batches[0].Schema()
	cols := make([]arrow.Array, sch.NumFields())
	var n int64
	for _, b := range batches {
		n += b.NumRows()
	}
	for i := range cols {
		parts := make([]arrow.Array, len(batches))
		for j, b := range batches {
			parts[j] = b.Column(i)
		}
		a, err := array.Concatenate(parts, mem)
		if err != nil {
			for _, c := range cols[:i] {
				c.Release()
			}
			return nil, fmt.Errorf("concatenate column %s: %w", sch.Field(i).Name, err)
		}
		cols[i] = a
	}
	rec := array.NewRecordBatch(sch, cols, n)
	for _, c := range cols {
		c.Release()
	}
	return rec, nil
}

// rewriteUpdates returns b with the CDC op column's "update" values turned
// into "insert" (full compaction, §4.4).
func rewriteUpdates(b arrow.RecordBatch, col int, mem memory.Allocator) (arrow.RecordBatch, error) {
	ops, ok := b.Column(col).(*array.String)
	if !ok {
		b.Retain()
		return b, nil
	}
	has := false
	for i := 0; i < ops.Len(); i++ {
		if ops.IsValid(i) && ops.Value(i) == "update" {
			has = true
			break
		}
	}
	if !has {
		b.Retain()
		return b, nil
	}
	bld := array.NewStringBuilder(mem)
	defer bld.Release()
	bld.Reserve(ops.Len())
	for i := 0; i < ops.Len(); i++ {
		switch {
		case ops.IsNull(i):
			bld.AppendNull()
		case ops.Value(i) == "update":
			bld.Append("insert")
		default:
			bld.Append(ops.Value(i))
		}
	}
	na := bld.NewArray()
	defer na.Release()
	cols := make([]arrow.Array, b.NumCols())
	for i := range cols {
		cols[i] = b.Column(i)
	}
	cols[col] = na
	return array.NewRecordBatch(b.Schema(), cols, b.NumRows()), nil
}

func opsToFiles(ops []catalog.FileOp) []catalog.DataFile {
	out := make([]catalog.DataFile, len(ops))
	for i, o := range ops {
		out[i] = catalog.DataFile{Path: o.Path, Size: o.Size, ExistCols: o.ExistCols}
	}
	return out
}

func filesToOps(files []catalog.DataFile) []catalog.FileOp {
	out := make([]catalog.FileOp, len(files))
	for i, f := range files {
		out[i] = catalog.FileOp{Path: f.Path, Op: "add", Size: f.Size, ExistCols: f.ExistCols}
	}
	return out
}

func opsPaths(ops []catalog.FileOp) []string {
	out := make([]string, len(ops))
	for i, o := range ops {
		out[i] = o.Path
	}
	return out
}

// deleteFiles removes files nobody references (best effort: what stays is an
// orphan for the lifecycle task).
func (c *compactor) deleteFiles(ctx context.Context, paths []string) {
	ctx = context.WithoutCancel(ctx)
	for _, p := range paths {
		if err := c.store.Delete(ctx, p); err != nil {
			c.opt.Logger.Warn("compaction: could not delete an unused file; it stays as an orphan", "path", p, "err", err)
		}
	}
}
