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
	// A pipeline's implicit transaction still open (no Sync yet) takes the
	// text's statements in and ends with it, as PostgreSQL's simple query
	// ends the transaction it found open.
	joined := c.pipelineTx
	c.pipelineTx = false
	if err := c.runSimpleQuery(query, joined); err != nil {
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
//
// A text of several statements runs as one implicit transaction, as in
// PostgreSQL (protocol, "Multiple Statements in a Simple Query"): the
// Session is told before each statement (BeginImplicitTransaction opens the
// implicit transaction unless a block is open, so a COMMIT in the text
// starts a new one for the statements after it) and after the last one or
// the first error (EndImplicitTransaction commits or rolls it back). The
// commit comes before the last statement's CommandComplete, so a commit
// that fails is reported in its place. A single statement is not wrapped:
// it commits when it executes, and statements that refuse to run inside a
// transaction block still run alone. joined is set when a pipeline's
// implicit transaction is open: the text ends it whatever it holds.
func (c *conn) runSimpleQuery(query string, joined bool) (err error) {
	if joined {
		defer func() {
			if err != nil && !endsConnection(err) {
				_ = c.endImplicitTransaction(false) // no-op once ended
			}
		}()
	}
	if !utf8.ValidString(query) {
		return invalidUTF8Error()
	}
	var stmts []Statement
	err = c.call(c.ctx, func(ctx context.Context) error {
		var err error
		stmts, err = c.sess.Parse(ctx, query, nil)
		return err
	})
	if err != nil {
		return err
	}
	if len(stmts) == 0 {
		if joined {
			if err := c.endImplicitTransaction(true); err != nil {
				return err
			}
		}
		return c.out.send(&pgproto3.EmptyQueryResponse{})
	}
	implicit := len(stmts) > 1 || joined
	for i, st := range stmts {
		if implicit {
			c.sess.BeginImplicitTransaction(ImplicitQuery)
		}
		tag, err := c.runSimpleStatement(st)
		if err != nil {
			if implicit && !endsConnection(err) {
				// The statement's error is the one reported; a rollback
				// has nothing to report (Session.Close cleans up after a
				// lost connection).
				_ = c.endImplicitTransaction(false)
			}
			return err
		}
		if implicit && i == len(stmts)-1 {
			if err := c.endImplicitTransaction(true); err != nil {
				return err
			}
		}
		if err := c.out.send(&pgproto3.CommandComplete{CommandTag: []byte(tag)}); err != nil {
			return err
		}
	}
	return nil
}

// endImplicitTransaction ends the implicit transaction of a multi-statement
// query (committed, or rolled back) and reports the run-time parameters it
// changed (a rollback restores what the text SET; SET LOCAL ends).
func (c *conn) endImplicitTransaction(commit bool) error {
	err := c.call(c.ctx, func(ctx context.Context) error {
		return c.sess.EndImplicitTransaction(ctx, commit)
	})
	if endsConnection(err) {
		return err
	}
	if perr := c.reportParameterChanges(); perr != nil {
		return perr
	}
	return err
}

// runSimpleStatement describes, binds and executes one statement of a simple
// query, all results in text format, and returns its command tag.
func (c *conn) runSimpleStatement(st Statement) (string, error) {
	pt := &portal{}
	err := c.call(c.ctx, func(ctx context.Context) error {
		var err error
		pt.cols, err = st.Describe(ctx)
		return err
	})
	if err != nil {
		return "", err
	}
	if pt.cols != nil {
		if err := c.out.send(rowDescription(pt.cols, nil)); err != nil {
			return "", err
		}
	}
	pt.formats = make([]int16, len(pt.cols)) // all text
	err = c.call(c.ctx, func(ctx context.Context) error {
		var err error
		pt.p, err = st.Bind(ctx, nil)
		return err
	})
	if err != nil {
		return "", err
	}
	defer c.releasePortal(pt)
	for {
		tag, done, err := c.execute(pt, 0)
		if err != nil {
			return "", err
		}
		if done {
			return tag, nil
		}
		// done=false with no row limit breaks the Portal contract; keep
		// executing rather than leave the client without a CommandComplete.
	}
}
