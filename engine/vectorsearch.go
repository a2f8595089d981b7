package engine

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/reader"
	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/vector"
)

// Index searches. SELECT … FROM t [WHERE …] ORDER BY col <op> q LIMIT k,
// where t has a vector index on col for <op>'s metric, runs in two steps
// at each execution:
//
//  1. Candidates (vectorCandidates): per partition × bucket, in parallel,
//     the probed lists of the unit's segment, plus every row of the unit's
//     files newer than the segment (decoded once, vectorrows.go), ranked
//     exactly; units without a usable segment are ranked exactly. A segment
//     ranks its probed lists by 1-bit codes and re-ranks the best on their
//     full vectors (read from the segment file); keys that newer files
//     upsert or delete are excluded from its search (MOR: the newer version
//     is ranked instead). The DuckDB route keeps the nearest k + max(k, 10)
//     keys (16·max(k, 10) with a WHERE clause), the fast path k.
//  2. When the statement's shape allows, the fast path (vectorfast.go)
//     finishes in Go: the candidates' rows are read by key when the result
//     needs them, and ranked, without DuckDB. Otherwise the statement as
//     written, with "pk IN (candidates)" added to its WHERE, runs as any
//     query: the merge-on-read of those keys gives their current rows,
//     WHERE filters them and ORDER BY ranks them by exact distance. A key
//     overwritten since the segment was built is ranked by its new vector,
//     a deleted one is not returned.
//
// As in pgvector, filtering happens after the index scan, so a selective
// WHERE may return fewer than k rows; ivfflat.probes sets the lists probed
// per segment (default 1).
type vectorSearch struct {
	s      *Session
	table  *catalog.Table
	ix     catalog.VectorIndex
	metric vector.Metric
	stmt   *pg_query.Node // as written, cloned for each execution
	// query is the operand holding the query vector; limit the LIMIT.
	query, limit *pg_query.Node
	where        bool
	// keyRef qualifies the key column in the added conjunct.
	keyRef    string
	exact     *duckQuery
	paramOIDs []uint32
	// fast, when set, runs executions without DuckDB (vectorfast.go).
	fast *vectorFast
}

// planVectorSearch plans stmt as an index search when its shape and the
// table's indexes allow; false otherwise.
func (s *Session) planVectorSearch(ctx context.Context, stmt *pg_query.Node, paramOIDs []uint32) (*vectorSearch, bool, error) {
	sel := stmt.GetSelectStmt()
	if sel == nil || sel.Op != pg_query.SetOperation_SETOP_NONE || sel.WithClause != nil || len(sel.DistinctClause) > 0 ||
		len(sel.GroupClause) > 0 || sel.HavingClause != nil || len(sel.WindowClause) > 0 || len(sel.LockingClause) > 0 ||
		len(sel.FromClause) != 1 || len(sel.SortClause) != 1 || sel.LimitCount == nil || sel.LimitOffset != nil {
		return nil, false, nil
	}
	rv := sel.FromClause[0].GetRangeVar()
	sb := sel.SortClause[0].GetSortBy()
	if rv == nil || sb == nil || sb.SortbyDir == pg_query.SortByDir_SORTBY_DESC || sb.SortbyDir == pg_query.SortByDir_SORTBY_USING {
		return nil, false, nil
	}
	if c := sel.LimitCount; c.GetParamRef() == nil && c.GetAConst().GetIval() == nil {
		return nil, false, nil
	}
	a := sb.Node.GetAExpr()
	if a == nil || vectorOperators[operatorName(a)] == "" || a.Lexpr == nil {
		return nil, false, nil
	}
	col, q := a.Lexpr, a.Rexpr
	if col.GetColumnRef() == nil {
		col, q = q, col
	}
	cref := col.GetColumnRef()
	if cref == nil || !isVectorQueryOperand(q) {
		return nil, false, nil
	}
	colName := cref.Fields[len(cref.Fields)-1].GetString_().GetSval()
	t, err := s.resolveTable(ctx, rv.Schemaname, rv.Relname)
	if err != nil {
		return nil, false, nil // the ordinary planning reports it
	}
	ixs, err := s.cat.VectorIndexes(ctx, t.ID)
	if err != nil {
		return nil, false, err
	}
	for _, ix := range ixs {
		m, _ := vector.ParseMetric(ix.Metric)
		if ix.Column != colName || m.Operator() != operatorName(a) || !vector.IndexableKey(t) {
			continue
		}
		vs := &vectorSearch{s: s, table: t, ix: ix, metric: m, stmt: proto.Clone(stmt).(*pg_query.Node),
			where: sel.WhereClause != nil, paramOIDs: paramOIDs, keyRef: quoteIdent(rv.Relname) + "." + quoteIdent(t.PKCols[0])}
		if rv.Alias != nil {
			vs.keyRef = quoteIdent(rv.Alias.Aliasname) + "." + quoteIdent(t.PKCols[0])
		}
		vs.query, vs.limit = proto.Clone(q).(*pg_query.Node), proto.Clone(sel.LimitCount).(*pg_query.Node)
		if vs.exact, err = s.planDuckQuery(ctx, proto.Clone(stmt).(*pg_query.Node), paramOIDs); err != nil {
			return nil, false, err
		}
		vs.fast = s.planVectorFast(vs, sel, a)
		return vs, true, nil
	}
	return nil, false, nil
}

// isVectorQueryOperand: a parameter or a literal, cast or not.
func isVectorQueryOperand(n *pg_query.Node) bool {
	for n.GetTypeCast() != nil {
		n = n.GetTypeCast().Arg
	}
	return n.GetParamRef() != nil || n.GetAConst().GetSval() != nil
}

func (v *vectorSearch) ParamOIDs() []uint32 { return v.exact.ParamOIDs() }
func (v *vectorSearch) Describe(ctx context.Context) ([]pgwire.Column, error) {
	return v.exact.Describe(ctx)
}
func (v *vectorSearch) Tag() string { return "SELECT" }

// Bind runs the search on the fast path (vectorfast.go), or finds the
// candidates and plans the statement restricted to them.
func (v *vectorSearch) Bind(ctx context.Context, params []any) (pgwire.Portal, error) {
	if p, ok, err := v.fastBind(ctx, params); err != nil || ok {
		return p, err
	}
	dq, _, err := v.restricted(ctx, params)
	if err != nil {
		return nil, err
	}
	return dq.Bind(ctx, params)
}

// restricted plans one execution: the statement restricted to the
// candidates, or as written when the index cannot serve it. explain says
// which, for EXPLAIN.
func (v *vectorSearch) restricted(ctx context.Context, params []any) (dq *duckQuery, explain string, err error) {
	if v.s.pendingWrites(v.table.ID) {
		// The block's own uncommitted rows are in no segment and no
		// committed file: only the exact plan (which reads them) sees them.
		return v.exact, "Vector index " + v.ix.Name + " not used: the transaction block wrote the table", nil
	}
	q, k, ok := v.arguments(params)
	if !ok {
		// NULL or malformed: the exact plan answers (or fails) as written.
		return v.exact, "Vector index " + v.ix.Name + " not used: no query vector or limit", nil
	}
	// Without WHERE the candidates are ranked exactly already; the margin
	// covers keys whose current vector only the re-run sees (an UPDATE of
	// other columns after the build keeps the segment's candidate). WHERE
	// filters after the search, so it gets many more.
	n := k + max(k, 10)
	if v.where {
		n = 4 * max(4*k, 40)
	}
	probes := v.s.ivfflatProbes()
	cat, err := v.s.readCatalog(ctx) // txsnapshot.go
	if err != nil {
		return nil, "", err
	}
	parts, err := cat.LiveFiles(ctx, v.table.ID, nil)
	if err != nil {
		return nil, "", err
	}
	hits, _, st, err := v.s.vectorCandidates(ctx, v.table, v.ix, v.metric, q, n, probes, parts)
	if err != nil {
		return nil, "", err
	}
	var keys []string
	seen := map[string]bool{}
	for _, h := range hits {
		if !seen[h.key] {
			seen[h.key] = true
			keys = append(keys, h.key)
		}
	}
	if st.segments == 0 {
		return v.exact, "Vector index " + v.ix.Name + " not used: no segment built yet (exact search)", nil
	}
	explain = fmt.Sprintf("Vector Index Scan using %s on %s (ivfflat, %s, probes=%d): %d candidates re-ranked exactly; %d segments, %d units searched exactly, %d newer files searched exactly",
		v.ix.Name, v.table.QualifiedName(), v.ix.Metric, probes, len(keys), st.segments, st.exactUnits, st.newerFiles)
	if v.fast != nil && len(params) == len(v.exact.params) {
		// fastBind serves such an execution, unless a candidate's vector
		// became NULL since the build and fewer than k others have one.
		explain += "; executed without DuckDB (candidates ranked and fetched by key in Go); the plan below is the equivalent DuckDB route's"
	}
	if len(keys) == 0 {
		keys = []string{"NULL"}
	}
	stmt := proto.Clone(v.stmt).(*pg_query.Node)
	sel := stmt.GetSelectStmt()
	in, err := pg_query.Parse("SELECT 1 WHERE " + v.keyRef + " IN (" + strings.Join(keys, ",") + ")")
	if err != nil {
		return nil, "", fmt.Errorf("vector search candidates: %w", err)
	}
	cond := in.Stmts[0].Stmt.GetSelectStmt().WhereClause
	if sel.WhereClause != nil {
		cond = pg_query.MakeBoolExprNode(pg_query.BoolExprType_AND_EXPR, []*pg_query.Node{sel.WhereClause, cond}, -1)
	}
	sel.WhereClause = cond
	dq, err = v.s.planDuckQuery(ctx, stmt, v.paramOIDs)
	return dq, explain, err
}

// vectorRerank is how many of a segment's best estimates are re-ranked on
// their full vectors at least (vector.TestIVFRecall: 20 × k reaches
// recall@10 ≥ 0.95 with 1-bit codes on clustered data).
const vectorRerank = 200

// newerRows are the merged rows of unit u's files that segment files seg
// does not hold (nil when there are none). Their stale set holds the keys
// they upsert with a vector or delete (CDC), which the segment's results
// must not hold; recheck those a newer row updated without a vector (an
// UPDATE of other columns, or of the vector to NULL): the segment's vector
// of such a key may or may not be the current one, so the caller reads the
// key's merged row.
func (s *Session) newerRows(ctx context.Context, t *catalog.Table, u reader.Unit, seg []string, column string, st *searchStats) (*unitRows, error) {
	var newer []catalog.DataFile
	for _, f := range u.Files {
		if !slices.Contains(seg, f.Path) {
			newer = append(newer, f)
		}
	}
	if len(newer) == 0 {
		return nil, nil
	}
	st.newerFiles += len(newer)
	return s.unitRowsOf(ctx, t, u, newer, column, true)
}

// searchStats counts what vectorCandidates used.
type searchStats struct{ segments, exactUnits, newerFiles int }

// arguments are the query vector and k of an execution.
func (v *vectorSearch) arguments(params []any) (vector.Vector, int, bool) {
	val := func(n *pg_query.Node) (any, bool) {
		for n.GetTypeCast() != nil {
			n = n.GetTypeCast().Arg
		}
		if p := n.GetParamRef(); p != nil {
			if int(p.Number) > len(params) || params[p.Number-1] == nil {
				return nil, false
			}
			return params[p.Number-1], true
		}
		if c := n.GetAConst(); c != nil {
			if c.GetSval() != nil {
				return c.GetSval().Sval, true
			}
			if c.GetIval() != nil {
				return int64(c.GetIval().Ival), true
			}
		}
		return nil, false
	}
	qv, ok1 := val(v.query)
	kv, ok2 := val(v.limit)
	if !ok1 || !ok2 {
		return nil, 0, false
	}
	text, ok := qv.(string)
	if !ok {
		return nil, 0, false
	}
	q, err := vector.Parse(text)
	if err != nil {
		return nil, 0, false
	}
	var k int64
	switch x := kv.(type) {
	case int64:
		k = x
	case int32:
		k = int64(x)
	case int16:
		k = int64(x)
	case string:
		k, err = strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		if err != nil {
			return nil, 0, false
		}
	default:
		return nil, 0, false
	}
	if k < 0 || k > 100000 {
		return nil, 0, false
	}
	return q, int(k), true
}

// ivfflatProbes is the session's ivfflat.probes (default 1).
func (s *Session) ivfflatProbes() int {
	if n, err := strconv.Atoi(s.settings["ivfflat.probes"].value); err == nil && n > 0 {
		return n
	}
	return 1
}

// vectorHit is a row an index search found: key (a SQL literal) of unit
// units[unit] at distance dist by the index's metric, ranked on the
// vector the segment or a newer file holds. recheck marks a key a newer
// file updated without a vector: only its merged row tells its vector.
type vectorHit struct {
	unit    int
	key     string
	dist    float32
	recheck bool
}

// vectorCandidates returns the n rows of parts (t's snapshot) nearest to
// q by the index's segments and exact ranking of what they do not cover,
// nearest first, and the units they refer to; st.segments is 0 when no
// unit had a usable segment. Units are searched in parallel (each unit's
// search is independent; their best n are merged).
func (s *Session) vectorCandidates(ctx context.Context, t *catalog.Table, ix catalog.VectorIndex, m vector.Metric, q vector.Vector, n, probes int,
	parts []catalog.PartitionFiles) (hits []vectorHit, units []reader.Unit, st searchStats, err error) {
	if len(q) != schemaDimsOf(t, ix.Column) {
		return nil, nil, st, nil // the exact plan fails with pgvector's error
	}
	segs, err := s.cat.VectorSegments(ctx, t.ID, ix.Name)
	if err != nil {
		return nil, nil, st, err
	}
	bySeg := map[string]catalog.VectorSegment{}
	for _, sg := range segs {
		bySeg[sg.Desc+"\x00"+strconv.Itoa(sg.Bucket)] = sg
	}
	qn := slices.Clone(q)
	if m == vector.Cosine {
		vector.Normalize(qn)
	}
	scan := &reader.Scan{Store: s.e.store, Table: t, Partitions: parts, Unordered: true}
	if units, err = scan.Units(); err != nil {
		return nil, nil, st, err
	}
	res := make([]unitSearch, len(units))
	next := make(chan int, len(units))
	for ui := range units {
		next <- ui
	}
	close(next)
	var g safego.Group
	for range min(len(units), runtime.GOMAXPROCS(0)) {
		g.Start(func() {
			for ui := range next {
				// A panic fails the search like the unit's error.
				if err := safego.Call(func() error {
					res[ui] = s.searchUnit(ctx, t, ix, m, qn, n, probes, units[ui], bySeg)
					return nil
				}); err != nil {
					res[ui].err = err
				}
			}
		})
	}
	g.Wait()
	// top ranks "unit\x00key": a key may be in several partitions.
	top := vector.NewTopK(n)
	recheck := map[string]bool{}
	for ui, r := range res {
		if r.err != nil {
			return nil, nil, st, r.err
		}
		st.segments += r.st.segments
		st.exactUnits += r.st.exactUnits
		st.newerFiles += r.st.newerFiles
		prefix := strconv.Itoa(ui) + "\x00"
		for _, c := range r.top.Result() {
			if top.Admits(c.Dist) {
				top.Offer(prefix+c.Key, c.Dist)
				if r.recheck[c.Key] {
					recheck[prefix+c.Key] = true
				}
			}
		}
	}
	for _, c := range top.Result() {
		u, key, _ := strings.Cut(c.Key, "\x00")
		ui, _ := strconv.Atoi(u)
		hits = append(hits, vectorHit{unit: ui, key: key, dist: c.Dist, recheck: recheck[c.Key]})
	}
	return hits, units, st, nil
}

// unitSearch is what one unit's search found: its n best rows by key,
// which of them need a recheck (vectorHit), and what it used.
type unitSearch struct {
	top     *vector.TopK
	recheck map[string]bool
	st      searchStats
	err     error
}

// searchUnit searches unit u: its segment (when one covers it) with the
// files newer than it ranked exactly, else all its rows exactly.
func (s *Session) searchUnit(ctx context.Context, t *catalog.Table, ix catalog.VectorIndex, m vector.Metric, qn []float32, n, probes int,
	u reader.Unit, bySeg map[string]catalog.VectorSegment) (r unitSearch) {
	r.top = vector.NewTopK(n)
	var tmp []float32
	// offerAll ranks every row of rows with a vector exactly (for L2, a
	// distance stops being summed once it exceeds the current n-th best).
	offerAll := func(rows *unitRows) {
		d := rows.dims
		for i, k := range rows.keys {
			if rows.state[i] != rowVector {
				continue
			}
			v := rows.vecs[i*d : (i+1)*d]
			var dist float32
			switch m {
			case vector.L2:
				dist = vector.L2SquaredBounded(qn, v, r.top.Bound())
			case vector.Cosine:
				tmp = append(tmp[:0], v...)
				vector.Normalize(tmp)
				dist = m.Distance(qn, tmp)
			default:
				dist = m.Distance(qn, v)
			}
			if r.top.Admits(dist) {
				r.top.Offer(k, dist)
			}
		}
	}
	sg, ok := bySeg[u.Desc+"\x00"+strconv.Itoa(u.Bucket)]
	var idx *vector.Segment
	if ok && covers(vector.FilePaths(u.Files), sg.DataFiles) {
		var lerr error
		// The segment outlives this query in the cache: its reader must not
		// carry the query's context (an S3 reader would fail once it ends).
		if idx, lerr = s.e.ivfs.load(context.WithoutCancel(ctx), s.e.store, sg.Path); lerr != nil {
			// A file gone meanwhile or unreadable: search the unit exactly.
			s.e.log.Warn("vector index: cannot load segment, searching exactly", "index", ix.Name, "path", sg.Path, "err", lerr)
		}
	}
	if idx == nil {
		r.st.exactUnits++
		rows, err := s.unitRowsOf(ctx, t, u, u.Files, ix.Column, false)
		if err != nil {
			r.err = err
			return r
		}
		offerAll(rows)
		return r
	}
	r.st.segments++
	// Rows of files newer than the segment are ranked exactly; a key they
	// upsert with a vector or delete is stale in the segment, and excluded
	// from its search. The segment goes first: its best bound the newer
	// rows' distances.
	newer, err := s.newerRows(ctx, t, u, sg.DataFiles, ix.Column, &r.st)
	if err != nil {
		r.err = err
		return r
	}
	var stale map[string]bool
	if newer != nil {
		stale, r.recheck = newer.stale, newer.recheck
	}
	if err := idx.SearchExcluding(qn, probes, max(n, vectorRerank), r.top, stale); err != nil {
		r.err = fmt.Errorf("vector index %s: %w", ix.Name, err)
		return r
	}
	if newer != nil {
		offerAll(newer)
	}
	return r
}

// covers reports whether every file of a segment is still live.
func covers(live, seg []string) bool {
	for _, p := range seg {
		if !slices.Contains(live, p) {
			return false
		}
	}
	return len(seg) > 0
}

// schemaDimsOf is the dimension of vector column c of t.
func schemaDimsOf(t *catalog.Table, c string) int {
	idx := t.Schema.FieldIndices(c)
	if len(idx) == 0 {
		return 0
	}
	return schema.VectorDims(t.Schema.Field(idx[0]))
}

// ivfCache keeps loaded segments by path (files are immutable: a rebuilt
// segment has a new path, so a cached one is never stale), up to a byte
// budget of their in-memory parts. An evicted segment is not closed: a
// search may still read its vectors; its file closes when it is collected.
type ivfCache struct {
	mu     sync.Mutex
	m      map[string]*vector.Segment
	bytes  int
	budget int
}

func newIVFCache(budget int) *ivfCache {
	return &ivfCache{m: map[string]*vector.Segment{}, budget: budget}
}

func (c *ivfCache) load(ctx context.Context, store objstore.Store, path string) (*vector.Segment, error) {
	c.mu.Lock()
	ix, ok := c.m[path]
	c.mu.Unlock()
	if ok {
		return ix, nil
	}
	ix, err := vector.Load(ctx, store, path)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for p, old := range c.m { // evict arbitrary segments over budget
		if c.bytes+ix.MemoryBytes() <= c.budget {
			break
		}
		delete(c.m, p)
		c.bytes -= old.MemoryBytes()
	}
	if cur, ok := c.m[path]; ok {
		return cur, nil
	}
	c.m[path] = ix
	c.bytes += ix.MemoryBytes()
	return ix, nil
}

// pendingWrites reports whether the open transaction block wrote table id
// (staged files or buffered rows).
func (s *Session) pendingWrites(id string) bool {
	for _, w := range s.staged {
		if w.table.ID == id {
			return true
		}
	}
	for _, b := range s.buffered {
		if b.table.ID == id {
			return true
		}
	}
	return false
}
