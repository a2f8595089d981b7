package vector

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// One slot, workspace a queueing many builds before b queues one: b is
// served right after a's first, not after all of a's; a waiter that gives
// up is skipped; at most the slots' number of builds hold one at once.
func TestBuildSlotsTakeTurns(t *testing.T) {
	s := NewBuildSlots(1)
	ctx := context.Background()
	hold, err := s.Acquire(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	running := 0
	wait := func(ws, name string) {
		defer wg.Done()
		release, err := s.Acquire(ctx, ws)
		if err != nil {
			t.Error(err)
			return
		}
		mu.Lock()
		if running++; running > 1 {
			t.Errorf("%d builds hold the slot", running)
		}
		order = append(order, name)
		mu.Unlock()
		time.Sleep(time.Millisecond)
		mu.Lock()
		running--
		mu.Unlock()
		release()
	}
	queued := func(n int) { // waiters registered so far
		for {
			s.mu.Lock()
			k := 0
			for _, q := range s.waiting {
				k += len(q)
			}
			s.mu.Unlock()
			if k == n {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}
	for i, name := range []string{"a1", "a2", "a3"} {
		wg.Add(1)
		go wait("a", name)
		queued(i + 1)
	}
	gone, cancel := context.WithCancel(ctx)
	quit := make(chan error)
	go func() { _, err := s.Acquire(gone, "c"); quit <- err }()
	queued(4)
	wg.Add(1)
	go wait("b", "b1")
	queued(5)
	cancel()
	if err := <-quit; !errors.Is(err, context.Canceled) {
		t.Fatalf("a waiter that gave up: %v", err)
	}
	hold()
	wg.Wait()
	if want := []string{"a1", "b1", "a2", "a3"}; !slices.Equal(order, want) {
		t.Fatalf("served %v, want %v", order, want)
	}
	if s.free != 1 || len(s.turn) != 0 || len(s.waiting) != 0 {
		t.Fatalf("after all: %d free, turn %v, waiting %v", s.free, s.turn, s.waiting)
	}
}

// A build stops with its context's error in every phase of the work.
func TestBuildStopsWithContext(t *testing.T) {
	const n, dims = 3000, 1024
	vecs := clustered(n, dims, 8, 1)
	keys := make([]string, n)
	for i := range keys {
		keys[i] = string(rune('a' + i%26))
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	if _, err := Build(ctx, keys, vecs, dims, L2, BuildOptions{Lists: 32, Seed: 1}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Build: %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Build stopped after %s", d)
	}
	if _, err := Build(context.Background(), keys[:1], make([]float32, MaxIndexDims+1), MaxIndexDims+1, L2, BuildOptions{}); err == nil {
		t.Fatal("Build of more than MaxIndexDims dimensions")
	}
}
