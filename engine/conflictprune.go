package engine

import (
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/schema"
)

// The rows INSERT … ON CONFLICT reads. The statement joins its new rows
// with the target's current rows on the primary key; without more, the
// target's scan merges every bucket of the table, so a single-row upsert
// cost a full merge of the table. When the new rows are VALUES whose key
// columns hold constants or parameters, the target's scan gets those keys
// as terms (key IN (…) per key column), so it reads only the buckets the
// keys hash to and merges only those keys — the same pruning a SELECT …
// WHERE key = … gets (prune.go), resolved with each execution's parameters.
//
// Invariant: the terms admit every current row whose key equals a new
// row's key as it will be stored. That holds where the value a constant or
// parameter compares as is the value the INSERT stores: integer key
// columns, and key columns of type text (varchar(n) may cut trailing
// spaces on the way in, uuid and char(n) compare otherwise). Any other key
// column, any other expression (DEFAULT, a function, arithmetic, a
// fraction), or a source that is not VALUES reads the whole table, as
// before. Composite keys get one IN per column, a superset of the key
// tuples; the join matches exactly.

// conflictKeyInput returns the terms for the target's scan of an INSERT …
// ON CONFLICT whose source is src with columns target, or nil when they
// cannot be proven to admit every conflicting row.
func conflictKeyInput(t *catalog.Table, src *pg_query.Node, target []string) *pruneInput {
	sel := src.GetSelectStmt()
	if sel == nil || len(sel.ValuesLists) == 0 || len(sel.FromClause) > 0 || !t.HasPK() {
		return nil
	}
	in := &pruneInput{}
	for _, col := range t.PKCols {
		idx := t.Schema.FieldIndices(col)
		if len(idx) == 0 || !conflictPrunable(t.Schema.Field(idx[0])) {
			return nil
		}
		j := slices.Index(target, col)
		if j < 0 {
			return nil // the key comes from a default: not a constant here
		}
		term := pruneTerm{col: col, op: opEq}
		for _, row := range sel.ValuesLists {
			items := row.GetList().GetItems()
			if j >= len(items) {
				return nil
			}
			if !storedAsCompared(items[j], fieldFamily(t.Schema.Field(idx[0]))) {
				return nil
			}
			a, ok := argOf(items[j])
			if !ok {
				return nil
			}
			term.args = append(term.args, a)
		}
		in.terms = append(in.terms, term)
	}
	return in
}

// storedAsCompared says whether VALUES item n of a key column of family
// fam is stored as the value the pruning compares: for integer columns an
// integer literal or a string literal that is integer input, for text
// columns a string literal, and for both a parameter, or either cast to a
// type of the column's family (castFamilies). A fraction (7.6 is stored in
// an integer column as 8 but compares equal to no integer), arithmetic, or
// a cast to another type are not. A parameter's value is checked where it
// is bound (argValue admits only integers and strings). Pruning arguments
// do not carry assignment semantics; this is the gate that keeps the probe
// to values for which comparison and assignment agree.
func storedAsCompared(n *pg_query.Node, fam colFamily) bool {
	if n.GetParamRef() != nil {
		return true
	}
	if tc := n.GetTypeCast(); tc != nil {
		if tc.TypeName == nil || len(tc.TypeName.Typmods) > 0 || len(tc.TypeName.ArrayBounds) > 0 {
			return false
		}
		if castFamilies[typeNameString(tc.TypeName)] != fam { // prune.go
			return false
		}
		// A parameter or a constant cast to the column's own type.
		return tc.Arg.GetParamRef() != nil || tc.Arg.GetAConst() != nil && storedAsCompared(tc.Arg, fam)
	}
	c := n.GetAConst()
	if c == nil || c.Isnull {
		return false
	}
	switch {
	case c.GetIval() != nil:
		return fam == famInt
	case c.GetFval() != nil:
		_, err := pgParseInt(c.GetFval().Fval)
		return fam == famInt && err == nil
	case c.GetSval() != nil:
		if fam == famInt {
			_, err := pgParseInt(c.GetSval().Sval) // integer input, as the INSERT reads it
			return err == nil
		}
		return fam == famText
	}
	return false
}

// conflictPrunable says whether a key column's stored value is the value
// its constant or parameter compares as (see the invariant above).
func conflictPrunable(f arrow.Field) bool {
	switch fieldFamily(f) {
	case famInt:
		return true
	case famText:
		oid, _ := schema.PGTypeOf(f)
		return oid == schema.OIDText
	}
	return false
}
