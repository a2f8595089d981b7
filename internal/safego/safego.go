// Package safego runs work so that a panic in it never ends the process.
//
// A panic that no goroutine recovers kills the whole server — every
// session, the private PostgreSQL with it — and a recover on the dispatching
// goroutine does not see a panic of another goroutine. So every goroutine of
// the module is started here (Go, Group.Start; tree_test.go fails on any
// other `go` statement), every callback that runs on a goroutine the module
// did not start is wrapped by Guard, and a panic becomes an error of the
// work that panicked: a *PanicError, logged once with its stack where it
// was recovered. The front doors turn it into an XX000 "internal error" of
// the statement that panicked (package sqlerr), background workers into a
// failure of that one job.
package safego

import (
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
)

// PanicError is a recovered panic: the value passed to panic and the stack
// of the goroutine that panicked.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// recovered turns what recover returned into a *PanicError and logs it
// with its stack. A *PanicError raised again (Group.Wait) was logged where
// it was first recovered and is passed on as it is.
func recovered(r any) *PanicError {
	if p, ok := r.(*PanicError); ok {
		return p
	}
	p := &PanicError{Value: r, Stack: debug.Stack()}
	slog.Error("panic recovered", "panic", fmt.Sprint(r), "stack", string(p.Stack))
	return p
}

// Recover turns a panic of the function that defers it into that function's
// error: deferred directly (`defer safego.Recover(&err)`, err a named
// result), it sets *errp to the *PanicError and the function returns
// normally. Deferred calls registered after it run before it, so cleanup
// that must see the error goes before it in the function.
func Recover(errp *error) {
	if r := recover(); r != nil {
		*errp = recovered(r)
	}
}

// RecoverTo hands a panic of the function that defers it to deliver, as a
// *PanicError: deferred directly (`defer safego.RecoverTo(p.setErr)`), it
// lets a goroutine report its panic to whoever waits for its work, and the
// function returns normally. Deferred calls registered before it (a
// WaitGroup's Done, closing a done channel) run after the delivery.
func RecoverTo(deliver func(error)) {
	if r := recover(); r != nil {
		deliver(recovered(r))
	}
}

// Call runs fn and returns its error, or the *PanicError of its panic.
func Call(fn func() error) (err error) {
	defer Recover(&err)
	return fn()
}

// Go runs fn on a new goroutine. A panic fn does not recover itself is
// recovered there and logged, and the goroutine ends; the process goes on.
// Work that someone waits for delivers its panic to the waiter itself: fn
// recovers into the result it hands over (Recover, Call), or the work runs
// in a Group.
func Go(fn func()) {
	go func() {
		defer func() {
			if r := recover(); r != nil {
				recovered(r)
			}
		}()
		fn()
	}()
}

// Guard returns fn wrapped for a goroutine the module does not start
// (time.AfterFunc, context.AfterFunc): a panic is recovered and logged.
func Guard(fn func()) func() {
	return func() {
		defer func() {
			if r := recover(); r != nil {
				recovered(r)
			}
		}()
		fn()
	}
}

// Group is a fork-join: Start runs functions on goroutines, Wait waits for
// all of them. A panic in one is recovered on its goroutine and raised
// again by Wait on the waiting goroutine, as if the work had run there, so
// whatever recovers for the waiter (a statement's boundary, a job's) gets
// it. The zero Group is ready to use; a Group must not be copied.
type Group struct {
	wg sync.WaitGroup
	mu sync.Mutex
	p  *PanicError // the first panic
}

// Start runs fn on a new goroutine of the group.
func (g *Group) Start(fn func()) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		defer func() {
			if r := recover(); r != nil {
				p := recovered(r)
				g.mu.Lock()
				if g.p == nil {
					g.p = p
				}
				g.mu.Unlock()
			}
		}()
		fn()
	}()
}

// Wait waits until every function started has returned. If one of them
// panicked, Wait panics with the first *PanicError.
func (g *Group) Wait() {
	g.wg.Wait()
	g.mu.Lock()
	p := g.p
	g.mu.Unlock()
	if p != nil {
		panic(p)
	}
}
