package engine

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/cespare/xxhash/v2"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/layout"
)

// keySet is the set of rows a read-modify-write statement changes in a
// primary-key table, by partition: each row named by a 64-bit hash of its
// primary-key values (rowKeyHash). Two keys with one hash make a check see a
// change where there was none (a needless re-run), never miss one, and
// 64 bits make that as good as never happen.
//
// The hash depends only on the key's values in the table's types, so every
// server computes the same one for a row — the row locks of
// sqlfuncs/007_row_locks.sql rely on it.
type keySet struct {
	t      *catalog.Table
	byDesc map[string]map[uint64]struct{}
	n      int
}

func newKeySet(t *catalog.Table) *keySet {
	return &keySet{t: t, byDesc: map[string]map[uint64]struct{}{}}
}

// add records the rows of rec, which holds the table's key and range
// columns (in the table's types).
func (k *keySet) add(rec arrow.RecordBatch) error {
	h, err := newRowKeyHasher(k.t, rec)
	if err != nil {
		return err
	}
	for i := 0; i < int(rec.NumRows()); i++ {
		desc, err := h.desc(i)
		if err != nil {
			return err
		}
		k.put(desc, h.hash(i))
	}
	return nil
}

// put adds the row of partition desc whose key hash is key.
func (k *keySet) put(desc string, key uint64) {
	m := k.byDesc[desc]
	if m == nil {
		m = map[uint64]struct{}{}
		k.byDesc[desc] = m
	}
	if _, ok := m[key]; !ok {
		m[key] = struct{}{}
		k.n++
	}
}

// hit reports whether a row of rec (rows of partition desc, holding the key
// columns) is one of the set's.
func (k *keySet) hit(desc string, rec arrow.RecordBatch) (bool, error) {
	m := k.byDesc[desc]
	if len(m) == 0 {
		return false, nil
	}
	h, err := newRowKeyHasher(k.t, rec)
	if err != nil {
		return false, err
	}
	for i := 0; i < int(rec.NumRows()); i++ {
		if _, ok := m[h.hash(i)]; ok {
			return true, nil
		}
	}
	return false, nil
}

// descs are the partitions the set has rows of.
func (k *keySet) descs() []string {
	out := make([]string, 0, len(k.byDesc))
	for d := range k.byDesc {
		out = append(out, d)
	}
	return out
}

// rowLocksMax is lock_rows' escalation bound (sqlfuncs/007_row_locks.sql):
// a request for more keys locks the partition's rows as a whole.
const rowLocksMax = 1000

// lockIDs are the row-lock keys of partition desc for lakesoul.lock_rows: all
// of them, or rowLocksMax+1 when there are more (lock_rows then takes the
// partition's rows lock instead, so the rest need not be sent).
func (k *keySet) lockIDs(desc string) []int64 {
	m := k.byDesc[desc]
	out := make([]int64, 0, min(len(m), rowLocksMax+1))
	for h := range m {
		if len(out) > rowLocksMax {
			break
		}
		out = append(out, int64(h))
	}
	return out
}

// overlaps reports whether k and o share a row.
func (k *keySet) overlaps(o *keySet) bool {
	for d, m := range k.byDesc {
		om := o.byDesc[d]
		if len(om) < len(m) {
			m, om = om, m
		}
		for h := range m {
			if _, ok := om[h]; ok {
				return true
			}
		}
	}
	return false
}

// union adds the rows of o.
func (k *keySet) union(o *keySet) {
	for d, m := range o.byDesc {
		dst := k.byDesc[d]
		if dst == nil {
			dst = map[uint64]struct{}{}
			k.byDesc[d] = dst
		}
		for h := range m {
			if _, ok := dst[h]; !ok {
				dst[h] = struct{}{}
				k.n++
			}
		}
	}
}

// rowKeyHasher hashes the primary keys of one batch's rows and names their
// partitions.
type rowKeyHasher struct {
	keys   []arrow.Array
	ranges []arrow.Array
	cols   []string
	vals   []string
	buf    []byte
}

func newRowKeyHasher(t *catalog.Table, rec arrow.RecordBatch) (*rowKeyHasher, error) {
	h := &rowKeyHasher{cols: t.RangeCols, vals: make([]string, len(t.RangeCols))}
	col := func(name string) (arrow.Array, error) {
		idx := rec.Schema().FieldIndices(name)
		if len(idx) == 0 {
			return nil, fmt.Errorf("row keys: batch lacks column %s", name)
		}
		return rec.Column(idx[0]), nil
	}
	for _, c := range t.PKCols {
		a, err := col(c)
		if err != nil {
			return nil, err
		}
		h.keys = append(h.keys, a)
	}
	for _, c := range t.RangeCols {
		a, err := col(c)
		if err != nil {
			return nil, err
		}
		h.ranges = append(h.ranges, a)
	}
	return h, nil
}

// desc is row i's partition desc, as the writer names it.
func (h *rowKeyHasher) desc(i int) (string, error) {
	if len(h.ranges) == 0 {
		return layout.NonPartitioned, nil
	}
	for j, a := range h.ranges {
		v, err := layout.FormatValue(a, i)
		if err != nil {
			return "", err
		}
		h.vals[j] = v
	}
	return layout.FormatDesc(h.cols, h.vals), nil
}

// hash is row i's key hash.
func (h *rowKeyHasher) hash(i int) uint64 {
	h.buf = h.buf[:0]
	for _, a := range h.keys {
		h.buf = appendRowKeyBytes(h.buf, a, i)
	}
	return xxhash.Sum64(h.buf)
}

// appendRowKeyBytes appends value i of a in a form that tells apart any two
// values of the column's type: a tag, then integers (of any width, dates,
// timestamps) as 8 bytes, floats as their bits, strings and bytes with
// their length; other types by their text.
func appendRowKeyBytes(b []byte, a arrow.Array, i int) []byte {
	if a.IsNull(i) {
		return append(b, 0)
	}
	b = append(b, 1)
	switch a := a.(type) {
	case *array.Int8:
		return binary.LittleEndian.AppendUint64(b, uint64(a.Value(i)))
	case *array.Int16:
		return binary.LittleEndian.AppendUint64(b, uint64(a.Value(i)))
	case *array.Int32:
		return binary.LittleEndian.AppendUint64(b, uint64(a.Value(i)))
	case *array.Int64:
		return binary.LittleEndian.AppendUint64(b, uint64(a.Value(i)))
	case *array.Uint8:
		return binary.LittleEndian.AppendUint64(b, uint64(a.Value(i)))
	case *array.Uint16:
		return binary.LittleEndian.AppendUint64(b, uint64(a.Value(i)))
	case *array.Uint32:
		return binary.LittleEndian.AppendUint64(b, uint64(a.Value(i)))
	case *array.Uint64:
		return binary.LittleEndian.AppendUint64(b, a.Value(i))
	case *array.Date32:
		return binary.LittleEndian.AppendUint64(b, uint64(a.Value(i)))
	case *array.Date64:
		return binary.LittleEndian.AppendUint64(b, uint64(a.Value(i)))
	case *array.Timestamp:
		return binary.LittleEndian.AppendUint64(b, uint64(a.Value(i)))
	case *array.Float32:
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(float64(a.Value(i))))
	case *array.Float64:
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(a.Value(i)))
	case *array.Boolean:
		if a.Value(i) {
			return append(b, 1)
		}
		return append(b, 0)
	case *array.String:
		v := a.Value(i)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(v)))
		return append(b, v...)
	case *array.LargeString:
		v := a.Value(i)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(v)))
		return append(b, v...)
	case *array.Binary:
		v := a.Value(i)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(v)))
		return append(b, v...)
	case *array.FixedSizeBinary:
		return append(b, a.Value(i)...)
	case *array.Decimal128:
		v := a.Value(i)
		b = binary.LittleEndian.AppendUint64(b, v.LowBits())
		return binary.LittleEndian.AppendUint64(b, uint64(v.HighBits()))
	}
	v := a.ValueStr(i)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(v)))
	return append(b, v...)
}
