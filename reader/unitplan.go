package reader

import (
	"cmp"
	"context"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/metadata"

	"github.com/lakesoul-go/lakesoul/layout"
)

// Merging only where keys overlap. A primary-key unit's merged rows are a
// function of each key's rows alone, so files whose key ranges cannot
// share a key merge independently: a unit is cut into segments — groups
// of files whose ranges overlap one another (transitively) — ordered by
// key, and its merged rows are each segment's merged rows in turn. A
// segment of one file whose keys are unique (its footer says so,
// layout.UniqueKeysKey, which the writer checks) has, for every key, the
// one row a merge would give: under every merge operator one value
// combines to itself (UseLast, UseLastNotNull, SumAll, SumLast, the joins,
// max, min; NULL to NULL), and a CDC row whose op is "delete" drops its
// key. Such a file is streamed: its batches pass through without key
// comparisons, their key columns are not read when the consumer says it
// does not read them (Scan.OnlyNeeded), and only CDC deletes are filtered
// out. One file per bucket (after
// a COPY or a compaction) and disjoint upserts are this case.
//
// Key ranges come from the footers' statistics of the leading key column:
// by the merge's order (arrowutil.RowComparer: keys compare column by
// column, the leading one first), a file whose leading values all lie
// below another's smallest holds only smaller keys, whatever the other key
// columns hold. Ranges are used only when they order exactly as the merge
// does — signed integers (Parquet's signed sort order, as Arrow's integers,
// dates and timestamps compare) of the table's type (or integers widened),
// byte strings in bytewise order (as Go compares text) — and only when every row group with rows has min/max
// statistics and counts no NULL in that column (NULLs sort first in the
// merge, outside the statistics). Touching ranges are overlapping: a
// commit's files over the size cap may share their boundary key. Files
// without a usable range (old writers, decimal or float keys, spill files)
// put the whole unit in one segment: merged as before.
//
// Statistics are not trusted blindly: when a unit has several segments,
// every row a segment yields must have its leading key inside the
// segment's range, or the read fails with 58030 naming the file
// (rangeChecker) — damaged statistics could otherwise make two versions of
// a key look apart. A unit of one file relies on no statistics.

// segment is a group of a unit's files (in snapshot order) whose key range
// overlaps no other segment's.
type segment struct {
	files []planned
	// lo, hi bound the keys' leading column over the segment's files,
	// values of kind.
	kind   keyKind
	lo, hi keyValue
	// streamed: one file whose keys are unique, read without merging.
	streamed bool
}

// fileRange is the range of a file's leading key column.
type fileRange struct {
	kind   keyKind
	lo, hi keyValue
	// empty: the file has no rows (it joins no segment's range).
	empty bool
}

// keyRange returns the range of the leading key column of the file fm
// describes, ok false when it is not known exactly (see above). It is
// worked out once per file and leaf (fm keeps it).
func (s *Scan) keyRange(fm *fileMeta) (fileRange, bool, error) {
	if fm == nil {
		return fileRange{}, false, nil
	}
	leaf := s.fileLeaf(fm, s.Table.PKCols[0])
	if leaf < 0 {
		return fileRange{}, false, nil
	}
	// The file's values must order as the table's do: the same type, or
	// integers (int widened to bigint). A DECIMAL stored as an integer,
	// or a timestamp of another unit, compares only within its file.
	fsch, err := fm.arrowSchema()
	if err != nil {
		return fileRange{}, false, err
	}
	tt := s.Table.Schema.Field(s.Table.Schema.FieldIndices(s.Table.PKCols[0])[0]).Type
	fi := fsch.FieldIndices(fm.md.Schema.Column(leaf).Name()) // a top-level column (fileLeaf)
	if len(fi) != 1 || keyKindOf(tt) == 0 {
		return fileRange{}, false, nil
	}
	if ft := fsch.Field(fi[0]).Type; !arrow.TypeEqual(ft, tt) && !(arrow.IsInteger(ft.ID()) && arrow.IsInteger(tt.ID())) {
		return fileRange{}, false, nil
	}
	fm.mu.Lock()
	defer fm.mu.Unlock()
	if kr, ok := fm.ranges[leaf]; ok {
		return kr.r, kr.ok, nil
	}
	r, ok, err := leafRange(fm, leaf)
	if err != nil {
		return r, false, err
	}
	if fm.ranges == nil {
		fm.ranges = map[int]knownRange{}
	}
	fm.ranges[leaf] = knownRange{r, ok}
	fm.account(int64(64 + len(r.lo.s) + len(r.hi.s)))
	return r, ok, nil
}

// knownRange is a file's leading-key range as keyRange found it.
type knownRange struct {
	r  fileRange
	ok bool
}

// leafRange computes keyRange's answer for a leaf of the file fm describes.
func leafRange(fm *fileMeta, leaf int) (r fileRange, ok bool, err error) {
	if r.kind = fm.kindOfLeaf(leaf); r.kind == 0 {
		return r, false, nil
	}
	r.empty = true
	for rg := range fm.md.NumRowGroups() {
		rgm := fm.md.RowGroup(rg)
		if rgm.NumRows() == 0 {
			continue
		}
		cc, err := rgm.ColumnChunk(leaf)
		if err != nil {
			return r, false, errCorrupt(fm.name, "the footer", err)
		}
		ts, err := cc.Statistics()
		if err != nil || ts == nil || !ts.HasMinMax() || !ts.HasNullCount() || ts.NullCount() != 0 {
			return r, false, nil
		}
		var lo, hi keyValue
		switch st := ts.(type) {
		case *metadata.Int32Statistics:
			lo, hi = keyValue{i: int64(st.Min())}, keyValue{i: int64(st.Max())}
		case *metadata.Int64Statistics:
			lo, hi = keyValue{i: st.Min()}, keyValue{i: st.Max()}
		case *metadata.ByteArrayStatistics:
			lo, hi = keyValue{s: string(st.Min())}, keyValue{s: string(st.Max())}
		default:
			return r, false, nil
		}
		if compareKeyValues(r.kind, lo, hi) > 0 {
			return r, false, errCorrupt(fm.name, "the key column's statistics (min above max)", nil)
		}
		if r.empty {
			r.lo, r.hi, r.empty = lo, hi, false
			continue
		}
		if compareKeyValues(r.kind, lo, r.lo) < 0 {
			r.lo = lo
		}
		if compareKeyValues(r.kind, hi, r.hi) > 0 {
			r.hi = hi
		}
	}
	return r, true, nil
}

// compareKeyValues orders two values of a leading key column of kind.
func compareKeyValues(kind keyKind, a, b keyValue) int {
	if kind == kindStr {
		return cmp.Compare(a.s, b.s)
	}
	return cmp.Compare(a.i, b.i)
}

// uniqueKeys reports whether the file fm describes says no key repeats in
// it.
func uniqueKeys(fm *fileMeta) bool {
	v := fm.md.KeyValueMetadata().FindValue(layout.UniqueKeysKey)
	return v != nil && *v == "true"
}

// segments cuts a primary-key unit's planned files into segments in key
// order; nil when the unit is one segment to merge (a file without a
// usable range, or ranges all overlapping and nothing to stream).
func (s *Scan) segments(files []planned) ([]segment, error) {
	if s.mergeAlways || len(files) == 0 {
		return nil, nil
	}
	type ranged struct {
		p planned
		r fileRange
	}
	var rs []ranged
	var empty []planned
	for _, p := range files {
		if p.spilled {
			return nil, nil
		}
		r, ok, err := s.keyRange(p.fm)
		if err != nil || !ok {
			return nil, err
		}
		if len(rs) > 0 && r.kind != rs[0].r.kind {
			return nil, nil
		}
		if r.empty {
			empty = append(empty, p)
			continue
		}
		rs = append(rs, ranged{p, r})
	}
	if len(rs) == 0 {
		return nil, nil
	}
	kind := rs[0].r.kind
	slices.SortStableFunc(rs, func(a, b ranged) int { return compareKeyValues(kind, a.r.lo, b.r.lo) })
	var segs []segment
	for _, x := range rs {
		if n := len(segs); n > 0 && compareKeyValues(kind, x.r.lo, segs[n-1].hi) <= 0 {
			last := &segs[n-1]
			last.files = append(last.files, x.p)
			if compareKeyValues(kind, x.r.hi, last.hi) > 0 {
				last.hi = x.r.hi
			}
			continue
		}
		segs = append(segs, segment{files: []planned{x.p}, kind: kind, lo: x.r.lo, hi: x.r.hi})
	}
	for i := range segs {
		seg := &segs[i]
		// A merge takes its files in snapshot order.
		slices.SortFunc(seg.files, func(a, b planned) int { return cmp.Compare(a.order, b.order) })
		seg.streamed = len(seg.files) == 1 && uniqueKeys(seg.files[0].fm)
	}
	if len(segs) == 1 && !segs[0].streamed {
		return nil, nil
	}
	// Files without rows are streamed (they yield nothing) ahead of the
	// rest, so that they are opened, counted and closed as any other.
	for _, p := range empty {
		segs = append([]segment{{files: []planned{p}, streamed: true}}, segs...)
	}
	return segs, nil
}

// splitKeyedUnits splits each primary-key unit of one file whose keys are
// unique, of splitFileBytes or more, into one unit per row group (no key
// spans two row groups). Units of several files stay whole: their segments
// are told apart by footer statistics, which Open checks against the rows
// it reads (segmentIterator), and that takes the whole unit.
func (s *Scan) splitKeyedUnits(ctx context.Context, units []Unit) ([]Unit, error) {
	var out []Unit
	for _, u := range units {
		f := u.Files[0]
		if len(u.Files) != 1 || f.Size < splitFileBytes {
			out = append(out, u)
			continue
		}
		if err := checkInTable(s.Table, f.Path); err != nil {
			return nil, err
		}
		fo := &fileOpen{ctx: ctx, store: s.Store, f: f}
		fm, err := s.fileMeta(fo)
		fo.close()
		if err != nil {
			return nil, err
		}
		if !uniqueKeys(fm) || fm.md.NumRowGroups() <= 1 {
			out = append(out, u)
			continue
		}
		for g := range fm.md.NumRowGroups() {
			out = append(out, Unit{Desc: u.Desc, Bucket: u.Bucket, Files: u.Files, RowGroups: []int{g}})
		}
	}
	return out, nil
}
