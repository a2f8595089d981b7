package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/google/uuid"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/reader"
	"github.com/lakesoul-go/lakesoul/sqlerr"
	"github.com/lakesoul-go/lakesoul/writer"
)

// UPDATE, DELETE and TRUNCATE.
//
// Primary-key tables are updated merge-on-read: UPDATE writes the new values of
// the SET columns (plus key and partition columns) as a partial upsert
// (MergeCommit), so nothing is rewritten. DELETE on a CDC table writes delete
// markers (the CDC column set to 'delete'). Every other DELETE, and UPDATE on
// an append table, is copy-on-write: each partition with matching rows is
// rewritten without (or with changed) rows and committed as an UpdateCommit
// based on the version that was read, so a concurrent update of the same
// partition makes one of them fail (40001) instead of losing rows.

// dmlTarget is the table a DML statement changes and how its rows are read.
type dmlTarget struct {
	t      *catalog.Table
	alias  string
	handle string
	// ret is the statement's RETURNING list, nil without one.
	ret *returning
	// keyed: the statement reads no row but those it writes (a WHERE on
	// key and partition columns alone), so a SERIALIZABLE block's check
	// of what it read is the check of those rows (rmw.go).
	keyed bool
	// with is the statement's WITH clause (WITH … UPDATE/DELETE): the
	// query that computes the rows it writes carries it.
	with *pg_query.WithClause
	// rewriteAll: a copy-on-write change replaces every partition's files,
	// those of partitions without a row too (rewriteCurrentColumns).
	rewriteAll bool
}

// keyedWhere reports whether where reads only key and partition columns of
// t, with no subquery: the rows such a WHERE selects are known by their
// keys.
func keyedWhere(t *catalog.Table, where *pg_query.Node) bool {
	if where == nil {
		return false
	}
	ok := true
	walk(where, func(n *pg_query.Node) {
		switch {
		case n.GetSubLink() != nil:
			ok = false
		case n.GetColumnRef() != nil:
			f := n.GetColumnRef().Fields
			name := f[len(f)-1].GetString_().GetSval()
			if !slices.Contains(t.PKCols, name) && !slices.Contains(t.RangeCols, name) {
				ok = false
			}
		}
	})
	return ok
}

// withQueries checks a WITH clause of UPDATE or DELETE: its queries read
// (a data-modifying one is 0A000); nil stays nil.
func withQueries(w *pg_query.WithClause) (*pg_query.WithClause, error) {
	if w == nil {
		return nil, nil
	}
	for _, c := range w.Ctes {
		if c.GetCommonTableExpr().GetCtequery().GetSelectStmt() == nil {
			return nil, sqlerr.Unsupported("data-modifying statements in WITH", "WITH name AS (SELECT …) UPDATE/DELETE …")
		}
	}
	return w, nil
}

// withCTEs gives sel, the query of a write to d, d's WITH clause.
func (d *dmlTarget) withCTEs(sel *pg_query.Node) *pg_query.Node {
	if d.with != nil {
		sel.GetSelectStmt().WithClause = d.with
	}
	return sel
}

// dmlTarget resolves the target rel of a statement with the RETURNING list
// returningList (empty without one).
func (s *Session) dmlTarget(ctx context.Context, rel *pg_query.RangeVar, returningList []*pg_query.Node, paramOIDs []uint32) (*dmlTarget, error) {
	t, err := s.resolveTable(ctx, rel.Schemaname, rel.Relname)
	if err != nil {
		return nil, err
	}
	alias := rel.Relname
	if rel.Alias != nil {
		alias = rel.Alias.Aliasname
	}
	handle := s.token + ":dml:" + t.ID
	s.e.scans.putFixed(handle, t, nil)
	ret, err := s.planReturning(ctx, returningList, rel, t, paramOIDs) // returning.go
	if err != nil {
		return nil, err
	}
	return &dmlTarget{t: t, alias: alias, handle: handle, ret: ret}, nil
}

// from is the target's FROM item: its fixed-handle scan under its alias.
func (d *dmlTarget) from() *pg_query.Node {
	return scanFromClause(d.handle, &pg_query.Alias{Aliasname: d.alias})
}

func colRef(fields ...string) *pg_query.Node {
	nodes := make([]*pg_query.Node, len(fields))
	for i, f := range fields {
		nodes[i] = pg_query.MakeStrNode(f)
	}
	return pg_query.MakeColumnRefNode(nodes, -1)
}

func resTarget(name string, val *pg_query.Node) *pg_query.Node {
	return pg_query.MakeResTargetNodeWithNameAndVal(name, val, -1)
}

func selectNode(targets, from []*pg_query.Node, where *pg_query.Node) *pg_query.Node {
	return &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: &pg_query.SelectStmt{
		TargetList: targets, FromClause: from, WhereClause: where,
		Op: pg_query.SetOperation_SETOP_NONE, LimitOption: pg_query.LimitOption_LIMIT_OPTION_DEFAULT,
	}}}
}

func countStar() *pg_query.Node {
	fc := pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode("count")}, nil, -1)
	fc.GetFuncCall().AggStar = true
	return fc
}

// isTrue wraps cond as `(cond) IS TRUE` (NULL counts as false, as in WHERE).
func isTrue(cond *pg_query.Node, not bool) *pg_query.Node {
	t := pg_query.BoolTestType_IS_TRUE
	if not {
		t = pg_query.BoolTestType_IS_NOT_TRUE
	}
	return &pg_query.Node{Node: &pg_query.Node_BooleanTest{BooleanTest: &pg_query.BooleanTest{Arg: cond, Booltesttype: t, Location: -1}}}
}

func caseWhen(cond, then, els *pg_query.Node) *pg_query.Node {
	n := pg_query.MakeCaseExprNode(nil, []*pg_query.Node{pg_query.MakeCaseWhenNode(cond, then, -1)}, -1)
	n.GetCaseExpr().Defresult = els
	return n
}

// declaredField is t's own column f (with the PostgreSQL type it is
// declared with, which lakeWriteCast needs), or f when t has none of its
// name; the fields of a write's record schema carry no such metadata.
func declaredField(t *catalog.Table, f arrow.Field) arrow.Field {
	if idx := t.Schema.FieldIndices(f.Name); len(idx) > 0 {
		return t.Schema.Field(idx[0])
	}
	return f
}

// castedSelect wraps a query producing the given columns of table t (in
// order) so each is cast to its lake type as the table declares it
// (declaredField, lakeStoreCast: the query applies varchar(n)/char(n)
// assignment to the values it assigns, assignedValue); the result feeds
// Session.collect.
func castedSelect(inner string, t *catalog.Table, fields []arrow.Field) string {
	q := "SELECT "
	for i, f := range fields {
		if i > 0 {
			q += ", "
		}
		q += lakeStoreCast(fmt.Sprintf("__src.c%d", i), declaredField(t, f)) + " AS " + quoteIdent(f.Name)
	}
	q += " FROM (" + inner + ") AS __src("
	for i := range fields {
		if i > 0 {
			q += ", "
		}
		q += fmt.Sprintf("c%d", i)
	}
	return q + ")"
}

// dmlQuery is a prepared DuckDB query of a DML statement.
type dmlQuery struct {
	sql    string
	params []uint32
}

func (s *Session) prepareDML(ctx context.Context, stmt *pg_query.Node, declared []uint32) (dmlQuery, map[string]*catalog.Table, error) {
	tables, err := s.bindLakeTables(ctx, stmt)
	if err != nil {
		return dmlQuery{}, nil, err
	}
	text, _, _, params, err := s.prepareDuck(ctx, stmt, declared)
	if err != nil {
		return dmlQuery{}, nil, err
	}
	return dmlQuery{sql: text, params: params}, tables, nil
}

func (s *Session) planUpdate(ctx context.Context, n *pg_query.UpdateStmt, paramOIDs []uint32) (pgwire.Statement, error) {
	if st, ok, err := s.planTempDML(ctx, &pg_query.Node{Node: &pg_query.Node_UpdateStmt{UpdateStmt: n}}, paramOIDs); ok {
		return st, err // temptable.go
	}
	with, err := withQueries(n.WithClause)
	if err != nil {
		return nil, err
	}
	d, err := s.dmlTarget(ctx, n.Relation, n.ReturningList, paramOIDs)
	if err != nil {
		return nil, err
	}
	d.with = with
	t := d.t
	sets := map[string]*pg_query.Node{}
	var setCols []string
	for _, tl := range n.TargetList {
		rt := tl.GetResTarget()
		if len(rt.Indirection) > 0 {
			return nil, sqlerr.Unsupported("assigning to a field or subscript", "SET column = expression")
		}
		if len(t.Schema.FieldIndices(rt.Name)) == 0 {
			return nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", rt.Name, t.Name)
		}
		if _, dup := sets[rt.Name]; dup {
			return nil, sqlerr.New(sqlerr.SyntaxError, "multiple assignments to same column %q", rt.Name)
		}
		if err := typeAssigned(rt.Val, t.Schema.Field(t.Schema.FieldIndices(rt.Name)[0])); err != nil {
			return nil, err
		}
		sets[rt.Name] = rt.Val
		if slices.Contains(t.PKCols, rt.Name) || slices.Contains(t.RangeCols, rt.Name) {
			sets[rt.Name] = sameKey(d.alias, rt.Name, rt.Val)
		}
		setCols = append(setCols, rt.Name)
	}
	d.keyed = len(n.FromClause) == 0 && keyedWhere(t, n.WhereClause)
	if t.HasPK() {
		return s.planUpdateMerge(ctx, d, n, sets, paramOIDs)
	}
	if len(n.FromClause) > 0 {
		return nil, sqlerr.Unsupported("UPDATE ... FROM on a table without a primary key", "UPDATE ... WHERE")
	}
	// Copy-on-write: every column, SET columns replaced where the condition holds.
	var targets []*pg_query.Node
	var fields []arrow.Field
	for _, f := range t.Schema.Fields() {
		val := colRef(d.alias, f.Name)
		if e, ok := sets[f.Name]; ok {
			// Rows the condition leaves are kept as they are, not assigned.
			e = assignedValue(e, f)
			val = e
			if n.WhereClause != nil {
				val = caseWhen(isTrue(n.WhereClause, false), e, colRef(d.alias, f.Name))
			}
		}
		targets = append(targets, resTarget(f.Name, val))
		fields = append(fields, f)
	}
	return s.planRewrite(ctx, d, "UPDATE", targets, fields, false, n.WhereClause, paramOIDs)
}

// planUpdateMerge plans UPDATE of a primary-key table as a partial upsert.
func (s *Session) planUpdateMerge(ctx context.Context, d *dmlTarget, n *pg_query.UpdateStmt, sets map[string]*pg_query.Node, paramOIDs []uint32) (pgwire.Statement, error) {
	t := d.t
	var targets []*pg_query.Node
	var fields []arrow.Field
	for _, f := range t.Schema.Fields() {
		var val *pg_query.Node
		switch {
		case sets[f.Name] != nil: // a key column's is guarded by sameKey
			val = assignedValue(sets[f.Name], f)
		case slices.Contains(t.PKCols, f.Name) || slices.Contains(t.RangeCols, f.Name):
			val = colRef(d.alias, f.Name)
		case f.Name == t.Properties[reader.CDCColumnProperty]:
			val = pg_query.MakeAConstStrNode("update", -1)
		case d.ret != nil:
			// Not written, but RETURNING sees the row's value.
			targets = append(targets, resTarget(f.Name, colRef(d.alias, f.Name)))
			continue
		default:
			continue
		}
		targets = append(targets, resTarget(f.Name, val))
		fields = append(fields, arrow.Field{Name: f.Name, Type: f.Type, Nullable: f.Nullable})
	}
	from := append([]*pg_query.Node{d.from()}, n.FromClause...)
	sel := selectNode(targets, from, n.WhereClause)
	if len(n.FromClause) > 0 {
		// A target row joined to several FROM rows is updated once, with
		// one of them, as in PostgreSQL; the tag counts target rows.
		var key []*pg_query.Node
		for _, k := range slices.Concat(t.RangeCols, t.PKCols) {
			key = append(key, colRef(d.alias, k))
		}
		sel.GetSelectStmt().DistinctClause = key
	}
	return s.writeStmt(ctx, "UPDATE", d, sel, fields, nil, paramOIDs)
}

// writeStmt plans a statement that writes the rows of sel (yielding fields,
// in order) into the target table: the target and the tables sel reads are
// snapshotted when it runs, and the rows are written and committed once.
// With RETURNING (d.ret), sel yields whole rows as RETURNING sees them
// (named as the table's columns): fields are those written, exprs replaces
// a written column's value by an expression over the row.
func (s *Session) writeStmt(ctx context.Context, tag string, d *dmlTarget, sel *pg_query.Node, fields []arrow.Field, exprs map[string]string, paramOIDs []uint32) (pgwire.Statement, error) {
	q, tables, err := s.prepareDML(ctx, d.withCTEs(sel), paramOIDs)
	if err != nil {
		return nil, err
	}
	query := castedSelect(q.sql, d.t, fields)
	sch := arrow.NewSchema(fields, nil)
	params := d.ret.statementParams(q.params)
	var write func(ctx context.Context, args []any) (string, [][]any, error)
	st := &funcStmt{tag: tag, params: params, cols: d.ret.columns(), run: func(ctx context.Context, args []any) (string, [][]any, error) {
		return s.runRMW(ctx, d.t, d.keyed, func(ctx context.Context) (string, [][]any, error) { return write(ctx, args) })
	}}
	write = func(ctx context.Context, args []any) (string, [][]any, error) {
		if _, err := s.readTarget(ctx, d, tables); err != nil {
			return "", nil, err
		}
		dargs, err := duckArgs(params, args)
		if err != nil {
			return "", nil, err
		}
		var n int64
		var rows [][]any
		if d.ret == nil {
			n, err = s.writeQuery(ctx, d.t, query, dargs[:len(q.params)], sch, true)
		} else {
			n, rows, err = d.ret.run(ctx, s, dargs,
				func() error { return d.ret.add(ctx, s, q.sql, dargs[:len(q.params)]) },
				func() (int64, error) { return s.writeQuery(ctx, d.t, d.ret.source(fields, exprs), nil, sch, true) })
		}
		if err != nil {
			return "", nil, err
		}
		s.noteWrite()
		return fmt.Sprintf("%s %d", tag, n), rows, nil
	}
	releaseWith(s.e.scans, st, tables)
	return st, nil
}

// readTarget snapshots the target (as a fixed handle) and the other tables.
func (s *Session) readTarget(ctx context.Context, d *dmlTarget, others map[string]*catalog.Table) ([]catalog.PartitionFiles, error) {
	cat, err := s.readCatalog(ctx) // txsnapshot.go
	if err != nil {
		return nil, err
	}
	parts, err := cat.LiveFiles(ctx, d.t.ID, nil)
	if err != nil {
		return nil, err
	}
	// An open block reads (and rewrites) its own writes (txn.go).
	if parts, err = s.snapshotForBlock(ctx, d.t, parts); err != nil {
		return nil, err
	}
	if err := reader.CheckFiles(d.t, parts); err != nil {
		return nil, err
	}
	s.noteRead(d.t, parts) // rmw.go
	s.e.scans.putFixed(d.handle, d.t, parts)
	return parts, s.takeSnapshots(ctx, others)
}

func (s *Session) planDelete(ctx context.Context, n *pg_query.DeleteStmt, paramOIDs []uint32) (pgwire.Statement, error) {
	if st, ok, err := s.planTempDML(ctx, &pg_query.Node{Node: &pg_query.Node_DeleteStmt{DeleteStmt: n}}, paramOIDs); ok {
		return st, err // temptable.go
	}
	if len(n.UsingClause) > 0 {
		return nil, sqlerr.Unsupported("DELETE ... USING", "DELETE ... WHERE (subqueries allowed)")
	}
	with, err := withQueries(n.WithClause)
	if err != nil {
		return nil, err
	}
	d, err := s.dmlTarget(ctx, n.Relation, n.ReturningList, paramOIDs)
	if err != nil {
		return nil, err
	}
	d.with = with
	t := d.t
	d.keyed = keyedWhere(t, n.WhereClause)
	if cdc := t.Properties[reader.CDCColumnProperty]; cdc != "" && t.HasPK() {
		// CDC table: write delete markers; snapshot reads drop them after merging.
		var targets []*pg_query.Node
		var fields []arrow.Field
		var exprs map[string]string
		for _, f := range t.Schema.Fields() {
			var val *pg_query.Node
			switch {
			case slices.Contains(t.PKCols, f.Name) || slices.Contains(t.RangeCols, f.Name):
				val = colRef(d.alias, f.Name)
			case f.Name == cdc && d.ret == nil:
				val = pg_query.MakeAConstStrNode("delete", -1)
			case f.Name == cdc:
				// RETURNING sees the deleted row; the marker is written.
				val = colRef(d.alias, f.Name)
				exprs = map[string]string{cdc: "'delete'"}
			case d.ret != nil:
				targets = append(targets, resTarget(f.Name, colRef(d.alias, f.Name)))
				continue
			default:
				continue
			}
			targets = append(targets, resTarget(f.Name, val))
			fields = append(fields, arrow.Field{Name: f.Name, Type: f.Type, Nullable: f.Nullable})
		}
		return s.writeStmt(ctx, "DELETE", d, selectNode(targets, []*pg_query.Node{d.from()}, n.WhereClause), fields, exprs, paramOIDs)
	}
	var targets []*pg_query.Node
	var fields []arrow.Field
	for _, f := range t.Schema.Fields() {
		targets = append(targets, resTarget(f.Name, colRef(d.alias, f.Name)))
		fields = append(fields, f)
	}
	// Rows that stay: those the condition does not select (all of them go
	// without a WHERE).
	return s.planRewrite(ctx, d, "DELETE", targets, fields, true, n.WhereClause, paramOIDs)
}

// rewriteTable is the session's temporary DuckDB table of one partition's
// recomputed rows, while a copy-on-write change with RETURNING runs.
const rewriteTable = "__lakesoul_rewrite"

// rewriteMatch names the column of a copy-on-write query that tells whether
// a row is one the statement selects (its WHERE holds).
const rewriteMatch = "__lakesoul_match"

// planRewrite plans a copy-on-write change: for every partition where match
// holds for some row, the partition's rows are recomputed by targets (those
// match selects are left out when dropMatched) and replace the partition in
// an UpdateCommit based on the version read. The command tag counts the
// matching rows.
func (s *Session) planRewrite(ctx context.Context, d *dmlTarget, tag string, targets []*pg_query.Node, fields []arrow.Field,
	dropMatched bool, match *pg_query.Node, paramOIDs []uint32) (pgwire.Statement, error) {
	t := d.t
	// One query yields the new rows and whether each matched, so the count
	// and the rewrite are planned from one text and take the same parameters.
	matched := &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{Val: &pg_query.A_Const_Boolval{Boolval: &pg_query.Boolean{Boolval: true}}}}}
	if match != nil {
		matched = isTrue(match, false)
	}
	q, tables, err := s.prepareDML(ctx, d.withCTEs(selectNode(append(slices.Clone(targets), resTarget(rewriteMatch, matched)), []*pg_query.Node{d.from()}, nil)), paramOIDs)
	if err != nil {
		return nil, err
	}
	// With RETURNING each partition's rows are computed once, into a
	// temporary table the count, the rewrite and RETURNING read.
	src := "(" + q.sql + ")"
	if d.ret != nil {
		src = rewriteTable
	}
	countSQL := fmt.Sprintf("SELECT count(*) FROM %s AS __m WHERE __m.%s", src, rewriteMatch)
	keep := ""
	if dropMatched {
		keep = " WHERE NOT __m." + rewriteMatch
	}
	query := castedSelect(fmt.Sprintf("SELECT * EXCLUDE (%s) FROM %s AS __m%s", rewriteMatch, src, keep), t, fields)
	matchedRows := fmt.Sprintf("SELECT * EXCLUDE (%s) FROM %s AS __m WHERE __m.%s", rewriteMatch, src, rewriteMatch)
	// The key and range columns of the matching rows (rmw.go).
	var keyFields []arrow.Field
	var keyCols []string
	for _, f := range fields {
		if slices.Contains(t.PKCols, f.Name) || slices.Contains(t.RangeCols, f.Name) {
			keyFields = append(keyFields, f)
			keyCols = append(keyCols, "__m."+quoteIdent(f.Name))
		}
	}
	keySch := arrow.NewSchema(keyFields, nil)
	matchedKeys := fmt.Sprintf("SELECT %s FROM %s AS __m WHERE __m.%s", strings.Join(keyCols, ", "), src, rewriteMatch)
	sch := arrow.NewSchema(fields, nil)
	params := d.ret.statementParams(q.params)
	var rewrite func(ctx context.Context, args []any) (_ string, _ [][]any, err error)
	st := &funcStmt{tag: tag, params: params, cols: d.ret.columns(), run: func(ctx context.Context, args []any) (string, [][]any, error) {
		return s.runRMW(ctx, t, d.keyed, func(ctx context.Context) (string, [][]any, error) { return rewrite(ctx, args) })
	}}
	rewrite = func(ctx context.Context, args []any) (_ string, _ [][]any, err error) {
		parts, err := s.readTarget(ctx, d, tables)
		if err != nil {
			return "", nil, err
		}
		all, err := duckArgs(params, args)
		if err != nil {
			return "", nil, err
		}
		dargs := all[:len(q.params)]
		if d.ret != nil {
			if err := d.ret.begin(ctx, s); err != nil {
				return "", nil, err
			}
			// Dropping the temporary tables fails the statement only
			// when nothing failed before.
			defer func() {
				_, dropErr := s.duck.ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+rewriteTable)
				if endErr := d.ret.end(ctx, s); dropErr == nil {
					dropErr = endErr
				}
				if err == nil && dropErr != nil {
					err = fmt.Errorf("RETURNING: drop temporary tables: %w", dropErr)
				}
			}()
		}
		var commits []catalog.PartitionCommit
		var written []catalog.PartitionCommit
		var rows [][]any
		total := int64(0)
		cleanup := func() {
			for _, p := range written {
				for _, op := range p.Ops {
					if op.Op == "add" {
						_ = s.e.store.Delete(context.WithoutCancel(ctx), op.Path)
					}
				}
			}
		}
		for _, p := range parts {
			s.e.scans.putFixed(d.handle, t, []catalog.PartitionFiles{p})
			qargs := dargs
			if d.ret != nil {
				if _, err := s.duck.ExecContext(ctx, "CREATE OR REPLACE TEMP TABLE "+rewriteTable+" AS "+q.sql, dargs...); err != nil {
					cleanup()
					return "", nil, err
				}
				qargs = nil
			}
			var n int64
			if err := s.duck.QueryRowContext(ctx, countSQL, qargs...).Scan(&n); err != nil {
				cleanup()
				return "", nil, err
			}
			if n == 0 && !d.rewriteAll {
				continue
			}
			total += n
			if r := s.rmwFor(t); r != nil && r.keys != nil {
				// The rows it deletes or changes (rmw.go).
				rec, err := s.collect(ctx, matchedKeys, qargs, keySch)
				if err != nil {
					cleanup()
					return "", nil, err
				}
				err = r.keys.add(rec)
				rec.Release()
				if err != nil {
					cleanup()
					return "", nil, err
				}
			}
			if d.ret != nil {
				if err := d.ret.add(ctx, s, matchedRows, nil); err != nil {
					cleanup()
					return "", nil, err
				}
			}
			rec, err := s.collect(ctx, query, qargs, sch)
			if err != nil {
				cleanup()
				return "", nil, err
			}
			intent, err := s.writeIntent(ctx)
			if err != nil {
				rec.Release()
				cleanup()
				return "", nil, err
			}
			w := &writer.Writer{Store: s.e.store, Table: t, Intent: intent}
			out, err := w.Write(ctx, rec)
			rec.Release()
			if err != nil {
				cleanup()
				return "", nil, err
			}
			written = append(written, out...)
			pc := catalog.PartitionCommit{Desc: p.Desc, CommitID: uuid.New(), ReadVersion: readVersion(p)}
			for _, o := range out {
				if o.Desc != p.Desc {
					cleanup()
					return "", nil, fmt.Errorf("%s moved rows out of partition %s", tag, p.Desc)
				}
				pc.Ops = append(pc.Ops, o.Ops...)
			}
			for _, f := range p.Files {
				pc.Ops = append(pc.Ops, catalog.FileOp{Path: f.Path, Op: "del", Size: f.Size, ExistCols: f.ExistCols})
			}
			commits = append(commits, pc)
		}
		if len(commits) > 0 {
			if s.inBlock {
				for _, c := range commits {
					s.supersedeStaged(ctx, t, c.Desc)
				}
			}
			// Commits now, or at COMMIT inside a transaction block;
			// commitWrite removes the new files if the commit failed.
			if d.ret != nil {
				// Evaluated before the commit: the commit is the last
				// thing that can fail.
				if rows, err = d.ret.rows(ctx, s, all); err != nil {
					cleanup()
					return "", nil, err
				}
			}
			if err := s.verifyChecks(ctx, t, written, nil); err != nil { // checks.go
				cleanup()
				return "", nil, err
			}
			if err := s.commitWrite(ctx, t, catalog.UpdateCommit, commits); err != nil {
				return "", nil, err
			}
			s.noteWrite()
		}
		return fmt.Sprintf("%s %d", tag, total), rows, nil
	}
	releaseWith(s.e.scans, st, tables)
	return st, nil
}

func (s *Session) planTruncate(ctx context.Context, n *pg_query.TruncateStmt) (pgwire.Statement, error) {
	var tables []*catalog.Table
	for _, r := range n.Relations {
		rv := r.GetRangeVar()
		t, err := s.resolveTable(ctx, rv.Schemaname, rv.Relname)
		if err != nil {
			return nil, err
		}
		tables = append(tables, t)
	}
	return &funcStmt{tag: "TRUNCATE TABLE", run: func(ctx context.Context, _ []any) (string, [][]any, error) {
		for _, t := range tables {
			parts, err := s.cat.LiveFiles(ctx, t.ID, nil)
			if err != nil {
				return "", nil, err
			}
			if parts, err = s.snapshotForBlock(ctx, t, parts); err != nil {
				return "", nil, err
			}
			var commits []catalog.PartitionCommit
			for _, p := range parts {
				if s.inBlock {
					s.supersedeStaged(ctx, t, p.Desc)
				}
				if p.Version < 0 {
					continue // existed only in the block's own writes
				}
				commits = append(commits, catalog.PartitionCommit{Desc: p.Desc, CommitID: uuid.New(), ReadVersion: readVersion(p)})
			}
			if len(commits) == 0 {
				continue
			}
			if err := s.commitWrite(ctx, t, catalog.DeleteCommit, commits); err != nil {
				return "", nil, err
			}
			s.noteWrite()
		}
		return "TRUNCATE TABLE", nil, nil
	}}, nil
}

// readVersion is the version a rewrite of partition p is based on; nil for a
// partition that exists only in the open block's staged writes.
func readVersion(p catalog.PartitionFiles) *int {
	if p.Version < 0 {
		return nil
	}
	v := p.Version
	return &v
}

// noteWrite records that a write committed inside a transaction block.
func (s *Session) noteWrite() {
	if s.inBlock {
		s.wroteInBlock = true
	}
}

// keyUpdateMessage begins the message of an assignment that would change
// a row's primary-key or partition column.
const keyUpdateMessage = "updating primary-key or partition column"

// affectTwiceMessage ends the message of a statement that would write one
// row twice (lakesoul_affect_once, duckfuncs.go); the statement's name
// begins it, as in PostgreSQL.
const affectTwiceMessage = "command cannot affect row a second time"

// sameKey guards an assignment of e to key or partition column col of the
// target (alias): the row keeps the value it has, and a different value
// fails the statement when it runs (lakesoul_same_key, duckfuncs.go).
func sameKey(alias, col string, e *pg_query.Node) *pg_query.Node {
	return makeCall("lakesoul_same_key", e, colRef(alias, col), pg_query.MakeAConstStrNode(col, -1))
}
