package engine

import (
	"container/list"
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/lakesoul-go/lakesoul/catalog"
)

// The snapshot cache. Resolving a table's snapshot used to mean listing
// every live file of every partition read, on every statement. The engine
// keeps the file lists it resolved, by partition head (catalog.PartitionHead:
// the latest version and a digest of its commits), and each statement asks
// the catalog one question: what are the heads now, and what are the files
// of those I do not know (lakesoul.live_files_cached)? The answer is one
// consistent catalog snapshot taken when the statement runs, so a read sees
// every commit that finished before it — on this server or any other — and
// an entry can never be stale: a head's files never change. A statement
// after a commit costs one catalog round trip carrying the changed heads'
// files; one after none, a round trip carrying only heads.

// snapCacheFiles bounds the file entries the cache holds.
const snapCacheFiles = 1 << 20

// snapshotCache is shared by the engine's sessions; safe for concurrent use.
type snapshotCache struct {
	mu     sync.Mutex
	files  int
	lru    list.List // of *tableSnaps, most recently used first
	tables map[string]*list.Element
}

// tableSnaps are the cached partitions of one table, by desc.
type tableSnaps struct {
	table string
	parts map[string]*partSnap
	files int
}

// partSnap is a partition head and its live files.
type partSnap struct {
	head  catalog.PartitionHead
	files []catalog.DataFile
}

func newSnapshotCache() *snapshotCache {
	c := &snapshotCache{tables: map[string]*list.Element{}}
	c.lru.Init()
	return c
}

// known returns the keys of the cached heads of table's partitions (of
// descs only, when given).
func (c *snapshotCache) known(table string, descs []string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.tables[table]
	if !ok {
		return nil
	}
	ts := e.Value.(*tableSnaps)
	out := make([]string, 0, len(ts.parts))
	if descs != nil {
		for _, d := range descs {
			if p, ok := ts.parts[d]; ok {
				out = append(out, p.head.Key())
			}
		}
		return out
	}
	for _, p := range ts.parts {
		out = append(out, p.head.Key())
	}
	return out
}

// resolve combines the catalog's answer to a query that named known as
// known with the cache: each head's files are the listed ones, else the
// cached ones. It caches the listed ones. ok is false when a known head is
// no longer cached (evicted, or replaced by another session's newer one):
// the caller asks again.
func (c *snapshotCache) resolve(table string, known []string, heads []catalog.PartitionHead, listed []catalog.PartitionFiles) (out []catalog.PartitionFiles, ok bool) {
	byDesc := make(map[string][]catalog.DataFile, len(listed))
	for _, p := range listed {
		byDesc[p.Desc] = p.Files
	}
	sent := make(map[string]bool, len(known))
	for _, k := range known {
		sent[k] = true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, found := c.tables[table]
	if !found {
		e = c.lru.PushFront(&tableSnaps{table: table, parts: map[string]*partSnap{}})
		c.tables[table] = e
	}
	c.lru.MoveToFront(e)
	ts := e.Value.(*tableSnaps)
	for _, h := range heads {
		cur := ts.parts[h.Desc]
		files, listed := byDesc[h.Desc]
		switch {
		case cur != nil && cur.head == h:
			files = cur.files
		case !listed && sent[h.Key()]:
			return nil, false
		}
		// Not known, not listed: a partition without live files.
		if cur == nil || (cur.head != h && cur.head.Version <= h.Version) {
			if cur != nil {
				ts.files -= len(cur.files)
				c.files -= len(cur.files)
			}
			ts.parts[h.Desc] = &partSnap{head: h, files: files}
			ts.files += len(files)
			c.files += len(files)
		}
		// A partition without live files (its rows all deleted) is in the
		// snapshot too, with its version: a read-modify-write statement
		// that read it empty is checked from that version on, not from
		// before the delete (rmw.go, noteRead).
		out = append(out, catalog.PartitionFiles{Desc: h.Desc, Version: h.Version, Files: files})
	}
	c.evictLocked()
	slices.SortFunc(out, func(a, b catalog.PartitionFiles) int { return strings.Compare(a.Desc, b.Desc) })
	return out, true
}

func (c *snapshotCache) evictLocked() {
	for c.files > snapCacheFiles && c.lru.Len() > 1 {
		e := c.lru.Back()
		ts := e.Value.(*tableSnaps)
		c.lru.Remove(e)
		delete(c.tables, ts.table)
		c.files -= ts.files
	}
}

// liveFiles is the current snapshot of t's partitions — descs when given,
// else those holding every "k=v" of terms, else all — in one catalog round
// trip, file lists the engine already knows taken from the cache.
// Statements reading the latest state as the same role share the query
// (snapflight.go).
func (s *Session) liveFiles(ctx context.Context, cat *catalog.Catalog, t *catalog.Table, descs, terms []string) ([]catalog.PartitionFiles, error) {
	role, latest := cat.ReadsLatestAs()
	if !latest {
		return s.e.snaps.liveFiles(ctx, cat, t.ID, descs, terms)
	}
	return s.e.snapFlights.do(ctx, snapFlightKey(role, t.ID, descs, terms), func(ctx context.Context) ([]catalog.PartitionFiles, error) {
		return s.e.snaps.liveFiles(ctx, cat, t.ID, descs, terms)
	})
}

// liveFiles asks the catalog for the heads of the table's partitions and
// the files of the heads the cache does not know, and resolves them.
func (c *snapshotCache) liveFiles(ctx context.Context, cat *catalog.Catalog, tableID string, descs, terms []string) ([]catalog.PartitionFiles, error) {
	known := c.known(tableID, descs)
	for {
		heads, listed, err := cat.LiveFilesCached(ctx, tableID, descs, terms, known)
		if err != nil {
			return nil, err
		}
		if out, ok := c.resolve(tableID, known, heads, listed); ok {
			return out, nil
		}
		known = nil // something known was evicted meanwhile: list all
	}
}
