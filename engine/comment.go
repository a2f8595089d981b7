package engine

import (
	"context"
	"maps"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// COMMENT ON TABLE s.t / COMMENT ON COLUMN s.t.c IS '…' | NULL on lake
// tables. Comments are table properties — commentProperty for the table,
// commentProperty + "." + column for a column — which the catalog
// emulation shows in pg_description (obj_description, col_description,
// psql \d+ and \dt+). IS NULL and IS '' remove a comment, as in
// PostgreSQL.

// commentProperty is the table property holding a table's comment.
const commentProperty = catalog.CommentProperty

// planComment plans COMMENT ON TABLE and COMMENT ON COLUMN.
func (s *Session) planComment(n *pg_query.CommentStmt) (pgwire.Statement, error) {
	var names []string
	for _, it := range n.Object.GetList().GetItems() {
		names = append(names, it.GetString_().GetSval())
	}
	var column string
	switch n.Objtype {
	case pg_query.ObjectType_OBJECT_TABLE:
	case pg_query.ObjectType_OBJECT_COLUMN:
		if len(names) < 2 {
			return nil, sqlerr.New(sqlerr.SyntaxError, "column name must be qualified")
		}
		column, names = names[len(names)-1], names[:len(names)-1]
	default:
		return nil, sqlerr.Unsupported("COMMENT ON "+strings.TrimPrefix(n.Objtype.String(), "OBJECT_"), "COMMENT ON TABLE s.t, COMMENT ON COLUMN s.t.c")
	}
	ns, name, err := splitRelationName(names)
	if err != nil {
		return nil, err
	}
	return s.ddl("COMMENT", func(ctx context.Context) error {
		t, err := s.resolveTable(ctx, ns, name)
		if err != nil {
			return err
		}
		key := commentProperty
		if column != "" {
			if len(t.Schema.FieldIndices(column)) == 0 {
				return sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", column, t.Name)
			}
			key += "." + column
		}
		nt := *t
		nt.Properties = maps.Clone(t.Properties)
		if n.Comment == "" {
			delete(nt.Properties, key)
		} else {
			nt.Properties[key] = n.Comment
		}
		return s.cat.AlterTable(ctx, &nt)
	}), nil
}
