package engine

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/schema"
)

// LakeTable describes a lake table for a front door's metadata commands
// (Flight SQL's GetTables, GetPrimaryKeys).
type LakeTable struct {
	Namespace, Name string
	// Schema is the Arrow schema a SELECT * of the table yields.
	Schema     *arrow.Schema
	PrimaryKey []string
}

// LakeNamespaces lists the namespaces the session's role sees.
func (s *Session) LakeNamespaces(ctx context.Context) ([]string, error) {
	return s.cat.Namespaces(ctx)
}

// LakeTables lists the tables of namespace ("" = all) the session's role
// sees, ordered by namespace and name.
func (s *Session) LakeTables(ctx context.Context, namespace string) ([]LakeTable, error) {
	ts, err := s.cat.Tables(ctx, namespace)
	if err != nil {
		return nil, err
	}
	out := make([]LakeTable, len(ts))
	for i, t := range ts {
		out[i] = LakeTable{Namespace: t.Namespace, Name: t.Name, Schema: tableSchema(t, nil), PrimaryKey: t.PKCols}
	}
	return out, nil
}

// tableSchema is ArrowSchema of table columns idx (all when nil) as a
// result shows them.
func tableSchema(t *catalog.Table, idx []int) *arrow.Schema {
	if idx == nil {
		for i := range t.Schema.NumFields() {
			idx = append(idx, i)
		}
	}
	cols := make([]pgwire.Column, len(idx))
	for i, c := range idx {
		f := t.Schema.Field(c)
		oid, typmod := schema.PGTypeOf(f)
		cols[i] = pgwire.Column{Name: f.Name, TypeOID: oid, TypeModifier: typmod}
	}
	return ArrowSchema(cols)
}
