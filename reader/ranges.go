package reader

import (
	"context"
	"errors"
	"io"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

const (
	// rangedWholeBytes: a file read for selected pages is read whole only
	// up to this size; larger ones are read page by page.
	rangedWholeBytes = 64 << 10
	// rangedBufferBytes bounds the read buffer of each column of a file
	// read for selected pages: about one page (writer.DataPageBytes).
	rangedBufferBytes = 64 << 10
)

// seekable reports whether the leaves of the row groups can be read from a
// row on: every chunk has an offset index and no dictionary page (a seek
// lands on a data page and would miss the dictionary).
func seekable(md *metadata.FileMetaData, leaves, rowGroups []int) bool {
	for _, rg := range rowGroups {
		rgm := md.RowGroup(rg)
		for _, l := range leaves {
			cc, err := rgm.ColumnChunk(l)
			if err != nil || cc.GetOffsetIndexLocation() == nil || cc.HasDictionaryPage() {
				return false
			}
		}
	}
	return true
}

// rangeReader reads selected row ranges of a file's selected row groups:
// each column reader seeks to a range's first row (the offset index finds
// its page) and reads the range in batches.
//
// With a probe (a point lookup), the key column of a range is read first
// and the range narrowed to the rows that hold one of the keys: the other
// columns are then decoded only there, and not at all in a file whose
// bloom filter matched falsely.
type rangeReader struct {
	cols   []*pqarrow.ColumnReader
	sc     *arrow.Schema
	mem    memory.Allocator
	batch  int64
	ranges []rowRange // in rows of the selected row groups, concatenated
	cur    int        // current range
	pos    int64      // next row to read; -1: seek first
	rec    arrow.RecordBatch
	err    error
	probe  *rangeProbe
	probed int // ranges before this one are narrowed already
	// keys are the key column's values of the last narrowed range, from
	// row keyBase on: its runs take their keys from here instead of
	// decoding the column's pages again.
	keys    arrow.Array
	keyBase int64
}

// rangeProbe narrows ranges to the rows whose key column (cols[col])
// satisfies pred.
type rangeProbe struct {
	col  int
	pred *keyPred
}

func newRangeReader(ctx context.Context, fr *pqarrow.FileReader, leaves []int, sel *fileSelection, batch int64, mem memory.Allocator,
	probe *rangeProbe) (*rangeReader, error) {
	cols, sc, err := fr.GetFieldReaders(ctx, leaves, sel.rowGroups)
	if err != nil {
		return nil, err
	}
	r := &rangeReader{cols: cols, sc: sc, mem: mem, batch: batch, pos: -1, probe: probe}
	var base int64
	md := fr.ParquetReader().MetaData()
	for i, rg := range sel.rowGroups {
		rows := md.RowGroup(rg).NumRows()
		if sel.ranges[i] == nil {
			r.add(rowRange{base, base + rows})
		}
		for _, rr := range sel.ranges[i] {
			r.add(rowRange{base + rr.start, base + rr.end})
		}
		base += rows
	}
	return r, nil
}

// add appends a range, joining it to the previous one when they touch.
func (r *rangeReader) add(rr rowRange) {
	if n := len(r.ranges); n > 0 && r.ranges[n-1].end == rr.start {
		r.ranges[n-1].end = rr.end
		return
	}
	r.ranges = append(r.ranges, rr)
}

func (r *rangeReader) Next() bool {
	if r.rec != nil {
		r.rec.Release()
		r.rec = nil
	}
	for r.err == nil && r.cur < len(r.ranges) {
		if r.probe != nil && r.probed <= r.cur {
			if r.err = r.narrow(); r.err != nil {
				return false
			}
			continue
		}
		rr := r.ranges[r.cur]
		if r.pos < rr.start {
			for i, c := range r.cols {
				if r.probe != nil && i == r.probe.col {
					continue // read by narrow (r.keys)
				}
				if err := c.SeekToRow(rr.start); err != nil {
					r.err = err
					return false
				}
			}
			r.pos = rr.start
		}
		n := min(r.batch, rr.end-r.pos)
		if n <= 0 {
			r.cur++
			continue
		}
		r.rec, r.err = r.read(n)
		if r.err != nil {
			return false
		}
		r.pos += n
		return true
	}
	return false
}

// narrow replaces the current range by the runs of its rows whose key the
// probe matches (nothing when none does), reading only the key column.
func (r *rangeReader) narrow() error {
	rr := r.ranges[r.cur]
	if rr.end <= rr.start {
		r.ranges = slices.Delete(r.ranges, r.cur, r.cur+1)
		r.probed = r.cur
		return nil
	}
	c := r.cols[r.probe.col]
	if err := c.SeekToRow(rr.start); err != nil {
		return err
	}
	r.pos = -1 // every column seeks again before reading
	var chunks []arrow.Array
	defer releaseAll(chunks)
	for at := rr.start; at < rr.end; {
		n := min(r.batch, rr.end-at)
		ch, err := c.NextBatch(n)
		if err != nil {
			return err
		}
		if int64(ch.Len()) != n {
			ch.Release()
			return errors.New("key column ended before its row group")
		}
		for _, a := range ch.Chunks() {
			a.Retain()
			chunks = append(chunks, a)
		}
		ch.Release()
		at += n
	}
	keys := chunks[0]
	if len(chunks) > 1 {
		var err error
		if keys, err = array.Concatenate(chunks, r.mem); err != nil {
			return err
		}
	} else {
		keys.Retain()
	}
	if r.keys != nil {
		r.keys.Release()
	}
	r.keys, r.keyBase = keys, rr.start
	var runs []rowRange
	for i := range keys.Len() {
		if r.probe.pred.match(valueAt(keys, i)) {
			row := rr.start + int64(i)
			if k := len(runs); k > 0 && runs[k-1].end == row {
				runs[k-1].end++
			} else {
				runs = append(runs, rowRange{row, row + 1})
			}
		}
	}
	r.ranges = slices.Concat(r.ranges[:r.cur], runs, r.ranges[r.cur+1:])
	r.probed = r.cur + len(runs)
	return nil
}

// read reads the next n rows of every column.
func (r *rangeReader) read(n int64) (arrow.RecordBatch, error) {
	arrs := make([]arrow.Array, len(r.cols))
	defer releaseAll(arrs)
	for i, c := range r.cols {
		if r.probe != nil && i == r.probe.col {
			off := r.pos - r.keyBase
			arrs[i] = array.NewSlice(r.keys, off, off+n)
			continue
		}
		ch, err := c.NextBatch(n)
		if err != nil {
			return nil, err
		}
		switch {
		case int64(ch.Len()) != n:
			err = errors.New("column ended before its row group")
		case len(ch.Chunks()) == 1:
			arrs[i] = ch.Chunk(0)
			arrs[i].Retain()
		default:
			arrs[i], err = array.Concatenate(ch.Chunks(), r.mem)
		}
		ch.Release()
		if err != nil {
			return nil, err
		}
	}
	return array.NewRecordBatch(r.sc, arrs, n), nil
}

func (r *rangeReader) RecordBatch() arrow.RecordBatch { return r.rec }

func (r *rangeReader) Err() error {
	if r.err == io.EOF {
		return nil
	}
	return r.err
}

func (r *rangeReader) Release() {
	if r.rec != nil {
		r.rec.Release()
		r.rec = nil
	}
	if r.keys != nil {
		r.keys.Release()
		r.keys = nil
	}
	for _, c := range r.cols {
		c.Release()
	}
	r.cols = nil
}
