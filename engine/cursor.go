package engine

import (
	"context"
	"fmt"
	"math"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// SQL cursors: DECLARE name CURSOR FOR query, FETCH [FORWARD] n FROM name,
// MOVE, CLOSE name | ALL. A cursor is a portal of its query that lives in the
// session; FETCH executes it for at most n more rows, so a cursor streams
// (psycopg2 named cursors, psql's FETCH_COUNT): a DuckDB query produces only
// the rows fetched (duckPortal). NO SCROLL cursors (the default) are
// forward-only; SCROLL cursors are materialised (scrollcursor.go).
//
// Without WITH HOLD a cursor exists only inside a transaction block and ends
// with it. A WITH HOLD cursor is materialised when the transaction that
// declared it commits, as PostgreSQL's are: its remaining rows go to a spill
// file (spill.go) and its portal — a DuckDB stream, a lake scan's snapshot, a
// catalog transaction — is closed, so nothing of that transaction outlives
// it; FETCH then reads the file, until CLOSE or the end of the session. A
// cursor declared WITH HOLD outside a block is materialised at once (its
// implicit transaction ends with the DECLARE). If the transaction aborts, the
// cursors it declared are gone, held or not.

type cursor struct {
	name   string
	portal pgwire.Portal
	cols   []pgwire.Column
	hold   bool
	done   bool
	// inBlock: declared in the open transaction block, so a ROLLBACK
	// closes it even WITH HOLD (it never existed), as in PostgreSQL.
	inBlock bool
}

const (
	codeInvalidCursorName      = "34000"
	codeDuplicateCursor        = "42P03"
	codeNoActiveSQLTransaction = "25P01"
)

// closeCursors closes the session's cursors: all of them, or (at the end of
// a transaction) those without WITH HOLD.
func (s *Session) closeCursors(all bool) {
	for name, c := range s.cursors {
		if all || !c.hold {
			c.portal.Close()
			delete(s.cursors, name)
		}
	}
}

// persistCursors materialises the WITH HOLD cursors the block declared,
// before it commits (a failure aborts the commit, as in PostgreSQL). The
// one whose DuckDB stream is open goes first, straight into its file; the
// others' streams are parked already.
func (s *Session) persistCursors(ctx context.Context) error {
	todo := make([]*cursor, 0, len(s.cursors))
	for _, c := range s.cursors {
		if _, scroll := c.portal.(*scrollPortal); c.hold && c.inBlock && !scroll {
			if h, ok := c.portal.(streamHolder); ok && h == s.duck.holder {
				todo = append([]*cursor{c}, todo...)
			} else {
				todo = append(todo, c)
			}
		}
	}
	for _, c := range todo {
		if err := s.persistCursor(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

// persistCursor runs c's portal to its end into a spill file and makes the
// file c's portal (PostgreSQL's PersistHoldablePortal). A DuckDB result
// already parked in a file keeps that file.
func (s *Session) persistCursor(ctx context.Context, c *cursor) error {
	var r *spillReader
	if p, ok := c.portal.(*duckPortal); ok && !c.done {
		r = p.takeSpill()
	}
	if r == nil {
		sp, err := s.e.newSpill()
		if err != nil {
			return err
		}
		for !c.done {
			_, done, err := c.portal.Execute(ctx, 0, sp)
			if err != nil {
				sp.abort()
				return err
			}
			c.done = done
		}
		if r, err = sp.finish(); err != nil {
			return err
		}
	}
	c.portal.Close()
	c.portal, c.done = newSpillPortal(r, c.cols), false
	return nil
}

// endBlockCursors ends a transaction block for the cursors: those without
// WITH HOLD close, and so do those the block declared unless it committed.
func (s *Session) endBlockCursors(committed bool) {
	for name, c := range s.cursors {
		switch {
		case !c.hold || c.inBlock && !committed:
			c.portal.Close()
			delete(s.cursors, name)
		default:
			c.inBlock = false
		}
	}
}

func (s *Session) planDeclare(ctx context.Context, n *pg_query.DeclareCursorStmt, paramOIDs []uint32) (pgwire.Statement, error) {
	const (
		optBinary = 0x0001
		optScroll = 0x0002
		optHold   = 0x0020
	)
	if n.Options&optBinary != 0 {
		return nil, sqlerr.Unsupported("BINARY cursors", "cursors with text results; use the extended protocol for binary results")
	}
	if n.Query == nil || n.Query.GetSelectStmt() == nil {
		return nil, sqlerr.New(sqlerr.SyntaxError, "DECLARE CURSOR needs a SELECT query")
	}
	inner, err := s.plan(ctx, n.Query, paramOIDs)
	if err != nil {
		return nil, err
	}
	cols, err := inner.Describe(ctx)
	if err != nil {
		return nil, err
	}
	name := n.Portalname
	hold := n.Options&optHold != 0
	scroll := n.Options&optScroll != 0
	return &funcStmt{
		tag:    "DECLARE CURSOR",
		params: inner.ParamOIDs(),
		run: func(ctx context.Context, params []any) (string, [][]any, error) {
			if !hold {
				if err := s.requireTransactionBlock("DECLARE CURSOR"); err != nil {
					return "", nil, err
				}
			}
			if _, dup := s.cursors[name]; dup {
				return "", nil, sqlerr.New(codeDuplicateCursor, "cursor %q already exists", name)
			}
			p, err := inner.Bind(ctx, params)
			if err != nil {
				return "", nil, err
			}
			if s.cursors == nil {
				s.cursors = map[string]*cursor{}
			}
			c := &cursor{name: name, portal: p, cols: cols, hold: hold, inBlock: s.inBlock}
			s.cursors[name] = c
			if scroll || !s.inBlock {
				// A SCROLL cursor's rows are materialised now
				// (scrollcursor.go); so are a held cursor's when the
				// DECLARE is its own transaction, which commits now.
				materialise := s.persistCursor
				if scroll {
					materialise = s.materialiseScroll
				}
				if err := materialise(ctx, c); err != nil {
					c.portal.Close()
					delete(s.cursors, name)
					return "", nil, err
				}
			}
			return "DECLARE CURSOR", nil, nil
		},
	}, nil
}

func (s *Session) lookupCursor(name string) (*cursor, error) {
	c, ok := s.cursors[name]
	if !ok {
		return nil, sqlerr.New(codeInvalidCursorName, "cursor %q does not exist", name)
	}
	return c, nil
}

func (s *Session) planFetch(ctx context.Context, n *pg_query.FetchStmt) (pgwire.Statement, error) {
	name := n.Portalname
	// The result columns are the cursor's, known only if it is already open
	// (PostgreSQL also needs the cursor to exist to describe FETCH).
	var cols []pgwire.Column
	if !n.Ismove {
		c, err := s.fetchTarget(ctx, name) // cursorportal.go
		if err != nil {
			return nil, err
		}
		cols = c.cols
	}
	verb := "FETCH"
	if n.Ismove {
		verb = "MOVE"
	}
	return &fetchStmt{s: s, name: name, dir: n.Direction, howMany: n.HowMany, cols: cols, verb: verb}, nil
}

// forwardCount is how many rows a FETCH or MOVE of a NO SCROLL cursor
// reads forward: FORWARD n | ALL, and RELATIVE 1 / ABSOLUTE 1 read as NEXT;
// going backward is 55000, as in PostgreSQL.
func forwardCount(dir pg_query.FetchDirection, howMany int64) (int64, error) {
	switch dir {
	case pg_query.FetchDirection_FETCH_FORWARD:
		if howMany < 0 {
			return 0, forwardOnly() // scrollcursor.go
		}
		return howMany, nil // 0 with FORWARD ALL/ALL is math.MaxInt64 already
	case pg_query.FetchDirection_FETCH_ABSOLUTE, pg_query.FetchDirection_FETCH_RELATIVE:
		if howMany < 0 || (dir == pg_query.FetchDirection_FETCH_ABSOLUTE && howMany == 0) {
			return 0, forwardOnly()
		}
		if howMany != 1 {
			return 0, sqlerr.Unsupported("FETCH ABSOLUTE/RELATIVE n of a NO SCROLL cursor", "FETCH [FORWARD] n | ALL, or DECLARE … SCROLL CURSOR")
		}
		return 1, nil
	}
	return 0, forwardOnly()
}

// fetchStmt streams up to count rows of a cursor into the FETCH's result.
type fetchStmt struct {
	s       *Session
	name    string
	dir     pg_query.FetchDirection
	howMany int64
	cols    []pgwire.Column
	verb    string
}

func (f *fetchStmt) ParamOIDs() []uint32                               { return nil }
func (f *fetchStmt) Describe(context.Context) ([]pgwire.Column, error) { return f.cols, nil }
func (f *fetchStmt) Tag() string                                       { return f.verb }

func (f *fetchStmt) Bind(context.Context, []any) (pgwire.Portal, error) {
	return &fetchPortal{f: f}, nil
}

type fetchPortal struct {
	f       *fetchStmt
	started bool
	got     int64 // rows fetched so far by this FETCH
}

func (p *fetchPortal) Describe(context.Context) ([]pgwire.Column, error) { return p.f.cols, nil }
func (p *fetchPortal) Close()                                            {}

// discardRows is the RowWriter of MOVE.
type discardRows struct{}

func (discardRows) WriteRow([]any) error { return nil }

// Execute fetches the next rows, all of them in one go (a row limit of the
// client's Execute does not split a FETCH).
func (p *fetchPortal) Execute(ctx context.Context, _ int, w pgwire.RowWriter) (string, bool, error) {
	if p.started {
		return fmt.Sprintf("%s %d", p.f.verb, p.got), true, nil
	}
	p.started = true
	c, err := p.f.s.fetchTarget(ctx, p.f.name) // cursorportal.go
	if err != nil {
		return "", true, err
	}
	if p.f.verb == "MOVE" {
		w = discardRows{}
	}
	if sp, ok := c.portal.(*scrollPortal); ok {
		n, err := sp.scrollFetch(ctx, p.f.dir, p.f.howMany, w) // scrollcursor.go
		if err != nil {
			return "", true, err
		}
		c.done = sp.pos > sp.n
		p.got = n
		return fmt.Sprintf("%s %d", p.f.verb, p.got), true, nil
	}
	count, err := forwardCount(p.f.dir, p.f.howMany)
	if err != nil {
		return "", true, err
	}
	cw := &countingRowWriter{w: w}
	for !c.done && cw.n < count {
		limit := 0
		if want := count - cw.n; want < math.MaxInt32 {
			limit = int(want)
		}
		_, done, err := c.portal.Execute(ctx, limit, cw)
		if err != nil {
			return "", true, err
		}
		c.done = done
		if limit == 0 {
			break
		}
	}
	p.got = cw.n
	return fmt.Sprintf("%s %d", p.f.verb, p.got), true, nil
}

func (s *Session) planClose(n *pg_query.ClosePortalStmt) (pgwire.Statement, error) {
	name := n.Portalname
	return &funcStmt{tag: "CLOSE CURSOR", run: func(context.Context, []any) (string, [][]any, error) {
		if name == "" { // CLOSE ALL
			s.closeCursors(true)
			return "CLOSE CURSOR ALL", nil, nil
		}
		c, err := s.lookupCursor(name)
		if err != nil {
			return "", nil, err
		}
		c.portal.Close()
		delete(s.cursors, name)
		return "CLOSE CURSOR", nil, nil
	}}, nil
}
