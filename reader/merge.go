package reader

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"io"
	"sort"

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
//
// Key order comes from a heap of streams, one key group at a time. Unordered
// scans in which every row wins or loses its key outright take a window of
// keys at a time instead (window.go).
type mergeIterator struct {
	scan    *Scan
	streams []*mergeStream
	h       streamHeap
	consts  []*rangeValue
	// pk holds the table column indices of the primary key.
	pk  []int
	cmp arrowutil.RowComparer
	// Output columns under UseLast (nearly all) collect references to the
	// winning values in refs and are gathered into arrays when a batch is
	// flushed; columns under other merge operators append computed values
	// to builders.
	refs     [][]arrowutil.Ref
	builders []array.Builder
	appends  []arrowutil.AppendFunc
	// retired are batches streams moved past. In key order, refs of the
	// batch being built may still point into them: they are released when
	// it is flushed. Unordered, they are finished after the key group that
	// retired them (finishRetired).
	retired []*batchState
	// Unordered scans only: held are finished batches the slow path's refs
	// point into, released at the next flush; ready are output batches of
	// winning rows passed through from files; mixed counts the rows in refs
	// and builders; allLast is set when every column merges by UseLast.
	held    []arrow.RecordBatch
	ready   []Selected
	mixed   int
	allLast bool
	// ops is each column's merge operator; cdcCol the CDC op column or -1.
	ops     []MergeOp
	cdcCol  int
	group   []groupEntry
	vals    []valueRef
	keyBuf  []arrow.Array
	started bool
	// Window merging (window.go): useWindow is set when it applies;
	// windowOrder holds the streams newest file first; win is the key table.
	useWindow   bool
	windowOrder []*mergeStream
	win         winTable
}

type mergeStream struct {
	fs *fileStream
	// idx is the stream's position in mergeIterator.streams; winEnd ends its
	// rows in the current window.
	idx    int
	winEnd int
	batch  arrow.RecordBatch
	bs     *batchState // batch and what became of its rows
	row    int
	seq    int64
	keys   []arrow.Array
	// strKey/intKey are set when the key is a single text/bigint column, the
	// common case, so comparisons skip the generic comparer.
	strKey *array.String
	intKey *array.Int64
	// prefix orders the current row before any full key comparison: the
	// first 8 bytes of a text key, big-endian and zero-padded, or a bigint
	// key with its sign bit flipped. Distinct prefixes order rows exactly;
	// equal ones need the full comparison (always 0 for other key types).
	prefix uint64
}

// batchState is a loaded batch and, in unordered scans, the rows of it that
// won their key groups outright (ascending, since groups complete in key
// order) and whether the slow path references it.
type batchState struct {
	b    arrow.RecordBatch
	fs   *fileStream
	sel  []int
	held bool
}

// setRow moves st to row and refreshes its prefix.
func (st *mergeStream) setRow(row int) {
	st.row = row
	switch {
	case st.strKey != nil:
		st.prefix = textPrefix(st.strKey.Value(row))
	case st.intKey != nil:
		st.prefix = uint64(st.intKey.Value(row)) ^ (1 << 63)
	}
}

// textPrefix is the first 8 bytes of s as a big-endian number, zero-padded.
func textPrefix(s string) uint64 {
	if len(s) >= 8 {
		return binary.BigEndian.Uint64([]byte(s[:8]))
	}
	var b [8]byte
	copy(b[:], s)
	return binary.BigEndian.Uint64(b[:])
}

// compareStreams orders two streams' current rows by key.
func (it *mergeIterator) compareStreams(a, b *mergeStream) int {
	if a.prefix != b.prefix {
		if a.prefix < b.prefix {
			return -1
		}
		return 1
	}
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
	if it.ops, err = TableMergeOps(t); err != nil {
		return nil, err
	}
	n := t.Schema.NumFields()
	it.refs = make([][]arrowutil.Ref, n)
	it.builders = make([]array.Builder, n)
	it.appends = make([]arrowutil.AppendFunc, n)
	for i, f := range t.Schema.Fields() {
		if consts[i] != nil || !s.needs(i) {
			continue
		}
		if it.ops[i] == UseLast {
			it.refs[i] = make([]arrowutil.Ref, 0, s.BatchRows)
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
		it.streams = append(it.streams, &mergeStream{fs: fs, idx: len(it.streams)})
	}
	it.allLast = true
	for i := range n {
		if it.builders[i] != nil {
			it.allLast = false
		}
	}
	for _, fs := range streams {
		fs.complete = true
		for i := range n {
			if it.refs[i] != nil && fs.colMap[i] < 0 {
				fs.complete = false
			}
		}
	}
	it.cdcCol = -1
	if c := t.Properties[CDCColumnProperty]; c != "" {
		if idx := t.Schema.FieldIndices(c); len(idx) > 0 {
			it.cdcCol = idx[0]
		}
	}
	it.h = streamHeap{it: it}
	if it.useWindow = it.windowOK(); it.useWindow {
		it.windowOrder = append([]*mergeStream(nil), it.streams...)
		sort.SliceStable(it.windowOrder, func(i, j int) bool { return it.windowOrder[i].fs.order > it.windowOrder[j].fs.order })
		it.win.seed = maphash.MakeSeed()
	}
	return it, nil
}

// load moves st to its next batch; it reports false at the end of the file.
func (it *mergeIterator) load(ctx context.Context, st *mergeStream) (bool, error) {
	if st.batch != nil {
		it.retired = append(it.retired, st.bs)
		st.batch, st.bs = nil, nil
	}
	b, err := st.fs.nextBatch(ctx)
	if err == io.EOF {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	st.batch, st.bs = b, &batchState{b: b, fs: st.fs}
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
	st.setRow(0)
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
	it.h.init()
	return nil
}

func (it *mergeIterator) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if it.scan.Unordered {
		return it.nextUnordered(ctx)
	}
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

// maxHeldBatches bounds the finished batches an unordered merge keeps for
// the slow path's refs: reaching it flushes the merged rows early.
const maxHeldBatches = 16

// nextUnordered returns the next batch of an unordered scan: winning rows
// passed through from a finished file batch, or merged rows the slow path
// built.
func (it *mergeIterator) nextUnordered(ctx context.Context) (arrow.RecordBatch, error) {
	s, err := it.nextSelected(ctx)
	if err != nil || s.Sel == nil {
		return s.RecordBatch, err
	}
	defer s.Release()
	return it.compact(s)
}

// nextSelected is nextUnordered without compacting passed-through batches:
// a finished file batch comes back whole, with the rows that won selected.
func (it *mergeIterator) nextSelected(ctx context.Context) (Selected, error) {
	if !it.scan.Unordered {
		b, err := it.Next(ctx)
		return Selected{RecordBatch: b}, err
	}
	if !it.started {
		if err := it.start(ctx); err != nil {
			return Selected{}, err
		}
	}
	for n := 0; ; n++ {
		if len(it.ready) > 0 {
			b := it.ready[0]
			it.ready[0] = Selected{}
			it.ready = it.ready[1:]
			return b, nil
		}
		if it.mixed >= it.scan.BatchRows || len(it.held) >= maxHeldBatches || (it.h.Len() == 0 && len(it.held)+it.mixed > 0) {
			if it.mixed == 0 {
				it.releaseFlushed()
				continue
			}
			rows := it.mixed
			it.mixed = 0
			b, err := it.flush(rows)
			return Selected{RecordBatch: b}, err
		}
		if it.h.Len() == 0 {
			return Selected{}, io.EOF
		}
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return Selected{}, err
			}
		}
		if it.useWindow {
			if err := it.mergeWindow(ctx); err != nil {
				return Selected{}, err
			}
		} else if _, err := it.mergeOneKey(ctx); err != nil {
			return Selected{}, err
		}
		if err := it.finishRetired(); err != nil {
			return Selected{}, err
		}
	}
}

// finishRetired turns each batch retired by the last key group into an
// output batch of its winning rows (selected, not copied: see compact), and
// releases the batch unless the slow path's refs still point into it.
func (it *mergeIterator) finishRetired() error {
	for i, bs := range it.retired {
		it.retired[i] = nil
		if len(bs.sel) > 0 {
			out, err := it.passThrough(bs)
			if err != nil {
				return err
			}
			sel := bs.sel
			if len(sel) == int(bs.b.NumRows()) {
				sel = nil
			}
			it.ready = append(it.ready, Selected{RecordBatch: out, Sel: sel})
		}
		if bs.held {
			it.held = append(it.held, bs.b)
		} else {
			bs.b.Release()
		}
	}
	it.retired = it.retired[:0]
	return nil
}

// passThrough returns bs's batch in the table schema: the file's columns
// (shared), partition values, and NULL for the rest.
func (it *mergeIterator) passThrough(bs *batchState) (arrow.RecordBatch, error) {
	sch := it.scan.Table.Schema
	n := int(bs.b.NumRows())
	cols := make([]arrow.Array, sch.NumFields())
	for i, f := range sch.Fields() {
		var err error
		switch bc := bs.fs.colMap[i]; {
		case it.consts[i] != nil:
			cols[i], err = constArray(it.scan.Mem, f.Type, it.consts[i].v, n)
		case it.refs[i] == nil || bc < 0:
			cols[i] = array.MakeArrayOfNull(it.scan.Mem, f.Type, n)
		default:
			cols[i] = bs.b.Column(bc)
			cols[i].Retain()
		}
		if err != nil {
			releaseAll(cols)
			return nil, err
		}
	}
	out := array.NewRecordBatch(sch, cols, int64(n))
	releaseAll(cols)
	return out, nil
}

// compact copies the selected rows of s into a batch of their own.
func (it *mergeIterator) compact(s Selected) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, s.NumCols())
	for i := range cols {
		var err error
		if cols[i], err = arrowutil.Take(it.scan.Mem, s.Column(i), s.Sel); err != nil {
			releaseAll(cols)
			return nil, err
		}
	}
	out := array.NewRecordBatch(s.Schema(), cols, int64(len(s.Sel)))
	releaseAll(cols)
	return out, nil
}

// groupEntry is one row of the key group being merged.
type groupEntry struct {
	order  int
	seq    int64
	batch  arrow.RecordBatch
	bs     *batchState
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
	key := mergeStream{keys: it.keyBuf, row: first.row, strKey: first.strKey, intKey: first.intKey, prefix: first.prefix}
	it.group = it.group[:0]
	for it.h.Len() > 0 {
		st := it.h.items[0]
		if it.compareStreams(st, &key) != 0 {
			break
		}
		it.group = append(it.group, groupEntry{order: st.fs.order, seq: st.seq, batch: st.batch, bs: st.bs, colMap: st.fs.colMap, row: st.row})
		st.seq++
		if st.row+1 < int(st.batch.NumRows()) {
			st.setRow(st.row + 1)
		} else {
			ok, err := it.load(ctx, st)
			if err != nil {
				return false, err
			}
			if !ok {
				it.h.popTop()
				continue
			}
		}
		it.h.fixTop()
	}
	// Oldest first: file order, then arrival within the file.
	g := it.group
	for i := 1; i < len(g); i++ {
		for j := i; j > 0 && (g[j].order < g[j-1].order || (g[j].order == g[j-1].order && g[j].seq < g[j-1].seq)); j-- {
			g[j], g[j-1] = g[j-1], g[j]
		}
	}
	emit := true
	if it.dropsCDCDeletes() {
		if arr, row, ok := it.lastValue(it.cdcCol); ok && isCDCDelete(arr, row) {
			emit = false
		}
	}
	if emit && it.scan.Unordered {
		// The merged row is one file row when the key has a single row, or
		// when its newest row's file has every column and every column
		// merges by UseLast: mark that row to pass through.
		if last := g[len(g)-1]; it.allLast && (len(g) == 1 || last.bs.fs.complete) {
			last.bs.sel = append(last.bs.sel, last.row)
			return true, nil
		}
		for _, e := range g {
			e.bs.held = true
		}
		it.mixed++
	}
	if emit {
		for c, refs := range it.refs {
			switch {
			case refs != nil:
				arr, row, _ := it.lastValue(c) // nil arr: no row has the column
				it.refs[c] = append(refs, arrowutil.Ref{Arr: arr, Row: row})
			case it.appends[c] != nil:
				if err := it.combine(c); err != nil {
					return false, err
				}
			}
		}
	}
	return emit, nil
}

// dropsCDCDeletes reports whether merged rows whose CDC op is "delete" are
// left out (snapshot reads of CDC tables).
func (it *mergeIterator) dropsCDCDeletes() bool { return it.cdcCol >= 0 && !it.scan.KeepCDCDeletes }

// isCDCDelete reports whether row of a CDC op column says "delete".
func isCDCDelete(arr arrow.Array, row int) bool {
	v, ok := arr.(*array.String)
	return ok && v.IsValid(row) && v.Value(row) == "delete"
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
	defer it.releaseFlushed()
	for i, f := range sch.Fields() {
		if it.refs[i] != nil {
			a, err := arrowutil.Gather(it.scan.Mem, f.Type, it.refs[i])
			clear(it.refs[i])
			it.refs[i] = it.refs[i][:0]
			if err != nil {
				releaseAll(cols)
				return nil, err
			}
			cols[i] = a
			continue
		}
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
			releaseAll(cols)
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

func releaseAll(cols []arrow.Array) {
	for _, c := range cols {
		if c != nil {
			c.Release()
		}
	}
}

// releaseFlushed releases the batches no stream holds any more once a flush
// copied the values refs pointed to: in key order the retired ones,
// unordered the held ones.
func (it *mergeIterator) releaseFlushed() {
	if it.scan.Unordered {
		for _, b := range it.held {
			b.Release()
		}
		clear(it.held)
		it.held = it.held[:0]
		return
	}
	for _, bs := range it.retired {
		bs.b.Release()
	}
	clear(it.retired)
	it.retired = it.retired[:0]
}

func (it *mergeIterator) Close() {
	for _, st := range it.streams {
		if st.batch != nil {
			st.batch.Release()
			st.batch = nil
		}
		st.fs.close()
	}
	for _, bs := range it.retired {
		bs.b.Release()
	}
	it.retired = nil
	for _, b := range it.held {
		b.Release()
	}
	it.held = nil
	for _, b := range it.ready {
		b.Release()
	}
	it.ready = nil
	for _, b := range it.builders {
		if b != nil {
			b.Release()
		}
	}
}

// streamHeap is a binary min-heap of streams by (current key, file order).
// It is written out rather than driven through container/heap: the merge
// spends most of its time here, and direct calls let the prefix test inline.
type streamHeap struct {
	it    *mergeIterator
	items []*mergeStream
}

func (h *streamHeap) Len() int { return len(h.items) }

func (h *streamHeap) less(a, b *mergeStream) bool {
	if a.prefix != b.prefix {
		return a.prefix < b.prefix
	}
	if c := h.it.compareStreams(a, b); c != 0 {
		return c < 0
	}
	return a.fs.order < b.fs.order
}

func (h *streamHeap) init() {
	for i := len(h.items)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

// fixTop restores the heap after the top stream advanced.
func (h *streamHeap) fixTop() { h.down(0) }

// popTop removes the top stream (it is exhausted).
func (h *streamHeap) popTop() {
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items[last] = nil
	h.items = h.items[:last]
	if last > 0 {
		h.down(0)
	}
}

func (h *streamHeap) down(i int) {
	items := h.items
	n := len(items)
	x := items[i]
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && h.less(items[r], items[l]) {
			c = r
		}
		if !h.less(items[c], x) {
			break
		}
		items[i] = items[c]
		i = c
	}
	items[i] = x
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
