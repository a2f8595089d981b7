package reader

import "container/list"

// byteLRU is the bookkeeping both caches of this package share: entries by
// key, each with the bytes it accounts, bounded by max bytes in all, the
// least recently used dropped first (never the last entry, so one entry
// larger than the budget is still usable until the next one comes). It is
// not safe for concurrent use: its owner locks around every call.
type byteLRU[K comparable, V comparable] struct {
	max  int64
	used int64
	lru  list.List // of *lruEntry[K, V], most recently used first
	m    map[K]*list.Element
	// evicted, when set, is told of each value dropped.
	evicted func(V)
}

type lruEntry[K comparable, V comparable] struct {
	key   K
	val   V
	bytes int64
}

func newByteLRU[K comparable, V comparable](max int64, evicted func(V)) byteLRU[K, V] {
	// The zero list is ready to use (Init would tie it to this copy).
	return byteLRU[K, V]{max: max, m: map[K]*list.Element{}, evicted: evicted}
}

// get returns the value of k and marks it used.
func (c *byteLRU[K, V]) get(k K) (V, bool) {
	e, ok := c.m[k]
	if !ok {
		var zero V
		return zero, false
	}
	c.lru.MoveToFront(e)
	return e.Value.(*lruEntry[K, V]).val, true
}

// add inserts v as k's value accounting bytes, then evicts down to the
// budget; when k has a value already, that one is kept, marked used and
// returned with true.
func (c *byteLRU[K, V]) add(k K, v V, bytes int64) (V, bool) {
	if got, ok := c.get(k); ok {
		return got, true
	}
	c.m[k] = c.lru.PushFront(&lruEntry[K, V]{key: k, val: v, bytes: bytes})
	c.used += bytes
	c.evict()
	return v, false
}

// grow accounts n more bytes to k's entry if its value is still v (an
// evicted value's growth is no longer counted, and must not be counted to
// a newer value of the same key).
func (c *byteLRU[K, V]) grow(k K, v V, n int64) {
	e, ok := c.m[k]
	if !ok || e.Value.(*lruEntry[K, V]).val != v {
		return
	}
	e.Value.(*lruEntry[K, V]).bytes += n
	c.used += n
	c.evict()
}

func (c *byteLRU[K, V]) evict() {
	for c.used > c.max && c.lru.Len() > 1 {
		e := c.lru.Back()
		old := e.Value.(*lruEntry[K, V])
		c.lru.Remove(e)
		delete(c.m, old.key)
		c.used -= old.bytes
		if c.evicted != nil {
			c.evicted(old.val)
		}
	}
}

// len is the number of entries.
func (c *byteLRU[K, V]) len() int { return len(c.m) }
