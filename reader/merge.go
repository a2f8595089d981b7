package reader

import (
	"container/heap"
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/lakesoul-go/lakesoul/internal/arrowutil"
)

// mergeIterator is the streaming k-way merge of one bucket's PK-sorted files.
//
// Streams are ordered by (primary key, file order). All rows with equal keys —
// across files and consecutive rows within one file — form one output row; for
// each column the value comes from the newest contributing row that physically
// has the column (highest file order, then latest row): LakeSoul's UseLast,
// where an explicit NULL overwrites and a missing column does not.
type mergeIterator struct {
	scan    *Scan
	streams []*mergeStream
	h       streamHeap
	consts  []*rangeValue
	// pk holds the table column indices of the primary key.
	pk       []int
	cmp      arrowutil.RowComparer
	builders []array.Builder
	appends  []arrowutil.AppendFunc
	// retired are batches streams moved past that the current key group may
	// still reference; they are released once the group is appended.
	retired []arrow.RecordBatch
	// per-column winner of the current key group
	winOrder []int
	winSeq   []int64
	winArr   []arrow.Array
	winRow   []int
	keyBuf   []arrow.Array
	started  bool
}

type mergeStream struct {
	fs    *fileStream
	batch arrow.RecordBatch
	row   int
	seq   int64
	keys  []arrow.Array
}

func newMergeIterator(s *Scan, streams []*fileStream, consts []*rangeValue) (*mergeIterator, error) {
	t := s.Table
	it := &mergeIterator{scan: s, consts: consts}
	types := make([]arrow.DataType, len(t.PKCols))
	for i, c := range t.PKCols {
		idx := t.Schema.FieldIndices(c)
		if len(idx) == 0 {
			return nil, fmt.Errorf("table %s: primary key column %s missing from schema", t.ID, c)
		}
		it.pk = append(it.pk, idx[0])
		types[i] = t.Schema.Field(idx[0]).Type
	}
	cmp, err := arrowutil.NewRowComparer(types)
	if err != nil {
		return nil, err
	}
	it.cmp = cmp
	n := t.Schema.NumFields()
	it.builders = make([]array.Builder, n)
	it.appends = make([]arrowutil.AppendFunc, n)
	for i, f := range t.Schema.Fields() {
		if consts[i] != nil {
			continue
		}
		it.builders[i] = array.NewBuilder(s.Mem, f.Type)
		if it.appends[i], err = arrowutil.Appender(it.builders[i]); err != nil {
			it.Close()
			return nil, err
		}
	}
	for _, fs := range streams {
		for _, p := range it.pk {
			if fs.colMap[p] < 0 {
				it.Close()
				return nil, fmt.Errorf("data file %s lacks primary key column %s", fs.path, t.Schema.Field(p).Name)
			}
		}
		it.streams = append(it.streams, &mergeStream{fs: fs})
	}
	it.winOrder = make([]int, n)
	it.winSeq = make([]int64, n)
	it.winArr = make([]arrow.Array, n)
	it.winRow = make([]int, n)
	it.h = streamHeap{it: it}
	return it, nil
}

// load moves st to its next batch; it reports false at the end of the file.
func (it *mergeIterator) load(ctx context.Context, st *mergeStream) (bool, error) {
	if st.batch != nil {
		it.retired = append(it.retired, st.batch)
		st.batch = nil
	}
	b, err := st.fs.nextBatch(ctx)
	if err == io.EOF {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	st.batch, st.row = b, 0
	st.keys = st.keys[:0]
	for _, p := range it.pk {
		st.keys = append(st.keys, b.Column(st.fs.colMap[p]))
	}
	return true, nil
}

func (it *mergeIterator) start(ctx context.Context) error {
	it.started = true
	for _, st := range it.streams {
		ok, err := it.load(ctx, st)
		if err != nil {
			return err
		}
		if ok {
			it.h.items = append(it.h.items, st)
		}
	}
	heap.Init(&it.h)
	return nil
}

func (it *mergeIterator) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if !it.started {
		if err := it.start(ctx); err != nil {
			return nil, err
		}
	}
	rows := 0
	for rows < it.scan.BatchRows && it.h.Len() > 0 {
		if rows%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if err := it.mergeOneKey(ctx); err != nil {
			return nil, err
		}
		rows++
	}
	if rows == 0 {
		return nil, io.EOF
	}
	return it.flush(rows)
}

// mergeOneKey consumes every row of the smallest key and appends one output row.
func (it *mergeIterator) mergeOneKey(ctx context.Context) error {
	for i := range it.winOrder {
		it.winOrder[i] = -1
	}
	first := it.h.items[0]
	// The group's key must outlive batch changes of `first`: copy the key
	// arrays (load reuses st.keys) and rely on load retiring, not releasing,
	// the batch they belong to.
	it.keyBuf = append(it.keyBuf[:0], first.keys...)
	keyArrs, keyRow := it.keyBuf, first.row
	for it.h.Len() > 0 {
		st := it.h.items[0]
		if it.cmp.Compare(st.keys, st.row, keyArrs, keyRow) != 0 {
			break
		}
		for c, bc := range st.fs.colMap {
			if bc < 0 || it.builders[c] == nil {
				continue
			}
			if st.fs.order > it.winOrder[c] || (st.fs.order == it.winOrder[c] && st.seq > it.winSeq[c]) {
				it.winOrder[c], it.winSeq[c] = st.fs.order, st.seq
				it.winArr[c], it.winRow[c] = st.batch.Column(bc), st.row
			}
		}
		st.row++
		st.seq++
		if st.row >= int(st.batch.NumRows()) {
			ok, err := it.load(ctx, st)
			if err != nil {
				return err
			}
			if !ok {
				heap.Pop(&it.h)
				continue
			}
		}
		heap.Fix(&it.h, 0)
	}
	for c, app := range it.appends {
		if app == nil {
			continue
		}
		if it.winOrder[c] < 0 {
			it.builders[c].AppendNull()
		} else {
			app(it.winArr[c], it.winRow[c])
		}
	}
	for _, b := range it.retired {
		b.Release()
	}
	it.retired = it.retired[:0]
	return nil
}

func (it *mergeIterator) flush(rows int) (arrow.RecordBatch, error) {
	sch := it.scan.Table.Schema
	cols := make([]arrow.Array, sch.NumFields())
	for i, f := range sch.Fields() {
		if it.builders[i] != nil {
			cols[i] = it.builders[i].NewArray()
			continue
		}
		a, err := constArray(it.scan.Mem, f.Type, it.consts[i].v, rows)
		if err != nil {
			for _, c := range cols {
				if c != nil {
					c.Release()
				}
			}
			return nil, err
		}
		cols[i] = a
	}
	out := array.NewRecordBatch(sch, cols, int64(rows))
	for _, c := range cols {
		c.Release()
	}
	return out, nil
}

func (it *mergeIterator) Close() {
	for _, st := range it.streams {
		if st.batch != nil {
			st.batch.Release()
			st.batch = nil
		}
		st.fs.close()
	}
	for _, b := range it.retired {
		b.Release()
	}
	it.retired = nil
	for _, b := range it.builders {
		if b != nil {
			b.Release()
		}
	}
}

// streamHeap orders streams by (current key, file order).
type streamHeap struct {
	it    *mergeIterator
	items []*mergeStream
}

func (h *streamHeap) Len() int { return len(h.items) }
func (h *streamHeap) Less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	if c := h.it.cmp.Compare(a.keys, a.row, b.keys, b.row); c != 0 {
		return c < 0
	}
	return a.fs.order < b.fs.order
}
func (h *streamHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *streamHeap) Push(x any)    { h.items = append(h.items, x.(*mergeStream)) }
func (h *streamHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}

// appendGo appends a Go value (as layout.ParseValue returns them) to b.
func appendGo(b array.Builder, v any) error {
	if v == nil {
		b.AppendNull()
		return nil
	}
	switch bb := b.(type) {
	case *array.Int8Builder:
		bb.Append(v.(int8))
	case *array.Int16Builder:
		bb.Append(v.(int16))
	case *array.Int32Builder:
		bb.Append(v.(int32))
	case *array.Int64Builder:
		bb.Append(v.(int64))
	case *array.Float32Builder:
		bb.Append(v.(float32))
	case *array.Float64Builder:
		bb.Append(v.(float64))
	case *array.BooleanBuilder:
		bb.Append(v.(bool))
	case *array.StringBuilder:
		bb.Append(v.(string))
	case *array.BinaryBuilder:
		bb.Append(v.([]byte))
	case *array.Date32Builder:
		bb.Append(v.(arrow.Date32))
	case *array.TimestampBuilder:
		bb.Append(v.(arrow.Timestamp))
	case *array.Decimal128Builder:
		bb.Append(v.(decimal128.Num))
	default:
		return fmt.Errorf("cannot inject partition value into column of type %s", b.Type())
	}
	return nil
}
