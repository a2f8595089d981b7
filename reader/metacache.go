package reader

import (
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
	mu    sync.Mutex
	cache byteLRU[fileKey, *fileMeta]

	hits, misses atomic.Int64
}

// DefaultMetaCacheBytes is the engine's metadata cache budget.
const DefaultMetaCacheBytes = 256 << 20

// NewMetaCache returns a cache holding at most maxBytes of metadata.
func NewMetaCache(maxBytes int64) *MetaCache {
	return &MetaCache{cache: newByteLRU[fileKey, *fileMeta](maxBytes, nil)}
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
	return c.cache.len(), c.cache.used, c.hits.Load(), c.misses.Load()
}

// get returns the entry of k, or nil.
func (c *MetaCache) get(k fileKey) *fileMeta {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	fm, ok := c.cache.get(k)
	if !ok {
		c.misses.Add(1)
		return nil
	}
	c.hits.Add(1)
	return fm
}

// add inserts fm, or returns the entry another reader added first.
func (c *MetaCache) add(fm *fileMeta) *fileMeta {
	if c == nil {
		return fm
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	got, existed := c.cache.add(fm.key, fm, fm.bytes.Load())
	if !existed {
		fm.cache = c
	}
	return got
}

// grew accounts n more bytes held by fm (a page index or bloom filter
// loaded later), unless fm was evicted meanwhile.
func (c *MetaCache) grew(fm *fileMeta, n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cache.grow(fm.key, fm, n)
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

	cache *MetaCache   // the cache it was added to, if any
	bytes atomic.Int64 // accounted size

	mu     sync.Mutex
	stats  map[int][]colStats              // leaf column → per row group
	pages  map[[2]int]*pageBounds          // [row group, leaf]
	blooms map[[2]int]metadata.BloomFilter // [row group, leaf]; nil value: none
	crcs   map[[2]int]uint32               // checksums of our bloom filters
	ranges map[int]knownRange              // leaf → leading-key range (unitplan.go)
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
