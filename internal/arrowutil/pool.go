package arrowutil

import (
	"math/bits"
	"sync"
	"unsafe"
)

// PoolAllocator is an Arrow allocator that recycles freed buffers through
// per-size-class sync.Pools. Reading Parquet allocates and frees buffers
// batch after batch, and a merge of many small files does so per file: with
// memory.GoAllocator every one is a fresh, zeroed, garbage-collected slice,
// which costs more than decoding into it. Recycled buffers are warm in cache
// and cost the collector nothing.
//
// Like the Go allocator it returns zeroed, 64-byte-aligned memory. Unlike it,
// a buffer is reused once freed: whoever frees a buffer (Arrow does, when the
// last reference to it is released) must not use it again — the refcounting
// discipline Arrow's C allocators require too. Buffers never freed are simply
// collected.
type PoolAllocator struct {
	pools [poolClasses]sync.Pool
	// Poison fills every freed buffer with 0xA5 bytes, so that a use after
	// free reads garbage instead of plausible data: tests set it (the
	// engine does when LAKESOUL_POISON_FREED is set).
	Poison bool
}

const (
	poolAlign    = 64
	poolMinShift = 6  // smallest class: 64 bytes
	poolMaxShift = 26 // largest pooled class: 64 MiB
	poolClasses  = poolMaxShift - poolMinShift + 1
)

// NewPoolAllocator returns an empty pool allocator.
func NewPoolAllocator() *PoolAllocator { return &PoolAllocator{} }

// class returns the size class holding n bytes, or -1 when n is too large to
// pool.
func class(n int) int {
	if n <= 1<<poolMinShift {
		return 0
	}
	c := bits.Len(uint(n-1)) - poolMinShift
	if c >= poolClasses {
		return -1
	}
	return c
}

// Allocate implements memory.Allocator.
func (a *PoolAllocator) Allocate(size int) []byte {
	c := class(size)
	if c < 0 {
		return alignedSlice(size, size)
	}
	if p, ok := a.pools[c].Get().(*[]byte); ok {
		b := (*p)[:size]
		clear(b)
		return b
	}
	return alignedSlice(size, 1<<(c+poolMinShift))
}

// Reallocate implements memory.Allocator.
func (a *PoolAllocator) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		if size > len(b) {
			clear(b[len(b):size])
		}
		return b[:size]
	}
	nb := a.Allocate(size)
	copy(nb, b)
	a.Free(b)
	return nb
}

// Free implements memory.Allocator: b goes back to its class's pool.
func (a *PoolAllocator) Free(b []byte) {
	if a.Poison {
		poison(b[:cap(b)])
	}
	n := cap(b)
	c := class(n)
	if c < 0 || n != 1<<(c+poolMinShift) {
		return // not one of ours in size: let the collector have it
	}
	full := b[:n]
	a.pools[c].Put(&full)
}

// alignedSlice returns a zeroed slice of length size and capacity capacity
// whose first byte is poolAlign-aligned.
func alignedSlice(size, capacity int) []byte {
	buf := make([]byte, capacity+poolAlign)
	off := 0
	if r := int(uintptr(unsafe.Pointer(unsafe.SliceData(buf))) % poolAlign); r != 0 {
		off = poolAlign - r
	}
	return buf[off : off+size : off+capacity]
}

func poison(b []byte) {
	for i := range b {
		b[i] = 0xA5
	}
}
