package engine_test

import (
	"slices"
	"testing"
)

// A direct scan inside a transaction block sees the block's own writes,
// buffered or written, like the DuckDB route.
func TestDirectScanReadsOwnWrites(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE o (id int PRIMARY KEY, v text)`)
	mustRun(t, s, `INSERT INTO o VALUES (1, 'a'), (2, 'b')`)
	mustRun(t, s, `BEGIN`)
	mustRun(t, s, `INSERT INTO o VALUES (2, 'B'), (3, 'c')`)
	rows := mustRun(t, s, `SELECT * FROM o`)
	slices.Sort(rows)
	if want := []string{"1|a", "2|B", "3|c"}; !slices.Equal(rows, want) {
		t.Fatalf("in the block: %v, want %v", rows, want)
	}
	mustRun(t, s, `ROLLBACK`)
	rows = mustRun(t, s, `SELECT * FROM o`)
	slices.Sort(rows)
	if want := []string{"1|a", "2|b"}; !slices.Equal(rows, want) {
		t.Fatalf("after ROLLBACK: %v, want %v", rows, want)
	}
}
