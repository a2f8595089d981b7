package engine

import (
	"context"
	"strconv"

	"github.com/lakesoul-go/lakesoul/pgwire"
)

// SQL cursors are portals of the protocol too, and protocol portals are
// cursors of SQL, as in PostgreSQL: a client may DECLARE a cursor and then
// Describe and Execute the portal of that name (psycopg 3's named cursors),
// or Bind a portal and MOVE or FETCH it by name (asyncpg). Session
// implements pgwire.SessionCursors for the first; FETCH and MOVE look up
// pgwire.BoundPortal when no cursor has the name (cursor.go) for the second.

var _ pgwire.SessionCursors = (*Session)(nil)

// Cursor returns cursor name as a portal of the protocol.
func (s *Session) Cursor(name string) (pgwire.Portal, []pgwire.Column, bool) {
	c, ok := s.cursors[name]
	if !ok {
		return nil, nil, false
	}
	return &cursorPortal{c: c}, c.cols, true
}

// CloseCursor closes cursor name (a Close message of the protocol).
func (s *Session) CloseCursor(name string) bool {
	c, ok := s.cursors[name]
	if !ok {
		return false
	}
	c.portal.Close()
	delete(s.cursors, name)
	return true
}

// cursorPortal executes a cursor for the protocol: each Execute fetches the
// cursor's next rows, as FETCH does; the session owns the cursor, so
// closing the portal leaves it open.
type cursorPortal struct{ c *cursor }

func (p *cursorPortal) Describe(context.Context) ([]pgwire.Column, error) { return p.c.cols, nil }
func (p *cursorPortal) Close()                                            {}

func (p *cursorPortal) Execute(ctx context.Context, maxRows int, w pgwire.RowWriter) (string, bool, error) {
	if p.c.done {
		return "SELECT 0", true, nil
	}
	cw := &countingRowWriter{w: w}
	_, done, err := p.c.portal.Execute(ctx, maxRows, cw)
	if err != nil {
		return "", true, err
	}
	p.c.done = done
	return "SELECT " + strconv.FormatInt(cw.n, 10), done, nil
}

// fetchTarget is the cursor FETCH or MOVE name reads: the session's SQL
// cursor, or else the protocol portal the client bound under that name
// (not the session's to close; its end is not remembered, as its Execute
// answers done again).
func (s *Session) fetchTarget(ctx context.Context, name string) (*cursor, error) {
	c, err := s.lookupCursor(name)
	if err == nil {
		return c, nil
	}
	if p, cols, ok := pgwire.BoundPortal(ctx, name); ok {
		return &cursor{name: name, portal: p, cols: cols}, nil
	}
	return nil, err
}
