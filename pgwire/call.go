package pgwire

import (
	"context"
	"errors"
	"runtime/debug"
)

// call runs fn, one call into the Session (or the Authenticator), under a
// context derived from parent that a CancelRequest, Shutdown or the loss of
// the client cancels. It turns the outcome into the error the message loop
// acts on:
//
//   - fn panicked: a fatal XX000 (the panic and its stack are logged);
//   - fn succeeded: nil, even if its context was cancelled meanwhile;
//   - the server is shutting down: a fatal 57P01;
//   - the client is gone (socket read or write failed): a *connLostError;
//   - a CancelRequest cancelled the context: 57014;
//   - otherwise fn's error, unchanged.
//
// Invariant: c.cancelCall is non-nil exactly while fn runs, so a
// CancelRequest affects the running call and never a later one.
func (c *conn) call(parent context.Context, fn func(context.Context) error) error {
	if c.shutdown.Load() {
		return fatal(adminShutdownError())
	}
	ctx, cancel := context.WithCancelCause(context.WithValue(parent, noticeKey{}, c))
	defer cancel(nil)
	c.mu.Lock()
	c.cancelCall = cancel
	c.mu.Unlock()

	err := c.runGuarded(ctx, fn)

	c.mu.Lock()
	c.cancelCall = nil
	c.mu.Unlock()

	var pe *panicError
	switch {
	case errors.As(err, &pe):
		c.log.Error("pgwire: panic in session call", "panic", pe.value, "stack", string(pe.stack))
		return fatal(err)
	case err == nil:
		return nil
	case c.shutdown.Load():
		return fatal(adminShutdownError())
	case c.out.err != nil:
		return c.out.err
	}
	switch cause := context.Cause(ctx); cause {
	case errConnLost:
		return &connLostError{err: err}
	case errCancelRequest:
		return queryCanceledError(err)
	}
	return err
}

// runGuarded runs fn and converts a panic into a *panicError.
func (c *conn) runGuarded(ctx context.Context, fn func(context.Context) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &panicError{value: r, stack: debug.Stack()}
		}
	}()
	return fn(ctx)
}

// cancelRunningCall cancels the context of the running call, if any, with
// cause. It may be called from any goroutine.
func (c *conn) cancelRunningCall(cause error) {
	c.mu.Lock()
	if c.cancelCall != nil {
		c.cancelCall(cause)
	}
	c.mu.Unlock()
}
