package engine

import (
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/layout"
)

// Pruning. A lake table that is a plain FROM item of a SELECT whose WHERE
// requires `col = constant` (or `col IN (constants)`) for range-partition
// columns reads only the matching partitions; when it pins every primary-key
// column, only the buckets those keys hash to. DuckDB still applies the whole
// WHERE, so pruning only ever removes files that cannot match.

// pruneInput is the constants a WHERE pins columns of one FROM item to.
type pruneInput map[string][]string

// collectPruneInputs finds, for every RangeVar that is a direct FROM item of a
// SELECT, the equality constraints of that SELECT's WHERE on its columns.
func collectPruneInputs(stmt *pg_query.Node) map[*pg_query.RangeVar]pruneInput {
	out := map[*pg_query.RangeVar]pruneInput{}
	walk(stmt, func(n *pg_query.Node) {
		sel := n.GetSelectStmt()
		if sel == nil || sel.WhereClause == nil {
			return
		}
		for _, item := range sel.FromClause {
			rv := item.GetRangeVar()
			if rv == nil {
				continue
			}
			name := rv.Relname
			if rv.Alias != nil {
				name = rv.Alias.Aliasname
			}
			in := pruneInput{}
			collectEqualities(sel.WhereClause, name, len(sel.FromClause) == 1, in)
			if len(in) > 0 {
				out[rv] = in
			}
		}
	})
	return out
}

// collectEqualities walks the AND-conjuncts of cond.
func collectEqualities(cond *pg_query.Node, alias string, bareOK bool, in pruneInput) {
	if b := cond.GetBoolExpr(); b != nil {
		if b.Boolop == pg_query.BoolExprType_AND_EXPR {
			for _, a := range b.Args {
				collectEqualities(a, alias, bareOK, in)
			}
		}
		return
	}
	e := cond.GetAExpr()
	if e == nil || len(e.Name) != 1 || e.Name[0].GetString_() == nil {
		return
	}
	col := func(n *pg_query.Node) string {
		cr := n.GetColumnRef()
		if cr == nil {
			return ""
		}
		var parts []string
		for _, f := range cr.Fields {
			s := f.GetString_()
			if s == nil {
				return ""
			}
			parts = append(parts, s.Sval)
		}
		switch {
		case len(parts) == 2 && parts[0] == alias:
			return parts[1]
		case len(parts) == 1 && bareOK:
			return parts[0]
		}
		return ""
	}
	constant := func(n *pg_query.Node) (string, bool) {
		if n.GetAConst() == nil && n.GetTypeCast() == nil {
			return "", false
		}
		if c := n.GetAConst(); c != nil && c.Isnull {
			return "", false
		}
		if tc := n.GetTypeCast(); tc != nil && tc.Arg.GetAConst() == nil {
			return "", false
		}
		return stringValue(n)
	}
	switch {
	case e.Kind == pg_query.A_Expr_Kind_AEXPR_OP && e.Name[0].GetString_().Sval == "=":
		c, v := col(e.Lexpr), e.Rexpr
		if c == "" {
			c, v = col(e.Rexpr), e.Lexpr
		}
		if c == "" {
			return
		}
		if s, ok := constant(v); ok {
			in[c] = intersect(in[c], []string{s})
		}
	case e.Kind == pg_query.A_Expr_Kind_AEXPR_IN && e.Name[0].GetString_().Sval == "=":
		c := col(e.Lexpr)
		list := e.Rexpr.GetList()
		if c == "" || list == nil {
			return
		}
		var vals []string
		for _, it := range list.Items {
			s, ok := constant(it)
			if !ok {
				return
			}
			vals = append(vals, s)
		}
		in[c] = intersect(in[c], vals)
	}
}

// intersect narrows an existing value set (nil = unconstrained).
func intersect(have, add []string) []string {
	if have == nil {
		return add
	}
	var out []string
	for _, v := range have {
		if slices.Contains(add, v) {
			out = append(out, v)
		}
	}
	if out == nil {
		out = []string{}
	}
	return out
}

// pruneSpec is a pruneInput resolved against a table.
type pruneSpec struct {
	// ranges holds the allowed values of constrained range columns.
	ranges map[string]allowedValues
	// buckets holds the buckets the pinned keys hash to (nil = all).
	buckets map[int]bool
}

type allowedValues struct {
	dt   arrow.DataType
	vals []any
}

// resolvePrune turns constants into typed values; nil when nothing prunes.
func resolvePrune(in pruneInput, t *catalog.Table) *pruneSpec {
	sp := &pruneSpec{ranges: map[string]allowedValues{}}
	field := func(name string) (arrow.Field, bool) {
		idx := t.Schema.FieldIndices(name)
		if len(idx) == 0 {
			return arrow.Field{}, false
		}
		return t.Schema.Field(idx[0]), true
	}
	parseAll := func(f arrow.Field, texts []string) ([]any, bool) {
		out := make([]any, 0, len(texts))
		for _, s := range texts {
			v, err := layout.ParseValue(s, f.Type)
			if err != nil || v == nil {
				return nil, false
			}
			if _, isBytes := v.([]byte); isBytes {
				return nil, false
			}
			out = append(out, v)
		}
		return out, true
	}
	for _, c := range t.RangeCols {
		texts, ok := in[c]
		f, found := field(c)
		if !ok || !found {
			continue
		}
		if vals, ok := parseAll(f, texts); ok {
			sp.ranges[c] = allowedValues{dt: f.Type, vals: vals}
		}
	}
	if t.HasPK() && t.HashBucketNum > 1 {
		var cols [][]any
		var types []arrow.DataType
		for _, c := range t.PKCols {
			texts, ok := in[c]
			f, found := field(c)
			if !ok || !found {
				cols = nil
				break
			}
			vals, ok := parseAll(f, texts)
			if !ok {
				cols = nil
				break
			}
			cols = append(cols, vals)
			types = append(types, f.Type)
		}
		if cols != nil {
			sp.buckets = keyBuckets(cols, types, t.HashBucketNum)
		}
	}
	if len(sp.ranges) == 0 && sp.buckets == nil {
		return nil
	}
	return sp
}

// keyBuckets hashes every combination of the pinned key values.
func keyBuckets(cols [][]any, types []arrow.DataType, n int) map[int]bool {
	combos := 1
	for _, c := range cols {
		combos *= len(c)
	}
	if combos == 0 || combos > 4096 {
		return nil
	}
	arrs := make([]arrow.Array, len(cols))
	for i, vals := range cols {
		b := array.NewBuilder(memory.DefaultAllocator, types[i])
		for k := 0; k < combos; k++ {
			// Mixed-radix enumeration of the combinations.
			stride := 1
			for j := i + 1; j < len(cols); j++ {
				stride *= len(cols[j])
			}
			if !appendKeyValue(b, vals[(k/stride)%len(vals)]) {
				b.Release()
				return nil
			}
		}
		arrs[i] = b.NewArray()
		b.Release()
		defer arrs[i].Release()
	}
	hashes := make([]uint32, combos)
	if err := layout.HashRows(arrs, hashes); err != nil {
		return nil
	}
	out := map[int]bool{}
	for _, h := range hashes {
		out[layout.BucketOf(h, n)] = true
	}
	return out
}

func appendKeyValue(b array.Builder, v any) bool {
	switch bb := b.(type) {
	case *array.Int8Builder:
		bb.Append(v.(int8))
	case *array.Int16Builder:
		bb.Append(v.(int16))
	case *array.Int32Builder:
		bb.Append(v.(int32))
	case *array.Int64Builder:
		bb.Append(v.(int64))
	case *array.StringBuilder:
		bb.Append(v.(string))
	case *array.Date32Builder:
		bb.Append(v.(arrow.Date32))
	default:
		return false
	}
	return true
}

// apply keeps the partitions and bucket files the spec allows.
func (sp *pruneSpec) apply(parts []catalog.PartitionFiles) []catalog.PartitionFiles {
	if sp == nil {
		return parts
	}
	var out []catalog.PartitionFiles
	for _, p := range parts {
		if len(sp.ranges) > 0 && !sp.matchDesc(p.Desc) {
			continue
		}
		if sp.buckets != nil {
			q := catalog.PartitionFiles{Desc: p.Desc, Version: p.Version}
			for _, f := range p.Files {
				if b, ok := layout.BucketOfFile(f.Path); !ok || sp.buckets[b] {
					q.Files = append(q.Files, f)
				}
			}
			p = q
		}
		out = append(out, p)
	}
	return out
}

func (sp *pruneSpec) matchDesc(desc string) bool {
	kvs, err := layout.ParseDesc(desc)
	if err != nil {
		return true
	}
	for _, kv := range kvs {
		allowed, ok := sp.ranges[kv.Key]
		if !ok {
			continue
		}
		v, err := layout.ParseValue(kv.Value, allowed.dt)
		if err != nil {
			return true
		}
		if v == nil || !slices.Contains(allowed.vals, v) {
			return false
		}
	}
	return true
}
