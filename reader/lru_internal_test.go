package reader

import "testing"

// TestByteLRU: entries are evicted least recently used first down to the
// budget (never the last one), an existing key keeps its value, and growth
// of an evicted value is not counted to a newer value of its key.
func TestByteLRU(t *testing.T) {
	var dropped []int
	one, two, three, again := new(int), new(int), new(int), new(int)
	*one, *two, *three, *again = 1, 2, 3, 4
	c := newByteLRU[string, *int](10, func(v *int) { dropped = append(dropped, *v) })
	c.add("a", one, 4)
	c.add("b", two, 4)
	if got, existed := c.add("a", again, 4); !existed || got != one {
		t.Fatalf("add of an existing key: %v %v, want the first value", *got, existed)
	}
	c.add("c", three, 4) // a was used last: b goes
	if len(dropped) != 1 || dropped[0] != 2 || c.used != 8 || c.len() != 2 {
		t.Fatalf("after the third add: dropped %v, used %d, %d entries", dropped, c.used, c.len())
	}
	c.get("a")          // a is used again (growing is no use: readers get first)
	c.grow("a", one, 8) // a is now 12 bytes: c goes, a stays although over budget
	if len(dropped) != 2 || dropped[1] != 3 || c.used != 12 || c.len() != 1 {
		t.Fatalf("after growing: dropped %v, used %d, %d entries", dropped, c.used, c.len())
	}
	c.add("b", again, 1) // a goes
	c.grow("a", one, 5)  // a is gone: nothing counted
	c.add("a", two, 2)
	c.grow("a", one, 5) // an older value of a: nothing counted
	if c.used != 3 || c.len() != 2 {
		t.Fatalf("growth of an evicted value was counted: used %d, %d entries", c.used, c.len())
	}
	if v, ok := c.get("a"); !ok || v != two {
		t.Fatalf("get a: %v %v", v, ok)
	}
}
