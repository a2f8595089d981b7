package flightsql

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"

	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/pgwire"
)

// Statement order. A Flight SQL query is planned by GetFlightInfo and its
// ticket fetched by a later DoGet, which drivers send when they like — the
// ADBC driver starts it in the background and goes on with the next call
// (the next statement, or EndTransaction). Executed at DoGet, a statement
// would take effect after calls its client sent later: an INSERT planned
// before a ROLLBACK landed in the next transaction, one planned before a
// COMMIT was rolled back with the connection. PostgreSQL runs statements
// in the order a connection sends them, and so does a client here:
//
//   - A planned statement that is not a query (INSERT, UPDATE, DELETE,
//     MERGE, DDL, … sent as a query, as the ADBC driver sends everything)
//     runs when it is planned, at GetFlightInfo; its DoGet returns what it
//     produced (RETURNING rows, kept until fetched).
//   - A planned query runs at its DoGet, streaming, unless a call that
//     runs statements or ends a transaction comes first (lockInOrder):
//     then it runs before that call and its rows are kept for the DoGet.
//
// Invariant: when a call that runs a statement or ends a transaction
// starts, no statement planned before it is still waiting to run.

// result is what a statement that ran before its DoGet produced: its
// batches, or its error, which the DoGet returns.
type result struct {
	batches []arrow.RecordBatch
	err     error
}

func (r *result) release() {
	for _, b := range r.batches {
		if b != nil {
			b.Release()
		}
	}
	r.batches = nil
}

// readTags are the command tags of statements that change nothing when
// run later than planned, as long as they run before the client's next
// statement (lockInOrder sees to that).
var readTags = map[string]bool{"SELECT": true, "SHOW": true, "EXPLAIN": true, "VALUES": true, "TABLE": true}

// lockInOrder locks the session for a call that runs a statement or ends a
// transaction, first running the statements planned before it that still
// wait for their DoGet.
func (c *client) lockInOrder(ctx context.Context) error {
	if err := c.lock(ctx); err != nil {
		return err
	}
	for _, id := range c.order {
		if h := c.stmts[id]; h != nil && h.waiting {
			c.runNow(ctx, h)
		}
	}
	return nil
}

// plannedForDoGet marks h as waiting for its DoGet, running it at once
// when it is not a query. Call with the session locked.
func (c *client) plannedForDoGet(ctx context.Context, h *handle) {
	if h.res != nil {
		h.res.release()
		h.res = nil
	}
	h.waiting = true
	if !readTags[h.stmt.Tag()] {
		c.runNow(ctx, h)
	}
}

// runNow runs a waiting statement and keeps what it produced for its
// DoGet. Call with the session locked.
func (c *client) runNow(ctx context.Context, h *handle) {
	res := &result{}
	err := safego.Call(func() error {
		_, err := c.sess.ExecuteArrow(ctx, h.stmt, h.params, func(rec arrow.RecordBatch) error {
			rec.Retain()
			res.batches = append(res.batches, rec)
			return nil
		})
		return err
	})
	if err != nil {
		res.release()
		res.err = flightError(err)
	}
	h.waiting, h.res = false, res
}

// takeResult returns what h produced when it ran before its DoGet (nil if
// it did not) and clears its waiting mark: this DoGet runs it otherwise.
// Call with the session locked.
func (h *handle) takeResult() *result {
	res := h.res
	h.waiting, h.res = false, nil
	return res
}

// replayResult answers a DoGet with what its statement produced when it
// ran earlier. It is called with the session locked and unlocks it: the
// kept batches need no session.
func (c *client) replayResult(ctx context.Context, st pgwire.Statement, res *result) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	sc, err := resultSchema(ctx, st)
	c.unlock()
	if err != nil {
		res.release()
		return nil, nil, err
	}
	ch := make(chan flight.StreamChunk, chunkBuffer)
	safego.Go(func() {
		defer close(ch)
		defer res.release()
		for i, b := range res.batches {
			select {
			case ch <- flight.StreamChunk{Data: b}:
				res.batches[i] = nil // the framework releases what it sent
			case <-ctx.Done():
				ch <- flight.StreamChunk{Err: flightError(ctx.Err())}
				return
			}
		}
		if res.err != nil {
			ch <- flight.StreamChunk{Err: res.err}
		}
	})
	return sc, ch, nil
}
