package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"google.golang.org/protobuf/proto"

	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Temporary tables (CREATE TEMP TABLE) live in the temp schema of the
// session's own DuckDB connection, never in the catalog: no other session
// and no catalog listing sees them. As in PostgreSQL, an unqualified name
// (or pg_temp.name) resolves to the session's temporary table before any
// lake table of the search path (bindLakeTables, tempRef), so they join
// with lake tables and take INSERT/UPDATE/DELETE (run by DuckDB). They are
// dropped at the session's end (Close) — the DuckDB connection goes back
// to the pool — and ON COMMIT DROP ones at the end of their transaction.

// duckTempCatalog and duckTempSchema name DuckDB's temporary objects.
const (
	duckTempCatalog = "temp"
	duckTempSchema  = "main"
	pgTempSchema    = "pg_temp"
)

// isTempRef reports whether rv names one of the session's temporary tables.
func (s *Session) isTempRef(rv *pg_query.RangeVar) bool {
	if rv == nil || rv.Catalogname != "" {
		return false
	}
	switch rv.Schemaname {
	case pgTempSchema:
		return true
	case "":
		_, ok := s.temps[rv.Relname]
		return ok
	}
	return false
}

// pointTempRef makes rv name the DuckDB temporary table it refers to.
func pointTempRef(rv *pg_query.RangeVar) {
	rv.Catalogname, rv.Schemaname = duckTempCatalog, duckTempSchema
}

// tempTable is what the session keeps of a temporary table.
type tempTable struct {
	// dropAtCommit: ON COMMIT DROP; inBlock: created in the open
	// transaction block, so ROLLBACK drops it.
	dropAtCommit, inBlock bool
}

// droppedTemp is a temporary table the open block dropped: until the block
// ends it lives on in DuckDB under the name hidden, where no statement
// finds it; COMMIT drops it, ROLLBACK (or ROLLBACK TO a savepoint before
// the drop) renames it back.
type droppedTemp struct {
	name, hidden string
	t            tempTable
}

// planCreateTempTable plans CREATE TEMP TABLE t (…): DuckDB creates it.
func (s *Session) planCreateTempTable(n *pg_query.CreateStmt) (pgwire.Statement, error) {
	rel := n.Relation
	if rel.Schemaname != "" && rel.Schemaname != pgTempSchema {
		return nil, sqlerr.New(sqlerr.InvalidTableDefinition, "cannot create temporary relation in non-temporary schema")
	}
	if n.Partspec != nil || len(n.Options) > 0 || len(n.InhRelations) > 0 || n.OfTypename != nil || n.Partbound != nil {
		return nil, sqlerr.Unsupported("PARTITION BY / WITH / INHERITS on temporary tables", "CREATE TEMP TABLE t (col type, … [, PRIMARY KEY (…)])")
	}
	onCommit := n.Oncommit
	if onCommit == pg_query.OnCommitAction_ONCOMMIT_DELETE_ROWS {
		return nil, sqlerr.Unsupported("ON COMMIT DELETE ROWS", "ON COMMIT PRESERVE ROWS or ON COMMIT DROP")
	}
	c := proto.Clone(n).(*pg_query.CreateStmt)
	c.Relation.Schemaname, c.Oncommit = "", pg_query.OnCommitAction_ONCOMMIT_NOOP
	text, err := s.duckSQL(&pg_query.Node{Node: &pg_query.Node_CreateStmt{CreateStmt: c}}) // duckgate.go
	if err != nil {
		return nil, err
	}
	return &funcStmt{tag: "CREATE TABLE", run: func(ctx context.Context, _ []any) (string, [][]any, error) {
		if _, ok := s.temps[rel.Relname]; ok && n.IfNotExists {
			return "CREATE TABLE", nil, nil
		}
		if _, ok := s.temps[rel.Relname]; ok {
			return "", nil, sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", rel.Relname)
		}
		if onCommit == pg_query.OnCommitAction_ONCOMMIT_DROP && !s.inBlock {
			return "CREATE TABLE", nil, nil // dropped with the statement's own transaction
		}
		if _, err := s.duck.ExecContext(ctx, text); err != nil {
			return "", nil, err
		}
		s.addTemp(rel.Relname, onCommit == pg_query.OnCommitAction_ONCOMMIT_DROP)
		return "CREATE TABLE", nil, nil
	}}, nil
}

func (s *Session) addTemp(name string, dropAtCommit bool) {
	if s.temps == nil {
		s.temps = map[string]tempTable{}
	}
	s.temps[name] = tempTable{dropAtCommit: dropAtCommit, inBlock: s.inBlock}
	s.plans.clear() // kept plans may have bound the name to a lake table
}

// dropTempTx drops a temporary table as a statement of the session:
// inside a transaction block the drop waits for COMMIT (droppedTemp).
func (s *Session) dropTempTx(ctx context.Context, name string) error {
	if !s.inBlock {
		return s.dropTemp(ctx, name)
	}
	s.tempSeq++
	hidden := fmt.Sprintf("lakesoul_dropped_%d_%s", s.tempSeq, name)
	if _, err := s.duck.ExecContext(ctx, "ALTER TABLE "+duckTempCatalog+"."+duckTempSchema+"."+quoteIdent(name)+
		" RENAME TO "+quoteIdent(hidden)); err != nil {
		return err
	}
	s.droppedTemps = append(s.droppedTemps, droppedTemp{name: name, hidden: hidden, t: s.temps[name]})
	delete(s.temps, name)
	s.plans.clear()
	return nil
}

// undropTemps brings back the temporary tables the block dropped after the
// first keep of them (ROLLBACK: all; ROLLBACK TO: those after its savepoint).
func (s *Session) undropTemps(ctx context.Context, keep int) {
	for i := len(s.droppedTemps) - 1; i >= keep; i-- {
		d := s.droppedTemps[i]
		if _, err := s.duck.ExecContext(context.WithoutCancel(ctx), "ALTER TABLE "+duckTempCatalog+"."+duckTempSchema+"."+
			quoteIdent(d.hidden)+" RENAME TO "+quoteIdent(d.name)); err != nil {
			// Left hidden, it is dropped with the session's tables.
			s.e.log.Warn("temporary table not restored at ROLLBACK", "table", d.name, "err", err)
			continue
		}
		s.droppedTemps = slices.Delete(s.droppedTemps, i, i+1)
		if s.temps == nil {
			s.temps = map[string]tempTable{}
		}
		s.temps[d.name] = d.t
	}
	s.plans.clear()
}

// dropHiddenTemps drops the tables droppedTemps hides (COMMIT, and the end
// of the session).
func (s *Session) dropHiddenTemps(ctx context.Context) error {
	var first error
	for _, d := range s.droppedTemps {
		if _, err := s.duck.ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+duckTempCatalog+"."+
			duckTempSchema+"."+quoteIdent(d.hidden)); err != nil && first == nil {
			first = err
		}
	}
	s.droppedTemps = nil
	return first
}

// dropTemp drops a temporary table.
func (s *Session) dropTemp(ctx context.Context, name string) error {
	if _, err := s.duck.ExecContext(ctx, "DROP TABLE IF EXISTS "+duckTempCatalog+"."+duckTempSchema+"."+quoteIdent(name)); err != nil {
		return err
	}
	delete(s.temps, name)
	s.plans.clear()
	return nil
}

// planDropTemp plans DROP TABLE of names that are all temporary tables of
// the session; ok is false when any is not.
func (s *Session) planDropTemp(names [][]string, missingOK bool) (pgwire.Statement, bool) {
	var temps []string
	for _, parts := range names {
		rv := &pg_query.RangeVar{Relname: parts[len(parts)-1]}
		if len(parts) == 2 {
			rv.Schemaname = parts[0]
		} else if len(parts) > 2 {
			return nil, false
		}
		if !s.isTempRef(rv) {
			return nil, false
		}
		temps = append(temps, rv.Relname)
	}
	return &funcStmt{tag: "DROP TABLE", run: func(ctx context.Context, _ []any) (string, [][]any, error) {
		for _, name := range temps {
			if _, ok := s.temps[name]; !ok {
				if missingOK {
					continue
				}
				return "", nil, sqlerr.New(sqlerr.UndefinedTable, "table %q does not exist", name)
			}
			if err := s.dropTempTx(ctx, name); err != nil {
				return "", nil, err
			}
		}
		return "DROP TABLE", nil, nil
	}}, true
}

// endTempTransaction ends a block for the temporary tables: ON COMMIT
// DROP ones are dropped, and after ROLLBACK those the block created; those
// the block dropped are dropped at COMMIT and back after ROLLBACK.
// (Rows a rolled-back block wrote to a temporary table stay.)
func (s *Session) endTempTransaction(ctx context.Context, committed bool) {
	if committed {
		if err := s.dropHiddenTemps(ctx); err != nil {
			s.e.log.Warn("temporary table dropped in a block not dropped at COMMIT", "err", err)
		}
	} else {
		s.undropTemps(ctx, 0)
	}
	for name, t := range s.temps {
		switch {
		case t.dropAtCommit || t.inBlock && !committed:
			if err := s.dropTemp(ctx, name); err != nil {
				// The block has ended either way; the table stays, visible
				// to this session only, and the next block's end (or the
				// session's) tries again — it never becomes a kept table.
				s.e.log.Warn("temporary table not dropped at the end of its block", "table", name, "err", err)
				t.dropAtCommit = true
				s.temps[name] = t
			}
		case t.inBlock:
			t.inBlock = false
			s.temps[name] = t
		}
	}
}

// closeTemps drops every temporary table of the session's DuckDB
// connection (DISCARD TEMP, and the session's end: the connection is
// reused by later sessions). It returns the first drop that failed; the
// others are still tried.
func (s *Session) closeTemps() error {
	first := s.dropHiddenTemps(context.Background())
	for name := range s.temps {
		if err := s.dropTemp(context.Background(), name); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// discardTemps is DISCARD TEMP: every temporary table dropped, inside a
// block when the block commits.
func (s *Session) discardTemps(ctx context.Context) error {
	if !s.inBlock {
		return s.closeTemps()
	}
	for name := range s.temps {
		if err := s.dropTempTx(ctx, name); err != nil {
			return err
		}
	}
	return nil
}

// planTempDML plans INSERT/UPDATE/DELETE whose target is a temporary table,
// or CREATE TEMP TABLE … AS: DuckDB runs the statement, with the lake
// tables it reads bound as in queries. ok is false for other statements.
func (s *Session) planTempDML(ctx context.Context, stmt *pg_query.Node, paramOIDs []uint32) (pgwire.Statement, bool, error) {
	var target *pg_query.RangeVar
	var returning []*pg_query.Node
	verb := ""
	switch {
	case stmt.GetInsertStmt() != nil:
		n := stmt.GetInsertStmt()
		target, returning, verb = n.Relation, n.ReturningList, "INSERT 0"
		if n.OnConflictClause != nil {
			return nil, s.isTempRef(target), sqlerr.Unsupported("ON CONFLICT on temporary tables", "INSERT, UPDATE and DELETE")
		}
	case stmt.GetUpdateStmt() != nil:
		n := stmt.GetUpdateStmt()
		target, returning, verb = n.Relation, n.ReturningList, "UPDATE"
	case stmt.GetDeleteStmt() != nil:
		n := stmt.GetDeleteStmt()
		target, returning, verb = n.Relation, n.ReturningList, "DELETE"
	case stmt.GetCreateTableAsStmt() != nil:
		n := stmt.GetCreateTableAsStmt()
		if n.Into.Rel.Relpersistence != "t" {
			return nil, false, nil
		}
		if n.Into.Rel.Schemaname != "" && n.Into.Rel.Schemaname != pgTempSchema {
			return nil, true, sqlerr.New(sqlerr.InvalidTableDefinition, "cannot create temporary relation in non-temporary schema")
		}
		if n.Into.OnCommit == pg_query.OnCommitAction_ONCOMMIT_DELETE_ROWS || n.Into.OnCommit == pg_query.OnCommitAction_ONCOMMIT_DROP || len(n.Into.Options) > 0 {
			return nil, true, sqlerr.Unsupported("ON COMMIT / WITH on CREATE TEMP TABLE … AS", "CREATE TEMP TABLE t AS SELECT …")
		}
		name := n.Into.Rel.Relname
		if _, ok := s.temps[name]; ok {
			if n.IfNotExists {
				return &funcStmt{tag: "CREATE TABLE AS"}, true, nil
			}
			return nil, true, sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", name)
		}
		n.Into.Rel.Schemaname = ""
		if catalogSourced(n.Query) {
			st, err := s.planTempFromCatalog(ctx, name, n.Query, n.Into.SkipData, paramOIDs) // tempcatalog.go
			return st, true, err
		}
		q, err := s.planTempStatement(ctx, stmt, paramOIDs)
		if err != nil {
			return nil, true, err
		}
		return &tempDML{q: q, verb: "SELECT", created: name}, true, nil
	}
	if !s.isTempRef(target) {
		return nil, false, nil
	}
	pointTempRef(target)
	q, err := s.planTempStatement(ctx, stmt, paramOIDs)
	if err != nil {
		return nil, true, err
	}
	return &tempDML{q: q, verb: verb, returning: len(returning) > 0}, true, nil
}

// planTempStatement binds the lake tables stmt reads and prepares it for
// DuckDB.
func (s *Session) planTempStatement(ctx context.Context, stmt *pg_query.Node, paramOIDs []uint32) (*duckQuery, error) {
	tables, err := s.bindLakeTables(ctx, stmt)
	if err != nil {
		return nil, err
	}
	text, cols, convs, params, err := s.prepareDuck(ctx, stmt, paramOIDs)
	if err != nil {
		return nil, err
	}
	q := &duckQuery{s: s, gen: s.e.ddlGen.Load(), sql: text, tables: tables, params: mergeParamOIDs(paramOIDs, params), cols: cols, convs: convs}
	releaseWith(s.e.scans, q, tables)
	return q, nil
}

// tempDML is a DuckDB statement on temporary tables: its result is
// RETURNING's rows, or DuckDB's one row count.
type tempDML struct {
	q         *duckQuery
	verb      string
	returning bool
	// created is the table CREATE TEMP TABLE … AS makes.
	created string
}

func (t *tempDML) ParamOIDs() []uint32 { return t.q.params }
func (t *tempDML) Describe(context.Context) ([]pgwire.Column, error) {
	if t.returning {
		return t.q.cols, nil
	}
	return nil, nil
}
func (t *tempDML) Tag() string { return strings.Fields(t.verb)[0] }

func (t *tempDML) Bind(ctx context.Context, params []any) (pgwire.Portal, error) {
	p, err := t.q.Bind(ctx, params)
	if err != nil {
		return nil, err
	}
	return &tempDMLPortal{t: t, p: p}, nil
}

type tempDMLPortal struct {
	t     *tempDML
	p     pgwire.Portal
	count int64
}

func (p *tempDMLPortal) Describe(ctx context.Context) ([]pgwire.Column, error) {
	return p.t.Describe(ctx)
}
func (p *tempDMLPortal) Close() { p.p.Close() }

func (p *tempDMLPortal) Execute(ctx context.Context, maxRows int, w pgwire.RowWriter) (string, bool, error) {
	if p.t.returning {
		tag, done, err := p.p.Execute(ctx, maxRows, w)
		if err != nil || !done {
			return tag, done, err
		}
		return p.t.verb + " " + tag[strings.LastIndexByte(tag, ' ')+1:], true, nil
	}
	_, _, err := p.p.Execute(ctx, 0, countWriter{&p.count})
	if err != nil {
		return "", true, err
	}
	if p.t.created != "" {
		p.t.q.s.addTemp(p.t.created, false)
	}
	return fmt.Sprintf("%s %d", p.t.verb, p.count), true, nil
}

// countWriter takes DuckDB's one-row count result.
type countWriter struct{ n *int64 }

func (c countWriter) WriteRow(vals []any) error {
	if len(vals) == 1 {
		switch v := vals[0].(type) {
		case int64:
			*c.n = v
		case int32:
			*c.n = int64(v)
		}
	}
	return nil
}
