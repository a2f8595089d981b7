package reader

import (
	"container/list"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// MetaCache keeps the parsed metadata of data files in memory — footers,
// key-column statistics, the page index of key columns, bloom filters — so
// that a keyed read decides which files, row groups and pages to read
// without opening any file it does not read. It is bounded in bytes and
// drops the least recently used files first. It is safe for concurrent use.
//
// Invariant: an entry is never stale. Entries are keyed by path and size;
// committed data files are immutable and a path is never reused for other
// contents (writers name files by a fresh write intent), so whatever was
// parsed from a file stays true of it.
type MetaCache struct {
	max int64

	mu   sync.Mutex
	used int64
	lru  list.List // of *fileMeta, most recently used first
	m    map[fileKey]*list.Element

	hits, misses atomic.Int64
}

// DefaultMetaCacheBytes is the engine's metadata cache budget.
const DefaultMetaCacheBytes = 256 << 20

// NewMetaCache returns a cache holding at most maxBytes of metadata.
func NewMetaCache(maxBytes int64) *MetaCache {
	c := &MetaCache{max: maxBytes, m: map[fileKey]*list.Element{}}
	c.lru.Init()
	return c
}

// fileKey identifies a data file's contents.
type fileKey struct {
	path string
	size int64
}

// Stats reports the cache's use: entries, bytes held, lookups that found
// an entry and lookups that did not.
func (c *MetaCache) Stats() (files int, bytes, hits, misses int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m), c.used, c.hits.Load(), c.misses.Load()
}

// get returns the entry of k, or nil.
func (c *MetaCache) get(k fileKey) *fileMeta {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	if !ok {
		c.misses.Add(1)
		return nil
	}
	c.hits.Add(1)
	c.lru.MoveToFront(e)
	return e.Value.(*fileMeta)
}

// add inserts fm, or returns the entry another reader added first.
func (c *MetaCache) add(fm *fileMeta) *fileMeta {
	if c == nil {
		return fm
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[fm.key]; ok {
		c.lru.MoveToFront(e)
		return e.Value.(*fileMeta)
	}
	fm.cache = c
	fm.elem = c.lru.PushFront(fm)
	c.m[fm.key] = fm.elem
	c.used += fm.bytes.Load()
	c.evictLocked()
	return fm
}

// grew accounts n more bytes held by fm (a page index or bloom filter
// loaded later).
func (c *MetaCache) grew(fm *fileMeta, n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if fm.elem == nil {
		return // evicted meanwhile: its bytes are no longer counted
	}
	c.used += n
	c.evictLocked()
}

func (c *MetaCache) evictLocked() {
	for c.used > c.max && c.lru.Len() > 1 {
		e := c.lru.Back()
		fm := e.Value.(*fileMeta)
		c.lru.Remove(e)
		delete(c.m, fm.key)
		fm.elem = nil
		c.used -= fm.bytes.Load()
	}
}

// fileMeta is what is known of one data file. The footer is parsed when
// the entry is made; key statistics, page bounds and bloom filters are
// added as readers need them (under mu).
type fileMeta struct {
	key  fileKey
	md   *metadata.FileMetaData
	name string // the path, for errors
	// objSize is the size of the object the footer was parsed from; a
	// stream finding another size is reading something else (58030).
	objSize int64
	// ours is set for files this server's writer made: their page index
	// and bloom filters are checked strictly (layout.BloomChecksumsKey).
	ours bool

	cache *MetaCache
	elem  *list.Element // in cache.lru; nil once evicted (guarded by cache.mu)
	bytes atomic.Int64  // accounted size

	mu     sync.Mutex
	stats  map[int][]colStats              // leaf column → per row group
	pages  map[[2]int]*pageBounds          // [row group, leaf]
	blooms map[[2]int]metadata.BloomFilter // [row group, leaf]; nil value: none
	crcs   map[[2]int]uint32               // checksums of our bloom filters
	crcErr error

	schemaOnce sync.Once
	schema     *arrow.Schema // arrowSchema
	schemaErr  error
}

// account adds n bytes to fm's size (and to its cache's use).
func (fm *fileMeta) account(n int64) {
	fm.bytes.Add(n)
	if fm.cache != nil {
		fm.cache.grew(fm, n)
	}
}
