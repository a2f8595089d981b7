package pgwire

import (
	"context"

	"github.com/lakesoul-go/lakesoul/internal/safego"
)

// call runs fn, one call into the Session (or the Authenticator), under a
// context derived from parent that a CancelRequest, Shutdown or the loss of
// the client cancels. It turns the outcome into the error the message loop
// acts on:
//
//   - fn succeeded: nil, even if its context was cancelled meanwhile;
//   - the server is shutting down: a fatal 57P01;
//   - the client is gone (socket read or write failed): a *connLostError;
//   - fn panicked: its *safego.PanicError (logged with its stack where it
//     was recovered), an ERROR XX000 of the statement like any other: the
//     Session is told (StatementAborter) and the connection goes on;
//   - a CancelRequest cancelled the context: 57014;
//   - otherwise fn's error, unchanged.
//
// Whatever fn did, the output holds only whole messages afterwards (a row
// it was building is dropped).
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

	panicked := false
	err := func() (err error) {
		defer safego.RecoverTo(func(p error) { err, panicked = p, true })
		return fn(ctx)
	}()
	c.out.dropOpen()

	c.mu.Lock()
	c.cancelCall = nil
	c.mu.Unlock()

	switch {
	case err == nil:
		return nil
	case c.shutdown.Load():
		return fatal(adminShutdownError())
	case c.out.err != nil:
		return c.out.err
	case panicked:
		c.abortStatement(err)
		return err
	}
	switch cause := context.Cause(ctx); cause {
	case errConnLost:
		return &connLostError{err: err}
	case errCancelRequest:
		return queryCanceledError(err)
	}
	return err
}

// abortStatement tells the Session, if it wants to know, that its running
// statement failed with err outside its own error handling (a panic that
// reached the protocol layer), so that it ends the statement as after any
// error.
func (c *conn) abortStatement(err error) {
	if a, ok := c.sess.(StatementAborter); ok {
		a.AbortStatement(err)
	}
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
