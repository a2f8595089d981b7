package reader

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// segmentIterator reads a primary-key unit cut into segments (unitplan.go):
// each segment in key order, streamed or merged, opened when the previous
// one is done (so one segment's files are open at a time).
type segmentIterator struct {
	scan   *Scan
	segs   []segment
	consts []*rangeValue
	next   int
	cur    Iterator
}

func newSegmentIterator(s *Scan, segs []segment, consts []*rangeValue) *segmentIterator {
	return &segmentIterator{scan: s, segs: segs, consts: consts}
}

// open starts reading segment i, taking its files over. With several
// segments, its rows are checked against its key range.
func (it *segmentIterator) open(ctx context.Context, i int) (Iterator, error) {
	seg := it.segs[i]
	it.segs[i].files = nil
	s := it.scan
	var check *rangeChecker
	if len(it.segs) > 1 && seg.kind != 0 {
		check = &rangeChecker{scan: s, seg: seg, col: s.Table.Schema.FieldIndices(s.Table.PKCols[0])[0]}
		for _, p := range seg.files {
			check.paths = append(check.paths, p.fo.f.Path)
		}
	}
	var inner Iterator
	var err error
	switch {
	case seg.streamed:
		need := s.needsStreamed
		if check != nil {
			need = func(c int) bool { return c == check.col || s.needsStreamed(c) }
		}
		inner, err = s.stream(seg.files[0], it.consts, need)
	default:
		files := seg.files
		if s.Spill != "" && len(files) > MaxFanIn {
			if files, err = s.premerge(ctx, files, it.consts); err != nil {
				return nil, err
			}
		}
		inner, err = s.merge(ctx, files, it.consts)
	}
	if err != nil || check == nil {
		return inner, err
	}
	check.it = inner
	return check, nil
}

// rangeChecker passes on a segment's rows, failing (58030, naming its
// files) at a row whose leading key lies outside the segment's range:
// the files' statistics were wrong, and the segments may not be apart.
type rangeChecker struct {
	scan  *Scan
	it    Iterator
	seg   segment
	col   int // the leading key column in the table schema
	paths []string
}

func (c *rangeChecker) nextSelected(ctx context.Context) (Selected, error) {
	b, err := NextSelected(ctx, c.it)
	if err != nil {
		return b, err
	}
	if bad := c.outside(b); bad >= 0 {
		b.Release()
		return Selected{}, errCorrupt(strings.Join(c.paths, ", "),
			fmt.Sprintf("the statistics of key column %s (a key read lies outside their range)", c.scan.Table.PKCols[0]), nil)
	}
	return b, nil
}

// outside returns a selected row of b whose leading key is outside the
// segment's range, or -1.
func (c *rangeChecker) outside(b Selected) int {
	col := b.Column(c.col)
	for i := range b.Len() {
		r := b.Row(i)
		if col.IsNull(r) {
			return r
		}
		var v keyValue
		switch a := col.(type) {
		case *array.String:
			v.s = a.Value(r)
		case *array.Int64:
			v.i = a.Value(r)
		case *array.Int32:
			v.i = int64(a.Value(r))
		case *array.Int16:
			v.i = int64(a.Value(r))
		case *array.Int8:
			v.i = int64(a.Value(r))
		case *array.Date32:
			v.i = int64(a.Value(r))
		case *array.Timestamp:
			v.i = int64(a.Value(r))
		default:
			return r // not a ranged type: cannot be
		}
		if compareKeyValues(c.seg.kind, v, c.seg.lo) < 0 || compareKeyValues(c.seg.kind, v, c.seg.hi) > 0 {
			return r
		}
	}
	return -1
}

func (c *rangeChecker) Next(ctx context.Context) (arrow.RecordBatch, error) {
	b, err := c.nextSelected(ctx)
	if err != nil || b.Sel == nil {
		return b.RecordBatch, err
	}
	defer b.Release()
	return takeRows(c.scan, b.RecordBatch, b.Sel)
}

func (c *rangeChecker) Close() { c.it.Close() }

func (it *segmentIterator) nextSelected(ctx context.Context) (Selected, error) {
	for {
		if it.cur == nil {
			if it.next == len(it.segs) {
				return Selected{}, io.EOF
			}
			cur, err := it.open(ctx, it.next)
			it.next++
			if err != nil {
				return Selected{}, err
			}
			it.cur = cur
		}
		b, err := NextSelected(ctx, it.cur)
		if err == io.EOF {
			it.cur.Close()
			it.cur = nil
			continue
		}
		return b, err
	}
}

func (it *segmentIterator) Next(ctx context.Context) (arrow.RecordBatch, error) {
	b, err := it.nextSelected(ctx)
	if err != nil || b.Sel == nil {
		return b.RecordBatch, err
	}
	defer b.Release()
	return takeRows(it.scan, b.RecordBatch, b.Sel)
}

func (it *segmentIterator) Close() {
	if it.cur != nil {
		it.cur.Close()
		it.cur = nil
	}
	for i := it.next; i < len(it.segs); i++ {
		closePlanned(it.segs[i].files)
		it.segs[i].files = nil
	}
	it.next = len(it.segs)
}

// stream opens a file whose keys are unique and overlap no other file of
// its unit (unitplan.go), reading the columns need selects: its rows are
// the merged rows, less CDC deletes.
func (s *Scan) stream(p planned, consts []*rangeValue, need func(c int) bool) (Iterator, error) {
	// The file's rows are the merged rows: it may drop those failing the
	// row filter as it decodes them — unless CDC deletes are dropped after
	// it, which would then count rows as merged that were not.
	pre := s.rows
	if (s.Table.CDCColumn() != "" && !s.KeepCDCDeletes) || s.decodeAll {
		pre = nil
	}
	fs, err := openFileStream(p.fo, p.order, s, s.Mem, s.BatchRows, 256<<10, p.fm, p.sel, need, pre)
	if err != nil {
		p.fo.close()
		return nil, err
	}
	st := s.stats()
	if p.counted {
		st.FilesRead.Add(1)
	}
	st.FilesStreamed.Add(1)
	it := &streamIterator{c: concatIterator{scan: s, streams: []*fileStream{fs}, consts: consts}, cdc: -1}
	if c := s.Table.CDCColumn(); c != "" && !s.KeepCDCDeletes {
		// A file without the op column holds no delete.
		if idx := s.Table.Schema.FieldIndices(c); len(idx) > 0 && fs.colMap[idx[0]] >= 0 {
			it.cdc = idx[0]
		}
	}
	return it, nil
}

// streamIterator passes a streamed file's batches through in the table
// schema, selecting the rows whose CDC op is not "delete" (snapshot reads
// of CDC tables).
type streamIterator struct {
	c concatIterator
	// cdc is the table's CDC op column when the file has it and deletes
	// are dropped, else -1.
	cdc int
	sel []int
}

func (it *streamIterator) nextSelected(ctx context.Context) (Selected, error) {
	for {
		out, err := it.c.Next(ctx)
		if err != nil || it.cdc < 0 {
			return Selected{RecordBatch: out}, err
		}
		ops := out.Column(it.cdc)
		it.sel = it.sel[:0]
		n := int(out.NumRows())
		for r := range n {
			if !isCDCDelete(ops, r) {
				it.sel = append(it.sel, r)
			}
		}
		switch len(it.sel) {
		case n:
			return Selected{RecordBatch: out}, nil
		case 0:
			out.Release()
			continue
		}
		return Selected{RecordBatch: out, Sel: append([]int(nil), it.sel...)}, nil
	}
}

func (it *streamIterator) Next(ctx context.Context) (arrow.RecordBatch, error) {
	b, err := it.nextSelected(ctx)
	if err != nil || b.Sel == nil {
		return b.RecordBatch, err
	}
	defer b.Release()
	return takeRows(it.c.scan, b.RecordBatch, b.Sel)
}

func (it *streamIterator) Close() { it.c.Close() }
