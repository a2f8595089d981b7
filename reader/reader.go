// Package reader plans and executes reads of lake tables: the live files of a
// snapshot are split into units (one range partition × one hash bucket), and
// each unit is read as a stream of Arrow batches in the table's schema —
// merged on read for primary-key tables, concatenated for append tables.
//
// Invariants: a unit's files are in snapshot order (commit order, then file-op
// order); for PK tables each file is sorted by primary key, and a later file
// (or a later row of the same file) wins per column it physically contains.
// Range-partition columns are not in files; they are injected from the
// partition_desc.
package reader

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/layout"
	"github.com/lakesoul-go/lakesoul/objstore"
)

// DefaultBatchRows is the number of rows per output batch.
const DefaultBatchRows = 8192

// Scan is a planned read of one table snapshot.
type Scan struct {
	Store      objstore.Store
	Table      *catalog.Table
	Partitions []catalog.PartitionFiles
	Mem        memory.Allocator
	BatchRows  int
	// Unordered lets a unit's rows come back in any order instead of key
	// order. Merges then pass the rows that win their key outright through
	// from their files' batches (shared when a whole batch wins) instead of
	// copying every value into key order. Queries want this; writers of
	// sorted files (compaction) must not set it.
	Unordered bool
	// KeepCDCDeletes keeps rows of CDC tables whose merged op is "delete"
	// (change feeds); snapshot reads drop them.
	KeepCDCDeletes bool
	// defaults fills Mem and BatchRows once; units are opened concurrently.
	defaults sync.Once
	// Needed marks the table columns the consumer reads (nil = all). Other
	// columns come back as NULL and are not read from files, except what
	// merging needs (key and CDC columns).
	Needed []bool
	// OnlyNeeded says the consumer reads no key column Needed does not
	// mark: files streamed without merging (unitplan.go) then leave such
	// key columns unread (NULL). Without it key columns always come back.
	OnlyNeeded bool
	// Keys, when set, restricts a primary-key table's scan to the rows
	// whose key matches (keyfilter.go): files, row groups and pages that
	// cannot hold one are skipped, and other rows are not returned.
	Keys *KeyFilter
	// Rows, when set, restricts the scan to the merged rows whose columns
	// match it (keyfilter.go). It prunes nothing: rows that fail it are
	// dropped after the merge, before they reach the consumer.
	Rows *RowFilter
	// Meta caches file metadata across scans (nil: parse each footer).
	Meta *MetaCache
	// Chunks caches decoded column chunks of small files for keyed reads
	// (chunkcache.go; nil: decode pages each time). It is used only with
	// Meta, whose footers it needs.
	Chunks *ChunkCache
	// Stats, when set, counts what the scan read and skipped.
	Stats *ScanStats
	// Spill, when set, is a local directory where a primary-key unit of
	// more than MaxFanIn files is merged in steps (fanin.go), so that no
	// merge reads more than MaxFanIn files at once. Empty: every file of a
	// unit is merged at once.
	Spill string
	// mergeAlways turns off streaming without merging (unitplan.go): every
	// primary-key unit is merged whole. Tests compare the two.
	mergeAlways bool
	// decodeAll turns off late materialisation (plainselect.go): files
	// decode every wanted column of every row. Benchmarks compare the two.
	decodeAll bool
	// keys and rows are Keys and Rows compiled (at the first Open); index
	// is the part of rows on indexed columns that prunes (indexprune.go).
	keys    *keyMatcher
	rows    *keyMatcher
	index   *keyMatcher
	keysErr error
}

// stats is s.Stats, or a sink for scans nobody counts.
func (s *Scan) stats() *ScanStats {
	if s.Stats != nil {
		return s.Stats
	}
	return &discardStats
}

var discardStats ScanStats

// needs reports whether column c must be read from files that are
// merged: the consumer reads it, merging needs it (key and CDC columns) or
// the row filter tests it.
func (s *Scan) needs(c int) bool {
	return s.needsStreamed(c) || slices.Contains(s.Table.PKCols, s.Table.Schema.Field(c).Name)
}

// needsStreamed reports whether column c must be read from a file that is
// streamed without merging (unitplan.go): the consumer reads it, the row
// filter tests it, it is the CDC column (whose deletes are dropped), or a
// key column, unless the consumer reads only what it marked (OnlyNeeded)
// and no key filter matches keys.
func (s *Scan) needsStreamed(c int) bool {
	if s.Needed == nil || s.Needed[c] {
		return true
	}
	name := s.Table.Schema.Field(c).Name
	if name == s.Table.CDCColumn() || ((!s.OnlyNeeded || s.keys != nil) && slices.Contains(s.Table.PKCols, name)) {
		return true
	}
	return s.Rows != nil && slices.ContainsFunc(s.Rows.Conds, func(c Cond) bool { return c.Column == name })
}

// needsNone reports whether need selects no column, so that nothing is to
// be read from files (count(*) of an append table, or of a primary-key
// table's streamed files).
func (s *Scan) needsNone(need func(c int) bool) bool {
	for c := range s.Table.Schema.NumFields() {
		if need(c) {
			return false
		}
	}
	return true
}

// Unit is an independent piece of a scan: the files of one bucket of one
// partition, in snapshot order.
type Unit struct {
	Desc   string
	Bucket int
	Files  []catalog.DataFile
	// RowGroups, when set, restricts the unit to these row groups of its
	// one file: ParallelUnits splits an append table's files so.
	RowGroups []int
}

// firstPart reports whether u is a whole file list or the first part of a
// split file: the part that counts the file in the scan's statistics.
func (u Unit) firstPart() bool { return u.RowGroups == nil || u.RowGroups[0] == 0 }

// Iterator yields batches in the table schema. Next returns io.EOF at the end.
// A returned batch is owned by the caller, who must Release it.
type Iterator interface {
	Next(ctx context.Context) (arrow.RecordBatch, error)
	Close()
}

// Selected is a batch of which only rows Sel (ascending) are part of the
// result; a nil Sel selects every row.
type Selected struct {
	arrow.RecordBatch
	Sel []int
}

// Len is the number of selected rows.
func (s Selected) Len() int {
	if s.Sel != nil {
		return len(s.Sel)
	}
	return int(s.NumRows())
}

// Row is the batch row of the i-th selected row.
func (s Selected) Row(i int) int {
	if s.Sel != nil {
		return s.Sel[i]
	}
	return i
}

// selectingIterator is implemented by iterators that can hand out a file
// batch with the rows to keep instead of copying those rows out.
type selectingIterator interface {
	nextSelected(ctx context.Context) (Selected, error)
}

// NextSelected is it.Next for consumers that read rows one by one (direct
// scans encoding wire rows): an unordered merge then returns a file batch
// with the rows that won, sparing a copy of them. The caller releases the
// batch.
func NextSelected(ctx context.Context, it Iterator) (Selected, error) {
	if s, ok := it.(selectingIterator); ok {
		return s.nextSelected(ctx)
	}
	b, err := it.Next(ctx)
	return Selected{RecordBatch: b}, err
}

// Units splits the scan into units, ordered by partition then bucket.
func (s *Scan) Units() ([]Unit, error) {
	var out []Unit
	for _, p := range s.Partitions {
		byBucket := map[int][]catalog.DataFile{}
		for _, f := range p.Files {
			b, ok := layout.BucketOfFile(f.Path)
			if !ok || !s.Table.HasPK() {
				b = 0
			}
			byBucket[b] = append(byBucket[b], f)
		}
		ids := make([]int, 0, len(byBucket))
		for b := range byBucket {
			ids = append(ids, b)
		}
		sort.Ints(ids)
		for _, b := range ids {
			out = append(out, Unit{Desc: p.Desc, Bucket: b, Files: byBucket[b]})
		}
	}
	return out, nil
}

// splitFileBytes is the size from which ParallelUnits splits a file by
// row group: a smaller file is one unit. (A variable: tests lower it.)
var splitFileBytes int64 = 4 << 20

// ParallelUnits splits the scan into units that may be read concurrently
// and in any order, for unordered reads. A primary-key table's units are
// its buckets, except that a bucket of one file whose keys are unique
// (unitplan.go) is one unit per row group of a file over splitFileBytes
// when the scan has no key filter (a row filter prunes the parts by row
// group, as an append table's: planUnit). An append table's rows are the
// concatenation of its files, so each file is a unit of its own, and a
// file of several row groups one unit per row group, whose footer is read
// for this (through Meta; without Meta a primary-key table's units are
// Units). A part's row groups are then pruned by the row filter as the
// whole file's would be (planUnit).
func (s *Scan) ParallelUnits(ctx context.Context) ([]Unit, error) {
	units, err := s.Units()
	if err != nil {
		return nil, err
	}
	if err := s.compile(); err != nil {
		return nil, err
	}
	if s.Table.HasPK() {
		if s.Meta == nil || s.keys != nil {
			return units, nil
		}
		return s.splitKeyedUnits(ctx, units)
	}
	var out []Unit
	for _, u := range units {
		for _, f := range u.Files {
			groups := 1
			if f.Size >= splitFileBytes {
				if groups, err = s.rowGroupCount(ctx, f); err != nil {
					return nil, err
				}
			}
			if groups <= 1 {
				out = append(out, Unit{Desc: u.Desc, Bucket: u.Bucket, Files: []catalog.DataFile{f}})
				continue
			}
			for g := range groups {
				out = append(out, Unit{Desc: u.Desc, Bucket: u.Bucket, Files: []catalog.DataFile{f}, RowGroups: []int{g}})
			}
		}
	}
	return out, nil
}

// compile fills the scan's defaults and compiles its filters, once.
func (s *Scan) compile() error {
	s.defaults.Do(func() {
		if s.Mem == nil {
			s.Mem = memory.DefaultAllocator
		}
		if s.BatchRows <= 0 {
			s.BatchRows = DefaultBatchRows
		}
		if s.Table.HasPK() {
			s.keys, s.keysErr = compileKeyFilter(s.Table, s.Keys)
		}
		if s.keysErr == nil {
			s.rows, s.keysErr = compileRowFilter(s.Table, s.Rows)
		}
		if s.keysErr == nil {
			s.index, s.keysErr = compileIndexFilter(s.Table, s.rows)
		}
	})
	return s.keysErr
}

// Open starts reading one unit.
func (s *Scan) Open(ctx context.Context, u Unit) (Iterator, error) {
	if err := s.compile(); err != nil {
		return nil, err
	}
	consts, err := s.rangeValues(u.Desc)
	if err != nil {
		return nil, err
	}
	if (s.keys != nil && s.keys.empty()) || (s.rows != nil && s.rows.empty()) {
		return emptyIterator{}, nil
	}
	files, err := s.planUnit(ctx, u)
	if err != nil {
		return nil, err
	}
	var segs []segment
	if s.Table.HasPK() {
		if segs, err = s.segments(files); err != nil {
			closePlanned(files)
			return nil, err
		}
	}
	var it Iterator
	if segs != nil {
		it = newSegmentIterator(s, segs, consts)
	} else {
		if s.Spill != "" && s.Table.HasPK() && len(files) > MaxFanIn {
			if files, err = s.premerge(ctx, files, consts); err != nil {
				return nil, err
			}
		}
		if it, err = s.merge(ctx, files, consts); err != nil {
			return nil, err
		}
	}
	if s.keys != nil || s.rows != nil || s.Stats != nil {
		f := &filterIterator{it: it, scan: s}
		for _, m := range []*keyMatcher{s.keys, s.rows} {
			if m != nil {
				f.m = append(f.m, m)
			}
		}
		it = f
	}
	return it, nil
}

// planned is a file of a unit the scan reads: its position in the unit
// (higher = newer), its footer when known and the rows the key filter
// selects (nil: all).
type planned struct {
	fo    *fileOpen
	order int
	fm    *fileMeta
	sel   *fileSelection
	// spilled marks a pre-merged file (fanin.go): not a table file, not
	// counted, removed once opened.
	spilled bool
	// counted: opening the file counts it as read (a split file counts
	// once, in its first part).
	counted bool
}

func closePlanned(files []planned) {
	for _, p := range files {
		p.fo.close()
	}
}

// planUnit checks the unit's files and keeps those that the key filter
// and the index filter do not rule out.
func (s *Scan) planUnit(ctx context.Context, u Unit) ([]planned, error) {
	var files []planned
	st := s.stats()
	// byGroup: the index filter prunes the unit's files by row group, as
	// it does an append table's.
	byGroup := !s.Table.HasPK()
	if s.index != nil && s.Table.HasPK() {
		// A unit is skipped whole or read whole by its index (indexprune.go),
		// unless its one file holds every version of its keys alone.
		for i, f := range u.Files {
			if err := checkInTable(s.Table, f.Path); err != nil {
				closePlanned(files)
				return nil, err
			}
			fo := &fileOpen{ctx: ctx, store: s.Store, f: f}
			fm, err := s.fileMeta(fo)
			if err != nil {
				fo.close()
				closePlanned(files)
				return nil, err
			}
			files = append(files, planned{fo: fo, order: i, fm: fm})
		}
		if len(files) == 1 && files[0].fm != nil && uniqueKeys(files[0].fm) {
			// No other file, no key twice in it: skipping any of its row
			// groups hides no other version of a key that passes.
			byGroup = true
		}
		out := false
		var err error
		if !byGroup {
			out, err = s.unitRuledOut(files)
		}
		if err != nil || out {
			st.Files.Add(int64(len(files)))
			closePlanned(files)
			return nil, err
		}
		closePlanned(files)
		files = nil
	}
	for i, f := range u.Files {
		if err := checkInTable(s.Table, f.Path); err != nil {
			closePlanned(files)
			return nil, err
		}
		if u.firstPart() {
			st.Files.Add(1)
		}
		fo := &fileOpen{ctx: ctx, store: s.Store, f: f}
		fm, err := s.fileMeta(fo)
		var sel *fileSelection
		if u.RowGroups != nil {
			// A part of a split file (ParallelUnits).
			sel = &fileSelection{rowGroups: u.RowGroups, ranges: make([][]rowRange, len(u.RowGroups))}
		}
		// The row groups of a file are counted once: by the filter that
		// plans it, else here (by the first part of a split file).
		groupsCounted := false
		if err == nil && s.index != nil && byGroup {
			// A split file is planned whole by each part, counted by its
			// first, and each part keeps its own row groups of the plan.
			ist := st
			if !u.firstPart() {
				ist = &ScanStats{}
			}
			var skip bool
			var fsel *fileSelection
			skip, fsel, err = s.indexSkips(fm, fo.source, ist)
			groupsCounted = true
			if err == nil && !skip && u.RowGroups != nil {
				fsel = fsel.restrict(u.RowGroups)
				if fsel == nil {
					skip = true
					if u.firstPart() {
						st.FilesRead.Add(1) // other parts read it
					}
				}
			}
			if err == nil && skip {
				fo.close()
				continue
			}
			sel = fsel
		}
		if err == nil && s.keys != nil {
			groupsCounted = true
			sel, err = s.planFile(fm, s.keys, fo.source, st, true)
			if err == nil && sel == nil {
				fo.close() // nothing in it can match
				continue
			}
		}
		if err != nil {
			fo.close()
			closePlanned(files)
			return nil, err
		}
		if !groupsCounted && fm != nil && u.firstPart() {
			st.RowGroups.Add(int64(fm.md.NumRowGroups()))
		}
		if sel != nil {
			st.RowGroupsRead.Add(int64(len(sel.rowGroups)))
		} else if fm != nil {
			st.RowGroupsRead.Add(int64(fm.md.NumRowGroups()))
		}
		files = append(files, planned{fo: fo, order: i, fm: fm, sel: sel, counted: u.firstPart()})
	}
	return files, nil
}

// merge opens the planned files (taking them over) and returns the
// iterator over their rows: concatenated, one file's, or merged by key.
func (s *Scan) merge(ctx context.Context, files []planned, consts []*rangeValue) (Iterator, error) {
	st := s.stats()
	if s.Table.HasPK() {
		st.mergeOf(len(files))
	}
	streams := make([]*fileStream, 0, len(files))
	closeAll := func(rest []planned) {
		for _, st := range streams {
			st.close()
		}
		closePlanned(rest)
	}
	batchRows, bufSize := fileReadSizes(len(files), s.BatchRows)
	var pre *keyMatcher
	if !s.Table.HasPK() && !s.decodeAll {
		// An append table's rows are its files' rows: each file may drop
		// those failing the row filter as it decodes them.
		pre = s.rows
	}
	for i, p := range files {
		fs, err := openFileStream(p.fo, p.order, s, s.Mem, batchRows, bufSize, p.fm, p.sel, s.needs, pre)
		if err != nil {
			closeAll(files[i:])
			return nil, err
		}
		streams = append(streams, fs)
		if p.spilled {
			removeSpilled(p.fo.f.Path)
		} else if p.counted {
			st.FilesRead.Add(1)
		}
	}
	var err error
	var it Iterator
	switch {
	case !s.Table.HasPK():
		it = &concatIterator{scan: s, streams: streams, consts: consts}
	case len(streams) == 1 && singleFileOK(s):
		if it, err = newSingleIterator(s, streams[0], consts); err != nil {
			closeAll(nil)
			return nil, err
		}
	default:
		if it, err = newMergeIterator(s, streams, consts); err != nil {
			closeAll(nil)
			return nil, err
		}
	}
	return it, nil
}

// fileReadSizes returns the batch size and per-column read buffer of each
// file of a unit of n files. A merge holds a batch and a buffer per column
// of every file at once and touches their current rows in turn: with more
// than a few files, small batches keep that working set in cache (and its
// memory bounded), which pays for their per-batch cost many times over in
// `lakesoul bench ccf` (10 and 100 upserts); buffers shrink likewise.
func fileReadSizes(n, batchRows int) (rows, buf int) {
	const fewFiles = 4
	rows, buf = batchRows, 256<<10
	if n > fewFiles {
		rows = min(batchRows, 1024)
		buf = max(32<<10, buf*2*fewFiles/n)
	}
	return rows, buf
}

func errMissingKey(path, col string) error {
	return fmt.Errorf("data file %s lacks primary key column %s", path, col)
}

// rangeValues returns, per table column, the injected value of a range column
// (nil entry for other columns).
func (s *Scan) rangeValues(desc string) ([]*rangeValue, error) {
	out := make([]*rangeValue, s.Table.Schema.NumFields())
	if len(s.Table.RangeCols) == 0 {
		return out, nil
	}
	kvs, err := layout.ParseDesc(desc)
	if err != nil {
		return nil, fmt.Errorf("partition %q: %w", desc, err)
	}
	for _, kv := range kvs {
		idx := s.Table.Schema.FieldIndices(kv.Key)
		if len(idx) == 0 {
			return nil, fmt.Errorf("partition %q names unknown column %q", desc, kv.Key)
		}
		v, err := layout.ParseValue(kv.Value, s.Table.Schema.Field(idx[0]).Type)
		if err != nil {
			return nil, fmt.Errorf("partition %q: %w", desc, err)
		}
		out[idx[0]] = &rangeValue{v: v}
	}
	return out, nil
}

type rangeValue struct{ v any }

// constArray builds an array of n copies of v with type dt.
func constArray(mem memory.Allocator, dt arrow.DataType, v any, n int) (arrow.Array, error) {
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	b.Reserve(n)
	for i := 0; i < n; i++ {
		if err := appendGo(b, v); err != nil {
			return nil, err
		}
	}
	return b.NewArray(), nil
}

// concatIterator reads an append table's unit: files one after another.
type concatIterator struct {
	scan    *Scan
	streams []*fileStream
	consts  []*rangeValue
	cur     int
	// fill holds, per table column, the last array of the partition's
	// value or of NULLs built for a batch: arrays are immutable, and a
	// unit's batches mostly have one length, so the next batch reuses it.
	fill []arrow.Array
}

func (it *concatIterator) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for it.cur < len(it.streams) {
		st := it.streams[it.cur]
		b, err := st.nextBatch(ctx)
		if err == io.EOF {
			st.close()
			it.cur++
			continue
		}
		if err != nil {
			return nil, err
		}
		out, err := it.project(st, b)
		b.Release()
		return out, err
	}
	return nil, io.EOF
}

// project maps a file batch onto the table schema.
func (it *concatIterator) project(st *fileStream, b arrow.RecordBatch) (arrow.RecordBatch, error) {
	sch := it.scan.Table.Schema
	n := int(b.NumRows())
	cols := make([]arrow.Array, sch.NumFields())
	if it.fill == nil {
		it.fill = make([]arrow.Array, len(cols))
	}
	for i, f := range sch.Fields() {
		if it.consts[i] == nil && st.colMap[i] >= 0 {
			cols[i] = b.Column(st.colMap[i])
			cols[i].Retain()
			continue
		}
		if a := it.fill[i]; a == nil || a.Len() != n {
			if a != nil {
				a.Release()
			}
			if it.consts[i] != nil {
				a, err := constArray(it.scan.Mem, f.Type, it.consts[i].v, n)
				if err != nil {
					for _, c := range cols[:i] {
						c.Release()
					}
					return nil, err
				}
				it.fill[i] = a
			} else {
				it.fill[i] = array.MakeArrayOfNull(it.scan.Mem, f.Type, n)
			}
		}
		cols[i] = it.fill[i]
		cols[i].Retain()
	}
	out := array.NewRecordBatch(sch, cols, int64(n))
	for _, c := range cols {
		c.Release()
	}
	return out, nil
}

func (it *concatIterator) Close() {
	for _, st := range it.streams {
		st.close()
	}
	for i, a := range it.fill {
		if a != nil {
			a.Release()
			it.fill[i] = nil
		}
	}
}
