package schema

import (
	"encoding/json"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
)

// MetaFormerNames is the field metadata key listing the names a column had
// before ALTER TABLE … RENAME COLUMN, as a JSON array of strings, oldest
// first. Data files keep the name their column had when they were written,
// so a reader takes a file's column by the current name or, failing that,
// by a former one (newest first).
const MetaFormerNames = "pg_former_names"

// FormerNames returns the former names of f, newest first (nil when it was
// never renamed or the metadata does not parse).
func FormerNames(f arrow.Field) []string {
	v, ok := f.Metadata.GetValue(MetaFormerNames)
	if !ok {
		return nil
	}
	var names []string
	if json.Unmarshal([]byte(v), &names) != nil {
		return nil
	}
	slices.Reverse(names)
	return names
}

// Renamed returns f named to, with its current name added to its former
// names (and to removed from them: a column renamed back finds files of
// both names).
func Renamed(f arrow.Field, to string) arrow.Field {
	names := FormerNames(f) // newest first
	slices.Reverse(names)
	names = slices.DeleteFunc(append(names, f.Name), func(n string) bool { return n == to })
	keys, vals := []string{}, []string{}
	for i, k := range f.Metadata.Keys() {
		if k != MetaFormerNames {
			keys, vals = append(keys, k), append(vals, f.Metadata.Values()[i])
		}
	}
	if len(names) > 0 {
		b, _ := json.Marshal(names) // strings always marshal
		keys, vals = append(keys, MetaFormerNames), append(vals, string(b))
	}
	f.Name = to
	f.Metadata = sortedMetadata(keys, vals)
	return f
}

// sortedMetadata is the metadata of keys and vals in key order, so two
// reads of one schema compare equal.
func sortedMetadata(keys, vals []string) arrow.Metadata {
	idx := make([]int, len(keys))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		switch {
		case keys[a] < keys[b]:
			return -1
		case keys[a] > keys[b]:
			return 1
		}
		return 0
	})
	k, v := make([]string, len(keys)), make([]string, len(keys))
	for i, j := range idx {
		k[i], v[i] = keys[j], vals[j]
	}
	return arrow.NewMetadata(k, v)
}

// FileColumn returns the index of table column f in a file of schema fsch:
// by its name, else by its newest former name the file has; -1 when the
// file has neither.
func FileColumn(fsch *arrow.Schema, f arrow.Field) int {
	if idx := fsch.FieldIndices(f.Name); len(idx) > 0 {
		return idx[0]
	}
	for _, n := range FormerNames(f) {
		if idx := fsch.FieldIndices(n); len(idx) > 0 {
			return idx[0]
		}
	}
	return -1
}
