package engine

import (
	"context"
	"reflect"
	"slices"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// route plans one kind of statement (one parse-tree node type).
type route struct {
	// node is a nil pointer of the statement's node type (*pg_query.Node_XStmt).
	node any
	// shown is the statement as the hint of unsupported statements names it;
	// routes sharing a name appear once.
	shown string
	// writes: the statement changes data or the catalog, so a read-only
	// transaction refuses it (COPY only when it is COPY FROM).
	writes bool
	plan   func(s *Session, ctx context.Context, stmt *pg_query.Node, paramOIDs []uint32) (pgwire.Statement, error)
}

// routes is the one list of the statements the engine plans: plan dispatches
// by it, and the 0A000 hint for anything else is made from it, so the two
// cannot disagree.
var routes = []route{
	{(*pg_query.Node_SelectStmt)(nil), "SELECT", false, func(s *Session, ctx context.Context, n *pg_query.Node, p []uint32) (pgwire.Statement, error) {
		return s.planSelect(ctx, n, p)
	}},
	{(*pg_query.Node_ExplainStmt)(nil), "EXPLAIN [ANALYZE]", false, func(s *Session, ctx context.Context, n *pg_query.Node, p []uint32) (pgwire.Statement, error) {
		return s.planExplain(ctx, n.GetExplainStmt(), p) // explain.go
	}},
	{(*pg_query.Node_InsertStmt)(nil), "INSERT", true, func(s *Session, ctx context.Context, n *pg_query.Node, p []uint32) (pgwire.Statement, error) {
		return s.planInsert(ctx, n.GetInsertStmt(), p)
	}},
	{(*pg_query.Node_UpdateStmt)(nil), "UPDATE", true, func(s *Session, ctx context.Context, n *pg_query.Node, p []uint32) (pgwire.Statement, error) {
		return s.planUpdate(ctx, n.GetUpdateStmt(), p)
	}},
	{(*pg_query.Node_DeleteStmt)(nil), "DELETE", true, func(s *Session, ctx context.Context, n *pg_query.Node, p []uint32) (pgwire.Statement, error) {
		return s.planDelete(ctx, n.GetDeleteStmt(), p)
	}},
	{(*pg_query.Node_MergeStmt)(nil), "MERGE", true, func(s *Session, ctx context.Context, n *pg_query.Node, p []uint32) (pgwire.Statement, error) {
		return s.planMerge(ctx, n.GetMergeStmt(), p)
	}},
	{(*pg_query.Node_TruncateStmt)(nil), "TRUNCATE", true, func(s *Session, ctx context.Context, n *pg_query.Node, _ []uint32) (pgwire.Statement, error) {
		return s.planTruncate(ctx, n.GetTruncateStmt())
	}},
	{(*pg_query.Node_CopyStmt)(nil), "COPY", true, func(s *Session, ctx context.Context, n *pg_query.Node, _ []uint32) (pgwire.Statement, error) {
		return s.planCopy(ctx, n.GetCopyStmt())
	}},
	{(*pg_query.Node_CreateExtensionStmt)(nil), "CREATE EXTENSION (uuid-ossp, pgcrypto, plpgsql, vector)", true, func(s *Session, _ context.Context, n *pg_query.Node, _ []uint32) (pgwire.Statement, error) {
		return s.planCreateExtension(n.GetCreateExtensionStmt()) // extensions.go
	}},
	{(*pg_query.Node_CreateSchemaStmt)(nil), "CREATE SCHEMA", true, func(s *Session, _ context.Context, n *pg_query.Node, _ []uint32) (pgwire.Statement, error) {
		return s.planCreateSchema(n.GetCreateSchemaStmt())
	}},
	{(*pg_query.Node_CreateFunctionStmt)(nil), "CREATE FUNCTION pg_temp.f(OUT …) … LANGUAGE plpgsql", false, func(s *Session, _ context.Context, n *pg_query.Node, _ []uint32) (pgwire.Statement, error) {
		return s.planCreateFunction(n.GetCreateFunctionStmt()) // tempfunc.go
	}},
	{(*pg_query.Node_CreateStmt)(nil), "CREATE TABLE", true, func(s *Session, ctx context.Context, n *pg_query.Node, _ []uint32) (pgwire.Statement, error) {
		return s.planCreateTable(ctx, n.GetCreateStmt())
	}},
	{(*pg_query.Node_CreateSeqStmt)(nil), "CREATE/DROP SEQUENCE", true, func(s *Session, _ context.Context, n *pg_query.Node, _ []uint32) (pgwire.Statement, error) {
		return s.planCreateSequence(n.GetCreateSeqStmt()) // sequence.go
	}},
	{(*pg_query.Node_AlterSeqStmt)(nil), "ALTER SEQUENCE … OWNED BY", true, func(s *Session, _ context.Context, n *pg_query.Node, _ []uint32) (pgwire.Statement, error) {
		return s.planAlterSequence(n.GetAlterSeqStmt()) // sequence.go
	}},
	{(*pg_query.Node_CreateTableAsStmt)(nil), "CREATE TABLE … AS / SELECT … INTO", true, func(s *Session, ctx context.Context, n *pg_query.Node, _ []uint32) (pgwire.Statement, error) {
		return s.planCreateTableAs(ctx, n.GetCreateTableAsStmt()) // ctas.go
	}},
	{(*pg_query.Node_ViewStmt)(nil), "CREATE [OR REPLACE] VIEW", true, func(s *Session, ctx context.Context, n *pg_query.Node, _ []uint32) (pgwire.Statement, error) {
		return s.planCreateView(ctx, n.GetViewStmt()) // view.go
	}},
	{(*pg_query.Node_AlterTableStmt)(nil), "ALTER TABLE", true, func(s *Session, ctx context.Context, n *pg_query.Node, _ []uint32) (pgwire.Statement, error) {
		return s.planAlterTable(ctx, n.GetAlterTableStmt())
	}},
	{(*pg_query.Node_RenameStmt)(nil), "ALTER TABLE/VIEW/SCHEMA … RENAME", true, func(s *Session, _ context.Context, n *pg_query.Node, _ []uint32) (pgwire.Statement, error) {
		return s.planRename(n.GetRenameStmt()) // rename.go
	}},
	{(*pg_query.Node_AlterOwnerStmt)(nil), "ALTER SCHEMA/TABLE … OWNER TO", true, func(s *Session, _ context.Context, n *pg_query.Node, _ []uint32) (pgwire.Statement, error) {
		return s.planAlterOwner(n.GetAlterOwnerStmt()) // restoreddl.go
	}},
	{(*pg_query.Node_IndexStmt)(nil), "CREATE INDEX", true, planCreateIndex}, // index.go
	{(*pg_query.Node_CommentStmt)(nil), "COMMENT ON TABLE/COLUMN", true, func(s *Session, _ context.Context, n *pg_query.Node, _ []uint32) (pgwire.Statement, error) {
		return s.planComment(n.GetCommentStmt()) // comment.go
	}},
	{(*pg_query.Node_CreateEnumStmt)(nil), "CREATE/ALTER/DROP TYPE … AS ENUM", true, func(s *Session, _ context.Context, n *pg_query.Node, _ []uint32) (pgwire.Statement, error) {
		return s.planCreateEnum(n.GetCreateEnumStmt()) // enum.go
	}},
	{(*pg_query.Node_AlterEnumStmt)(nil), "CREATE/ALTER/DROP TYPE … AS ENUM", true, func(s *Session, _ context.Context, n *pg_query.Node, _ []uint32) (pgwire.Statement, error) {
		return s.planAlterEnum(n.GetAlterEnumStmt())
	}},
	{(*pg_query.Node_DropStmt)(nil), "DROP TABLE/SCHEMA/SEQUENCE/VIEW/INDEX/TYPE", true, func(s *Session, _ context.Context, n *pg_query.Node, _ []uint32) (pgwire.Statement, error) {
		return s.planDrop(n.GetDropStmt())
	}},
	{(*pg_query.Node_GrantRoleStmt)(nil), "GRANT/REVOKE role", true, func(s *Session, _ context.Context, n *pg_query.Node, _ []uint32) (pgwire.Statement, error) {
		return s.planGrantRole(n.GetGrantRoleStmt())
	}},
	{(*pg_query.Node_GrantStmt)(nil), "GRANT/REVOKE CREATE ON SCHEMA", true, func(s *Session, _ context.Context, n *pg_query.Node, _ []uint32) (pgwire.Statement, error) {
		return s.planGrant(n.GetGrantStmt()) // schemagrant.go
	}},
	{(*pg_query.Node_CallStmt)(nil), "CALL lakesoul.*", true, func(s *Session, ctx context.Context, n *pg_query.Node, p []uint32) (pgwire.Statement, error) {
		return s.planCall(ctx, n.GetCallStmt(), p)
	}},
	{(*pg_query.Node_VacuumStmt)(nil), "VACUUM [FULL]/ANALYZE", true, func(s *Session, ctx context.Context, n *pg_query.Node, _ []uint32) (pgwire.Statement, error) {
		return s.planVacuum(ctx, n.GetVacuumStmt()) // vacuum.go
	}},
	{(*pg_query.Node_TransactionStmt)(nil), "BEGIN/COMMIT/ROLLBACK/SAVEPOINT", false, func(s *Session, _ context.Context, n *pg_query.Node, _ []uint32) (pgwire.Statement, error) {
		return s.planTransaction(n.GetTransactionStmt())
	}},
	{(*pg_query.Node_VariableSetStmt)(nil), "SET/RESET", false, func(s *Session, _ context.Context, n *pg_query.Node, _ []uint32) (pgwire.Statement, error) {
		return s.planSet(n.GetVariableSetStmt())
	}},
	{(*pg_query.Node_VariableShowStmt)(nil), "SHOW", false, func(s *Session, ctx context.Context, n *pg_query.Node, _ []uint32) (pgwire.Statement, error) {
		return s.planShow(ctx, n.GetVariableShowStmt())
	}},
	{(*pg_query.Node_DeclareCursorStmt)(nil), "DECLARE/FETCH/MOVE/CLOSE", false, func(s *Session, ctx context.Context, n *pg_query.Node, p []uint32) (pgwire.Statement, error) {
		return s.planDeclare(ctx, n.GetDeclareCursorStmt(), p)
	}},
	{(*pg_query.Node_FetchStmt)(nil), "DECLARE/FETCH/MOVE/CLOSE", false, func(s *Session, ctx context.Context, n *pg_query.Node, _ []uint32) (pgwire.Statement, error) {
		return s.planFetch(ctx, n.GetFetchStmt())
	}},
	{(*pg_query.Node_ClosePortalStmt)(nil), "DECLARE/FETCH/MOVE/CLOSE", false, func(s *Session, _ context.Context, n *pg_query.Node, _ []uint32) (pgwire.Statement, error) {
		return s.planClose(n.GetClosePortalStmt())
	}},
	{(*pg_query.Node_PrepareStmt)(nil), "PREPARE/EXECUTE/DEALLOCATE", false, func(s *Session, ctx context.Context, n *pg_query.Node, _ []uint32) (pgwire.Statement, error) {
		return s.planPrepare(ctx, n.GetPrepareStmt()) // prepared.go
	}},
	{(*pg_query.Node_ExecuteStmt)(nil), "PREPARE/EXECUTE/DEALLOCATE", false, func(s *Session, ctx context.Context, n *pg_query.Node, _ []uint32) (pgwire.Statement, error) {
		return s.planExecute(ctx, n.GetExecuteStmt())
	}},
	{(*pg_query.Node_DeallocateStmt)(nil), "PREPARE/EXECUTE/DEALLOCATE", false, func(s *Session, _ context.Context, n *pg_query.Node, _ []uint32) (pgwire.Statement, error) {
		return s.planDeallocate(n.GetDeallocateStmt())
	}},
	{(*pg_query.Node_LockStmt)(nil), "LOCK TABLE … IN ACCESS SHARE MODE", false, func(s *Session, ctx context.Context, n *pg_query.Node, _ []uint32) (pgwire.Statement, error) {
		return s.planLock(ctx, n.GetLockStmt()) // lock.go
	}},
	{(*pg_query.Node_DiscardStmt)(nil), "DISCARD", false, func(s *Session, _ context.Context, n *pg_query.Node, _ []uint32) (pgwire.Statement, error) {
		return s.planDiscard(n.GetDiscardStmt())
	}},
	{(*pg_query.Node_ListenStmt)(nil), "LISTEN/UNLISTEN/NOTIFY", false, func(s *Session, _ context.Context, n *pg_query.Node, _ []uint32) (pgwire.Statement, error) {
		return s.planListen(n.GetListenStmt()) // listen.go
	}},
	{(*pg_query.Node_UnlistenStmt)(nil), "LISTEN/UNLISTEN/NOTIFY", false, func(s *Session, _ context.Context, n *pg_query.Node, _ []uint32) (pgwire.Statement, error) {
		return s.planUnlisten(n.GetUnlistenStmt())
	}},
	{(*pg_query.Node_NotifyStmt)(nil), "LISTEN/UNLISTEN/NOTIFY", false, func(s *Session, _ context.Context, n *pg_query.Node, _ []uint32) (pgwire.Statement, error) {
		return s.planNotify(n.GetNotifyStmt())
	}},
	{(*pg_query.Node_CreateSubscriptionStmt)(nil), "CREATE/ALTER/DROP SUBSCRIPTION", true, planSubscription},
	{(*pg_query.Node_AlterSubscriptionStmt)(nil), "CREATE/ALTER/DROP SUBSCRIPTION", true, planSubscription},
	{(*pg_query.Node_DropSubscriptionStmt)(nil), "CREATE/ALTER/DROP SUBSCRIPTION", true, planSubscription},
}

var (
	routeByType    = map[reflect.Type]*route{}
	supportedHint  string
	supportedNames []string
)

func init() {
	for i := range routes {
		r := &routes[i]
		routeByType[reflect.TypeOf(r.node)] = r
		if !slices.Contains(supportedNames, r.shown) {
			supportedNames = append(supportedNames, r.shown)
		}
	}
	supportedHint = "supported: " + strings.Join(supportedNames, ", ")
}

// statementWrites reports whether stmt changes data or the catalog.
func statementWrites(stmt *pg_query.Node) bool {
	if c := stmt.GetCopyStmt(); c != nil {
		return c.IsFrom
	}
	if sel := stmt.GetSelectStmt(); sel != nil && sel.IntoClause != nil {
		return true // SELECT … INTO creates a table
	}
	r, ok := routeByType[reflect.TypeOf(stmt.Node)]
	return ok && r.writes
}

// unsupportedHints name what works instead of statements lake tables do not
// have; other unrouted statements get supportedHint.
var unsupportedHints = map[reflect.Type]string{
	reflect.TypeOf((*pg_query.Node_CreateTrigStmt)(nil)): "triggers do not exist on lake tables; follow a table's commits with lakesoul.changes('s.t', from, to)",
	reflect.TypeOf((*pg_query.Node_RuleStmt)(nil)):       "rules do not exist on lake tables; CREATE VIEW for a stored query",
}

// routeStatement plans stmt by its route, or fails with 0A000 naming what is
// supported.
func (s *Session) routeStatement(ctx context.Context, stmt *pg_query.Node, paramOIDs []uint32) (pgwire.Statement, error) {
	r, ok := routeByType[reflect.TypeOf(stmt.Node)]
	if !ok {
		if hint, ok := unsupportedHints[reflect.TypeOf(stmt.Node)]; ok {
			return nil, sqlerr.Unsupported(statementName(stmt), hint)
		}
		return nil, sqlerr.Unsupported(statementName(stmt), supportedHint)
	}
	return r.plan(s, ctx, stmt, paramOIDs)
}
