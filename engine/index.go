package engine

import (
	"context"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/layout"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// CREATE INDEX and DROP INDEX on lake tables, of both kinds: column
// indexes (btree, the default; columnindex.go), which give the columns'
// data files bloom filters that reads prune by, and vector indexes
// (ivfflat; vectorindex.go). Index names are per schema, as in PostgreSQL,
// and shared by both kinds and by the schema's tables.

// planCreateIndex routes CREATE INDEX by access method.
func planCreateIndex(s *Session, _ context.Context, n *pg_query.Node, _ []uint32) (pgwire.Statement, error) {
	st := n.GetIndexStmt()
	switch method := strings.ToLower(st.AccessMethod); method {
	case "", "btree":
		return s.planColumnIndex(st)
	case "ivfflat", "hnsw":
		return s.planVectorIndex(st, method)
	default:
		return nil, sqlerr.Unsupported("CREATE INDEX … USING "+method,
			"CREATE INDEX name ON table (column, …) for bloom filters and statistics; vector indexes: CREATE INDEX … USING ivfflat (column vector_l2_ops|vector_cosine_ops|vector_ip_ops) WITH (lists = N)")
	}
}

// checkIndexName fails with 42P07 when namespace ns has a table or an
// index named name.
func (s *Session) checkIndexName(ctx context.Context, ns, name string) error {
	if _, err := s.cat.TableByName(ctx, ns, name); err == nil {
		return sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", name)
	} else if sqlerr.Code(err) != sqlerr.UndefinedTable {
		return err
	}
	ids, err := s.namespaceTableIDs(ctx, ns)
	if err != nil || len(ids) == 0 {
		return err
	}
	_, _, found, err := s.cat.IndexNamed(ctx, ids, name)
	if err == nil && found {
		return sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", name)
	}
	return err
}

// namespaceTableIDs lists the ids of the tables of namespace ns.
func (s *Session) namespaceTableIDs(ctx context.Context, ns string) ([]string, error) {
	ts, err := s.cat.Tables(ctx, seqNamespace(ns)) // "public" is the default namespace
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, t := range ts {
		ids = append(ids, t.ID)
	}
	return ids, nil
}

// dropIndex drops an index named by parts (schema-qualified or found along
// the search path): a column index's record (data files keep their bloom
// filters, which no read consults any more), or a vector index and its
// segment files.
func (s *Session) dropIndex(ctx context.Context, parts []string, missingOK bool) error {
	namespaces := s.searchPath()
	ns, name, err := splitRelationName(parts)
	if err != nil {
		return err
	}
	if ns != "" {
		namespaces = []string{ns}
	}
	for _, ns := range namespaces {
		ids, err := s.namespaceTableIDs(ctx, ns)
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			continue
		}
		indexTable, vector, found, err := s.cat.IndexNamed(ctx, ids, name)
		if err != nil {
			return err
		}
		if !found {
			continue
		}
		if !vector {
			// Only the index found: a name is unique per schema, but the
			// check at CREATE is not a constraint.
			dropped, err := s.cat.DropColumnIndex(ctx, []string{indexTable}, name)
			if err != nil || dropped || missingOK {
				return err
			}
			return sqlerr.New(sqlerr.UndefinedObject, "index %q does not exist", name)
		}
		tableID, paths, found, err := s.cat.DropVectorIndex(ctx, ids, name)
		if err != nil || !found {
			return err
		}
		t, err := s.cat.TableByID(ctx, tableID)
		if sqlerr.Code(err) == sqlerr.UndefinedTable {
			return nil // the table went meanwhile, and its files with it
		}
		if err != nil {
			return err
		}
		s.afterDDL(func() {
			for _, p := range paths {
				if !layout.Within(t.Path, p) {
					continue
				}
				if err := s.e.store.Delete(context.WithoutCancel(ctx), p); err != nil {
					s.e.log.Warn("drop index: cannot delete segment file", "index", name, "path", p, "err", err)
				}
			}
		})
		return nil
	}
	if missingOK {
		return nil
	}
	return sqlerr.New(sqlerr.UndefinedObject, "index %q does not exist", name)
}
