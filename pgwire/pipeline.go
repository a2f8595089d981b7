package pgwire

// Implicit transactions of the extended protocol. As in PostgreSQL, the
// statements a client executes up to a Sync form one implicit transaction
// when no explicit block is open: a batch or pipeline (JDBC executeBatch,
// pgx SendBatch, psycopg pipelines) commits at the Sync, and an error in
// any of its messages rolls every statement of it back (the messages up
// to the Sync are skipped).
//
// The rule, by state:
//   - Execute outside a transaction block (TxStatus 'I') calls
//     BeginImplicitTransaction before running the portal, unless it is the
//     pipeline's first Execute and the message after it is a Sync already
//     buffered: a single statement per Sync commits as it executes, as
//     before, and pays nothing.
//   - Inside a block the Session does nothing (the block is the
//     transaction); a COMMIT or ROLLBACK in the pipeline ends the implicit
//     transaction or the block, and the next Execute opens a new one.
//   - Sync commits it (EndImplicitTransaction(true)); a commit that fails
//     is reported before ReadyForQuery.
//   - Any ERROR of the pipeline, and any ReadyForQuery not preceded by a
//     Sync's commit (a Query's or FunctionCall's), rolls it back: no
//     ReadyForQuery is sent while the pipeline's transaction is open.
//   - A Query while it is open joins it and commits it, as PostgreSQL's
//     simple query commits the transaction it found open.
//   - The connection's end closes the Session, which rolls it back.
//
// The Session learns that the transaction is a pipeline's and whether the
// statement is the pipeline's first, so that a statement that cannot run
// inside a transaction block may still run as the first one after a Sync
// (it ends the empty transaction and commits on its own) and is refused
// (25001, "cannot be executed within a pipeline") after any other statement
// of the pipeline, as in PostgreSQL.
//
// Between the messages of a pipeline the transaction waits for its client,
// holding what its statements took (a held catalog transaction, row
// locks); as in PostgreSQL, idle_in_transaction_session_timeout applies
// only after ReadyForQuery, and a lost connection rolls it back.

// pipelineStatement is called before a portal of the extended protocol is
// executed: it opens (or continues) the pipeline's implicit transaction
// unless the statement is alone before its Sync or a block is open.
func (c *conn) pipelineStatement() {
	kind := ImplicitPipeline
	if !c.pipelineExecuted {
		kind = ImplicitPipelineFirst
	}
	c.pipelineExecuted = true
	if c.sess.TxStatus() != 'I' {
		return // a block is open: it is the transaction
	}
	if !c.pipelineTx && kind == ImplicitPipelineFirst && c.nextIsSync() {
		return // alone before its Sync: commits as it executes
	}
	c.sess.BeginImplicitTransaction(kind)
	c.pipelineTx = true
}

// nextIsSync reports whether the next message is a Sync already received.
func (c *conn) nextIsSync() bool {
	if c.in == nil {
		return false
	}
	typ, ok := c.in.nextType()
	return ok && typ == 'S'
}

// endPipeline ends the pipeline's implicit transaction, if pgwire opened
// one since the last Sync: committed (Sync without an error) or rolled
// back. The error is the commit's failure, or one that ends the
// connection.
func (c *conn) endPipeline(commit bool) error {
	if !c.pipelineTx {
		return nil
	}
	c.pipelineTx = false
	err := c.endImplicitTransaction(commit)
	if !commit && !endsConnection(err) {
		return nil // the error that caused the rollback is the one reported
	}
	return err
}

// sync answers a Sync: the pipeline's implicit transaction commits (a
// failed commit is reported), then ReadyForQuery.
func (c *conn) sync() error {
	c.ignoreTillSync = false
	c.pipelineExecuted = false
	if err := c.endPipeline(true); err != nil {
		if endsConnection(err) {
			return err
		}
		if err := c.sendError(err); err != nil {
			return err
		}
	}
	return c.readyForQuery()
}
