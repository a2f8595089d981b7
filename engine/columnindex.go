package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/arrowutil"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// CREATE [UNIQUE] INDEX [IF NOT EXISTS] [name] ON t [USING btree] (col, …)
// on lake tables records a column index (lakesoul.column_index): from then
// on every data file written for the table — inserts, upserts, compaction
// — carries a bloom filter per row group for those columns (besides the
// statistics and page index every column has), and reads with = / IN /
// range conditions on them skip files and row groups by them
// (reader/indexprune.go). Files written before the index are not
// rewritten: they are read as before until compaction rewrites them.
// UNIQUE is allowed only on exactly the primary key, which is unique by
// construction (the index then adds nothing).

// btreeOptions are the storage parameters of btree indexes, accepted and
// without effect on lake tables.
var btreeOptions = []string{"fillfactor", "deduplicate_items"}

// planColumnIndex plans CREATE INDEX … [USING btree] (index.go routes it).
func (s *Session) planColumnIndex(st *pg_query.IndexStmt) (pgwire.Statement, error) {
	const hint = "CREATE INDEX name ON table (column, …): plain columns, no WHERE, no INCLUDE"
	switch {
	case st.WhereClause != nil:
		return nil, sqlerr.Unsupported("partial indexes on lake tables", hint)
	case len(st.IndexIncludingParams) > 0:
		return nil, sqlerr.Unsupported("INCLUDE columns of indexes on lake tables", hint)
	}
	var cols []string
	for _, p := range st.IndexParams {
		elem := p.GetIndexElem()
		if elem.GetName() == "" {
			return nil, sqlerr.Unsupported("expression indexes on lake tables", hint)
		}
		if len(elem.Opclass) > 0 || len(elem.Collation) > 0 {
			return nil, sqlerr.Unsupported("operator classes and collations of indexes on lake tables", hint)
		}
		if !slices.Contains(cols, elem.Name) {
			cols = append(cols, elem.Name)
		}
	}
	for _, o := range st.Options {
		if d := o.GetDefElem(); !slices.Contains(btreeOptions, d.Defname) {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "unrecognized parameter %q", d.Defname)
		}
	}
	return s.ddl("CREATE INDEX", func(ctx context.Context) error {
		t, err := s.resolveTable(ctx, st.Relation.Schemaname, st.Relation.Relname)
		if err != nil {
			return err
		}
		var unprunable []string
		for _, c := range cols {
			idx := t.Schema.FieldIndices(c)
			if len(idx) == 0 {
				return sqlerr.New(sqlerr.UndefinedColumn, "column %q does not exist", c)
			}
			f := t.Schema.Field(idx[0])
			if arrowutil.BloomKindOf(f.Type) == arrowutil.NoBloom && !slices.Contains(t.RangeCols, c) {
				unprunable = append(unprunable, fmt.Sprintf("%s (%s)", c, lakeFieldTypeName(f)))
			}
		}
		if st.Unique && !sameColumnSet(cols, t.PKCols) {
			hint := "the table has no primary key; declare one at CREATE TABLE (PRIMARY KEY (…)) for unique keys"
			if t.HasPK() {
				hint = "CREATE UNIQUE INDEX … (" + strings.Join(t.PKCols, ", ") + "): the primary key, unique by construction"
			}
			return sqlerr.Unsupported("unique indexes on lake tables other than on the primary key", hint)
		}
		name := st.Idxname
		if name == "" {
			if name, err = s.indexName(ctx, t, cols, st.Unique); err != nil {
				return err
			}
		}
		if err := s.checkIndexName(ctx, t.Namespace, name); err != nil {
			if st.IfNotExists && sqlerr.Code(err) == sqlerr.DuplicateTable {
				_ = pgwire.SendNotice(ctx, pgwire.Notice{Code: "42P07", Message: fmt.Sprintf("relation %q already exists, skipping", name)})
				return nil
			}
			return err
		}
		if err := s.cat.CreateColumnIndex(ctx, catalog.ColumnIndex{Name: name, TableID: t.ID, Columns: cols, Unique: st.Unique}); err != nil {
			return err
		}
		msg := fmt.Sprintf("index %q: files written from now on, and files compaction rewrites, carry bloom filters for %s; existing files are not rewritten (their statistics prune at once)",
			name, strings.Join(cols, ", "))
		if len(unprunable) > 0 {
			msg += "; columns of types without bloom filters or statistics pruning: " + strings.Join(unprunable, ", ")
		}
		if !st.Unique {
			_ = pgwire.SendNotice(ctx, pgwire.Notice{Message: msg})
		}
		return nil
	}), nil
}

// sameColumnSet reports whether a and b hold the same columns in any order.
func sameColumnSet(a, b []string) bool {
	return len(a) == len(b) && !slices.ContainsFunc(a, func(c string) bool { return !slices.Contains(b, c) })
}

// indexName is the name PostgreSQL gives an unnamed index:
// table_col…_idx (_key for UNIQUE), with a number appended while the name
// is taken.
func (s *Session) indexName(ctx context.Context, t *catalog.Table, cols []string, unique bool) (string, error) {
	suffix := "idx"
	if unique {
		suffix = "key"
	}
	base := t.Name + "_" + strings.Join(cols, "_") + "_" + suffix
	for i := 0; ; i++ {
		name := base
		if i > 0 {
			name = fmt.Sprint(base, i)
		}
		err := s.checkIndexName(ctx, t.Namespace, name)
		if sqlerr.Code(err) != sqlerr.DuplicateTable {
			return name, err
		}
	}
}
