package flightsql

import (
	"context"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakesoul-go/lakesoul/engine"
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
// batches, or its error, which the DoGet returns. The batches are kept in
// memory while the server's allowance for kept results (keptResults) has
// room; the first that does not fit moves them all to a spill file of the
// engine's temp space (engine.ArrowSpill), where every later one goes too,
// in order. So kept results hold at most the allowance in memory however
// large and however many they are; beyond the temp space limit the
// statement fails with 53100.
type result struct {
	kept    *keptResults
	batches []arrow.RecordBatch
	bytes   int64 // of batches, reserved in kept
	spill   *engine.ArrowSpill
	err     error
}

// keptResults is the server's allowance of memory for the results of
// statements that ran before their DoGet (Config.KeptResultMemory), shared
// by all clients, and the engine whose temp space takes the rest.
type keptResults struct {
	eng   *engine.Engine
	mem   memory.Allocator // of the batches read back from spills
	limit int64
	used  atomic.Int64
}

// reserve takes n bytes of the allowance, or none when they do not fit.
func (k *keptResults) reserve(n int64) bool {
	if k.used.Add(n) > k.limit {
		k.used.Add(-n)
		return false
	}
	return true
}

// add keeps rec (retaining it, or writing it to the spill).
func (r *result) add(rec arrow.RecordBatch) error {
	n := recordBytes(rec)
	if r.spill == nil && r.kept.reserve(n) {
		rec.Retain()
		r.batches = append(r.batches, rec)
		r.bytes += n
		return nil
	}
	if r.spill == nil {
		sp, err := r.kept.eng.NewArrowSpill(rec.Schema())
		if err != nil {
			return err
		}
		r.spill = sp
		for i, b := range r.batches {
			if err := sp.Write(b); err != nil {
				return err
			}
			b.Release()
			r.batches[i] = nil
		}
		r.batches = nil
		r.kept.used.Add(-r.bytes)
		r.bytes = 0
	}
	return r.spill.Write(rec)
}

// recordBytes is the size of rec's buffers.
func recordBytes(rec arrow.RecordBatch) int64 {
	var n int64
	var walk func(d arrow.ArrayData)
	walk = func(d arrow.ArrayData) {
		for _, b := range d.Buffers() {
			if b != nil {
				n += int64(b.Len())
			}
		}
		for _, c := range d.Children() {
			walk(c)
		}
	}
	for _, col := range rec.Columns() {
		walk(col.Data())
	}
	return n
}

func (r *result) release() {
	for _, b := range r.batches {
		if b != nil {
			b.Release()
		}
	}
	r.batches = nil
	r.kept.used.Add(-r.bytes)
	r.bytes = 0
	if r.spill != nil {
		r.spill.Close()
		r.spill = nil
	}
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
	res := &result{kept: c.kept}
	err := safego.Call(func() error {
		_, err := c.sess.ExecuteArrow(ctx, h.stmt, h.params, res.add)
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
		send := func(b arrow.RecordBatch) bool {
			select {
			case ch <- flight.StreamChunk{Data: b}: // the framework releases what it sent
				return true
			case <-ctx.Done():
				b.Release()
				ch <- flight.StreamChunk{Err: flightError(ctx.Err())}
				return false
			}
		}
		for i, b := range res.batches {
			res.batches[i] = nil
			if !send(b) {
				return
			}
		}
		if ok, err := c.replaySpill(ctx, res, send); !ok {
			return
		} else if err != nil {
			ch <- flight.StreamChunk{Err: flightError(err)}
			return
		}
		if res.err != nil {
			ch <- flight.StreamChunk{Err: res.err}
		}
	})
	return sc, ch, nil
}

// replaySpill hands the batches of res's spill (if any) to send, one at a
// time; ok is false when send refused one (the stream ended).
func (c *client) replaySpill(ctx context.Context, res *result, send func(arrow.RecordBatch) bool) (ok bool, _ error) {
	if res.spill == nil {
		return true, nil
	}
	rdr, err := res.spill.Reader(c.kept.mem)
	if err != nil {
		return true, err
	}
	defer rdr.Release()
	for rdr.Next() {
		b := rdr.RecordBatch()
		b.Retain()
		if !send(b) {
			return false, nil
		}
	}
	return true, rdr.Err()
}
