package vector

import (
	"context"
	"runtime"
	"sync"
)

// BuildSlots bounds how many segment builds run at once (each holds a
// unit's rows in memory and keeps cores busy), and hands free slots to the
// waiting workspaces in turn: a workspace waiting with many segments gets
// one slot, then every other waiting workspace gets one before it gets its
// next. A table's build takes a slot per segment, so one workspace's large
// index cannot keep the others' builds waiting for longer than a segment.
type BuildSlots struct {
	mu   sync.Mutex
	free int
	// turn lists the workspaces with waiters, the next to be served first;
	// waiting holds each one's waiters in arrival order.
	turn    []string
	waiting map[string][]chan struct{}
}

// NewBuildSlots makes n slots (n <= 0: half the CPUs, at least one).
func NewBuildSlots(n int) *BuildSlots {
	if n <= 0 {
		n = max(1, runtime.GOMAXPROCS(0)/2)
	}
	return &BuildSlots{free: n, waiting: map[string][]chan struct{}{}}
}

// Acquire waits for a slot for a build of workspace; release gives it
// back. It fails with ctx's error if ctx ends first.
func (s *BuildSlots) Acquire(ctx context.Context, workspace string) (release func(), err error) {
	s.mu.Lock()
	if s.free > 0 && len(s.turn) == 0 {
		s.free--
		s.mu.Unlock()
		return s.releaser(), nil
	}
	ch := make(chan struct{})
	if len(s.waiting[workspace]) == 0 {
		s.turn = append(s.turn, workspace)
	}
	s.waiting[workspace] = append(s.waiting[workspace], ch)
	s.mu.Unlock()
	select {
	case <-ch:
		return s.releaser(), nil
	case <-ctx.Done():
		s.mu.Lock()
		defer s.mu.Unlock()
		select {
		case <-ch: // granted meanwhile: pass the slot on
			s.handOver()
		default:
			s.forget(workspace, ch)
		}
		return nil, ctx.Err()
	}
}

// releaser is a slot's release, which works once.
func (s *BuildSlots) releaser() func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			s.handOver()
			s.mu.Unlock()
		})
	}
}

// handOver gives a slot that became free to the first waiter of the
// workspace whose turn it is (s.mu held).
func (s *BuildSlots) handOver() {
	if len(s.turn) == 0 {
		s.free++
		return
	}
	ws := s.turn[0]
	s.turn = s.turn[1:]
	q := s.waiting[ws]
	close(q[0])
	if q = q[1:]; len(q) > 0 {
		s.waiting[ws] = q
		s.turn = append(s.turn, ws) // its next waiter after the others'
	} else {
		delete(s.waiting, ws)
	}
}

// forget removes a waiter that gave up (s.mu held).
func (s *BuildSlots) forget(workspace string, ch chan struct{}) {
	q := s.waiting[workspace]
	for i, c := range q {
		if c == ch {
			q = append(q[:i:i], q[i+1:]...)
			break
		}
	}
	if len(q) > 0 {
		s.waiting[workspace] = q
		return
	}
	delete(s.waiting, workspace)
	for i, ws := range s.turn {
		if ws == workspace {
			s.turn = append(s.turn[:i:i], s.turn[i+1:]...)
			break
		}
	}
}
