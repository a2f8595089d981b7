package pgwire

import (
	"context"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgproto3"
)

// simpleQuery runs a Query message: every statement of the text in turn,
// each Described (RowDescription in text format, or nothing), Bound without
// parameters and Executed to completion, then CommandComplete. The first
// error is reported and skips the remaining statements; ReadyForQuery always
// follows. The returned error is nil unless the connection must end.
//
// As in PostgreSQL, a simple query replaces the unnamed statement and portal.
func (c *conn) simpleQuery(query string) error {
	c.act.run(query)
	delete(c.stmts, "")
	c.closePortal("")
	if err := c.runSimpleQuery(query); err != nil {
		if endsConnection(err) {
			return err
		}
		if err := c.sendError(err); err != nil {
			return err
		}
	}
	return c.readyForQuery()
}

// runSimpleQuery does the work of simpleQuery up to, not including, the
// ReadyForQuery.
func (c *conn) runSimpleQuery(query string) error {
	if !utf8.ValidString(query) {
		return invalidUTF8Error()
	}
	var stmts []Statement
	err := c.call(c.ctx, func(ctx context.Context) error {
		var err error
		stmts, err = c.sess.Parse(ctx, query, nil)
		return err
	})
	if err != nil {
		return err
	}
	if len(stmts) == 0 {
		return c.out.send(&pgproto3.EmptyQueryResponse{})
	}
	for _, st := range stmts {
		if err := c.runSimpleStatement(st); err != nil {
			return err
		}
	}
	return nil
}

// runSimpleStatement describes, binds and executes one statement of a simple
// query, all results in text format.
func (c *conn) runSimpleStatement(st Statement) error {
	pt := &portal{}
	err := c.call(c.ctx, func(ctx context.Context) error {
		var err error
		pt.cols, err = st.Describe(ctx)
		return err
	})
	if err != nil {
		return err
	}
	if pt.cols != nil {
		if err := c.out.send(rowDescription(pt.cols, nil)); err != nil {
			return err
		}
	}
	pt.formats = make([]int16, len(pt.cols)) // all text
	err = c.call(c.ctx, func(ctx context.Context) error {
		var err error
		pt.p, err = st.Bind(ctx, nil)
		return err
	})
	if err != nil {
		return err
	}
	defer c.releasePortal(pt)
	for {
		tag, done, err := c.execute(pt, 0)
		if err != nil {
			return err
		}
		if done {
			return c.out.send(&pgproto3.CommandComplete{CommandTag: []byte(tag)})
		}
		// done=false with no row limit breaks the Portal contract; keep
		// executing rather than leave the client without a CommandComplete.
	}
}
