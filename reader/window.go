package reader

import (
	"context"
	"hash/maphash"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
)

// Window merging: the unordered fast path of a merge in which every row
// either wins its key outright or loses it — every column merges by UseLast
// and every file has every column, so a key's newest row is its merged row.
// Deciding winners does not need the rows in key order, only each key's
// newest row, so instead of popping the heap row by row the merge takes a
// window of keys at a time:
//
//   - F is the smallest last key among the streams' current batches. Every
//     row with a key below F, in every file, is in a current batch: a
//     stream's later batches hold no key smaller than its current batch's
//     last one, which is at least F.
//   - Those rows are deduplicated with a hash table, files newest first:
//     the first row to claim a key wins (its row is marked to pass through),
//     later claimants lose. Within a file equal keys are adjacent and the
//     last one is the newest, so a row followed by its own key is skipped.
//   - The key F itself may continue into a stream's next batch, so its
//     group goes through mergeOneKey, which follows streams across batches.
//
// Per row this costs a hash and a probe of a table sized to the window
// (cache-resident) instead of about 2·log2(files) heap comparisons, so the
// merge costs nearly the same whether the same rows come in 10 files or in
// 100 (BenchmarkMergeCCF).

// windowOK reports whether the merge may take windows: an unordered scan of
// a single text or bigint key in which every row wins or loses outright.
func (it *mergeIterator) windowOK() bool {
	if !it.scan.Unordered || !it.allLast || len(it.pk) != 1 {
		return false
	}
	for _, st := range it.streams {
		if !st.fs.complete {
			return false
		}
	}
	switch it.scan.Table.Schema.Field(it.pk[0]).Type.ID() {
	case arrow.STRING, arrow.INT64:
		return true
	}
	return false
}

// winTable is an open-addressing set of the keys claimed in the current
// window. Slots of earlier windows are recognised by their generation, so
// starting a window costs nothing.
type winTable struct {
	slots []winSlot
	gen   uint32
	seed  maphash.Seed
}

type winSlot struct {
	hash uint64
	gen  uint32
	// st and row locate the claiming row: it.streams[st], current batch.
	st  uint32
	row int32
}

// reset prepares the table for a window of up to n rows.
func (t *winTable) reset(n int) {
	size := 1024
	for size < 2*n {
		size *= 2
	}
	if size > len(t.slots) {
		t.slots = make([]winSlot, size)
		t.gen = 0
	}
	t.gen++
	if t.gen == 0 { // wrapped: old generations would look current
		clear(t.slots)
		t.gen = 1
	}
}

// mergeWindow merges the rows of every key below F (see above) and then the
// key group of F.
func (it *mergeIterator) mergeWindow(ctx context.Context) error {
	items := it.h.items
	// F: the smallest last key of a current batch.
	var fst *mergeStream
	fRow := 0
	for _, st := range items {
		last := int(st.batch.NumRows()) - 1
		if fst == nil || it.lessRows(st, last, fst, fRow) {
			fst, fRow = st, last
		}
	}
	// Each stream's rows below F: [st.row, end).
	total := 0
	for _, st := range it.windowOrder {
		if st.batch == nil {
			st.winEnd = st.row
			continue
		}
		st.winEnd = it.searchRow(st, fst, fRow)
		total += st.winEnd - st.row
	}
	if total > 0 {
		it.win.reset(total)
		for _, st := range it.windowOrder {
			if st.winEnd > st.row {
				it.claimRows(st)
				st.setRow(st.winEnd)
			}
		}
		it.h.init()
	}
	_, err := it.mergeOneKey(ctx)
	return err
}

// lessRows orders row ra of a's batch before row rb of b's by key.
func (it *mergeIterator) lessRows(a *mergeStream, ra int, b *mergeStream, rb int) bool {
	if a.strKey != nil {
		return a.strKey.Value(ra) < b.strKey.Value(rb)
	}
	return a.intKey.Value(ra) < b.intKey.Value(rb)
}

// searchRow is the first row at or after st.row whose key is not below the
// key of fst's row fRow. A window holds few rows of most streams, so the
// search gallops from st.row before bisecting.
func (it *mergeIterator) searchRow(st *mergeStream, fst *mergeStream, fRow int) int {
	var below func(r int) bool
	if st.strKey != nil {
		f, k := fst.strKey.Value(fRow), st.strKey
		below = func(r int) bool { return k.Value(r) < f }
	} else {
		f, k := fst.intKey.Value(fRow), st.intKey
		below = func(r int) bool { return k.Value(r) < f }
	}
	lo, n := st.row, int(st.batch.NumRows())
	// Invariant: rows before lo are below F; rows at hi and after are not.
	hi, step := lo, 1
	for hi < n && below(hi) {
		lo = hi + 1
		hi += step
		step *= 2
	}
	hi = min(hi, n)
	return lo + sort.Search(hi-lo, func(i int) bool { return !below(lo + i) })
}

// claimRows claims the keys of st's window rows; the rows that claim one
// first (st is visited newest file first) win and are marked to pass
// through, unless the merged row is a CDC delete.
func (it *mergeIterator) claimRows(st *mergeStream) {
	t := &it.win
	mask := uint64(len(t.slots) - 1)
	idx := uint32(st.idx)
	end := st.winEnd
	for r := st.row; r < end; r++ {
		var h uint64
		var key string
		var ikey int64
		if st.strKey != nil {
			key = st.strKey.Value(r)
			if r+1 < end && st.strKey.Value(r+1) == key {
				continue // a newer row of the same file has the key
			}
			h = maphash.String(t.seed, key)
		} else {
			ikey = st.intKey.Value(r)
			if r+1 < end && st.intKey.Value(r+1) == ikey {
				continue
			}
			h = uint64(ikey) * 0x9e3779b97f4a7c15
			h ^= h >> 32
		}
		claimed := false
		for i := h & mask; ; i = (i + 1) & mask {
			s := &t.slots[i]
			if s.gen != t.gen {
				*s = winSlot{hash: h, gen: t.gen, st: idx, row: int32(r)}
				claimed = true
				break
			}
			if s.hash != h {
				continue
			}
			o := it.streams[s.st]
			if (st.strKey != nil && o.strKey.Value(int(s.row)) == key) || (st.intKey != nil && o.intKey.Value(int(s.row)) == ikey) {
				break
			}
		}
		if claimed && !it.windowCDCDelete(st, r) {
			st.bs.sel = append(st.bs.sel, r)
		}
	}
}

// windowCDCDelete reports whether row r of st's batch, a key's newest row,
// is a CDC delete that the scan drops.
func (it *mergeIterator) windowCDCDelete(st *mergeStream, r int) bool {
	if !it.dropsCDCDeletes() {
		return false
	}
	c := st.fs.colMap[it.cdcCol]
	return c >= 0 && isCDCDelete(st.batch.Column(c), r)
}
