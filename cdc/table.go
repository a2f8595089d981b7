package cdc

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/reader"
	"github.com/lakesoul-go/lakesoul/schema"
)

// OpColumn is the CDC column of the lake tables a subscription creates for
// source tables with a primary key: insert, update or delete, as LakeSoul's
// Flink whole-database sync names it (lakesoul_cdc_change_column =
// rowKinds). Reads drop keys whose newest row is a delete.
const OpColumn = "rowKinds"

// droppedColumnProperty is LakeSoul's property listing dropped columns
// (the engine's ALTER TABLE … DROP COLUMN keeps the same list).
const droppedColumnProperty = catalog.DroppedColumnProperty

// tableState is one source table as the apply loop knows it.
type tableState struct {
	source string // schema.table (PostgreSQL), database.table (MySQL)
	// cols are the source columns, in source order.
	cols []Column
	// t is the lake table with the schema rows are written in: the stored
	// one, or one altered in the open batch (committed with it).
	t *catalog.Table
	// failed is set when the table stopped (last_error); its changes are
	// skipped, the other tables go on.
	failed bool
	// syncedAt: changes at or before this position are in the table's copy.
	syncedAt string
}

// newLakeTable is the lake table of a source table: its columns, the source
// primary key as key (with the op column), or an append table.
func newLakeTable(id, namespace, name, path string, cols []Column, buckets int) (*catalog.Table, error) {
	t := &catalog.Table{ID: id, Namespace: namespace, Name: name, Path: path, Properties: map[string]string{}, HashBucketNum: -1}
	var fields []arrow.Field
	t.PKCols = keyColumns(cols)
	for _, c := range cols {
		f := lakeField(c)
		if c.Key > 0 {
			if err := keyable(f); err != nil {
				return nil, err
			}
		}
		if c.Name == OpColumn && t.HasPK() {
			return nil, fmt.Errorf("the source has a column named %q, the name of the lake table's CDC column", OpColumn)
		}
		fields = append(fields, f)
	}
	if t.HasPK() {
		fields = append(fields, arrow.Field{Name: OpColumn, Type: arrow.BinaryTypes.String, Nullable: true})
		t.Properties[catalog.CDCColumnProperty] = OpColumn
		t.Properties["use_cdc"] = "true"
		t.HashBucketNum = buckets
	}
	t.Schema = arrow.NewSchema(fields, nil)
	return t, nil
}

// errIncompatible is a source schema change the lake cannot follow; it
// stops the table.
type errIncompatible struct{ msg string }

func (e *errIncompatible) Error() string { return e.msg }

func incompatible(format string, args ...any) error {
	return &errIncompatible{msg: fmt.Sprintf(format, args...)}
}

// evolve returns the lake table after the source's columns changed from
// old to cols, or nil when nothing changed for the lake. Added columns are
// added (nullable), dropped ones dropped (kept in old files, listed in
// droppedColumn), types widened where the reader widens old files
// (reader.CanWiden) or only the declared type changes (varchar(n) →
// varchar(m), m ≥ n). A rename (a column gone and another in its place
// with the same type), a change of the key or any other type change is
// errIncompatible.
func evolve(t *catalog.Table, old, cols []Column) (*catalog.Table, error) {
	if slices.EqualFunc(old, cols, sameColumn) {
		return nil, nil
	}
	keys := keyColumns
	if !slices.Equal(keys(old), keys(cols)) {
		return nil, incompatible("the primary key changed from (%s) to (%s)", strings.Join(keys(old), ", "), strings.Join(keys(cols), ", "))
	}
	byName := func(cs []Column, name string) int {
		return slices.IndexFunc(cs, func(c Column) bool { return c.Name == name })
	}
	// A column gone whose number a new column has is a rename.
	for _, o := range old {
		if byName(cols, o.Name) >= 0 || o.Num == 0 {
			continue
		}
		for _, c := range cols {
			if c.Num == o.Num && byName(old, c.Name) < 0 {
				return nil, incompatible("column %q was renamed to %q; renames are not replicated", o.Name, c.Name)
			}
		}
	}
	nt := *t
	nt.Properties = maps.Clone(t.Properties)
	fields := slices.Clone(t.Schema.Fields())
	find := func(name string) int {
		return slices.IndexFunc(fields, func(f arrow.Field) bool { return f.Name == name })
	}
	dropped := strings.Split(nt.Properties[droppedColumnProperty], ",")
	for _, o := range old {
		if byName(cols, o.Name) >= 0 {
			continue
		}
		if i := find(o.Name); i >= 0 {
			fields = slices.Delete(fields, i, i+1)
		}
		if d := nt.Properties[droppedColumnProperty]; d != "" {
			nt.Properties[droppedColumnProperty] = d + "," + o.Name
		} else {
			nt.Properties[droppedColumnProperty] = o.Name
		}
	}
	for _, c := range cols {
		nf := lakeField(c)
		j := byName(old, c.Name)
		if j < 0 {
			if slices.Contains(dropped, c.Name) {
				return nil, incompatible("column %q was dropped before and added again; old files still hold the old column's values", c.Name)
			}
			if find(c.Name) >= 0 {
				return nil, incompatible("column %q was added but the lake table has a column of that name", c.Name)
			}
			// Insert before the op column, which stays last.
			at := len(fields)
			if k := find(OpColumn); k >= 0 && t.CDCColumn() == OpColumn {
				at = k
			}
			fields = slices.Insert(fields, at, nf)
			continue
		}
		i := find(c.Name)
		if i < 0 {
			return nil, incompatible("column %q is missing from the lake table", c.Name)
		}
		of := fields[i]
		if arrow.TypeEqual(of.Type, nf.Type) && of.Metadata.Equal(nf.Metadata) {
			continue
		}
		if c.Key > 0 {
			return nil, incompatible("the type of primary-key column %q changed", c.Name)
		}
		switch {
		case arrow.TypeEqual(of.Type, nf.Type) && of.Type.ID() == arrow.STRING && widerText(of, nf):
		case !arrow.TypeEqual(of.Type, nf.Type) && reader.CanWiden(of.Type, nf.Type):
		default:
			return nil, incompatible("column %q changed type from %s to %s, which is not a lossless widening", c.Name, describe(of), describe(nf))
		}
		nf.Nullable = of.Nullable
		fields[i] = nf
	}
	nt.Schema = arrow.NewSchema(fields, nil)
	return &nt, nil
}

// widerText reports whether text column to holds every value of from:
// varchar(n) → varchar(m ≥ n) or unbounded, anything → text.
func widerText(from, to arrow.Field) bool {
	ft, _ := from.Metadata.GetValue(schema.MetaPGType)
	tt, _ := to.Metadata.GetValue(schema.MetaPGType)
	if tt == "" {
		return true // text
	}
	fb, fn := splitMod(ft)
	tb, tn := splitMod(tt)
	if fb != tb {
		return false
	}
	return tn < 0 || (fn >= 0 && tn >= fn)
}

func splitMod(pt string) (base string, n int) {
	base, n = pt, -1
	if i := strings.IndexByte(pt, '('); i > 0 {
		base = pt[:i]
		fmt.Sscanf(pt[i+1:], "%d", &n)
	}
	return base, n
}

func describe(f arrow.Field) string {
	if pt, ok := f.Metadata.GetValue(schema.MetaPGType); ok {
		return pt
	}
	return f.Type.String()
}

// keyColumns are the names of the primary-key columns of cols, in key
// order.
func keyColumns(cols []Column) []string {
	var keyed []Column
	for _, c := range cols {
		if c.Key > 0 {
			keyed = append(keyed, c)
		}
	}
	slices.SortFunc(keyed, func(a, b Column) int { return a.Key - b.Key })
	names := make([]string, len(keyed))
	for i, c := range keyed {
		names[i] = c.Name
	}
	return names
}

func sameColumn(a, b Column) bool {
	return a.Name == b.Name && a.TypeOID == b.TypeOID && a.TypeMod == b.TypeMod && a.Key == b.Key && a.Num == b.Num &&
		a.MySQL == b.MySQL && a.Unsigned == b.Unsigned && slices.Equal(a.Labels, b.Labels)
}
