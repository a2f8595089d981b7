package engine

import (
	"context"
	"reflect"
	"slices"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Prepared statements bind against the catalog of the moment, as
// PostgreSQL's plan cache does. A statement of the extended protocol keeps
// its text, its parameter types and the result it described when it was
// parsed; when the catalog may have changed since its plan was made (a
// planGen apart), Describe and Bind plan the text again — names resolved
// through the current search_path, a table dropped and created again found
// by its name — and the new plan replaces the old one. A new plan whose
// result differs in column count, names, types or modifiers is refused
// with PostgreSQL's 0A000 "cached plan must not change result type" (pgx
// and others prepare such a statement again); one that no longer plans
// fails with the planning error (42P01 for a table gone), and is planned
// again at the next use.

// planGen is the catalog generation a plan was made at: the engine's
// relation changes (Engine.ddlGen: DDL of every session of this server,
// ends of blocks that ran DDL) and the session's own statements that may
// change what a name resolves to (Session.nameGen: every statement kind but
// those catalogNeutral lists — temporary tables and functions, SET
// search_path and SET ROLE among them).
type planGen struct{ ddl, session uint64 }

func (s *Session) planGen() planGen {
	return planGen{ddl: s.e.ddlGen.Load(), session: s.nameGen}
}

// catalogNeutral are the statement kinds that change no name's meaning:
// reading and writing rows, cursors, prepared statements, LISTEN/NOTIFY,
// SHOW. Every other kind moves the session's nameGen when it is bound, so
// statements prepared before it are planned again (over-invalidation only
// costs a plan). ROLLBACK and ROLLBACK TO are not neutral: they undo
// temporary tables created in the block.
var catalogNeutral = map[reflect.Type]bool{}

func init() {
	for _, n := range []any{
		(*pg_query.Node_SelectStmt)(nil), (*pg_query.Node_ExplainStmt)(nil), (*pg_query.Node_InsertStmt)(nil),
		(*pg_query.Node_UpdateStmt)(nil), (*pg_query.Node_DeleteStmt)(nil), (*pg_query.Node_MergeStmt)(nil),
		(*pg_query.Node_CopyStmt)(nil), (*pg_query.Node_TruncateStmt)(nil), (*pg_query.Node_VariableShowStmt)(nil),
		(*pg_query.Node_DeclareCursorStmt)(nil), (*pg_query.Node_FetchStmt)(nil), (*pg_query.Node_ClosePortalStmt)(nil),
		(*pg_query.Node_PrepareStmt)(nil), (*pg_query.Node_ExecuteStmt)(nil), (*pg_query.Node_DeallocateStmt)(nil),
		(*pg_query.Node_ListenStmt)(nil), (*pg_query.Node_UnlistenStmt)(nil), (*pg_query.Node_NotifyStmt)(nil),
		(*pg_query.Node_LockStmt)(nil), (*pg_query.Node_TransactionStmt)(nil),
	} {
		catalogNeutral[reflect.TypeOf(n)] = true
	}
}

// changesNames reports whether running stmt may change what a name of
// another statement resolves to (catalogNeutral).
func changesNames(stmt *pg_query.Node) bool {
	if sel := stmt.GetSelectStmt(); sel != nil {
		return sel.IntoClause != nil // SELECT … INTO creates a table
	}
	if tx := stmt.GetTransactionStmt(); tx != nil {
		return tx.Kind == pg_query.TransactionStmtKind_TRANS_STMT_ROLLBACK ||
			tx.Kind == pg_query.TransactionStmtKind_TRANS_STMT_ROLLBACK_TO
	}
	if ex := stmt.GetExplainStmt(); ex != nil {
		return changesNames(ex.Query)
	}
	return !catalogNeutral[reflect.TypeOf(stmt.Node)]
}

// replanSource is what a prepared statement is planned again from.
type replanSource struct {
	text      string
	paramOIDs []uint32        // the types the client was told (ParameterDescription)
	cols      []pgwire.Column // the result it was told (RowDescription; nil: none)
	gen       planGen
}

// newReplanSource records st, planned from text at gen.
func newReplanSource(ctx context.Context, text string, st pgwire.Statement, gen planGen) (*replanSource, error) {
	cols, err := st.Describe(ctx)
	if err != nil {
		return nil, err
	}
	return &replanSource{text: text, paramOIDs: slices.Clone(st.ParamOIDs()), cols: cols, gen: gen}, nil
}

// current plans t's text again when the catalog may have changed since its
// plan was made; the new plan replaces t's. A session in a failed block
// keeps the old plan (its Bind refuses with 25P02).
func (t *trackedStmt) current(ctx context.Context) error {
	r := t.replan
	if r == nil || t.s.failed {
		return nil
	}
	gen := t.s.planGen()
	if gen == r.gen {
		return nil
	}
	release, err := t.s.e.parsing.acquire(ctx, len(r.text))
	if err != nil {
		return err
	}
	tree, err := parseSQL(r.text)
	release()
	if err != nil {
		return parseError(err)
	}
	if len(tree.Stmts) != 1 {
		return sqlerr.New(sqlerr.InternalError, "prepared statement text of %d statements", len(tree.Stmts))
	}
	st, err := t.s.plan(ctx, tree.Stmts[0].Stmt, r.paramOIDs)
	if err != nil {
		return err
	}
	cols, err := st.Describe(ctx)
	if err != nil {
		return err
	}
	if !sameResultType(r.cols, cols) {
		return sqlerr.New(sqlerr.FeatureNotSupported, "cached plan must not change result type")
	}
	t.Statement, r.gen = st, gen
	return nil
}

// sameResultType is PostgreSQL's test of a re-planned statement's result:
// the same columns by name, type and type modifier (the table a column
// comes from may change: a table created again is another relation).
func sameResultType(a, b []pgwire.Column) bool {
	return slices.EqualFunc(a, b, func(x, y pgwire.Column) bool {
		return x.Name == y.Name && x.TypeOID == y.TypeOID && x.TypeModifier == y.TypeModifier
	})
}
