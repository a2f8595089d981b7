package objstore

import (
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultCacheSize is the disk cache's default capacity (1 GiB, LakeSoul's
// default too).
const DefaultCacheSize = 1 << 30

// DefaultCacheBlockSize is the granularity of cached data: object bytes are
// cached in aligned blocks of this size (the last block of an object is
// shorter).
const DefaultCacheBlockSize = 1 << 20

// cacheVersion names the on-disk layout; a directory holding another
// layout is wiped on open.
const cacheVersion = "lakesoul-go-cache-v1"

// Cache is a read-through, size-bounded LRU disk cache of object bytes.
//
// Entries are files named by the SHA-256 of their key, under two-hex-digit
// subdirectories of the cache directory. A file is written to a temporary
// name and renamed into place, so a crash leaves only temporaries, which the
// next OpenCache removes; the index is rebuilt from the files present
// (oldest modification first, so recency survives roughly). Readers that
// miss the same entry at once share one fetch (single flight). An entry
// evicted while a reader has it open stays readable through that reader's
// file handle.
type Cache struct {
	dir       string
	capacity  int64
	blockSize int64

	mu       sync.Mutex
	entries  map[string]*cacheEntry
	lru      list.List // of *cacheEntry, most recent first
	used     int64
	inflight map[string]*flight

	hits, misses, waits, prefetched, evictions atomic.Int64
	hitBytes, missBytes                        atomic.Int64
}

type cacheEntry struct {
	name string
	size int64
	elem *list.Element
}

// flight is one fetch of an entry that concurrent readers wait for.
type flight struct {
	done chan struct{}
	data []byte
	err  error
}

// CacheStats are the cache's counters since it was opened (Entries, Bytes
// and Capacity are current values).
type CacheStats struct {
	// Hits counts block reads served from disk; HitBytes their bytes.
	Hits, HitBytes int64
	// Misses counts blocks fetched from the object store on demand;
	// MissBytes their bytes.
	Misses, MissBytes int64
	// Waits counts block reads that joined a fetch another reader had in
	// flight (single flight) instead of issuing their own.
	Waits int64
	// Prefetched counts blocks fetched ahead of the reader.
	Prefetched int64
	// Evictions counts entries removed to stay within Capacity.
	Evictions int64
	// Entries and Bytes describe the current contents.
	Entries, Bytes, Capacity int64
}

// OpenCache opens (creating it if needed) a cache in dir holding at most
// capacity bytes in blocks of blockSize (0 = DefaultCacheBlockSize). The
// index is rebuilt from the files present; entries beyond capacity are
// evicted, oldest first.
func OpenCache(dir string, capacity, blockSize int64) (*Cache, error) {
	if capacity <= 0 {
		return nil, fmt.Errorf("cache %s: capacity must be positive, got %d", dir, capacity)
	}
	if blockSize <= 0 {
		blockSize = DefaultCacheBlockSize
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cache dir: %w", err)
	}
	c := &Cache{dir: dir, capacity: capacity, blockSize: blockSize,
		entries: map[string]*cacheEntry{}, inflight: map[string]*flight{}}
	if err := c.checkVersion(); err != nil {
		return nil, err
	}
	if err := c.rebuild(); err != nil {
		return nil, err
	}
	return c, nil
}

// checkVersion wipes a directory laid out by another cache version (or
// blocks of another block size), then records ours.
func (c *Cache) checkVersion() error {
	marker := filepath.Join(c.dir, "VERSION")
	want := fmt.Sprintf("%s block=%d\n", cacheVersion, c.blockSize)
	b, err := os.ReadFile(marker)
	if err == nil && string(b) == want {
		return nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cache %s: %w", c.dir, err)
	}
	// Another layout, or none: remove our subdirectories only.
	ents, err := os.ReadDir(c.dir)
	if err != nil {
		return fmt.Errorf("cache %s: %w", c.dir, err)
	}
	for _, e := range ents {
		if e.IsDir() && isHexName(e.Name(), 2) {
			if err := os.RemoveAll(filepath.Join(c.dir, e.Name())); err != nil {
				return fmt.Errorf("cache %s: %w", c.dir, err)
			}
		}
	}
	if err := os.WriteFile(marker, []byte(want), 0o644); err != nil {
		return fmt.Errorf("cache %s: %w", c.dir, err)
	}
	return nil
}

func isHexName(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return false
		}
	}
	return true
}

// rebuild indexes the entry files present.
func (c *Cache) rebuild() error {
	type found struct {
		name  string
		size  int64
		mtime time.Time
	}
	var all []found
	subs, err := os.ReadDir(c.dir)
	if err != nil {
		return fmt.Errorf("cache %s: %w", c.dir, err)
	}
	for _, sub := range subs {
		if !sub.IsDir() || !isHexName(sub.Name(), 2) {
			continue
		}
		subDir := filepath.Join(c.dir, sub.Name())
		files, err := os.ReadDir(subDir)
		if err != nil {
			return fmt.Errorf("cache %s: %w", c.dir, err)
		}
		for _, f := range files {
			name := f.Name()
			if !isHexName(name, 64) || !strings.HasPrefix(name, sub.Name()) {
				// Temporaries of an interrupted write, or foreign files.
				if strings.Contains(name, ".tmp") {
					os.Remove(filepath.Join(subDir, name))
				}
				continue
			}
			info, err := f.Info()
			if err != nil || !info.Mode().IsRegular() {
				continue
			}
			all = append(all, found{name: name, size: info.Size(), mtime: info.ModTime()})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].mtime.Before(all[j].mtime) })
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range all {
		e := &cacheEntry{name: f.name, size: f.size}
		e.elem = c.lru.PushFront(e)
		c.entries[f.name] = e
		c.used += f.size
	}
	c.evictLocked(0)
	return nil
}

// Purge removes every entry (fetches in flight finish normally). Counters
// are kept.
func (c *Cache) Purge() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		os.Remove(c.path(e.name))
	}
	c.entries = map[string]*cacheEntry{}
	c.lru.Init()
	c.used = 0
}

// BlockSize is the size of the cache's blocks.
func (c *Cache) BlockSize() int64 { return c.blockSize }

// Dir is the cache's directory.
func (c *Cache) Dir() string { return c.dir }

// Stats returns the counters.
func (c *Cache) Stats() CacheStats {
	c.mu.Lock()
	entries, used := int64(len(c.entries)), c.used
	c.mu.Unlock()
	return CacheStats{
		Hits: c.hits.Load(), HitBytes: c.hitBytes.Load(),
		Misses: c.misses.Load(), MissBytes: c.missBytes.Load(),
		Waits: c.waits.Load(), Prefetched: c.prefetched.Load(), Evictions: c.evictions.Load(),
		Entries: entries, Bytes: used, Capacity: c.capacity,
	}
}

// entryName is the file name of a key.
func entryName(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

func (c *Cache) path(name string) string { return filepath.Join(c.dir, name[:2], name) }

// lookup finds the entry of key. With an entry of the expected size (wantLen
// < 0: any size) it returns it. Otherwise, if another reader is fetching
// it, it returns that flight; if not, it registers a new flight that the
// caller owns and must finish. claimOnly (prefetch) reports neither hits
// nor waits and returns (nil, nil, false) when the entry exists or is in
// flight.
func (c *Cache) lookup(name string, wantLen int64, claimOnly bool) (e *cacheEntry, fl *flight, owner bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[name]; e != nil {
		if wantLen < 0 || e.size == wantLen {
			if claimOnly {
				return nil, nil, false
			}
			c.lru.MoveToFront(e.elem)
			return e, nil, false
		}
		// Wrong size: a damaged entry; drop it and fetch again.
		c.removeLocked(e)
		os.Remove(c.path(name))
	}
	if fl := c.inflight[name]; fl != nil {
		if claimOnly {
			return nil, nil, false
		}
		c.waits.Add(1)
		return nil, fl, false
	}
	fl = &flight{done: make(chan struct{})}
	c.inflight[name] = fl
	return nil, fl, true
}

// readEntry reads len(p) bytes at off of an entry file. ok is false when
// the file is gone or short (evicted or damaged); the entry is then dropped.
func (c *Cache) readEntry(e *cacheEntry, p []byte, off int64) bool {
	f, err := os.Open(c.path(e.name))
	if err == nil {
		var n int
		n, err = f.ReadAt(p, off)
		f.Close()
		if err == nil && n == len(p) {
			c.hits.Add(1)
			c.hitBytes.Add(int64(len(p)))
			return true
		}
	}
	c.dropEntry(e)
	return false
}

// readAll returns an entry file's contents, or nil when it is gone. (Not
// counted in the block statistics.)
func (c *Cache) readAll(e *cacheEntry) []byte {
	b, err := os.ReadFile(c.path(e.name))
	if err != nil || int64(len(b)) != e.size {
		c.dropEntry(e)
		return nil
	}
	return b
}

// finish completes a flight the caller owns: on success the data is
// stored (best effort: a disk error only costs the cache entry) and handed
// to the waiters; on failure the waiters get err and fetch for themselves.
// data must not be modified afterwards.
func (c *Cache) finish(name string, fl *flight, data []byte, err error, prefetch bool) {
	if err == nil {
		if prefetch {
			c.prefetched.Add(1)
		} else {
			c.misses.Add(1)
			c.missBytes.Add(int64(len(data)))
		}
		c.store(name, data)
	}
	fl.data, fl.err = data, err
	c.mu.Lock()
	if c.inflight[name] == fl {
		delete(c.inflight, name)
	}
	c.mu.Unlock()
	close(fl.done)
}

// store writes data as the entry name, replacing any previous one, and
// evicts least recently used entries to stay within capacity.
func (c *Cache) store(name string, data []byte) {
	if int64(len(data)) > c.capacity {
		return
	}
	final := c.path(name)
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(final), name+".tmp*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return
	}
	c.mu.Lock()
	if old := c.entries[name]; old != nil {
		c.removeLocked(old)
	}
	if err := os.Rename(tmp.Name(), final); err != nil {
		c.mu.Unlock()
		os.Remove(tmp.Name())
		return
	}
	e := &cacheEntry{name: name, size: int64(len(data))}
	e.elem = c.lru.PushFront(e)
	c.entries[name] = e
	c.used += e.size
	c.evictLocked(0)
	c.mu.Unlock()
}

// put stores data under key (outside any flight).
func (c *Cache) put(key string, data []byte) { c.store(entryName(key), data) }

// get returns the whole entry of key, or nil.
func (c *Cache) get(key string) []byte {
	c.mu.Lock()
	e := c.entries[entryName(key)]
	if e != nil {
		c.lru.MoveToFront(e.elem)
	}
	c.mu.Unlock()
	if e == nil {
		return nil
	}
	return c.readAll(e)
}

// remove deletes the entry of key, if any.
func (c *Cache) remove(key string) { c.drop(entryName(key)) }

func (c *Cache) drop(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[name]; e != nil {
		c.removeLocked(e)
		os.Remove(c.path(name))
	}
}

// dropEntry removes e if it is still the entry of its name.
func (c *Cache) dropEntry(e *cacheEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries[e.name] == e {
		c.removeLocked(e)
		os.Remove(c.path(e.name))
	}
}

func (c *Cache) removeLocked(e *cacheEntry) {
	c.lru.Remove(e.elem)
	delete(c.entries, e.name)
	c.used -= e.size
}

// evictLocked removes least recently used entries until extra more bytes
// fit. Files are removed under the lock, so a concurrent store of the same
// name cannot lose its new file.
func (c *Cache) evictLocked(extra int64) {
	for c.used+extra > c.capacity {
		back := c.lru.Back()
		if back == nil {
			break
		}
		e := back.Value.(*cacheEntry)
		c.removeLocked(e)
		os.Remove(c.path(e.name))
		c.evictions.Add(1)
	}
}

// ParseSize parses a byte size: a number with an optional unit, B, K/KB/KiB,
// M/MB/MiB, G/GB/GiB or T/TB/TiB (all binary, as LakeSoul's
// LAKESOUL_CACHE_SIZE), e.g. "1GiB", "512MiB", "0".
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mult := map[string]float64{"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20,
		"mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40}[unit]
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || mult == 0 || v < 0 {
		return 0, fmt.Errorf("invalid size %q (want e.g. 1GiB, 512MiB, 0)", s)
	}
	return int64(v * mult), nil
}
