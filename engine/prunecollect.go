package engine

import (
	"github.com/apache/arrow-go/v18/arrow"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
)

// Which WHERE and JOIN ON terms reach which lake-table reference. Every
// lake table named in a FROM clause — alone, in a join tree, in a subquery
// or a CTE body — gets the terms of its SELECT that filter it, as DuckDB
// would push them into its own Parquet scan:
//
//   - a conjunct of the WHERE filters the join's output, and every term
//     here is strict (a NULL satisfies none), so it filters every
//     reference it names, on either side of any join: rows it removes from
//     a nullable side would only turn joined rows into NULL-extended ones,
//     which the same conjunct rejects;
//   - a conjunct of a JOIN's ON filters the references of the sides that
//     join cannot NULL-extend the other way: both sides of an INNER JOIN,
//     the right side of a LEFT JOIN, the left side of a RIGHT JOIN, no side
//     of a FULL JOIN;
//   - `a.x = b.y` among such conjuncts (both columns of references of this
//     SELECT, of one comparison family) carries every term on a.x to b.y
//     and back, where the term may filter b: rows of b whose y fails it can
//     only join rows of a whose x fails it.
//
// A column is resolved as PostgreSQL resolves it in this SELECT: qualified
// by a reference's name (its alias, else its table name), or bare when
// exactly one reference's table has the column and every FROM item is a
// lake table of known columns (a subquery, function or view could hold the
// name too). Anything else — an outer query's column, a name of a join
// alias, an expression — is not a term, and stays DuckDB's alone.

// fromRef is one lake-table reference among a SELECT's FROM items.
type fromRef struct {
	rv    *pg_query.RangeVar
	name  string         // the name columns are qualified by
	table *catalog.Table // nil: not a lake table (or not known yet)
	in    *pruneInput
}

// refSet is the references a conjunct may filter (indexes into refs).
type refSet map[int]bool

// fromScope is one SELECT's FROM clause, flattened.
type fromScope struct {
	refs []*fromRef
	// opaque is set when some FROM item's columns are unknown (subquery,
	// function, CTE, view, temp table): bare names are then not resolved.
	opaque bool
}

// conjunct is one AND-term of a WHERE or ON, with the references it may
// filter.
type conjunct struct {
	node  *pg_query.Node
	where bool
	may   refSet
}

// collectPruneInputs finds, for every lake-table reference in a FROM
// clause of stmt, the terms that filter it (see above). lookup resolves a
// RangeVar to its lake table, nil when it is none (CTE, temp table,
// catalog relation, view, unknown name).
func collectPruneInputs(stmt *pg_query.Node, lookup func(*pg_query.RangeVar) *catalog.Table) map[*pg_query.RangeVar]*pruneInput {
	out := map[*pg_query.RangeVar]*pruneInput{}
	walk(stmt, func(n *pg_query.Node) {
		sel := n.GetSelectStmt()
		if sel == nil || len(sel.FromClause) == 0 {
			return
		}
		var sc fromScope
		var conjs []conjunct
		for _, item := range sel.FromClause {
			sc.flatten(item, lookup, &conjs)
		}
		if sel.WhereClause != nil {
			all := refSet{}
			for i := range sc.refs {
				all[i] = true
			}
			for _, c := range splitAnd(sel.WhereClause) {
				conjs = append(conjs, conjunct{node: c, where: true, may: all})
			}
		}
		if len(conjs) == 0 {
			return
		}
		sc.collect(conjs, len(sel.FromClause) == 1 && sel.FromClause[0].GetRangeVar() != nil)
		for _, r := range sc.refs {
			if r.in != nil && len(r.in.terms) > 0 {
				out[r.rv] = r.in
			}
		}
	})
	return out
}

// splitAnd is the AND-conjuncts of cond.
func splitAnd(cond *pg_query.Node) []*pg_query.Node {
	if b := cond.GetBoolExpr(); b != nil && b.Boolop == pg_query.BoolExprType_AND_EXPR {
		var out []*pg_query.Node
		for _, a := range b.Args {
			out = append(out, splitAnd(a)...)
		}
		return out
	}
	return []*pg_query.Node{cond}
}

// flatten adds the references of FROM item n to sc and the conjuncts of
// its joins' ON clauses to conjs; it returns the references n holds.
func (sc *fromScope) flatten(n *pg_query.Node, lookup func(*pg_query.RangeVar) *catalog.Table, conjs *[]conjunct) refSet {
	switch {
	case n.GetRangeVar() != nil:
		rv := n.GetRangeVar()
		r := &fromRef{rv: rv, name: rv.Relname}
		if rv.Alias != nil {
			r.name = rv.Alias.Aliasname
		}
		if lookup != nil {
			r.table = lookup(rv)
		}
		if r.table == nil {
			sc.opaque = true
		}
		sc.refs = append(sc.refs, r)
		return refSet{len(sc.refs) - 1: true}
	case n.GetJoinExpr() != nil:
		j := n.GetJoinExpr()
		left := sc.flatten(j.Larg, lookup, conjs)
		right := sc.flatten(j.Rarg, lookup, conjs)
		// USING and NATURAL columns are merged: their bare names are
		// ambiguous to resolve (both tables have them), and their implied
		// equalities are not read.
		all := refSet{}
		for i := range left {
			all[i] = true
		}
		for i := range right {
			all[i] = true
		}
		may := refSet{}
		switch j.Jointype {
		case pg_query.JoinType_JOIN_INNER:
			may = all
		case pg_query.JoinType_JOIN_LEFT:
			may = right
		case pg_query.JoinType_JOIN_RIGHT:
			may = left
		}
		if j.Quals != nil && len(may) > 0 {
			for _, c := range splitAnd(j.Quals) {
				*conjs = append(*conjs, conjunct{node: c, may: may})
			}
		}
		return all
	default:
		sc.opaque = true
		return refSet{}
	}
}

// refColumn is a column of a reference.
type refColumn struct {
	ref int
	col string
}

// resolve finds the reference and column a ColumnRef node names in this
// scope; ok is false for anything else.
func (sc *fromScope) resolve(n *pg_query.Node) (refColumn, bool) {
	cr := n.GetColumnRef()
	if cr == nil {
		return refColumn{}, false
	}
	var parts []string
	for _, f := range cr.Fields {
		s := f.GetString_()
		if s == nil {
			return refColumn{}, false
		}
		parts = append(parts, s.Sval)
	}
	hasCol := func(r *fromRef, col string) bool {
		return r.table != nil && len(r.table.Schema.FieldIndices(col)) > 0
	}
	found := -1
	switch len(parts) {
	case 2:
		for i, r := range sc.refs {
			if r.name == parts[0] {
				if found >= 0 {
					return refColumn{}, false // ambiguous: PostgreSQL fails it
				}
				found = i
			}
		}
		// A name of a lake table that lacks the column fails in DuckDB;
		// one of an unknown item is not ours to read.
		if found < 0 || !hasCol(sc.refs[found], parts[1]) {
			return refColumn{}, false
		}
	case 1:
		if sc.opaque {
			return refColumn{}, false
		}
		for i, r := range sc.refs {
			if hasCol(r, parts[0]) {
				if found >= 0 {
					return refColumn{}, false
				}
				found = i
			}
		}
		if found < 0 {
			return refColumn{}, false
		}
	default:
		return refColumn{}, false
	}
	return refColumn{ref: found, col: parts[len(parts)-1]}, true
}

// collect reads conjs as terms of sc's references, then carries them across
// column equalities. single is set when the SELECT's FROM is one table
// reference alone: its input is exact when every conjunct is a term.
func (sc *fromScope) collect(conjs []conjunct, single bool) {
	for i, r := range sc.refs {
		r.in = &pruneInput{exact: single && i == 0}
	}
	type placed struct {
		at    refColumn
		terms []pruneTerm
		may   refSet
	}
	var found []placed
	// Equalities of columns, as a union-find over column references.
	parent := map[refColumn]refColumn{}
	var find func(c refColumn) refColumn
	find = func(c refColumn) refColumn {
		if p := parent[c]; p != c {
			parent[c] = find(p)
		}
		return parent[c]
	}
	for _, c := range conjs {
		got := false
		for i := range sc.refs {
			col := func(n *pg_query.Node) string {
				if cr, ok := sc.resolve(n); ok && cr.ref == i {
					return cr.col
				}
				return ""
			}
			terms, implied, ok := termOf(c.node, col)
			if !ok {
				continue
			}
			got = true
			if implied {
				sc.refs[i].in.exact = false
			}
			if c.may[i] {
				sc.refs[i].in.terms = append(sc.refs[i].in.terms, terms...)
				// An OR's hull has terms on several columns: each
				// column's terms are carried across its own equalities.
				for _, t := range terms {
					found = append(found, placed{at: refColumn{ref: i, col: t.col}, terms: []pruneTerm{t}, may: c.may})
				}
			}
		}
		if got {
			continue
		}
		for _, r := range sc.refs {
			r.in.exact = false
		}
		if a, b, ok := sc.columnEquality(c.node); ok && c.may[a.ref] && c.may[b.ref] && sc.sameType(a, b) {
			for _, x := range []refColumn{a, b} {
				if _, ok := parent[x]; !ok {
					parent[x] = x
				}
			}
			parent[find(a)] = find(b)
		}
	}
	for _, p := range found {
		if _, ok := parent[p.at]; !ok {
			continue
		}
		root := find(p.at)
		for c := range parent {
			if c == p.at || find(c) != root || !p.may[c.ref] {
				continue
			}
			for _, t := range p.terms {
				t.col = c.col
				sc.refs[c.ref].in.terms = append(sc.refs[c.ref].in.terms, t)
			}
		}
	}
}

// columnEquality reads `a.x = b.y` with both sides columns of distinct
// references of this scope.
func (sc *fromScope) columnEquality(n *pg_query.Node) (refColumn, refColumn, bool) {
	e := n.GetAExpr()
	if e == nil || e.Kind != pg_query.A_Expr_Kind_AEXPR_OP || len(e.Name) != 1 || e.Name[0].GetString_() == nil ||
		e.Name[0].GetString_().Sval != "=" {
		return refColumn{}, refColumn{}, false
	}
	a, ok1 := sc.resolve(e.Lexpr)
	b, ok2 := sc.resolve(e.Rexpr)
	if !ok1 || !ok2 || a.ref == b.ref || sc.refs[a.ref].table == nil || sc.refs[b.ref].table == nil {
		return refColumn{}, refColumn{}, false
	}
	return a, b, true
}

// sameType reports whether columns a and b are of one type that terms
// prune (a term's constant then means the same on either: an untyped
// literal takes the column's type, and so fails or holds alike).
func (sc *fromScope) sameType(a, b refColumn) bool {
	fa, fb := sc.field(a), sc.field(b)
	return fa != nil && fb != nil && fieldFamily(*fa) != 0 && fieldFamily(*fa) == fieldFamily(*fb) &&
		arrow.TypeEqual(fa.Type, fb.Type)
}

// field is the table column c names; nil when there is none.
func (sc *fromScope) field(c refColumn) *arrow.Field {
	t := sc.refs[c.ref].table
	if t == nil {
		return nil
	}
	idx := t.Schema.FieldIndices(c.col)
	if len(idx) == 0 {
		return nil
	}
	f := t.Schema.Field(idx[0])
	return &f
}
