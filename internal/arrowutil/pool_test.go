package arrowutil

import (
	"testing"
	"unsafe"
)

func TestPoolAllocator(t *testing.T) {
	a := NewPoolAllocator()
	for _, n := range []int{0, 1, 63, 64, 65, 1000, 4096, 1 << 20, 1<<26 + 1} {
		b := a.Allocate(n)
		if len(b) != n {
			t.Fatalf("Allocate(%d): len %d", n, len(b))
		}
		if p := uintptr(unsafe.Pointer(unsafe.SliceData(b))); cap(b) > 0 && p%poolAlign != 0 {
			t.Fatalf("Allocate(%d) is not %d-byte aligned", n, poolAlign)
		}
		for i := range b {
			b[i] = 0xFF
		}
		a.Free(b)
		// Reused memory comes back zeroed, growth in place too.
		c := a.Allocate(n)
		for i, v := range c {
			if v != 0 {
				t.Fatalf("Allocate(%d) after Free: byte %d = %#x", n, i, v)
			}
		}
		if n > 0 && n < 1<<20 {
			c = c[:n/2]
			for i := range c {
				c[i] = 1
			}
			d := a.Reallocate(n, c)
			for i, v := range d {
				if want := byte(0); i < n/2 {
					want = 1
					if v != want {
						t.Fatalf("Reallocate kept byte %d = %#x", i, v)
					}
				} else if v != want {
					t.Fatalf("Reallocate(%d) grew with byte %d = %#x", n, i, v)
				}
			}
		}
	}
	// Poisoned buffers read back as 0xA5 until reallocated.
	a.Poison = true
	b := a.Allocate(100)
	a.Free(b)
	if b[0] != 0xA5 || b[99] != 0xA5 {
		t.Fatalf("freed buffer not poisoned: %#x %#x", b[0], b[99])
	}
}
