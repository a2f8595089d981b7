package reader

import (
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
)

// ChunkCache keeps decoded column chunks of small data files in memory,
// so that keyed reads of a hot table — point lookups on a small
// primary-key table, the bread and butter of OLTP-style clients — cost a
// binary search over Arrow arrays instead of decompressing and decoding
// the same Parquet pages statement after statement. It is bounded in bytes
// and drops the least recently used chunks first; it is safe for
// concurrent use.
//
// Only keyed (ranged) reads use it, only for column chunks whose decoded
// size is at most MaxChunkBytes, and a chunk is admitted on its second
// request (the first is remembered in a bounded list of recent misses):
// one-off lookups and full scans, which would only evict hot chunks, read
// their pages as before.
//
// Invariant: an entry is never stale. Entries are keyed by the file's path
// and size, as MetaCache entries are: committed data files are immutable and
// a path is never reused for other contents. Cached arrays are immutable and
// allocated from the Go heap, so batches sliced from them stay valid after
// the cache drops them.
type ChunkCache struct {
	mu    sync.Mutex
	cache byteLRU[chunkKey, arrow.Array] // each value holds a reference of the cache's
	// seen are chunks requested once and not admitted yet, oldest first
	// (a ring of at most seenMax keys).
	seen     map[chunkKey]struct{}
	seenRing []chunkKey
	seenNext int

	hits, misses atomic.Int64
}

const (
	// DefaultChunkCacheBytes is the engine's decoded-chunk budget.
	DefaultChunkCacheBytes = 128 << 20
	// MaxChunkBytes is the largest column chunk (uncompressed size in the
	// footer) the cache holds: a chunk is decoded whole when admitted, which
	// must cost little more than the pages a lookup reads.
	MaxChunkBytes = 4 << 20
	// seenMax bounds the remembered first requests.
	seenMax = 4096
)

// NewChunkCache returns a cache holding at most maxBytes of decoded chunks.
func NewChunkCache(maxBytes int64) *ChunkCache {
	return &ChunkCache{cache: newByteLRU[chunkKey, arrow.Array](maxBytes, func(a arrow.Array) { a.Release() }),
		seen: map[chunkKey]struct{}{}}
}

// chunkKey identifies one column chunk of a data file's contents.
type chunkKey struct {
	file     fileKey
	rowGroup int
	leaf     int
}

// Stats reports the cache's use: chunks, bytes held, lookups that found a
// chunk and lookups that did not.
func (c *ChunkCache) Stats() (chunks int, bytes, hits, misses int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cache.len(), c.cache.used, c.hits.Load(), c.misses.Load()
}

// get returns the chunk of k (retained: the caller releases it), or nil.
func (c *ChunkCache) get(k chunkKey) arrow.Array {
	c.mu.Lock()
	defer c.mu.Unlock()
	arr, ok := c.cache.get(k)
	if !ok {
		c.misses.Add(1)
		return nil
	}
	c.hits.Add(1)
	arr.Retain()
	return arr
}

// admit reports whether k, which is not cached, has been requested before
// (then it may be decoded and added); otherwise it remembers the request.
func (c *ChunkCache) admit(k chunkKey) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.seen[k]; ok {
		return true
	}
	if len(c.seenRing) < seenMax {
		c.seenRing = append(c.seenRing, k)
	} else {
		delete(c.seen, c.seenRing[c.seenNext])
		c.seenRing[c.seenNext] = k
		c.seenNext = (c.seenNext + 1) % seenMax
	}
	c.seen[k] = struct{}{}
	return false
}

// add inserts arr as the chunk of k (the cache takes a reference of its
// own) and returns the cached chunk, retained: arr, or the one another
// reader added first.
func (c *ChunkCache) add(k chunkKey, arr arrow.Array) arrow.Array {
	c.mu.Lock()
	defer c.mu.Unlock()
	arr.Retain() // the cache's reference, if it keeps arr
	got, existed := c.cache.add(k, arr, arrayBytes(arr))
	if existed {
		arr.Release()
	} else {
		delete(c.seen, k) // its ring slot stays until it is reused
	}
	got.Retain() // the caller's
	return got
}

// arrayBytes is the memory arr's buffers hold, children included.
func arrayBytes(arr arrow.Array) int64 {
	var n int64
	var walk func(d arrow.ArrayData)
	walk = func(d arrow.ArrayData) {
		for _, b := range d.Buffers() {
			if b != nil {
				n += int64(b.Cap())
			}
		}
		for _, ch := range d.Children() {
			walk(ch)
		}
	}
	walk(arr.Data())
	return n + 256 // the array's own objects
}
