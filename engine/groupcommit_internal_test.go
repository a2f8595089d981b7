package engine

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// TestGroupCommit: read-modify-write statements of several sessions that
// find their partition moved while another statement's locked commit is in
// flight queue, and the first of them commits all of them as one group.
// Each outcome is what it would be alone: two increments of one row both
// land (the second member finds its row changed by the first and runs
// again); a member whose write intent expired while it waited fails alone
// with 55000, the others commit.
//
// Choreography: statement A's locked commit (the partition moved under it)
// holds the partition lock while three other statements snapshot, write
// and, finding A's commit in flight, queue behind it; A commits and hands
// the queue on.
func TestGroupCommit(t *testing.T) {
	ctx := context.Background()
	s, exec := newInternalSession(t)
	other := otherSession(t, s)
	members := []*Session{otherSession(t, s), otherSession(t, s), otherSession(t, s)}
	exec("CREATE TABLE grouped (id int PRIMARY KEY, v int) WITH (hash_bucket_num = 1)")
	exec("INSERT INTO grouped SELECT g, 0 FROM generate_series(1, 10) g")

	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Errorf("timed out waiting for %s", what)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	queued := func() bool {
		s.e.commitQueues.mu.Lock()
		defer s.e.commitQueues.mu.Unlock()
		n := 0
		for _, q := range s.e.commitQueues.m {
			n += q.queued()
		}
		return n == len(members)
	}

	// A's partition moves under it: its first try fails and it commits
	// under the lock.
	var moveA atomic.Bool
	moveA.Store(true)
	testHookRMWCommit = func(*catalog.Table) {
		if moveA.Swap(false) {
			if _, err := internalQuery(ctx, other, "UPDATE grouped SET v = 100 WHERE id = 10"); err != nil {
				t.Error(err)
			}
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, len(members))
	stmts := []string{
		"UPDATE grouped SET v = v + 1 WHERE id = 2",
		"INSERT INTO grouped VALUES (2, 0) ON CONFLICT (id) DO UPDATE SET v = grouped.v + 1",
		"INSERT INTO grouped VALUES (3, 0) ON CONFLICT (id) DO UPDATE SET v = grouped.v + 5",
	}
	var startOnce sync.Once
	testHookLockedCheck = func(int) {
		startOnce.Do(func() {
			for i, m := range members {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[i] = internalQuery(ctx, m, stmts[i])
				}()
			}
			waitFor("the three statements to queue", queued)
			// The last member's intent expires (and is collected)
			// while it waits: its commit alone fails.
			if _, err := s.e.cat.Pool().Exec(ctx, "DELETE FROM lakesoul.write_intent WHERE id = $1", members[2].intent.ID()); err != nil {
				t.Error(err)
			}
		})
	}
	var groups []int
	var mu sync.Mutex
	testHookGroupCommitted = func(n int) {
		mu.Lock()
		groups = append(groups, n)
		mu.Unlock()
	}
	defer func() {
		testHookRMWCommit, testHookLockedCheck, testHookGroupCommitted = nil, nil, nil
	}()

	if _, err := internalQuery(ctx, s, "UPDATE grouped SET v = v + 10 WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, err := range errs[:2] {
		if err != nil {
			t.Errorf("%s: %v", stmts[i], err)
		}
	}
	if sqlerr.Code(errs[2]) != "55000" {
		t.Errorf("%s, its intent gone: %v, want 55000", stmts[2], errs[2])
	}
	mu.Lock()
	if len(groups) == 0 || groups[0] != len(members) {
		t.Errorf("groups committed together: %v, want a group of %d first", groups, len(members))
	}
	mu.Unlock()
	rows, err := internalQuery(ctx, s, "SELECT id, v FROM grouped WHERE id IN (1, 2, 3, 10) ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(rows), "[[1 10] [2 2] [3 0] [10 100]]"; got != want {
		t.Errorf("rows: %s, want %s", got, want)
	}
}
