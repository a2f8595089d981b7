package pgwire

import (
	"context"
	"slices"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// The extended query protocol. Each handler returns nil after buffering its
// response, an ERROR (the loop reports and flushes it, then discards messages
// until Sync), or an error that ends the connection. Other responses are not
// flushed before Sync or Flush unless the buffer fills up.

// handleParse creates a prepared statement. The unnamed statement is
// replaced; a named one must not exist yet.
func (c *conn) handleParse(m *pgproto3.Parse) error {
	if m.Name == "" {
		delete(c.stmts, "")
	} else if _, dup := c.stmts[m.Name]; dup {
		return sqlerr.New(codeDuplicatePreparedStatement, "prepared statement %q already exists", m.Name)
	}
	if !utf8.ValidString(m.Query) {
		return invalidUTF8Error()
	}
	c.act.run(m.Query) // PostgreSQL is active from Parse on
	ps, err := c.prepare(m.Name, m.Query, slices.Clone(m.ParameterOIDs))
	if err != nil {
		return err
	}
	c.stmts[m.Name] = ps
	return c.out.send(&pgproto3.ParseComplete{})
}

// prepare parses query, which must hold at most one statement.
func (c *conn) prepare(name, query string, paramOIDs []uint32) (*preparedStatement, error) {
	var stmts []Statement
	err := c.call(c.ctx, func(ctx context.Context) error {
		var err error
		stmts, err = c.sess.Parse(ctx, query, paramOIDs)
		return err
	})
	if err != nil {
		return nil, err
	}
	ps := &preparedStatement{name: name, query: query, paramOIDs: paramOIDs}
	switch len(stmts) {
	case 0:
	case 1:
		ps.stmt = stmts[0]
		ps.paramOIDs = stmts[0].ParamOIDs()
	default:
		return nil, sqlerr.New(sqlerr.SyntaxError, "cannot insert multiple commands into a prepared statement")
	}
	return ps, nil
}

// lookupStatement finds a prepared statement or fails with 26000.
func (c *conn) lookupStatement(name string) (*preparedStatement, error) {
	ps, ok := c.stmts[name]
	if !ok {
		if name == "" {
			return nil, sqlerr.New(codeInvalidSQLStatementName, "unnamed prepared statement does not exist")
		}
		return nil, sqlerr.New(codeInvalidSQLStatementName, "prepared statement %q does not exist", name)
	}
	return ps, nil
}

// lookupPortal finds a portal — one the client bound, or else the
// session's SQL cursor of that name (SessionCursors) — or fails with 34000.
func (c *conn) lookupPortal(name string) (*portal, error) {
	pt, ok := c.portals[name]
	if !ok {
		if sc, isSC := c.sess.(SessionCursors); isSC && name != "" {
			if p, cols, found := sc.Cursor(name); found {
				// Not kept in c.portals: the session owns the cursor.
				return &portal{name: name, p: p, cols: cols, formats: make([]int16, len(cols))}, nil
			}
		}
		return nil, sqlerr.New(codeInvalidCursorName, "portal %q does not exist", name)
	}
	return pt, nil
}

// BoundPortal returns the portal the client bound under name on the
// connection running ctx's statement, and its columns: SQL's MOVE and FETCH
// reach protocol portals too, as in PostgreSQL (asyncpg moves its cursors'
// portals with MOVE FORWARD n "portal").
func BoundPortal(ctx context.Context, name string) (Portal, []Column, bool) {
	c, _ := ctx.Value(noticeKey{}).(*conn)
	if c == nil || name == "" {
		return nil, nil, false
	}
	pt, ok := c.portals[name]
	if !ok || pt.p == nil {
		return nil, nil, false
	}
	return pt.p, pt.cols, true
}

// handleBind decodes the parameters, binds the statement into a portal and
// fixes the result formats per column.
func (c *conn) handleBind(m *pgproto3.Bind) error {
	ps, err := c.lookupStatement(m.PreparedStatement)
	if err != nil {
		return err
	}
	if m.DestinationPortal == "" {
		c.closePortal("")
	} else if _, dup := c.portals[m.DestinationPortal]; dup {
		return sqlerr.New(codeDuplicateCursor, "portal %q already exists", m.DestinationPortal)
	}
	c.act.run(ps.query)
	params, err := c.decodeParams(ps, m.ParameterFormatCodes, m.Parameters)
	if err != nil {
		return err
	}
	pt := &portal{name: m.DestinationPortal, query: ps.query}
	if ps.stmt != nil {
		err = c.call(c.ctx, func(ctx context.Context) error {
			var err error
			pt.p, err = ps.stmt.Bind(ctx, params)
			if err != nil {
				return err
			}
			pt.cols, err = pt.p.Describe(ctx)
			return err
		})
		if err != nil {
			c.releasePortal(pt)
			return err
		}
	}
	if pt.formats, err = formatCodes(m.ResultFormatCodes, len(pt.cols), "result"); err != nil {
		c.releasePortal(pt)
		return err
	}
	c.portals[pt.name] = pt
	return c.out.send(&pgproto3.BindComplete{})
}

// handleDescribe describes a statement (ParameterDescription, then
// RowDescription or NoData) or a portal (RowDescription with its result
// formats, or NoData). Nothing is executed.
func (c *conn) handleDescribe(m *pgproto3.Describe) error {
	switch m.ObjectType {
	case 'S':
		ps, err := c.lookupStatement(m.Name)
		if err != nil {
			return err
		}
		var cols []Column
		if ps.stmt != nil {
			err := c.call(c.ctx, func(ctx context.Context) error {
				var err error
				cols, err = ps.stmt.Describe(ctx)
				return err
			})
			if err != nil {
				return err
			}
		}
		if err := c.out.send(&pgproto3.ParameterDescription{ParameterOIDs: ps.paramOIDs}); err != nil {
			return err
		}
		return c.sendRowDescription(cols, nil)
	case 'P':
		pt, err := c.lookupPortal(m.Name)
		if err != nil {
			return err
		}
		return c.sendRowDescription(pt.cols, pt.formats)
	default:
		return protocolViolation("invalid DESCRIBE message subtype %d", m.ObjectType)
	}
}

// sendRowDescription sends RowDescription, or NoData for nil columns.
func (c *conn) sendRowDescription(cols []Column, formats []int16) error {
	if cols == nil {
		return c.out.send(&pgproto3.NoData{})
	}
	return c.out.send(rowDescription(cols, formats))
}

// handleExecute runs a portal for at most MaxRows rows (0 = all). When rows
// remain it answers PortalSuspended and a later Execute resumes.
func (c *conn) handleExecute(m *pgproto3.Execute) error {
	pt, err := c.lookupPortal(m.Portal)
	if err != nil {
		return err
	}
	if pt.p == nil {
		return c.out.send(&pgproto3.EmptyQueryResponse{})
	}
	c.act.run(pt.query)
	c.pipelineStatement() // pipeline.go
	maxRows := int(m.MaxRows)
	if int32(m.MaxRows) <= 0 { // PostgreSQL reads the field as int32; <= 0 means no limit
		maxRows = 0
	}
	tag, done, err := c.execute(pt, maxRows)
	if err != nil {
		return err
	}
	if !done {
		return c.out.send(&pgproto3.PortalSuspended{})
	}
	return c.out.send(&pgproto3.CommandComplete{CommandTag: []byte(tag)})
}

// execute runs pt.p.Execute with a row writer for the portal's columns and
// reports changed run-time parameters afterwards, whether or not it failed.
func (c *conn) execute(pt *portal, maxRows int) (tag string, done bool, err error) {
	switch cp := pt.p.(type) {
	case CopyInPortal:
		return c.copyIn(cp)
	case CopyOutPortal:
		return c.copyOut(pt, cp)
	}
	w := &rowWriter{c: c, cols: pt.cols, formats: pt.formats}
	err = c.call(c.ctx, func(ctx context.Context) error {
		var err error
		tag, done, err = pt.p.Execute(ctx, maxRows, w)
		return err
	})
	if endsConnection(err) {
		return "", false, err
	}
	if perr := c.reportParameterChanges(); perr != nil {
		return "", false, perr
	}
	if err != nil {
		return "", false, err // unwrapped: its text is what the client sees
	}
	return tag, done, nil
}

// handleClose closes a statement or portal; closing one that does not exist
// is not an error.
func (c *conn) handleClose(m *pgproto3.Close) error {
	switch m.ObjectType {
	case 'S':
		delete(c.stmts, m.Name)
	case 'P':
		if _, bound := c.portals[m.Name]; !bound {
			if sc, ok := c.sess.(SessionCursors); ok && m.Name != "" {
				sc.CloseCursor(m.Name)
			}
		}
		c.closePortal(m.Name)
	default:
		return protocolViolation("invalid CLOSE message subtype %d", m.ObjectType)
	}
	return c.out.send(&pgproto3.CloseComplete{})
}
