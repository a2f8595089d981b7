package cdc

import (
	"strings"
	"testing"
)

// TestPageRanges: chunks are disjoint, cover every page (the last is
// open-ended) and small tables are one unbounded copy.
func TestPageRanges(t *testing.T) {
	if got := pageRanges(copyChunkMinPages*4-1, 4); len(got) != 1 || got[0] != "" {
		t.Fatalf("small table: %q", got)
	}
	got := pageRanges(10000, 4)
	want := []string{
		" WHERE ctid < '(2500,0)'::tid",
		" WHERE ctid >= '(2500,0)'::tid AND ctid < '(5000,0)'::tid",
		" WHERE ctid >= '(5000,0)'::tid AND ctid < '(7500,0)'::tid",
		" WHERE ctid >= '(7500,0)'::tid",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("ranges %q, want %q", got, want)
	}
}
