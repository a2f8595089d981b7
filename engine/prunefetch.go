package engine

import (
	"context"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/layout"
)

// Pruned listing: when every reference a statement makes to a table is pruned
// on range columns (prune.go), the catalog lists only candidate partitions
// instead of all of them — the exact descs when every range column is pinned
// (partition_info's primary key), else the partitions whose desc holds the
// pinned "col=value" terms (lakesoul.live_files_matching, a GIN index on
// lakesoul.partition_registry). The candidates are a superset of what the
// references may read; each reference's pruneSpec still filters exactly.

// maxExactDescs bounds the cartesian product of pinned values listed by
// exact desc; beyond it the listing falls back to terms.
const maxExactDescs = 256

// listPartitions resolves the live files of t that the handles of one
// statement (every handle in tables whose table is t) may read, pruned by
// their specs.
func (s *Session) listPartitions(ctx context.Context, cat *catalog.Catalog, t *catalog.Table, tables map[string]*catalog.Table,
	specs map[string]*pruneSpec) ([]catalog.PartitionFiles, error) {
	if len(t.RangeCols) == 0 {
		return s.liveFiles(ctx, cat, t, nil, nil)
	}
	exact := map[string]bool{}
	var termSets [][]string
	for handle, ht := range tables {
		if ht.ID != t.ID {
			continue
		}
		descs, terms := candidates(t, specs[handle])
		switch {
		case descs != nil:
			for _, d := range descs {
				exact[d] = true
			}
		case terms != nil:
			if !slices.ContainsFunc(termSets, func(ts []string) bool { return slices.Equal(ts, terms) }) {
				termSets = append(termSets, terms)
			}
		default:
			return s.liveFiles(ctx, cat, t, nil, nil)
		}
	}
	byDesc := map[string]catalog.PartitionFiles{}
	if len(exact) > 0 {
		descs := make([]string, 0, len(exact))
		for d := range exact {
			descs = append(descs, d)
		}
		slices.Sort(descs)
		parts, err := s.liveFiles(ctx, cat, t, descs, nil)
		if err != nil {
			return nil, err
		}
		for _, p := range parts {
			byDesc[p.Desc] = p
		}
	}
	for _, terms := range termSets {
		parts, err := s.liveFiles(ctx, cat, t, nil, terms)
		if err != nil {
			return nil, err
		}
		for _, p := range parts {
			byDesc[p.Desc] = p
		}
	}
	out := make([]catalog.PartitionFiles, 0, len(byDesc))
	for _, p := range byDesc {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b catalog.PartitionFiles) int { return strings.Compare(a.Desc, b.Desc) })
	return out, nil
}

// candidates returns, for one reference's spec, either the exact descs it may
// read or the "col=value" terms every partition it may read contains; both
// nil when the catalog must list every partition.
func candidates(t *catalog.Table, sp *pruneSpec) (descs, terms []string) {
	if sp == nil || len(sp.ranges) == 0 {
		return nil, nil
	}
	formatted := make([][]string, len(t.RangeCols))
	all := true
	combos := 1
	for i, c := range t.RangeCols {
		av, ok := sp.ranges[c]
		if !ok {
			all = false
			continue
		}
		vals, ok := formatValues(av)
		if !ok {
			all = false
			continue
		}
		formatted[i] = vals
		combos *= max(len(vals), 1)
		if len(vals) == 1 {
			terms = append(terms, c+"="+vals[0])
		}
	}
	if all && combos <= maxExactDescs {
		descs = []string{""}
		for i, c := range t.RangeCols {
			var next []string
			for _, prefix := range descs {
				for _, v := range formatted[i] {
					if prefix != "" {
						next = append(next, prefix+","+c+"="+v)
					} else {
						next = append(next, c+"="+v)
					}
				}
			}
			descs = next
		}
		if descs == nil {
			descs = []string{} // a contradiction (x = 1 AND x = 2): nothing to list
		}
		return descs, nil
	}
	if len(terms) == 0 {
		return nil, nil
	}
	slices.Sort(terms)
	return nil, terms
}

// formatValues renders allowed values as partition_desc values, as the writer
// formats them; false for a type it cannot render here.
func formatValues(av allowedValues) ([]string, bool) {
	b := array.NewBuilder(memory.DefaultAllocator, av.dt)
	defer b.Release()
	for _, v := range av.vals {
		if !appendKeyValue(b, v) {
			return nil, false
		}
	}
	arr := b.NewArray()
	defer arr.Release()
	out := make([]string, arr.Len())
	for i := range out {
		s, err := layout.FormatValue(arr, i)
		if err != nil {
			return nil, false
		}
		out[i] = s
	}
	return out, true
}
