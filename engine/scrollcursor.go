package engine

import (
	"context"
	"fmt"
	"math"
	"slices"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// SCROLL cursors: DECLARE name SCROLL CURSOR materialises the query's rows
// in a spill file when it runs (PostgreSQL keeps a scrollable cursor's rows
// in a tuplestore too; here all of them at once, so DECLARE costs the whole
// query), and the cursor moves over them as PostgreSQL's does: a position
// before the first row (0), on row k, or after the last (n+1); FETCH/MOVE
// NEXT, PRIOR, FIRST, LAST, ABSOLUTE k, RELATIVE k, FORWARD/BACKWARD n|ALL
// return the rows they pass in the order they pass them. A row behind the
// file's read position is reached by reading the file again from its start;
// a backward FETCH of n rows holds those n rows in memory to return them in
// reverse. NO SCROLL cursors (the default) refuse going backward with
// PostgreSQL's 55000.

// scrollPortal is a SCROLL cursor's rows: as a portal (protocol Execute and
// FETCH FORWARD) it returns the rows after its position.
type scrollPortal struct {
	r    *spillReader
	cols []pgwire.Column
	n    int64 // rows
	pos  int64 // 0: before the first row; n+1: after the last
	next int64 // the row r reads next (1-based)
	vals []any
}

func newScrollPortal(r *spillReader, cols []pgwire.Column) *scrollPortal {
	return &scrollPortal{r: r, cols: cols, n: r.rows, next: 1, vals: make([]any, len(cols))}
}

func (p *scrollPortal) Describe(context.Context) ([]pgwire.Column, error) { return p.cols, nil }
func (p *scrollPortal) Close()                                            { p.r.close() }

// row reads row k (1 ≤ k ≤ n).
func (p *scrollPortal) row(k int64) ([]any, error) {
	if k < p.next {
		if err := p.r.rewind(); err != nil {
			return nil, err
		}
		p.next = 1
	}
	for ; p.next <= k; p.next++ {
		ok, err := p.r.next(p.cols, p.vals)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, spillCorrupt(nil)
		}
	}
	return slices.Clone(p.vals), nil
}

// Execute returns the rows after the position, at most maxRows (0: all).
func (p *scrollPortal) Execute(ctx context.Context, maxRows int, w pgwire.RowWriter) (string, bool, error) {
	count := int64(math.MaxInt64)
	if maxRows > 0 {
		count = int64(maxRows)
	}
	got, err := p.forward(ctx, count, w)
	if err != nil {
		return "", true, err
	}
	return fmt.Sprintf("SELECT %d", got), p.pos > p.n, nil
}

// forward moves count rows forward, writing the rows it lands on.
func (p *scrollPortal) forward(ctx context.Context, count int64, w pgwire.RowWriter) (int64, error) {
	var got int64
	for ; got < count; got++ {
		if p.pos >= p.n {
			p.pos = p.n + 1
			break
		}
		if got%256 == 0 && ctx.Err() != nil {
			return got, sqlerr.ErrCanceled
		}
		vals, err := p.row(p.pos + 1)
		if err != nil {
			return got, err
		}
		p.pos++
		if err := w.WriteRow(vals); err != nil {
			return got, err
		}
	}
	return got, nil
}

// backward moves count rows backward, writing the rows it lands on.
func (p *scrollPortal) backward(count int64, w pgwire.RowWriter) (int64, error) {
	start := min(p.pos-1, p.n)
	lo := max(start-count+1, 1)
	if count >= p.pos {
		p.pos = 0
	} else {
		p.pos -= count
	}
	if start < 1 {
		return 0, nil
	}
	rows := make([][]any, 0, start-lo+1)
	for k := lo; k <= start; k++ {
		vals, err := p.row(k)
		if err != nil {
			return 0, err
		}
		rows = append(rows, vals)
	}
	for i := len(rows) - 1; i >= 0; i-- {
		if err := w.WriteRow(rows[i]); err != nil {
			return 0, err
		}
	}
	return int64(len(rows)), nil
}

// absolute moves to row k (negative: from the end; beyond either end: before
// the first or after the last row), writing it when there is one.
func (p *scrollPortal) absolute(k int64, w pgwire.RowWriter) (int64, error) {
	if k < 0 {
		k = p.n + 1 + k
	}
	switch {
	case k <= 0:
		p.pos = 0
		return 0, nil
	case k > p.n:
		p.pos = p.n + 1
		return 0, nil
	}
	vals, err := p.row(k)
	if err != nil {
		return 0, err
	}
	p.pos = k
	return 1, w.WriteRow(vals)
}

// scrollFetch runs one FETCH or MOVE (direction, howMany as pg_query gives
// them) on a SCROLL cursor.
func (p *scrollPortal) scrollFetch(ctx context.Context, dir pg_query.FetchDirection, howMany int64, w pgwire.RowWriter) (int64, error) {
	if howMany == 0 && (dir == pg_query.FetchDirection_FETCH_FORWARD || dir == pg_query.FetchDirection_FETCH_BACKWARD) {
		dir = pg_query.FetchDirection_FETCH_RELATIVE // FORWARD 0, BACKWARD 0: the current row again
	}
	switch dir {
	case pg_query.FetchDirection_FETCH_FORWARD:
		if howMany < 0 {
			return p.backward(-howMany, w)
		}
		return p.forward(ctx, howMany, w)
	case pg_query.FetchDirection_FETCH_BACKWARD:
		if howMany < 0 {
			return p.forward(ctx, -howMany, w)
		}
		return p.backward(howMany, w)
	case pg_query.FetchDirection_FETCH_ABSOLUTE:
		return p.absolute(howMany, w)
	case pg_query.FetchDirection_FETCH_RELATIVE:
		if howMany == 0 {
			if p.pos < 1 || p.pos > p.n {
				return 0, nil
			}
			return p.absolute(p.pos, w)
		}
		target := p.pos + howMany
		if target <= 0 {
			p.pos = 0
			return 0, nil
		}
		return p.absolute(target, w)
	}
	return 0, sqlerr.Unsupported("this FETCH direction", "FETCH NEXT | PRIOR | FIRST | LAST | ABSOLUTE n | RELATIVE n | FORWARD n | BACKWARD n")
}

// materialiseScroll runs c's portal to its end into a spill file and makes
// the file's rows c's scrollable portal.
func (s *Session) materialiseScroll(ctx context.Context, c *cursor) error {
	sp, err := s.e.newSpill()
	if err != nil {
		return err
	}
	for done := false; !done; {
		if _, done, err = c.portal.Execute(ctx, 0, sp); err != nil {
			sp.abort()
			return err
		}
	}
	r, err := sp.finish()
	if err != nil {
		return err
	}
	c.portal.Close()
	c.portal, c.done = newScrollPortal(r, c.cols), false
	return nil
}

// forwardOnly is PostgreSQL's error for moving a NO SCROLL cursor backward.
func forwardOnly() error {
	return &sqlerr.Error{Code: "55000", Message: "cursor can only scan forward",
		Hint: "Declare it with SCROLL option to enable backward scan."}
}
