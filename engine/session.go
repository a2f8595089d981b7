package engine

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	pgparser "github.com/pganalyze/pg_query_go/v6/parser"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/listen"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Session is one client connection's SQL state. pgwire serialises its calls.
type Session struct {
	e    *Engine
	user string
	// cred logs the session in to the catalog as user (catalogtx.go).
	cred catalog.Credential
	// cat is the catalog as the session's role: every catalog call of the
	// session goes through it, so the catalog's row-level security applies
	// to all of them (the engine's own handle, e.cat, is the owner's).
	cat *catalog.Catalog
	// superuser is the role's rolsuper when the session started.
	superuser bool
	// counted: the session counts among its role's (Engine.roles) until
	// Close.
	counted bool
	// pid is the session's process ID as the client knows it (activity.go).
	pid   uint32
	token string
	// enums are the enum types the session's statements met, by OID, as
	// last loaded (enum.go).
	enumMu sync.Mutex
	enums  map[uint32]*catalog.Enum
	// duck is the session's own DuckDB connection.
	duck     *duckConn
	settings settings
	// claimed is the server_version and server_version_num a dump tool's
	// session reports instead of ServerVersion (dumpversion.go).
	claimed [2]string
	// inBlock is true between BEGIN and COMMIT/ROLLBACK; failed after an error
	// inside the block (every statement but ROLLBACK/COMMIT then fails 25P02).
	inBlock bool
	failed  bool
	// implicit marks the open block as an implicit transaction: of a
	// multi-statement simple query, or of a pipeline when pipeline is set
	// (implicittx.go); pipelineRan: a statement of the pipeline ran before
	// the one running.
	implicit              bool
	pipeline, pipelineRan bool
	// queriedInBlock: the block ran a query, so its isolation level and
	// read-write mode are fixed (txmode.go).
	queriedInBlock bool
	// wroteInBlock is set when a write committed inside the current block.
	wroteInBlock bool
	// staged are the block's writes waiting for COMMIT, buffered its small
	// writes not yet in files (txn.go).
	staged   []stagedWrite
	buffered []*bufferedWrite
	// intent is the write intent of the open block's or the running
	// statement's files (txn.go, writeIntent).
	intent *catalog.WriteIntent
	// cursors are the open DECLAREd cursors by name (cursor.go).
	cursors map[string]*cursor
	// handleSeq numbers the statement-own scan handles (resolve.go).
	handleSeq uint64
	// plans are the kept plans of queries run before (plancache.go);
	// bound are the table names the last bindLakeTables resolved.
	plans planCache
	bound []tableRef
	// nameGen counts the session's statements that may change what a name
	// resolves to (replan.go).
	nameGen uint64
	// boundViews: the last bindLakeTables expanded a view; such plans are
	// not kept (a view can be replaced under the same name).
	boundViews bool
	// prepared are the connection's prepared statements (prepared.go);
	// sqlPrepared those SQL PREPARE made, by name.
	prepared    pgwire.PreparedStatements
	sqlPrepared map[string]sqlPrepared
	// savepoints are the open block's, oldest first; spSeq numbers them;
	// superseded are staged files a rewrite replaced while a savepoint
	// could bring them back (savepoint.go).
	savepoints []savepoint
	spSeq      int
	superseded []catalog.PartitionCommit
	// seq is the session's sequence memory (currval, lastval; sequence.go).
	seq seqState
	// ddlTx is the held catalog transaction of a block that ran DDL
	// (ddltx.go); s.cat is pinned to it meanwhile.
	ddlTx *blockDDL
	// listener is the session's LISTEN state, blockNotifies the open
	// block's NOTIFYs, blockListens its LISTENs and UNLISTENs (listen.go).
	listener      *listen.Listener
	blockNotifies []pendingNotify
	blockListens  []pendingListen
	// blockSet is what the open block's SETs restore (txsettings.go).
	blockSet blockSettings
	// temps are the session's temporary tables by name, droppedTemps
	// those the open block dropped, tempSeq numbers their hidden names
	// (temptable.go).
	temps map[string]tempTable
	// tempFuncs are the session's pg_temp functions, by name (tempfunc.go);
	// tempFuncsBefore what they were before the open block changed them
	// (restored if it rolls back; nil: unchanged).
	tempFuncs       map[string]*tempFunction
	tempFuncsBefore *map[string]*tempFunction
	droppedTemps    []droppedTemp
	tempSeq         int
	// rmw is the running read-modify-write statement (rmw.go); rmwChecks
	// the open block's, to check again at COMMIT.
	rmw       *rmwStatement
	rmwChecks []rmwCheck
	// snap is the open REPEATABLE READ or SERIALIZABLE block's snapshot
	// (txsnapshot.go); readSet what a SERIALIZABLE block read
	// (serializable.go).
	snap    *blockSnapshot
	readSet []readEntry
	// advisory holds the session's advisory locks (advisory.go); nil
	// until the first.
	advisory *catalog.AdvisoryLocks
}

var _ pgwire.Session = (*Session)(nil)

// TxStatus implements pgwire.Session.
func (s *Session) TxStatus() byte {
	switch {
	case s.implicit:
		return 'I' // ends before ReadyForQuery (implicittx.go)
	case s.failed:
		return 'E'
	case s.inBlock:
		return 'T'
	}
	return 'I'
}

// Close implements pgwire.Session.
func (s *Session) Close() {
	s.closeListener()
	if s.advisory != nil {
		s.advisory.Close() // PostgreSQL releases the session's locks
	}
	s.closeCursors(true)
	s.discardStaged(context.Background())
	s.endSnapshot(context.Background())
	_ = s.endBlockDDL(context.Background(), false, nil)
	s.e.scans.dropPrefix(s.token + ":")
	sequenceSessions.Delete(s.token)
	if err := s.closeTemps(); err != nil {
		// A temporary table left on the connection would be seen by the
		// next session the pool gives it to: the connection is closed
		// instead of returned (ErrBadConn from Raw makes database/sql
		// discard it).
		s.e.log.Warn("temporary tables not dropped; DuckDB connection discarded", "err", err)
		_ = s.duck.Raw(context.Background(), func(any) error { return driver.ErrBadConn })
	}
	s.duck.Close()
	if s.counted {
		s.counted = false
		s.e.roles.release(s.user)
	}
}

// Panics. Every entry point of a statement — Parse, a statement's
// Describe and Bind, a portal's Execute and CopyIn, ExecuteArrow and
// IngestArrow — recovers a panic of its work (package safego) and fails
// the statement with it as with any error (XX000 "internal error" for the
// client, sqlerr): a transaction block goes to the failed state, the
// statement's write intent ends, and the session serves the next
// statement. Work a statement runs on other goroutines delivers its panics
// to the statement the same way (safego.RecoverTo, safego.Group).

// AbortStatement implements pgwire.StatementAborter: it ends the running
// statement as after any error — for a panic the protocol layer caught,
// and for one an entry point recovered itself (panicked).
func (s *Session) AbortStatement(err error) {
	s.statementEnded(context.Background())
	_ = s.fail(err)
}

// panicked is the deliver function of safego.RecoverTo for an entry point
// with error result *errp: the panic becomes that error and the statement
// is aborted (`defer safego.RecoverTo(s.panicked(&err))`).
func (s *Session) panicked(errp *error) func(error) {
	return func(err error) {
		*errp = err
		s.AbortStatement(err)
	}
}

// Parse implements pgwire.Session.
func (s *Session) Parse(ctx context.Context, text string, paramOIDs []uint32) (_ []pgwire.Statement, err error) {
	defer safego.RecoverTo(s.panicked(&err))
	if !utf8.ValidString(text) {
		return nil, sqlerr.New(sqlerr.CharacterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\"")
	}
	key := newPlanKey(text, paramOIDs)
	gen := s.planGen() // before planning: a change meanwhile plans again (replan.go)
	if !s.failed {
		if q := s.cachedPlanFor(ctx, key); q != nil { // plancache.go
			return s.preparedStmt(ctx, text, &trackedStmt{Statement: q, s: s}, gen)
		}
		if len(paramOIDs) == 0 {
			if st := s.literalPlanFor(text); st != nil { // literalplan.go
				return s.preparedStmt(ctx, text, &trackedStmt{Statement: st, s: s}, gen)
			}
		}
	}
	release, err := s.e.parsing.acquire(ctx, len(text))
	if err != nil {
		return nil, s.fail(err)
	}
	tree, err := parseSQL(text)
	release()
	if err != nil {
		return nil, s.fail(parseError(err))
	}
	for _, raw := range tree.Stmts {
		if err := s.refuseCalls(raw.Stmt); err != nil { // callcheck.go
			return nil, s.fail(err)
		}
	}
	if len(tree.Stmts) > 1 {
		// The statements of a simple query are planned when they run:
		// after the earlier ones took effect (CREATE TABLE t; INSERT INTO
		// t …), inside the implicit transaction pgwire opens for them
		// (implicittx.go).
		out := make([]pgwire.Statement, len(tree.Stmts))
		for i, raw := range tree.Stmts {
			out[i] = &lazyStmt{s: s, node: raw.Stmt}
		}
		return out, nil
	}
	if len(tree.Stmts) == 0 {
		return nil, nil
	}
	raw := tree.Stmts[0].Stmt
	if s.failed && !isTxEnd(raw) {
		return nil, sqlerr.New(sqlerr.InFailedSQLTransaction,
			"current transaction is aborted, commands ignored until end of transaction block")
	}
	cacheable := planCacheable(raw) // before plan, which may rewrite the tree
	if cacheable && len(paramOIDs) == 0 {
		if st, ok := s.planLiterals(ctx, text, raw, gen); ok { // literalplan.go
			return s.preparedStmt(ctx, text, &trackedStmt{Statement: st, s: s}, gen)
		}
	}
	st, err := s.plan(ctx, raw, paramOIDs)
	if err != nil {
		return nil, s.fail(err)
	}
	if q, ok := st.(*duckQuery); ok && cacheable && !s.boundViews {
		s.plans.put(key, &cachedPlan{q: q, refs: s.bound})
	}
	return s.preparedStmt(ctx, text, &trackedStmt{Statement: st, s: s, writes: statementWrites(raw), renames: changesNames(raw)}, gen)
}

// preparedStmt makes t, planned from text at gen, plan itself again when
// the catalog changes (replan.go).
func (s *Session) preparedStmt(ctx context.Context, text string, t *trackedStmt, gen planGen) ([]pgwire.Statement, error) {
	r, err := newReplanSource(ctx, text, t.Statement, gen)
	if err != nil {
		return nil, s.fail(err)
	}
	t.replan = r
	return []pgwire.Statement{t}, nil
}

// lazyStmt is a statement planned on first use.
type lazyStmt struct {
	s    *Session
	node *pg_query.Node
	st   pgwire.Statement
	err  error
}

func (l *lazyStmt) get(ctx context.Context) (_ pgwire.Statement, err error) {
	defer safego.RecoverTo(l.s.panicked(&err))
	if l.st == nil && l.err == nil {
		if l.s.failed && !isTxEnd(l.node) {
			return nil, sqlerr.New(sqlerr.InFailedSQLTransaction,
				"current transaction is aborted, commands ignored until end of transaction block")
		}
		st, err := l.s.plan(ctx, l.node, nil)
		if err != nil {
			l.err = l.s.fail(err)
		} else {
			l.st = &trackedStmt{Statement: st, s: l.s, writes: statementWrites(l.node), renames: changesNames(l.node)}
		}
	}
	return l.st, l.err
}

func (l *lazyStmt) ParamOIDs() []uint32 {
	if st, err := l.get(context.Background()); err == nil {
		return st.ParamOIDs()
	}
	return nil
}

func (l *lazyStmt) Describe(ctx context.Context) ([]pgwire.Column, error) {
	st, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return st.Describe(ctx)
}

func (l *lazyStmt) Bind(ctx context.Context, params []any) (pgwire.Portal, error) {
	st, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return st.Bind(ctx, params)
}

func (l *lazyStmt) Tag() string { return statementName(l.node) }

// fail records an error inside a transaction block and returns it.
func (s *Session) fail(err error) error {
	if err != nil && s.inBlock {
		s.failed = true
	}
	return err
}

func isTxEnd(n *pg_query.Node) bool {
	t := n.GetTransactionStmt()
	if t == nil {
		return false
	}
	switch t.Kind {
	case pg_query.TransactionStmtKind_TRANS_STMT_ROLLBACK, pg_query.TransactionStmtKind_TRANS_STMT_COMMIT,
		pg_query.TransactionStmtKind_TRANS_STMT_ROLLBACK_TO:
		return true
	}
	return false
}

func parseError(err error) error {
	var se *sqlerr.Error
	if errors.As(err, &se) {
		return se // the nesting limit (nesting.go)
	}
	var pe *pgparser.Error
	if errors.As(err, &pe) {
		return &sqlerr.Error{Code: sqlerr.SyntaxError, Message: pe.Message, Position: int32(pe.Cursorpos), Err: err}
	}
	return sqlerr.Wrap(sqlerr.SyntaxError, err, "syntax error")
}

// plan turns one parsed statement into an executable Statement.
func (s *Session) plan(ctx context.Context, stmt *pg_query.Node, paramOIDs []uint32) (pgwire.Statement, error) {
	rewriteFunctionAliases(stmt) // extensions.go
	switch stmt.Node.(type) {
	case *pg_query.Node_UpdateStmt, *pg_query.Node_DeleteStmt, *pg_query.Node_MergeStmt:
		// s.t.c naming the target (qualified.go), before the target is bound.
		if err := s.unqualifyColumns(stmt); err != nil {
			return nil, err
		}
	}
	return s.routeStatement(ctx, stmt, paramOIDs) // routes.go
}

// statementName is a readable name for a statement node ("UPDATE", "COPY" …).
func statementName(stmt *pg_query.Node) string {
	name := fmt.Sprintf("%T", stmt.Node)
	name = strings.TrimPrefix(name, "*pg_query.Node_")
	name = strings.TrimSuffix(name, "Stmt")
	return strings.ToUpper(name)
}

// trackedStmt marks the session failed when a statement errors inside a
// transaction block, and refuses statements that write in a read-only
// transaction (txmode.go) when they are bound.
//
// A statement of the extended protocol (replan set) is planned again from
// its text when the catalog changed since its plan (replan.go); one that
// may change what names resolve to (renames) moves the session's nameGen
// when it is bound.
type trackedStmt struct {
	pgwire.Statement
	s       *Session
	writes  bool
	renames bool
	replan  *replanSource
}

func (t *trackedStmt) Describe(ctx context.Context) (_ []pgwire.Column, err error) {
	defer safego.RecoverTo(t.s.panicked(&err))
	if err := t.current(ctx); err != nil {
		return nil, t.s.fail(err)
	}
	cols, err := t.Statement.Describe(ctx)
	return cols, t.s.fail(err)
}

// ParamOIDs are the parameter types the statement was first planned with,
// whichever plan it has now.
func (t *trackedStmt) ParamOIDs() []uint32 {
	if t.replan != nil {
		return t.replan.paramOIDs
	}
	return t.Statement.ParamOIDs()
}

func (t *trackedStmt) Bind(ctx context.Context, params []any) (_ pgwire.Portal, err error) {
	defer safego.RecoverTo(t.s.panicked(&err))
	if t.s.failed && !isTxEndTag(t.Statement.Tag()) {
		return nil, sqlerr.New(sqlerr.InFailedSQLTransaction,
			"current transaction is aborted, commands ignored until end of transaction block")
	}
	if err := t.current(ctx); err != nil {
		return nil, t.s.fail(err)
	}
	if t.writes {
		if err := t.s.checkWritable(t.Statement.Tag()); err != nil {
			return nil, t.s.fail(err)
		}
	}
	if t.renames {
		t.s.nameGen++
	}
	p, err := t.Statement.Bind(ctx, params)
	if err != nil {
		return nil, t.s.fail(err)
	}
	return t.s.trackPortal(p, t.Statement.Tag()), nil
}

func isTxEndTag(tag string) bool { return tag == "COMMIT" || tag == "ROLLBACK" }

type trackedPortal struct {
	pgwire.Portal
	s *Session
	// kind is the statement's tag; start when its first Execute began.
	kind  string
	start time.Time
}

func (t *trackedPortal) Execute(ctx context.Context, maxRows int, w pgwire.RowWriter) (string, bool, error) {
	ctx, stop := t.s.statementContext(ctx) // statement_timeout (tracked.go)
	t.started()
	var tag string
	var done bool
	err := safego.Call(func() (err error) { // a panic fails the statement below like an error
		tag, done, err = t.Portal.Execute(ctx, maxRows, w)
		return err
	})
	if err == nil {
		t.s.noteQuery(tag)
	}
	if done || err != nil {
		t.s.statementEnded(ctx)
	}
	err = t.s.fail(stop(err))
	if done || err != nil {
		t.ended(err)
	}
	return tag, done, err
}

// statementEnded ends the statement's write intent outside a transaction
// block: its commit consumed it, or it failed and deleted its files.
func (s *Session) statementEnded(ctx context.Context) {
	if !s.inBlock {
		s.releaseIntent(ctx)
	}
}
