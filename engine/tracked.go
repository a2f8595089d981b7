package engine

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/metrics"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// trackPortal wraps a portal so that its errors mark a transaction block
// failed and statement_timeout applies, keeping the COPY interfaces
// pgwire looks for.
func (s *Session) trackPortal(p pgwire.Portal, kind string) pgwire.Portal {
	tp := &trackedPortal{Portal: p, s: s, kind: kind}
	switch cp := p.(type) {
	case pgwire.CopyInPortal:
		return &trackedCopyIn{trackedPortal: tp, in: cp}
	case pgwire.CopyOutPortal:
		return &trackedCopyOut{trackedPortal: tp, out: cp}
	}
	return tp
}

type trackedCopyIn struct {
	*trackedPortal
	in pgwire.CopyInPortal
}

func (t *trackedCopyIn) CopyInFormat() pgwire.CopyFormat { return t.in.CopyInFormat() }

func (t *trackedCopyIn) CopyIn(ctx context.Context, rows pgwire.CopyRowReader) (string, error) {
	ctx, stop := t.s.statementContext(ctx)
	t.started()
	var tag string
	err := safego.Call(func() (err error) { // a panic fails the COPY below like an error
		tag, err = t.in.CopyIn(ctx, rows)
		return err
	})
	t.s.statementEnded(ctx)
	err = t.s.fail(stop(err))
	t.ended(err)
	return tag, err
}

type trackedCopyOut struct {
	*trackedPortal
	out pgwire.CopyOutPortal
}

func (t *trackedCopyOut) CopyOutFormat() (pgwire.CopyFormat, []pgwire.Column) {
	return t.out.CopyOutFormat()
}

var errStatementTimeout = errors.New("statement timeout")

// statementContext bounds ctx by the session's statement_timeout. stop turns
// an error caused by the timeout into 57014 "canceling statement due to
// statement timeout" and releases the timer.
func (s *Session) statementContext(ctx context.Context) (context.Context, func(error) error) {
	d := s.statementTimeout()
	if d <= 0 {
		return ctx, func(err error) error { return err }
	}
	tctx, cancel := context.WithTimeoutCause(ctx, d, errStatementTimeout)
	return tctx, func(err error) error {
		timedOut := context.Cause(tctx) == errStatementTimeout
		cancel()
		if err != nil && timedOut {
			return &sqlerr.Error{Code: sqlerr.QueryCanceled, Message: "canceling statement due to statement timeout", Err: err}
		}
		return err
	}
}

// statementTimeout is statement_timeout as a duration (0 = none).
func (s *Session) statementTimeout() time.Duration {
	d, _ := parseDurationSetting(s.settings["statement_timeout"].value)
	return d
}

// parseDurationSetting reads a time setting in PostgreSQL's notation: a
// number of milliseconds, or a number with a unit (us, ms, s, min, h, d).
func parseDurationSetting(v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	i := 0
	for i < len(v) && (v[i] >= '0' && v[i] <= '9' || v[i] == '.') {
		i++
	}
	n, err := strconv.ParseFloat(v[:i], 64)
	if err != nil || n < 0 {
		return 0, false
	}
	unit := time.Millisecond
	switch strings.ToLower(strings.TrimSpace(v[i:])) {
	case "", "ms":
	case "us":
		unit = time.Microsecond
	case "s":
		unit = time.Second
	case "min":
		unit = time.Minute
	case "h":
		unit = time.Hour
	case "d":
		unit = 24 * time.Hour
	default:
		return 0, false
	}
	return time.Duration(n * float64(unit)), true
}

// started notes when the statement's first execution step began.
func (t *trackedPortal) started() {
	if t.start.IsZero() {
		t.start = time.Now()
	}
}

// ended records the statement's end in the metrics: its kind, SQLSTATE and
// duration since its first execution step.
func (t *trackedPortal) ended(err error) {
	code := "00000"
	if err != nil {
		code = sqlerr.From(err).Code
	}
	metrics.Statement(t.kind, code, time.Since(t.start))
}
