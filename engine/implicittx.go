package engine

import (
	"context"

	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Implicit transactions. The statements of one simple Query run as one
// transaction, as PostgreSQL runs them (protocol, "Multiple Statements in a
// Simple Query"): pgwire calls BeginImplicitTransaction before each
// statement of a text that holds several, and EndImplicitTransaction after
// the last one or the first error. So do the statements of a pipeline, the
// extended protocol's Executes up to a Sync (pgwire/pipeline.go): pgwire
// calls BeginImplicitTransaction before each Execute (but one alone before
// its Sync), telling the pipeline's first from the later ones, and
// EndImplicitTransaction at the Sync or the first error.
//
// An implicit transaction is a transaction block (inBlock) marked implicit,
// so everything a block does applies to it by construction: writes are
// staged and commit together (txn.go), DDL runs in a held catalog
// transaction from the first DDL statement on (ddltx.go), SET is undone by
// a rollback (txsettings.go), NOTIFY waits for the commit, LISTEN takes
// effect at the commit (listen.go), and every statement that refuses to
// run inside a block refuses here too (25001, preventTransactionBlock). It
// differs from a block BEGIN opened where PostgreSQL's differs:
//
//   - an error rolls it back at once (pgwire skips the rest of the text, or
//     of the pipeline up to Sync); there is no failed state, and TxStatus
//     reports 'I';
//   - BEGIN turns it into an explicit block that includes the statements
//     before it; COMMIT and ROLLBACK end it with a WARNING (there is no
//     transaction in progress), and the statements after them form a new
//     implicit transaction;
//   - SAVEPOINT, RELEASE and ROLLBACK TO are refused (25P01);
//   - a statement that cannot run inside a block runs as the first
//     statement of a pipeline's implicit transaction: it ends the
//     transaction, still empty, and commits on its own (PostgreSQL commits
//     such a statement at once); after another statement of the pipeline it
//     is refused ("cannot be executed within a pipeline");
//   - waiting for a held-transaction slot does not fail at once: it waits
//     (bounded by statement_timeout and cancellation) as for a lock. A
//     simple Query's transaction never waits for its client; a pipeline's
//     waits for the client's next message between statements, as
//     PostgreSQL's does, and holds its slot and row locks meanwhile (a
//     lost connection rolls it back: Session.Close).
//
// A single statement is not wrapped: it commits as it executes, and pays
// nothing for this.

// BeginImplicitTransaction implements pgwire.Session.
func (s *Session) BeginImplicitTransaction(kind pgwire.ImplicitTransaction) {
	if s.inBlock {
		if s.implicit && s.pipeline {
			// The statement before this one ran in the pipeline's
			// transaction (one that failed rolled it back).
			s.pipelineRan = true
		}
		return
	}
	s.beginTx(nil)
	s.implicit = true
	s.pipeline = kind != pgwire.ImplicitQuery
	s.pipelineRan = kind == pgwire.ImplicitPipeline
}

// preventTransactionBlock is the check, when it starts executing, of a
// statement that cannot run inside a transaction block (PostgreSQL's
// PreventInTransactionBlock); what names the statement. Every such
// statement calls it (TestPreventTransactionBlockIsTheOnlyRefusal). It
// refuses (25001) inside an explicit block, a simple query's implicit
// transaction, and a pipeline's after another statement of the pipeline
// ran (in this implicit transaction or before it: PostgreSQL refuses the
// second of two VACUUMs of one pipeline). As the pipeline's first
// statement it ends the implicit transaction, which holds nothing yet, so
// that the statement runs and commits on its own; the pipeline's next
// statement opens a new one.
func (s *Session) preventTransactionBlock(ctx context.Context, what string) error {
	switch {
	case !s.inBlock:
		return nil
	case s.implicit && s.pipeline && !s.pipelineRan:
		s.rollbackBlock(ctx) // empty: nothing to undo
		return nil
	case s.implicit && s.pipeline:
		return sqlerr.New(sqlerr.ActiveSQLTransaction, "%s cannot be executed within a pipeline", what)
	}
	return sqlerr.New(sqlerr.ActiveSQLTransaction, "%s cannot run inside a transaction block", what)
}

// requireTransactionBlock is the check of a statement that runs only
// inside a transaction block (PostgreSQL's RequireTransactionBlock: LOCK
// TABLE, DECLARE CURSOR without HOLD): 25P01 outside one. A simple query's
// implicit transaction is a block for it, a pipeline's is not (PostgreSQL's
// TBLOCK_IMPLICIT_INPROGRESS against TBLOCK_STARTED).
func (s *Session) requireTransactionBlock(what string) error {
	if !s.inBlock || (s.implicit && s.pipeline) {
		return sqlerr.New(sqlerr.NoActiveSQLTransaction, "%s can only be used in transaction blocks", what)
	}
	return nil
}

// warnNoTransactionBlock is the check of a statement that acts on the
// transaction and only warns outside a block (PostgreSQL's
// WarnNoTransactionBlock: SET LOCAL, SET TRANSACTION): a WARNING outside a
// block, a pipeline's implicit transaction included. It reports whether a
// transaction is open for the statement to act on: a pipeline's is, until
// its Sync.
func (s *Session) warnNoTransactionBlock(ctx context.Context, what string) (inTx bool) {
	if !s.inBlock || (s.implicit && s.pipeline) {
		_ = pgwire.SendNotice(ctx, pgwire.Notice{Severity: "WARNING", Code: sqlerr.NoActiveSQLTransaction,
			Message: what + " can only be used in transaction blocks"})
	}
	return s.inBlock
}

// preventTransactionBlockAtPlan is preventTransactionBlock for a statement
// being prepared: refused at once inside a block, except a pipeline's
// implicit transaction, where the statement may still execute as the first
// of the next pipeline (its execution decides).
func (s *Session) preventTransactionBlockAtPlan(what string) error {
	if s.inBlock && !(s.implicit && s.pipeline) {
		return sqlerr.New(sqlerr.ActiveSQLTransaction, "%s cannot run inside a transaction block", what)
	}
	return nil
}

// EndImplicitTransaction implements pgwire.Session.
func (s *Session) EndImplicitTransaction(ctx context.Context, commit bool) error {
	if !s.implicit {
		return nil
	}
	if !commit || s.failed {
		s.rollbackBlock(ctx)
		return nil
	}
	tag, err := s.commitBlock(ctx)
	if err == nil && tag != "COMMIT" {
		// commitBlock rolls back only a failed block, and s.failed was
		// false; anything else is a broken invariant, not a commit.
		err = sqlerr.New(sqlerr.InternalError, "implicit transaction rolled back at commit")
	}
	return err
}

// noTransactionWarning is PostgreSQL's WARNING for COMMIT or ROLLBACK
// outside an explicit block.
func noTransactionWarning(ctx context.Context) {
	_ = pgwire.SendNotice(ctx, pgwire.Notice{Severity: "WARNING", Code: sqlerr.NoActiveSQLTransaction,
		Message: "there is no transaction in progress"})
}

// alreadyInTransactionWarning is PostgreSQL's WARNING for BEGIN inside an
// explicit block.
func alreadyInTransactionWarning(ctx context.Context) {
	_ = pgwire.SendNotice(ctx, pgwire.Notice{Severity: "WARNING", Code: sqlerr.ActiveSQLTransaction,
		Message: "there is already a transaction in progress"})
}

// explicitBlock reports whether an explicit (BEGIN) block is open.
func (s *Session) explicitBlock() bool { return s.inBlock && !s.implicit }
