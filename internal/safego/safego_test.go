package safego

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestRecoverAndCall(t *testing.T) {
	f := func() (err error) {
		defer Recover(&err)
		var m map[string]int
		m["x"] = 1 // a runtime error
		return nil
	}
	err := f()
	var p *PanicError
	if !errors.As(err, &p) || !strings.Contains(p.Error(), "nil map") || !strings.Contains(string(p.Stack), "TestRecoverAndCall") {
		t.Fatalf("Recover gave %v", err)
	}
	if err := Call(func() error { panic("boom") }); !errors.As(err, &p) || p.Value != "boom" {
		t.Fatalf("Call gave %v", err)
	}
	want := errors.New("plain")
	if err := Call(func() error { return want }); err != want {
		t.Fatalf("Call changed an error: %v", err)
	}
}

// RecoverTo delivers the panic before the deferred calls registered ahead
// of it (a done channel) run.
func TestRecoverToDeliversFirst(t *testing.T) {
	var got error
	done := make(chan struct{})
	Go(func() {
		defer close(done)
		defer RecoverTo(func(err error) { got = err })
		panic("in a goroutine")
	})
	<-done
	var p *PanicError
	if !errors.As(got, &p) || p.Value != "in a goroutine" {
		t.Fatalf("delivered %v", got)
	}
}

// A panic Go's function leaves alone ends the goroutine, not the process;
// so does one of a Guard-ed callback.
func TestGoAndGuardContain(t *testing.T) {
	var wg sync.WaitGroup
	wg.Add(2)
	Go(func() {
		defer wg.Done()
		panic("unhandled")
	})
	time.AfterFunc(time.Millisecond, Guard(func() {
		defer wg.Done()
		panic("in a timer")
	}))
	wg.Wait()
}

// Group.Wait raises its goroutines' first panic on the waiter, with the
// stack of the goroutine that panicked, after all of them returned.
func TestGroupRaisesOnWaiter(t *testing.T) {
	var g Group
	var slept atomic.Int32
	for i := range 3 {
		g.Start(func() {
			if i == 1 {
				panic("worker 1")
			}
			time.Sleep(20 * time.Millisecond)
			slept.Add(1)
		})
	}
	err := Call(func() error { g.Wait(); return nil })
	var p *PanicError
	if !errors.As(err, &p) || p.Value != "worker 1" || !strings.Contains(string(p.Stack), "TestGroupRaisesOnWaiter.func") {
		t.Fatalf("Wait gave %v", err)
	}
	if n := slept.Load(); n != 2 {
		t.Fatalf("Wait returned while %d of 2 goroutines still ran", 2-n)
	}
	var quiet Group
	quiet.Start(func() {})
	quiet.Wait()
}
