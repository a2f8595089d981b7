package engine

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/lakesoul-go/lakesoul/catalog"
)

// TestContendedCommitChecksBeforeLocking: a read-modify-write statement
// whose partition moved since its snapshot reads the commits that landed
// before it locks the partition, so its locked commit checks none of them
// (the lock is held by one writer at a time: reading files under it
// serialised every contending writer behind those reads). The rules stay
// whole: commits to other rows keep the statement's result and theirs; a
// commit to its own row makes it run again on the new row (no lost update).
func TestContendedCommitChecksBeforeLocking(t *testing.T) {
	ctx := context.Background()
	s, exec := newInternalSession(t)
	other := otherSession(t, s)
	exec("CREATE TABLE contended (id int PRIMARY KEY, v int) WITH (hash_bucket_num = 1)")
	exec("INSERT INTO contended SELECT g, g FROM generate_series(1, 10) g")

	// Mid-statement (written, not committed), another session commits
	// these statements, one commit each; then the statement commits.
	var meanwhile atomic.Pointer[[]string]
	testHookRMWCommit = func(*catalog.Table) {
		stmts := meanwhile.Swap(nil)
		if stmts == nil {
			return
		}
		for _, q := range *stmts {
			if _, err := internalQuery(ctx, other, q); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
	}
	var locked []int
	testHookLockedCheck = func(moved int) { locked = append(locked, moved) }
	defer func() { testHookRMWCommit, testHookLockedCheck = nil, nil }()

	run := func(q string, others ...string) {
		t.Helper()
		locked = nil
		meanwhile.Store(&others)
		if _, err := internalQuery(ctx, s, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if meanwhile.Load() != nil {
			t.Fatalf("%s: the other commits did not run mid-statement", q)
		}
	}
	want := func(id, v int) {
		t.Helper()
		rows, err := internalQuery(ctx, s, fmt.Sprintf("SELECT v FROM contended WHERE id = %d", id))
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 || fmt.Sprint(rows[0][0]) != fmt.Sprint(v) {
			t.Fatalf("row %d: %v, want v = %d", id, rows, v)
		}
	}

	// Three commits to other rows: one locked commit, nothing left to
	// check under the lock.
	run("INSERT INTO contended VALUES (1, 0) ON CONFLICT (id) DO UPDATE SET v = contended.v + 100",
		"UPDATE contended SET v = 50 WHERE id = 5",
		"UPDATE contended SET v = 60 WHERE id = 6",
		"INSERT INTO contended VALUES (7, 70) ON CONFLICT (id) DO UPDATE SET v = excluded.v")
	if len(locked) != 1 || locked[0] != 0 {
		t.Errorf("versions checked under the partition lock, per locked commit: %v, want [0]", locked)
	}
	want(1, 101)
	want(5, 50)
	want(6, 60)
	want(7, 70)

	// A commit to the statement's own row: it runs again and adds to the
	// row that commit left.
	run("UPDATE contended SET v = v + 1 WHERE id = 1",
		"UPDATE contended SET v = 1000 WHERE id = 1")
	want(1, 1001)
	run("INSERT INTO contended VALUES (2, 0) ON CONFLICT (id) DO UPDATE SET v = contended.v + 1",
		"UPDATE contended SET v = 7 WHERE id = 3",
		"UPDATE contended SET v = 2000 WHERE id = 2")
	want(2, 2001)
	want(3, 7)
}
