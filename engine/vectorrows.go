package engine

import (
	"context"
	"strings"
	"sync"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/reader"
	"github.com/lakesoul-go/lakesoul/vector"
)

// Exactly searched rows. A unit without a usable segment, and the files of
// a unit newer than its segment, are ranked exactly at every search. Their
// merged keys and vectors are decoded once and kept (vectorRowCache): the
// entry is keyed by the exact list of files merged (and whether CDC deletes
// are kept), and committed data files are immutable, so an entry is never
// stale — a later commit adds a file, which is another list.

// unitRows are the merged rows of a set of files of one unit: row i has key
// keys[i]; state[i] says whether it has a vector (vecs[i·dims:(i+1)·dims]),
// has none (NULL, or its files lack the column) or is a CDC delete.
type unitRows struct {
	dims  int
	keys  []string
	state []rowState
	vecs  []float32 // dims float32s per row; zeros when it has no vector
	// stale are the keys of rows with a vector or deleted, recheck those
	// of rows without a vector (searchNewer's sets; nil for rows of a
	// whole unit).
	stale, recheck map[string]bool
}

type rowState uint8

const (
	rowVector rowState = iota
	rowNoVector
	rowDeleted
)

func (r *unitRows) bytes() int {
	n := 4*len(r.vecs) + len(r.state) + 16*len(r.keys) + 48*(len(r.stale)+len(r.recheck))
	for _, k := range r.keys {
		n += len(k)
	}
	return n
}

// vectorRowCache holds unitRows up to a byte budget; an entry larger than a
// quarter of it is not kept. Safe for concurrent use.
type vectorRowCache struct {
	mu     sync.Mutex
	m      map[string]*unitRows
	bytes  int
	budget int
}

func newVectorRowCache(budget int) *vectorRowCache {
	return &vectorRowCache{m: map[string]*unitRows{}, budget: budget}
}

// vectorRowCacheBytes bounds the engine's cache of exactly searched rows.
const vectorRowCacheBytes = 256 << 20

// unitRowsOf returns the merged key and vector of every row of files (of
// unit u's partition and bucket), from the cache or read now.
func (s *Session) unitRowsOf(ctx context.Context, t *catalog.Table, u reader.Unit, files []catalog.DataFile, column string, keepDeletes bool) (*unitRows, error) {
	var kb strings.Builder
	kb.WriteString(t.ID + "\x00" + column + "\x00")
	if keepDeletes {
		kb.WriteString("d")
	}
	for _, f := range files {
		kb.WriteString("\x00" + f.Path)
	}
	key := kb.String()
	c := s.e.vrows
	c.mu.Lock()
	r, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return r, nil
	}
	dims := schemaDimsOf(t, column)
	r = &unitRows{dims: dims}
	sub := &reader.Scan{Store: s.e.store, Table: t, Unordered: true, Needed: vector.NeededColumns(t, column), Spill: s.e.scans.spill,
		KeepCDCDeletes: keepDeletes, Meta: s.e.scans.meta, Partitions: []catalog.PartitionFiles{{Desc: u.Desc, Files: files}}}
	units, err := sub.Units()
	if err != nil {
		return nil, err
	}
	zero := make([]float32, dims)
	for _, su := range units {
		err := vector.EachRow(ctx, sub, su, column, func(k string, v []float32, deleted bool) {
			r.keys = append(r.keys, k)
			switch {
			case deleted:
				r.state = append(r.state, rowDeleted)
				r.vecs = append(r.vecs, zero...)
			case v == nil || len(v) != dims:
				r.state = append(r.state, rowNoVector)
				r.vecs = append(r.vecs, zero...)
			default:
				r.state = append(r.state, rowVector)
				r.vecs = append(r.vecs, v...)
			}
		})
		if err != nil {
			return nil, err
		}
	}
	if keepDeletes {
		r.stale, r.recheck = map[string]bool{}, map[string]bool{}
		for i, k := range r.keys {
			if r.state[i] == rowNoVector {
				r.recheck[k] = true
			} else {
				r.stale[k] = true
			}
		}
	}
	n := r.bytes()
	if n > c.budget/4 {
		return r, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur, ok := c.m[key]; ok {
		return cur, nil
	}
	for p, old := range c.m { // evict arbitrary entries over budget
		if c.bytes+n <= c.budget {
			break
		}
		delete(c.m, p)
		c.bytes -= old.bytes()
	}
	c.m[key] = r
	c.bytes += n
	return r, nil
}
