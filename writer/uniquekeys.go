package writer

import (
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakesoul-go/lakesoul/internal/arrowutil"
)

// uniqueKeys finds out whether a primary key repeats in a data file being
// written. A file's rows are in key order (the writer sorts them, a merge
// of runs emits them so), so a key repeats exactly when two adjacent rows
// have equal keys: every adjacent pair is compared, within each row group
// and across the boundary from the previous one. The answer goes into the
// footer (layout.UniqueKeysKey) and lets readers stream the file without
// merging. A NULL key compares equal to a NULL key, so a file with two
// NULL keys is not called unique.
//
// Its methods do nothing on a nil *uniqueKeys (files without a key).
type uniqueKeys struct {
	keyCols []int
	cmp     arrowutil.RowComparer
	// cur holds the current row group's key columns (retained), in key
	// order; last the previous row group's last row of each (one-row
	// slices); dup is set once a key repeated.
	cur  []arrow.Array
	last []arrow.Array
	dup  bool
}

func newUniqueKeys(schema *arrow.Schema, keyCols []int) (*uniqueKeys, error) {
	types := make([]arrow.DataType, len(keyCols))
	for i, c := range keyCols {
		types[i] = schema.Field(c).Type
	}
	cmp, err := arrowutil.NewRowComparer(types)
	if err != nil {
		return nil, err
	}
	return &uniqueKeys{keyCols: keyCols, cmp: cmp, cur: make([]arrow.Array, len(keyCols))}, nil
}

// column sees column i of the current row group as it is written.
func (u *uniqueKeys) column(i int, c arrow.Array) {
	if u == nil || u.dup {
		return
	}
	if k := slices.Index(u.keyCols, i); k >= 0 {
		c.Retain()
		u.cur[k] = c
	}
}

// endRowGroup compares the row group's adjacent keys, the first with the
// previous row group's last.
func (u *uniqueKeys) endRowGroup() {
	if u == nil || u.dup {
		return
	}
	defer u.releaseCur()
	n := u.cur[0].Len()
	if n == 0 {
		return
	}
	if u.last != nil && u.cmp.Compare(u.last, 0, u.cur, 0) == 0 {
		u.dup = true
		return
	}
	if u.adjacentEqual() {
		u.dup = true
		return
	}
	u.releaseLast()
	u.last = make([]arrow.Array, len(u.cur))
	for i, c := range u.cur {
		u.last[i] = array.NewSlice(c, int64(n-1), int64(n))
	}
}

// adjacentEqual reports whether two adjacent rows of cur have equal keys:
// a single bigint or text key compares values directly, other keys by
// the row comparer.
func (u *uniqueKeys) adjacentEqual() bool {
	if len(u.cur) == 1 && u.cur[0].NullN() == 0 {
		switch a := u.cur[0].(type) {
		case *array.Int64:
			v := a.Int64Values()
			for i := 1; i < len(v); i++ {
				if v[i] == v[i-1] {
					return true
				}
			}
			return false
		case *array.String:
			for i := 1; i < a.Len(); i++ {
				if a.Value(i) == a.Value(i-1) {
					return true
				}
			}
			return false
		}
	}
	for i := 1; i < u.cur[0].Len(); i++ {
		if u.cmp.Compare(u.cur, i-1, u.cur, i) == 0 {
			return true
		}
	}
	return false
}

// unique reports whether no key repeated in the rows seen.
func (u *uniqueKeys) unique() bool { return u != nil && !u.dup }

func (u *uniqueKeys) releaseCur() {
	for i, c := range u.cur {
		if c != nil {
			c.Release()
			u.cur[i] = nil
		}
	}
}

func (u *uniqueKeys) releaseLast() {
	for _, c := range u.last {
		c.Release()
	}
	u.last = nil
}

// release frees what u holds.
func (u *uniqueKeys) release() {
	if u == nil {
		return
	}
	u.releaseCur()
	u.releaseLast()
}
