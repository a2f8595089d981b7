package reader

import (
	"context"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakesoul-go/lakesoul/internal/arrowutil"
)

// singleIterator reads a PK bucket that has exactly one file, on a table
// whose columns all merge with UseLast and that has no CDC column. The file
// is sorted by key, so merging only means keeping the last row of each run of
// equal keys; batches without such runs pass through without copying. A
// batch's last row is held back until the next batch shows whether its key
// continues there.
type singleIterator struct {
	c       *concatIterator
	st      *fileStream
	keyCols []int // batch column index of each key column
	cmp     arrowutil.RowComparer
	pending arrow.RecordBatch // last row of the previous batch, not yet emitted
	queue   []arrow.RecordBatch
	done    bool
	keysA   []arrow.Array
	keysB   []arrow.Array
}

// singleFileOK reports whether units of the table can use singleIterator.
func singleFileOK(s *Scan) bool {
	if s.Table.CDCColumn() != "" {
		return false
	}
	ops, err := TableMergeOps(s.Table)
	if err != nil {
		return false
	}
	for _, op := range ops {
		if op != UseLast {
			return false
		}
	}
	return true
}

func newSingleIterator(s *Scan, st *fileStream, consts []*rangeValue) (*singleIterator, error) {
	it := &singleIterator{c: &concatIterator{scan: s, streams: []*fileStream{st}, consts: consts}, st: st}
	var types []arrow.DataType
	for _, k := range s.Table.PKCols {
		idx := s.Table.Schema.FieldIndices(k)
		if len(idx) == 0 || st.colMap[idx[0]] < 0 {
			return nil, errMissingKey(st.path, k)
		}
		it.keyCols = append(it.keyCols, st.colMap[idx[0]])
		types = append(types, s.Table.Schema.Field(idx[0]).Type)
	}
	cmp, err := arrowutil.NewRowComparer(types)
	if err != nil {
		return nil, err
	}
	it.cmp = cmp
	return it, nil
}

func (it *singleIterator) keys(b arrow.RecordBatch, buf []arrow.Array) []arrow.Array {
	buf = buf[:0]
	for _, c := range it.keyCols {
		buf = append(buf, b.Column(c))
	}
	return buf
}

func (it *singleIterator) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if len(it.queue) > 0 {
			b := it.queue[0]
			it.queue = it.queue[1:]
			out, err := it.c.project(it.st, b)
			b.Release()
			return out, err
		}
		if it.done {
			if it.pending != nil {
				it.queue = append(it.queue, it.pending)
				it.pending = nil
				continue
			}
			return nil, io.EOF
		}
		b, err := it.st.nextBatch(ctx)
		if err == io.EOF {
			it.done = true
			continue
		}
		if err != nil {
			return nil, err
		}
		it.keysB = it.keys(b, it.keysB)
		if it.pending != nil {
			it.keysA = it.keys(it.pending, it.keysA)
			if it.cmp.Compare(it.keysA, 0, it.keysB, 0) == 0 {
				it.pending.Release() // superseded by the first row of b
			} else {
				it.queue = append(it.queue, it.pending)
			}
			it.pending = nil
		}
		n := int(b.NumRows())
		var keep []int
		dups := false
		for i := 0; i < n-1; i++ {
			if it.cmp.Compare(it.keysB, i, it.keysB, i+1) == 0 {
				dups = true
			} else {
				keep = append(keep, i)
			}
		}
		switch {
		case len(keep) == 0: // one key (n == 1, or all its rows)
		case !dups:
			it.queue = append(it.queue, b.NewSlice(0, int64(n-1)))
		default:
			taken, err := takeRows(it.c.scan, b, keep)
			if err != nil {
				b.Release()
				return nil, err
			}
			it.queue = append(it.queue, taken)
		}
		it.pending = b.NewSlice(int64(n-1), int64(n))
		b.Release()
	}
}

// takeRows gathers rows of b into a new batch. A column of NULLs only
// (one the consumer does not read, Scan.Needed) is not gathered: the
// first len(rows) of its values are as good, and slicing copies nothing.
func takeRows(s *Scan, b arrow.RecordBatch, rows []int) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, b.NumCols())
	for i := range cols {
		if c := b.Column(i); c.NullN() == c.Len() {
			cols[i] = array.NewSlice(c, 0, int64(len(rows)))
			continue
		}
		a, err := arrowutil.Take(s.Mem, b.Column(i), rows)
		if err != nil {
			for _, c := range cols[:i] {
				c.Release()
			}
			return nil, err
		}
		cols[i] = a
	}
	out := array.NewRecordBatch(b.Schema(), cols, int64(len(rows)))
	for _, c := range cols {
		c.Release()
	}
	return out, nil
}

func (it *singleIterator) Close() {
	if it.pending != nil {
		it.pending.Release()
		it.pending = nil
	}
	for _, b := range it.queue {
		b.Release()
	}
	it.queue = nil
	it.st.close()
}
