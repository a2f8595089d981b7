package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// SELECT … FOR UPDATE | FOR NO KEY UPDATE | FOR SHARE | FOR KEY SHARE
// [OF t, …] [NOWAIT | SKIP LOCKED] on primary-key tables.
//
// The rows the query returns are locked by key (sqlfuncs/007_row_locks.sql):
// FOR UPDATE and FOR NO KEY UPDATE exclusively, FOR SHARE and FOR KEY SHARE
// shared (this is stricter than PostgreSQL, where FOR KEY SHARE and FOR NO
// KEY UPDATE do not conflict: such pairs wait here). Inside a transaction
// block the locks are held by the block's held catalog transaction until the
// block ends; outside one, for the statement, as in PostgreSQL. Updates
// (read-modify-write statements, rmw.go) lock their rows exclusively, so
// they wait for these locks and these wait for them.
//
// As in PostgreSQL, rows are locked as they are returned: the query runs
// without its LIMIT/OFFSET, rows come in its order, and a row is locked
// before it counts towards the limit — so LIMIT 1 FOR UPDATE SKIP LOCKED
// returns the first row nobody holds. A row whose lock had to be waited for
// may have changed meanwhile: under READ COMMITTED the query then runs again
// on a new snapshot, keeping its locks (PostgreSQL re-checks the row
// instead); under REPEATABLE READ and SERIALIZABLE it fails with 40001.
//
// Only base tables in FROM are locked; every one of them (or of OF) must be
// a lake table with a primary key.

// lockedRel is one relation a locking SELECT locks.
type lockedRel struct {
	t         *catalog.Table
	alias     string
	exclusive bool
	wait      catalog.RowLockWait
	// first is the index of its hidden key and range columns in the
	// query's result.
	first int
	// cols are those columns' names.
	cols []string
}

// planLockingSelect plans a SELECT with a locking clause over lake tables.
func (s *Session) planLockingSelect(ctx context.Context, stmt *pg_query.Node, paramOIDs []uint32) (pgwire.Statement, error) {
	sel := stmt.GetSelectStmt()
	if err := checkLockable(sel); err != nil {
		return nil, err
	}
	limit, offset := sel.LimitCount, sel.LimitOffset
	if sel.LimitOption == pg_query.LimitOption_LIMIT_OPTION_WITH_TIES {
		return nil, sqlerr.Unsupported("FETCH … WITH TIES with a locking clause", "LIMIT n")
	}
	for _, n := range []*pg_query.Node{limit, offset} {
		if n != nil && n.GetAConst() == nil && n.GetParamRef() == nil {
			return nil, sqlerr.Unsupported("a LIMIT or OFFSET expression with a locking clause", "LIMIT n or LIMIT $1")
		}
	}
	sel.LimitCount, sel.LimitOffset = nil, nil
	rels, err := s.lockedRelations(ctx, sel)
	if err != nil {
		return nil, err
	}
	sel.LockingClause = nil
	// The visible columns, then each locked relation's key and range
	// columns.
	visible := len(sel.TargetList)
	if visible == 1 && isStarTarget(sel.TargetList[0]) || visible > 0 && slices.ContainsFunc(sel.TargetList, isStarTarget) {
		visible = -1 // known once described
	}
	for i := range rels {
		r := &rels[i]
		for _, c := range slices.Concat(r.t.RangeCols, r.t.PKCols) {
			name := fmt.Sprintf("__lakesoul_lock_%d_%s", i, c)
			sel.TargetList = append(sel.TargetList, resTarget(name, colRef(r.alias, c)))
			r.cols = append(r.cols, c)
		}
	}
	q, err := s.planDuckQuery(ctx, stmt, paramOIDs)
	if err != nil {
		return nil, err
	}
	q.direct = nil
	hidden := 0
	for _, r := range rels {
		hidden += len(r.cols)
	}
	if visible < 0 {
		visible = len(q.cols) - hidden
	}
	first := visible
	for i := range rels {
		rels[i].first = first
		first += len(rels[i].cols)
	}
	// The hidden columns come as DuckDB returns them, to be appended to
	// Arrow builders of the table's types as a write's rows are
	// (lockKeyRecord), so their keys hash as those rows' do.
	q.convs = slices.Clone(q.convs)
	for i := visible; i < len(q.convs); i++ {
		q.convs[i] = func(v any) any { return v }
	}
	return &lockingStmt{s: s, q: q, rels: rels, visible: visible, limit: limit, offset: offset}, nil
}

func isStarTarget(n *pg_query.Node) bool {
	cr := n.GetResTarget().GetVal().GetColumnRef()
	return cr != nil && len(cr.Fields) > 0 && cr.Fields[len(cr.Fields)-1].GetAStar() != nil
}

// checkLockable refuses what PostgreSQL refuses with a locking clause.
func checkLockable(sel *pg_query.SelectStmt) error {
	bad := func(what string) error {
		return sqlerr.New(sqlerr.FeatureNotSupported, "FOR UPDATE is not allowed with %s", what)
	}
	switch {
	case sel.Op != pg_query.SetOperation_SETOP_NONE:
		return bad("UNION/INTERSECT/EXCEPT")
	case len(sel.DistinctClause) > 0:
		return bad("DISTINCT clause")
	case len(sel.GroupClause) > 0:
		return bad("GROUP BY clause")
	case sel.HavingClause != nil:
		return bad("HAVING clause")
	case len(sel.WindowClause) > 0:
		return bad("window functions")
	}
	return nil
}

// lockedRelations resolves the relations the locking clauses name (OF …),
// or every table in FROM, with their lock strength and wait policy.
func (s *Session) lockedRelations(ctx context.Context, sel *pg_query.SelectStmt) ([]lockedRel, error) {
	type fromRel struct {
		rv    *pg_query.RangeVar
		alias string
	}
	var from []fromRel
	var collect func(n *pg_query.Node)
	collect = func(n *pg_query.Node) {
		switch {
		case n.GetRangeVar() != nil:
			rv := n.GetRangeVar()
			alias := rv.Relname
			if rv.Alias != nil {
				alias = rv.Alias.Aliasname
			}
			from = append(from, fromRel{rv, alias})
		case n.GetJoinExpr() != nil:
			collect(n.GetJoinExpr().Larg)
			collect(n.GetJoinExpr().Rarg)
		}
	}
	for _, n := range sel.FromClause {
		collect(n)
	}
	var out []lockedRel
	seen := map[string]bool{}
	for _, lc := range sel.LockingClause {
		c := lc.GetLockingClause()
		exclusive := c.Strength == pg_query.LockClauseStrength_LCS_FORUPDATE || c.Strength == pg_query.LockClauseStrength_LCS_FORNOKEYUPDATE
		wait := catalog.RowLockBlock
		switch c.WaitPolicy {
		case pg_query.LockWaitPolicy_LockWaitSkip:
			wait = catalog.RowLockSkip
		case pg_query.LockWaitPolicy_LockWaitError:
			wait = catalog.RowLockNoWait
		}
		targets := from
		if len(c.LockedRels) > 0 {
			targets = nil
			for _, r := range c.LockedRels {
				name := r.GetRangeVar().GetRelname()
				i := slices.IndexFunc(from, func(f fromRel) bool { return f.alias == name })
				if i < 0 {
					return nil, sqlerr.New(sqlerr.UndefinedTable, "relation %q in FOR UPDATE clause not found in FROM clause", name)
				}
				targets = append(targets, from[i])
			}
		}
		for _, f := range targets {
			if seen[f.alias] {
				continue
			}
			seen[f.alias] = true
			t, err := s.resolveTable(ctx, f.rv.Schemaname, f.rv.Relname)
			if err != nil {
				return nil, err
			}
			if !t.HasPK() {
				return nil, sqlerr.Unsupported(fmt.Sprintf("SELECT … FOR UPDATE/SHARE of %q, a table without a primary key", t.Name),
					"lock rows of tables with a PRIMARY KEY; writes to other tables are checked per partition at commit")
			}
			out = append(out, lockedRel{t: t, alias: f.alias, exclusive: exclusive, wait: wait})
		}
	}
	if len(out) == 0 {
		return nil, sqlerr.Unsupported("a locking clause without a lake table in FROM", "SELECT … FROM t … FOR UPDATE")
	}
	return out, nil
}

// lockingStmt is a planned locking SELECT.
type lockingStmt struct {
	s             *Session
	q             *duckQuery
	rels          []lockedRel
	visible       int
	limit, offset *pg_query.Node
}

func (l *lockingStmt) ParamOIDs() []uint32 { return l.q.params }
func (l *lockingStmt) Describe(context.Context) ([]pgwire.Column, error) {
	return l.q.cols[:l.visible], nil
}
func (l *lockingStmt) Tag() string { return "SELECT" }

func (l *lockingStmt) Bind(_ context.Context, params []any) (pgwire.Portal, error) {
	if len(params) != len(l.q.params) {
		return nil, sqlerr.New(sqlerr.ProtocolViolation, "bind message supplies %d parameters, but prepared statement requires %d", len(params), len(l.q.params))
	}
	return &lockingPortal{l: l, params: params}, nil
}

// lockingPortal runs the query, locks its rows and returns them.
type lockingPortal struct {
	l      *lockingStmt
	params []any
	ran    bool
	rows   [][]any
	next   int
}

func (p *lockingPortal) Describe(ctx context.Context) ([]pgwire.Column, error) {
	return p.l.Describe(ctx)
}

func (p *lockingPortal) Execute(ctx context.Context, maxRows int, w pgwire.RowWriter) (string, bool, error) {
	if !p.ran {
		rows, err := p.l.s.runLocking(ctx, p.l, p.params)
		if err != nil {
			return "", true, err
		}
		p.ran, p.rows = true, rows
	}
	for n := 0; p.next < len(p.rows); n++ {
		if maxRows > 0 && n == maxRows {
			return "", false, nil
		}
		if err := w.WriteRow(p.rows[p.next]); err != nil {
			return "", true, err
		}
		p.next++
	}
	return fmt.Sprintf("SELECT %d", len(p.rows)), true, nil
}

func (p *lockingPortal) Close() {}

// limitArg is the value of a LIMIT or OFFSET clause (def when absent).
func limitArg(n *pg_query.Node, params []any, def int64) (int64, error) {
	if n == nil {
		return def, nil
	}
	var v any
	if pr := n.GetParamRef(); pr != nil {
		if int(pr.Number) < 1 || int(pr.Number) > len(params) {
			return 0, sqlerr.New(sqlerr.UndefinedParameter, "there is no parameter $%d", pr.Number)
		}
		v = params[pr.Number-1]
	} else if c := n.GetAConst(); c.GetIsnull() {
		return def, nil
	} else if iv := c.GetIval(); iv != nil {
		v = int64(iv.Ival)
	} else {
		v = c.GetSval().GetSval()
	}
	var x int64
	switch v := v.(type) {
	case nil:
		return def, nil
	case int64:
		x = v
	case int32:
		x = int64(v)
	case int16:
		x = int64(v)
	case string:
		var err error
		if x, err = strconv.ParseInt(strings.TrimSpace(v), 10, 64); err != nil {
			return 0, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type bigint: %q", v)
		}
	default:
		return 0, sqlerr.New(sqlerr.DatatypeMismatch, "argument of LIMIT must be type bigint")
	}
	if x < 0 {
		return 0, sqlerr.New("2201W", "LIMIT must not be negative")
	}
	return x, nil
}

// runLocking runs a locking SELECT: the rows, locked, after their locks were
// had and their rows found unchanged since the snapshot they were read at.
func (s *Session) runLocking(ctx context.Context, l *lockingStmt, params []any) ([][]any, error) {
	if s.readOnlyTx() {
		return nil, sqlerr.New(sqlerr.ReadOnlySQLTransaction, "cannot execute SELECT FOR UPDATE in a read-only transaction")
	}
	limit, err := limitArg(l.limit, params, -1)
	if err != nil {
		return nil, err
	}
	offset, err := limitArg(l.offset, params, 0)
	if err != nil {
		return nil, err
	}
	// The locks' transaction: the block's, else one for this statement.
	if s.inBlock {
		if err := s.holdCatalogWait(ctx, true); err != nil {
			return nil, err
		}
	} else {
		release, err := s.holdForStatement(ctx)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	held := map[lockKey]bool{} // locks this statement took
	for attempt := 1; ; attempt++ {
		rows, keys, err := s.lockRows(ctx, l, params, limit, offset, held)
		if err != nil {
			return nil, err
		}
		changed, err := s.lockedRowsChanged(ctx, l, keys)
		if err != nil {
			return nil, err
		}
		if !changed {
			return rows, nil
		}
		if !s.readCommitted() || attempt >= rmwMaxAttempts {
			return nil, serializationFailure()
		}
	}
}

// holdForStatement opens a catalog transaction for the locks of one
// statement outside a block (pinning the session's handle to it); the
// returned function rolls it back.
func (s *Session) holdForStatement(ctx context.Context) (func(), error) {
	if err := s.e.held.acquire(ctx, s.user, s.admin(), true); err != nil {
		return nil, err
	}
	base := s.cat
	cat, held, err := base.Hold(ctx)
	if err != nil {
		s.e.held.release(s.user)
		return nil, err
	}
	s.cat = cat
	return func() {
		s.cat = base
		held.Rollback(ctx)
		s.e.held.release(s.user)
	}, nil
}

// lockKey names one row lock: table, partition and key hash.
type lockKey struct {
	table, desc string
	key         uint64
}

// lockedSnapshot is what one run of a locking query read and locked, per
// locked table: the versions it read, the keys of the rows it returned.
type lockedSnapshot map[string]*lockedTable

type lockedTable struct {
	t    *catalog.Table
	base map[string]int
	keys *keySet
}

// lockRows runs the query once and locks its rows in order until the limit
// is reached; it returns the rows kept (without their hidden columns) and
// what was read and locked.
func (s *Session) lockRows(ctx context.Context, l *lockingStmt, params []any, limit, offset int64, held map[lockKey]bool) ([][]any, lockedSnapshot, error) {
	portal, err := l.q.Bind(ctx, params)
	if err != nil {
		return nil, nil, err
	}
	defer portal.Close()
	var all [][]any
	if _, _, err := portal.Execute(ctx, 0, rowCollector(func(row []any) error {
		all = append(all, slices.Clone(row))
		return nil
	})); err != nil {
		return nil, nil, err
	}
	snap := lockedSnapshot{}
	for handle, t := range l.q.tables {
		lt := snap[t.ID]
		if lt == nil {
			lt = &lockedTable{t: t, base: map[string]int{}, keys: newKeySet(t)}
			snap[t.ID] = lt
		}
		if e, ok := s.e.scans.get(handle); ok {
			for _, p := range e.parts {
				if p.Version >= 0 {
					lt.base[p.Desc] = p.Version
				}
			}
		}
	}
	var kept [][]any
	need := int64(-1)
	if limit >= 0 {
		need = offset + limit
	}
	for start := 0; start < len(all) && (need < 0 || int64(len(kept)) < need); {
		// Lock as many rows as may still be needed, one at a time
		// when skipping with a limit (a skipped row is replaced by the
		// next), so that no row is locked that is not returned.
		n := len(all) - start
		if need >= 0 {
			n = min(n, int(need)-len(kept))
		}
		n = max(n, 1)
		batch := all[start : start+n]
		start += n
		ok, err := s.lockBatch(ctx, l, batch, snap, held)
		if err != nil {
			return nil, nil, err
		}
		for i, row := range batch {
			if ok[i] {
				kept = append(kept, row[:l.visible])
			}
		}
	}
	if int64(len(kept)) <= offset {
		return nil, snap, nil
	}
	kept = kept[offset:]
	if limit >= 0 && int64(len(kept)) > limit {
		kept = kept[:limit]
	}
	return kept, snap, nil
}

// lockBatch locks the rows of batch and reports which it got (all, unless
// skipping locked rows); the keys of the rows got are added to snap.
func (s *Session) lockBatch(ctx context.Context, l *lockingStmt, batch [][]any, snap lockedSnapshot, held map[lockKey]bool) ([]bool, error) {
	ok := make([]bool, len(batch))
	for i := range ok {
		ok[i] = true
	}
	for _, r := range l.rels {
		rec, err := lockKeyRecord(r, batch)
		if err != nil {
			return nil, err
		}
		h, err := newRowKeyHasher(r.t, rec)
		if err != nil {
			rec.Release()
			return nil, err
		}
		keys := make([]lockKey, len(batch))
		want := map[string][]int64{}
		for i := range batch {
			desc, err := h.desc(i)
			if err != nil {
				rec.Release()
				return nil, err
			}
			keys[i] = lockKey{r.t.ID, desc, h.hash(i)}
			if ok[i] && !held[keys[i]] && !slices.Contains(want[desc], int64(keys[i].key)) {
				want[desc] = append(want[desc], int64(keys[i].key))
			}
		}
		for _, desc := range slices.Sorted(maps.Keys(want)) {
			got, err := s.cat.LockRows(ctx, r.t.ID, desc, want[desc], r.exclusive, r.wait)
			if err != nil {
				rec.Release()
				return nil, err
			}
			for _, k := range got {
				held[lockKey{r.t.ID, desc, uint64(k)}] = true
			}
		}
		lt := snap[r.t.ID]
		for i := range batch {
			if ok[i] && !held[keys[i]] {
				ok[i] = false // skipped: another transaction holds it
			}
		}
		// The rows kept, for the check that they did not change.
		for i := range batch {
			if ok[i] {
				lt.keys.put(keys[i].desc, keys[i].key)
			}
		}
		rec.Release()
	}
	return ok, nil
}

// lockKeyRecord builds the key and range columns of r from the rows' hidden
// columns, in the table's types.
func lockKeyRecord(r lockedRel, rows [][]any) (arrow.RecordBatch, error) {
	var fields []arrow.Field
	for _, c := range r.cols {
		f := r.t.Schema.Field(r.t.Schema.FieldIndices(c)[0])
		fields = append(fields, arrow.Field{Name: f.Name, Type: f.Type, Nullable: true})
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	for _, row := range rows {
		for j := range r.cols {
			if err := appendDuckValue(b.Field(j), row[r.first+j]); err != nil {
				return nil, fmt.Errorf("lock key %s: %w", r.cols[j], err)
			}
		}
	}
	return b.NewRecordBatch(), nil
}

// lockedRowsChanged reports whether a row the query locked changed since the
// snapshot it was read at.
func (s *Session) lockedRowsChanged(ctx context.Context, l *lockingStmt, snap lockedSnapshot) (bool, error) {
	for _, lt := range snap {
		descs := lt.keys.descs()
		if len(descs) == 0 {
			continue
		}
		cur, err := s.cat.PartitionVersions(ctx, lt.t.ID, descs)
		if err != nil {
			return false, err
		}
		for desc, v := range cur {
			base, ok := lt.base[desc]
			if !ok {
				base = -1
			}
			if v == base {
				continue
			}
			changed, err := s.rowsChanged(ctx, lt.t, desc, base, v, lt.keys)
			if err != nil || changed {
				return changed, err
			}
		}
	}
	return false, nil
}

// rowCollector is a pgwire.RowWriter calling f for each row.
type rowCollector func(row []any) error

func (f rowCollector) WriteRow(row []any) error { return f(row) }
