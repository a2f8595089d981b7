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
// the last one or the first error.
//
// An implicit transaction is a transaction block (inBlock) marked implicit,
// so everything a block does applies to it by construction: writes are
// staged and commit together (txn.go), DDL runs in a held catalog
// transaction from the first DDL statement on (ddltx.go), SET is undone by
// a rollback (txsettings.go), NOTIFY waits for the commit, LISTEN takes
// effect at the commit (listen.go), and every statement that refuses to
// run inside a block refuses here too (25001). It differs from a block
// BEGIN opened where PostgreSQL's differs:
//
//   - an error rolls it back at once (pgwire skips the rest of the text);
//     there is no failed state, and TxStatus reports 'I';
//   - BEGIN turns it into an explicit block that includes the statements
//     before it; COMMIT and ROLLBACK end it with a WARNING (there is no
//     transaction in progress), and the statements after them form a new
//     implicit transaction;
//   - SAVEPOINT, RELEASE and ROLLBACK TO are refused (25P01);
//   - waiting for a held-transaction slot does not fail at once: an
//     implicit transaction never waits for its client, so it waits (bounded
//     by statement_timeout and cancellation) instead.
//
// A single statement is not wrapped: it commits as it executes, and pays
// nothing for this.

// BeginImplicitTransaction implements pgwire.Session.
func (s *Session) BeginImplicitTransaction() {
	if s.inBlock {
		return
	}
	s.beginTx(nil)
	s.implicit = true
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
