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
	// ops is each column's merge operator; cdcCol the CDC op column or -1.
	ops     []MergeOp
	cdcCol  int
	group   []groupEntry
	vals    []valueRef
	keyBuf  []arrow.Array
	started bool
}

type mergeStream struct {
	fs    *fileStream
	batch arrow.RecordBatch
	row   int
	seq   int64
	keys  []arrow.Array
	// strKey/intKey are set when the key is a single text/bigint column, the
	// common case, so comparisons skip the generic comparer.
	strKey *array.String
	intKey *array.Int64
}

// compareStreams orders two streams' current rows by key.
func (it *mergeIterator) compareStreams(a, b *mergeStream) int {
	switch {
	case a.strKey != nil:
		x, y := a.strKey.Value(a.row), b.strKey.Value(b.row)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case a.intKey != nil:
		x, y := a.intKey.Value(a.row), b.intKey.Value(b.row)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	}
	return it.cmp.Compare(a.keys, a.row, b.keys, b.row)
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
		if consts[i] != nil || !s.needs(i) {
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
	if it.ops, err = TableMergeOps(t); err != nil {
		it.Close()
		return nil, err
	}
	it.cdcCol = -1
	if c := t.Properties[CDCColumnProperty]; c != "" {
		if idx := t.Schema.FieldIndices(c); len(idx) > 0 {
			it.cdcCol = idx[0]
		}
	}
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
	st.strKey, st.intKey = nil, nil
	if len(st.keys) == 1 {
		switch k := st.keys[0].(type) {
		case *array.String:
			st.strKey = k
		case *array.Int64:
			st.intKey = k
		}
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
	for n := 0; rows < it.scan.BatchRows && it.h.Len() > 0; n++ {
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		emitted, err := it.mergeOneKey(ctx)
		if err != nil {
			return nil, err
		}
		if emitted {
			rows++
		}
	}
	if rows == 0 {
		return nil, io.EOF
	}
	return it.flush(rows)
}

// groupEntry is one row of the key group being merged.
type groupEntry struct {
	order  int
	seq    int64
	batch  arrow.RecordBatch
	colMap []int
	row    int
}

// mergeOneKey consumes every row of the smallest key and appends one output
// row, unless the key's merged row is a CDC delete (then it reports false).
func (it *mergeIterator) mergeOneKey(ctx context.Context) (bool, error) {
	first := it.h.items[0]
	// The group's key must outlive batch changes of `first`: copy its key
	// position into a stream value of its own (load reuses st.keys) and rely
	// on load retiring, not releasing, the batch it belongs to.
	it.keyBuf = append(it.keyBuf[:0], first.keys...)
	key := mergeStream{keys: it.keyBuf, row: first.row, strKey: first.strKey, intKey: first.intKey}
	it.group = it.group[:0]
	for it.h.Len() > 0 {
		st := it.h.items[0]
		if it.compareStreams(st, &key) != 0 {
			break
		}
		it.group = append(it.group, groupEntry{order: st.fs.order, seq: st.seq, batch: st.batch, colMap: st.fs.colMap, row: st.row})
		st.row++
		st.seq++
		if st.row >= int(st.batch.NumRows()) {
			ok, err := it.load(ctx, st)
			if err != nil {
				return false, err
			}
			if !ok {
				heap.Pop(&it.h)
				continue
			}
		}
		heap.Fix(&it.h, 0)
	}
	// Oldest first: file order, then arrival within the file.
	g := it.group
	for i := 1; i < len(g); i++ {
		for j := i; j > 0 && (g[j].order < g[j-1].order || (g[j].order == g[j-1].order && g[j].seq < g[j-1].seq)); j-- {
			g[j], g[j-1] = g[j-1], g[j]
		}
	}
	emit := true
	if it.cdcCol >= 0 && !it.scan.KeepCDCDeletes {
		if arr, row, ok := it.lastValue(it.cdcCol); ok && !arr.IsNull(row) {
			if v, _ := arr.(*array.String); v != nil && v.Value(row) == "delete" {
				emit = false
			}
		}
	}
	if emit {
		for c, app := range it.appends {
			if app == nil {
				continue
			}
			if it.ops[c] == UseLast {
				if arr, row, ok := it.lastValue(c); ok {
					app(arr, row)
				} else {
					it.builders[c].AppendNull()
				}
				continue
			}
			if err := it.combine(c); err != nil {
				return false, err
			}
		}
	}
	for _, b := range it.retired {
		b.Release()
	}
	it.retired = it.retired[:0]
	return emit, nil
}

// lastValue is the newest value of column c in the group, if any row has it.
func (it *mergeIterator) lastValue(c int) (arrow.Array, int, bool) {
	for i := len(it.group) - 1; i >= 0; i-- {
		e := it.group[i]
		if bc := e.colMap[c]; bc >= 0 {
			return e.batch.Column(bc), e.row, true
		}
	}
	return nil, 0, false
}

func (it *mergeIterator) flush(rows int) (arrow.RecordBatch, error) {
	sch := it.scan.Table.Schema
	cols := make([]arrow.Array, sch.NumFields())
	for i, f := range sch.Fields() {
		if it.builders[i] != nil {
			cols[i] = it.builders[i].NewArray()
			continue
		}
		if it.consts[i] == nil {
			cols[i] = array.MakeArrayOfNull(it.scan.Mem, f.Type, rows)
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
	if c := h.it.compareStreams(a, b); c != 0 {
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
