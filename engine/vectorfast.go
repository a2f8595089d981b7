package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/reader"
	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
	"github.com/lakesoul-go/lakesoul/vector"
)

// The fast path of index searches. An index search whose select list
// holds only columns of the table (of types a direct scan reproduces, and
// vectors: fastGetter) and
// the ORDER BY distance itself, and whose WHERE (if any) the reader's key
// and row filters evaluate exactly (prune.go's exactFor), runs without
// DuckDB:
//
//  1. the statement's snapshot is taken as for any query (the snapshot
//     cache, partition pruning by the WHERE);
//  2. vectorCandidates ranks the probed lists of each unit's segment and
//     every row of files newer than it exactly (MOR: keys those files
//     overwrite or delete are dropped from the segment's results);
//  3. when the result needs more than the keys — other columns, the
//     distance, a WHERE, or a key a newer file updated without a vector —
//     the candidates' merged rows are read by key (reader key filter: file,
//     row-group and page pruning, the chunk cache), the WHERE filters them,
//     and they are ranked on their current vectors with the DuckDB macros'
//     arithmetic (float64);
//  4. the first k rows are the result, each value the Go value the DuckDB
//     route's scan yields (directGetter) passed through the exact plan's
//     value conversions, so pgwire and Arrow encode them as they would the
//     DuckDB route's (TestVectorFastPathMatchesDuckDB).
//
// Anything else — other expressions, joins, a transaction block that wrote
// the table, no segment yet, a NULL query vector — takes the DuckDB route
// (vectorsearch.go's restricted), which has the same semantics.
type vectorFast struct {
	handle string
	outs   []fastOut
	// fetch: the result needs the candidates' rows even when no key needs
	// a recheck (columns other than the key, the distance, a WHERE).
	fetch, where bool
	op           string // the ORDER BY operator: <->, <=> or <#>
}

// fastOut is one output column: table column col, or the distance.
type fastOut struct {
	col  int
	dist bool
	get  arrowGetter
}

// planVectorFast recognises the fast path in v's statement sel; nil when
// the DuckDB route must run it.
func (s *Session) planVectorFast(v *vectorSearch, sel *pg_query.SelectStmt, dist *pg_query.A_Expr) *vectorFast {
	if len(v.exact.tables) != 1 || v.exact.direct != nil || sel.LimitOption == pg_query.LimitOption_LIMIT_OPTION_WITH_TIES ||
		len(sel.IntoClause.GetRel().GetRelname()) > 0 {
		return nil
	}
	if sb := sel.SortClause[0].GetSortBy(); sb.SortbyNulls == pg_query.SortByNulls_SORTBY_NULLS_FIRST {
		return nil
	}
	f := &vectorFast{op: operatorName(dist), where: sel.WhereClause != nil}
	for h := range v.exact.tables {
		f.handle = h
	}
	e, ok := s.e.scans.get(f.handle)
	if !ok || e.fixed {
		return nil
	}
	t := v.table
	if f.where && !e.prune.exactFor(t, v.exact.params) {
		return nil
	}
	rv := sel.FromClause[0].GetRangeVar()
	qual := rv.Relname
	if rv.Alias != nil {
		qual = rv.Alias.Aliasname
	}
	key := columnIndex(t, t.PKCols[0])
	for _, target := range sel.TargetList {
		rt := target.GetResTarget()
		if rt == nil || rt.Val == nil {
			return nil
		}
		if a := rt.Val.GetAExpr(); a != nil {
			if !sameDistance(a, dist) {
				return nil
			}
			f.outs = append(f.outs, fastOut{col: -1, dist: true})
			f.fetch = true
			continue
		}
		cols, ok := refColumns(t, rt.Val.GetColumnRef(), qual)
		if !ok {
			return nil
		}
		for _, c := range cols {
			g := fastGetter(t.Schema.Field(c).Type)
			if g == nil {
				return nil
			}
			f.outs = append(f.outs, fastOut{col: c, get: g})
			f.fetch = f.fetch || c != key
		}
	}
	if len(f.outs) != len(v.exact.cols) {
		return nil
	}
	for i, o := range f.outs {
		if o.dist && v.exact.cols[i].TypeOID != schema.OIDFloat8 {
			return nil
		}
	}
	f.fetch = f.fetch || f.where
	return f
}

// fastGetter reads a column's value as the DuckDB route's scan yields it:
// directGetter's, and for a vector column (vector(n), a fixed-size list of
// float32) the []any of float32 a DuckDB FLOAT[n] gives, which the plan's
// conversion turns into a vector.Vector. So `SELECT *` and the vector
// column itself stay on the fast path.
func fastGetter(dt arrow.DataType) arrowGetter {
	if g := directGetter(dt); g != nil {
		return g
	}
	lt, ok := dt.(*arrow.FixedSizeListType)
	if !ok || lt.Elem().ID() != arrow.FLOAT32 {
		return nil
	}
	n := int(lt.Len())
	return func(a arrow.Array, i int) any {
		l := a.(*array.FixedSizeList)
		vals := l.ListValues().(*array.Float32)
		start := (l.Offset() + i) * n
		out := make([]any, n)
		for j := range out {
			out[j] = vals.Value(start + j)
		}
		return out
	}
}

// sameDistance reports whether a is the ORDER BY's distance b: the same
// operator between the same column and the same query operand.
func sameDistance(a, b *pg_query.A_Expr) bool {
	if operatorName(a) != operatorName(b) {
		return false
	}
	return sameOperand(a.Lexpr, b.Lexpr) && sameOperand(a.Rexpr, b.Rexpr)
}

func sameOperand(a, b *pg_query.Node) bool {
	if a == nil || b == nil {
		return a == b
	}
	ca, cb := a.GetTypeCast(), b.GetTypeCast()
	if (ca == nil) != (cb == nil) {
		return false
	}
	if ca != nil {
		return typeNameText(ca.TypeName) == typeNameText(cb.TypeName) && sameOperand(ca.Arg, cb.Arg)
	}
	if pa, pb := a.GetParamRef(), b.GetParamRef(); pa != nil || pb != nil {
		return pa != nil && pb != nil && pa.Number == pb.Number
	}
	if sa, sb := a.GetAConst().GetSval(), b.GetAConst().GetSval(); sa != nil || sb != nil {
		return sa != nil && sb != nil && sa.Sval == sb.Sval
	}
	ra, rb := a.GetColumnRef(), b.GetColumnRef()
	if ra == nil || rb == nil || len(ra.Fields) != len(rb.Fields) {
		return false
	}
	for i := range ra.Fields {
		if ra.Fields[i].GetString_().GetSval() != rb.Fields[i].GetString_().GetSval() || ra.Fields[i].GetString_() == nil {
			return false
		}
	}
	return true
}

// typeNameText is a type name's qualified name and modifiers' constants.
func typeNameText(t *pg_query.TypeName) string {
	var parts []string
	for _, n := range t.GetNames() {
		parts = append(parts, n.GetString_().GetSval())
	}
	for _, m := range t.GetTypmods() {
		parts = append(parts, strconv.Itoa(int(m.GetAConst().GetIval().GetIval())))
	}
	return strings.Join(parts, ".")
}

// fastRow is a result row being ranked: its values and distance (NaN
// ranks after every number, a NULL vector after NaN, as DuckDB orders).
type fastRow struct {
	vals []any
	dist float64
	null bool
}

// fastBind runs the search on the fast path; false when this execution
// needs the DuckDB route (see vectorFast).
func (v *vectorSearch) fastBind(ctx context.Context, params []any) (pgwire.Portal, bool, error) {
	f := v.fast
	s := v.s
	if f == nil || s.pendingWrites(v.table.ID) || len(params) != len(v.exact.params) {
		return nil, false, nil
	}
	q, k, ok := v.arguments(params)
	if !ok || len(q) != schemaDimsOf(v.table, v.ix.Column) {
		return nil, false, nil
	}
	if err := s.takeSnapshotsWith(ctx, v.exact.tables, params); err != nil {
		return nil, false, err
	}
	e, ok := s.e.scans.get(f.handle)
	if !ok {
		return nil, false, fmt.Errorf("%s: unknown handle", scanFunctionName)
	}
	n := k
	if f.where {
		n = 4 * max(4*k, 40)
	}
	hits, units, st, err := s.vectorCandidates(ctx, v.table, v.ix, v.metric, q, n, s.ivfflatProbes(), e.parts)
	if err != nil || st.segments == 0 {
		return nil, false, err
	}
	fetch := f.fetch
	for _, h := range hits {
		fetch = fetch || h.recheck
	}
	var rows []fastRow
	if fetch {
		if rows, err = v.fetchRows(ctx, e, hits, units, q); err != nil {
			return nil, false, err
		}
		// A row whose vector is NULL now (updated since the build) ranks
		// after every other row of the table: it belongs to the result only
		// when fewer than k rows have a vector, which the candidates cannot
		// tell; the DuckDB route ranks more of them.
		withVector := 0
		for _, r := range rows {
			if !r.null {
				withVector++
			}
		}
		if withVector < len(rows) {
			if withVector < k {
				return nil, false, nil
			}
			rows = rows[:withVector] // sorted last
		}
	} else {
		keyType := v.table.Schema.Field(columnIndex(v.table, v.table.PKCols[0])).Type
		for _, h := range hits { // every output column is the key
			kv, err := keyValue(h.key, keyType)
			if err != nil {
				return nil, false, err
			}
			r := fastRow{vals: make([]any, len(f.outs)), dist: float64(h.dist)}
			for j := range r.vals {
				r.vals[j] = kv
			}
			rows = append(rows, r)
		}
	}
	if len(rows) > k {
		rows = rows[:k]
	}
	return &vectorPortal{cols: v.exact.cols, convs: v.exact.convs, rows: rows}, true, nil
}

// fetchRows reads the merged rows of hits by key (with the WHERE's key and
// row filters), ranks them on their current vectors and returns them
// nearest first.
func (v *vectorSearch) fetchRows(ctx context.Context, e scanEntry, hits []vectorHit, units []reader.Unit, q vector.Vector) ([]fastRow, error) {
	t, f, scans := v.table, v.fast, v.s.e.scans
	kc := columnIndex(t, t.PKCols[0])
	vc := columnIndex(t, v.ix.Column)
	keyType := t.Schema.Field(kc).Type
	need := make([]bool, t.Schema.NumFields())
	need[kc], need[vc] = true, true
	for _, o := range f.outs {
		if !o.dist {
			need[o.col] = true
		}
	}
	byUnit := map[int][]any{}
	for _, h := range hits {
		kv, err := keyValue(h.key, keyType)
		if err != nil {
			return nil, err
		}
		kv = keyFilterValue(kv)
		byUnit[h.unit] = append(byUnit[h.unit], kv)
	}
	qd := make([]float64, len(q))
	for i, x := range q {
		qd[i] = float64(x)
	}
	var rows []fastRow
	for ui, keys := range byUnit {
		u := units[ui]
		conds := []reader.Cond{{Column: t.PKCols[0], In: true, Values: keys}}
		if kf := e.keys(); kf != nil {
			conds = append(conds, kf.Conds...)
		}
		scan := &reader.Scan{Store: scans.store, Table: t, Partitions: []catalog.PartitionFiles{{Desc: u.Desc, Files: u.Files}},
			Mem: scans.mem, Needed: need, Unordered: true, Keys: &reader.KeyFilter{Conds: conds}, Rows: e.rows(),
			Meta: scans.meta, Chunks: scans.chunks, Spill: scans.spill}
		subs, err := scan.Units()
		if err != nil {
			return nil, err
		}
		for _, su := range subs {
			if err := fetchUnit(ctx, scan, su, kc, vc, f, qd, &rows); err != nil {
				return nil, err
			}
		}
	}
	slices.SortStableFunc(rows, func(a, b fastRow) int {
		if a.null || b.null {
			return cmpBool(a.null, b.null)
		}
		an, bn := math.IsNaN(a.dist), math.IsNaN(b.dist)
		if an || bn {
			return cmpBool(an, bn)
		}
		return cmp.Compare(a.dist, b.dist)
	})
	return rows, nil
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// fetchUnit appends the rows of one keyed unit scan.
func fetchUnit(ctx context.Context, scan *reader.Scan, u reader.Unit, kc, vc int, f *vectorFast, qd []float64, rows *[]fastRow) error {
	it, err := scan.Open(ctx, u)
	if err != nil {
		return err
	}
	defer it.Close()
	for {
		b, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		vecs, _ := b.Column(vc).(*array.FixedSizeList)
		var vals []float32
		dims := 0
		if vecs != nil {
			dims = int(vecs.DataType().(*arrow.FixedSizeListType).Len())
			vals = vecs.ListValues().(*array.Float32).Float32Values()
		}
		for i := range int(b.NumRows()) {
			r := fastRow{vals: make([]any, len(f.outs))}
			if vecs == nil || vecs.IsNull(i) || dims != len(qd) {
				r.null = true
			} else {
				start := (vecs.Offset() + i) * dims
				r.dist = distance64(f.op, vals[start:start+dims], qd)
			}
			for j, o := range f.outs {
				switch {
				case o.dist:
					if !r.null {
						r.vals[j] = r.dist
					}
				case !b.Column(o.col).IsNull(i):
					r.vals[j] = o.get(b.Column(o.col), i)
				}
			}
			*rows = append(*rows, r)
		}
		b.Release()
	}
}

// distance64 is operator op's distance between a and q as the DuckDB
// macros compute it (vectorops.go), in float64.
func distance64(op string, a []float32, q []float64) float64 {
	var s, na, nq float64
	switch op {
	case "<->":
		for i, x := range a {
			d := float64(x) - q[i]
			s += d * d
		}
		return math.Sqrt(s)
	case "<#>":
		for i, x := range a {
			s += float64(x) * q[i]
		}
		return -s
	}
	for i, x := range a {
		xf := float64(x)
		s += xf * q[i]
		na += xf * xf
		nq += q[i] * q[i]
	}
	na, nq = math.Sqrt(na), math.Sqrt(nq)
	if na == 0 || nq == 0 {
		return math.NaN()
	}
	return 1 - max(-1.0, min(1.0, s/(na*nq)))
}

// keyValue is a key literal (vector.KeyLiteral) as the DuckDB route's scan
// yields a key column of type dt.
func keyValue(lit string, dt arrow.DataType) (any, error) {
	if dt.ID() == arrow.STRING {
		if len(lit) < 2 || lit[0] != '\'' {
			return nil, fmt.Errorf("vector index: key literal %q", lit)
		}
		return strings.ReplaceAll(lit[1:len(lit)-1], "''", "'"), nil
	}
	n, err := strconv.ParseInt(lit, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("vector index: key literal %q: %w", lit, err)
	}
	switch dt.ID() {
	case arrow.INT32:
		return int32(n), nil
	case arrow.INT16:
		return int16(n), nil
	}
	return n, nil
}

// keyFilterValue widens an integer key value to the int64 key filters
// compare.
func keyFilterValue(v any) any {
	switch x := v.(type) {
	case int32:
		return int64(x)
	case int16:
		return int64(x)
	}
	return v
}

// vectorPortal writes the rows of a fast-path search.
type vectorPortal struct {
	cols  []pgwire.Column
	convs []valueConv
	rows  []fastRow
	next  int
	out   []any
}

func (p *vectorPortal) Describe(context.Context) ([]pgwire.Column, error) { return p.cols, nil }

func (p *vectorPortal) Execute(ctx context.Context, maxRows int, w pgwire.RowWriter) (string, bool, error) {
	for n := 0; p.next < len(p.rows); n++ {
		if maxRows > 0 && n >= maxRows {
			return "", false, nil
		}
		if ctx.Err() != nil {
			return "", true, sqlerr.ErrCanceled
		}
		p.out = p.out[:0]
		for j, x := range p.rows[p.next].vals {
			if x != nil {
				x = p.convs[j](x)
			}
			p.out = append(p.out, x)
		}
		if err := w.WriteRow(p.out); err != nil {
			return "", true, err
		}
		p.next++
	}
	return fmt.Sprintf("SELECT %d", len(p.rows)), true, nil
}

func (p *vectorPortal) Close() {}
