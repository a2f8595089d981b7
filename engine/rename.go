package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/pgcatalog"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/reader"
	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Renames: ALTER TABLE [IF EXISTS] … RENAME TO, ALTER TABLE … RENAME [COLUMN]
// a TO b, ALTER VIEW [IF EXISTS] … RENAME TO (sqlfuncs/160_rename.sql).
//
// Nothing is moved or rewritten. A renamed table keeps its files and its
// directory, which the catalog records (lakesoul.table_dir), so a new table
// of the old name gets a directory of its own (catalog.CreateTable). A
// renamed column keeps its former names in its metadata
// (schema.MetaFormerNames): files written before the rename hold the old
// name and the reader takes their column by it, files written after hold
// the new one, and merge-on-read merges both. Hash buckets hash key values,
// not names, so primary-key columns rename too; range-partition columns do
// not (their name is part of every partition desc and directory). A name a
// column's files may still carry — a former name of another column, or a
// dropped column's until ADD COLUMN rewrote the files (alter.go) — is not
// reused, or old files would read back under it.
//
// Views naming a renamed table or view are rewritten to name it by its new name
// (keeping the old name as the alias their column references use), and
// views reading a renamed column to read it by its new name under its old
// output name, in the same catalog transaction, as PostgreSQL's views,
// which bind by OID, follow a rename.

func (s *Session) planRename(n *pg_query.RenameStmt) (pgwire.Statement, error) {
	switch {
	case n.RenameType == pg_query.ObjectType_OBJECT_TABLE:
		return s.ddl("ALTER TABLE", func(ctx context.Context) error { return s.renameRelation(ctx, n, false) }), nil
	case n.RenameType == pg_query.ObjectType_OBJECT_VIEW:
		return s.ddl("ALTER VIEW", func(ctx context.Context) error { return s.renameRelation(ctx, n, true) }), nil
	case n.RenameType == pg_query.ObjectType_OBJECT_COLUMN && n.RelationType == pg_query.ObjectType_OBJECT_TABLE:
		return s.ddl("ALTER TABLE", func(ctx context.Context) error { return s.renameColumn(ctx, n) }), nil
	case n.RenameType == pg_query.ObjectType_OBJECT_COLUMN:
		return nil, sqlerr.Unsupported("renaming a column of a view", "CREATE OR REPLACE VIEW with the column named anew, or ALTER TABLE … RENAME COLUMN")
	case n.RenameType == pg_query.ObjectType_OBJECT_SCHEMA:
		return s.ddl("ALTER SCHEMA", func(ctx context.Context) error { return s.renameSchema(ctx, n.Subname, n.Newname) }), nil // renameschema.go
	case n.RenameType == pg_query.ObjectType_OBJECT_TABCONSTRAINT:
		return nil, sqlerr.Unsupported("renaming a constraint", "ALTER TABLE … RENAME TO, ALTER TABLE … RENAME COLUMN, ALTER VIEW … RENAME TO")
	}
	return nil, sqlerr.Unsupported("ALTER "+strings.TrimPrefix(n.RenameType.String(), "OBJECT_")+" … RENAME",
		"ALTER TABLE … RENAME TO, ALTER TABLE … RENAME COLUMN, ALTER VIEW … RENAME TO, ALTER SCHEMA … RENAME TO")
}

// renameRelation renames a table or a view. ALTER TABLE renames views too,
// as PostgreSQL's does; ALTER VIEW refuses a table (42809).
func (s *Session) renameRelation(ctx context.Context, n *pg_query.RenameStmt, asView bool) error {
	rv := n.Relation
	t, err := s.resolveTable(ctx, rv.Schemaname, rv.Relname)
	switch {
	case err == nil && asView:
		return sqlerr.New(sqlerr.WrongObjectType, "%q is not a view", rv.Relname)
	case err == nil:
		return s.renameTable(ctx, t, n.Newname)
	case sqlerr.Code(err) != sqlerr.UndefinedTable:
		return err
	}
	v, err := s.lookupView(ctx, rv)
	if err != nil {
		return err
	}
	if v == nil {
		if n.MissingOk {
			_ = pgwire.SendNotice(ctx, pgwire.Notice{Message: fmt.Sprintf("relation %q does not exist, skipping", rv.Relname)})
			return nil
		}
		return sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", rv.Relname)
	}
	err = s.catalogAtomically(ctx, func(cat *catalog.Catalog) error {
		if err := cat.RenameView(ctx, v.Namespace, v.Name, n.Newname); err != nil {
			return err
		}
		return rewriteViews(ctx, cat, func(w catalog.View, tree *pg_query.Node) bool {
			return renameRelationRefs(tree, w, v.Namespace, v.Name, n.Newname)
		})
	})
	if err != nil {
		return err
	}
	s.relationsChanged()
	return nil
}

// renameTable renames t within its namespace and points the views naming
// it at the new name, in one catalog transaction.
func (s *Session) renameTable(ctx context.Context, t *catalog.Table, newName string) error {
	if _, err := s.e.newTableDir(t.Namespace, newName); err != nil {
		return err // a name no directory could have is refused as CREATE TABLE refuses it
	}
	err := s.catalogAtomically(ctx, func(cat *catalog.Catalog) error {
		if err := cat.RenameTable(ctx, t.ID, newName); err != nil {
			return err
		}
		return rewriteViews(ctx, cat, func(v catalog.View, tree *pg_query.Node) bool {
			return renameRelationRefs(tree, v, t.Namespace, t.Name, newName)
		})
	})
	if err != nil {
		return err
	}
	s.relationsChanged()
	return nil
}

// renameColumn renames column n.Subname of a table to n.Newname.
func (s *Session) renameColumn(ctx context.Context, n *pg_query.RenameStmt) error {
	t, err := s.resolveTable(ctx, n.Relation.Schemaname, n.Relation.Relname)
	if err != nil {
		if n.MissingOk && sqlerr.Code(err) == sqlerr.UndefinedTable {
			_ = pgwire.SendNotice(ctx, pgwire.Notice{Message: fmt.Sprintf("relation %q does not exist, skipping", n.Relation.Relname)})
			return nil
		}
		return err
	}
	nt, err := renamedColumnTable(t, n.Subname, n.Newname)
	if err != nil || nt == nil {
		return err
	}
	// Rows the open block buffered have the old column name: they are
	// written as files of the old schema first (txn.go).
	if err := s.flushBuffered(ctx, t.ID); err != nil {
		return err
	}
	err = s.catalogAtomically(ctx, func(cat *catalog.Catalog) error {
		if err := cat.RenameColumn(ctx, nt, n.Subname, n.Newname); err != nil {
			return err
		}
		return rewriteViews(ctx, cat, func(v catalog.View, tree *pg_query.Node) bool {
			return renameColumnRefs(tree, v, t, n.Subname, n.Newname)
		})
	})
	if err != nil {
		return err
	}
	s.relationsChanged()
	return nil
}

// renamedColumnTable is t with column from renamed to to: the field (its
// former names kept), the key, and the properties naming the column (merge
// operators, comments, the CDC column, CHECK constraints). nil without an
// error when the names are equal.
func renamedColumnTable(t *catalog.Table, from, to string) (*catalog.Table, error) {
	fields := slices.Clone(t.Schema.Fields())
	i := slices.IndexFunc(fields, func(f arrow.Field) bool { return f.Name == from })
	if i < 0 {
		return nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q does not exist", from)
	}
	if from == to {
		return nil, nil
	}
	if err := systemColumnConflict(to); err != nil { // systemcols.go
		return nil, err
	}
	if slices.ContainsFunc(fields, func(f arrow.Field) bool { return f.Name == to }) {
		return nil, sqlerr.New(sqlerr.DuplicateColumn, "column %q of relation %q already exists", to, t.Name)
	}
	if slices.Contains(t.RangeCols, from) {
		return nil, sqlerr.Unsupported(fmt.Sprintf("renaming partition column %q", from),
			"partition descs and directories carry the column's name; CREATE TABLE new (…) PARTITION BY LIST (new name), then INSERT INTO new SELECT … FROM old")
	}
	if taken := fileNames(t, i); slices.Contains(taken, to) {
		return nil, sqlerr.Unsupported(fmt.Sprintf("renaming a column to %q, a name data files of the table still use for another column (renamed or dropped)", to),
			"another column name")
	}
	fields[i] = schema.Renamed(fields[i], to)
	nt := *t
	nt.Schema = arrow.NewSchema(fields, nil)
	nt.Properties = maps.Clone(t.Properties)
	nt.PKCols = replaceName(t.PKCols, from, to)
	nt.IndexedCols = replaceName(t.IndexedCols, from, to)
	if _, ok := nt.Properties[catalog.HashPartitionsProperty]; ok {
		nt.Properties[catalog.HashPartitionsProperty] = strings.Join(nt.PKCols, ",")
	}
	for _, prefix := range []string{reader.MergeOpPrefix, commentProperty + "."} {
		if v, ok := nt.Properties[prefix+from]; ok {
			delete(nt.Properties, prefix+from)
			nt.Properties[prefix+to] = v
		}
	}
	if nt.Properties[catalog.CDCColumnProperty] == from {
		nt.Properties[catalog.CDCColumnProperty] = to
	}
	for k, v := range nt.Properties {
		name, ok := strings.CutPrefix(k, checkPropertyPrefix)
		if !ok {
			continue
		}
		expr, err := parseStoredExpr(v, "check constraint "+name)
		if err != nil {
			return nil, err
		}
		if renameExprColumn(expr, t.Name, from, to) {
			text, err := deparseExpr(expr)
			if err != nil {
				return nil, err
			}
			nt.Properties[k] = text
		}
	}
	return &nt, nil
}

// fileNames are the names data files of t may hold for columns other than
// column skip: the former names of the other columns and the dropped ones.
func fileNames(t *catalog.Table, skip int) []string {
	var out []string
	for j, f := range t.Schema.Fields() {
		if j != skip {
			out = append(out, schema.FormerNames(f)...)
		}
	}
	if d := t.Properties[droppedColumnProperty]; d != "" {
		out = append(out, strings.Split(d, ",")...)
	}
	return out
}

func replaceName(names []string, from, to string) []string {
	out := slices.Clone(names)
	for i, n := range out {
		if n == from {
			out[i] = to
		}
	}
	return out
}

// renameExprColumn renames references to column from (bare, or qualified
// by the table's name) in a stored expression; true when it changed one.
func renameExprColumn(expr *pg_query.Node, table, from, to string) bool {
	changed := false
	walk(expr, func(n *pg_query.Node) {
		cr := n.GetColumnRef()
		if cr == nil {
			return
		}
		f := cr.Fields
		if last := len(f) - 1; last >= 0 && f[last].GetString_().GetSval() == from &&
			(last == 0 || f[last-1].GetString_().GetSval() == table) {
			f[last] = pg_query.MakeStrNode(to)
			changed = true
		}
	})
	return changed
}

// rewriteViews offers every view the role sees, parsed, to rewrite and
// stores the definitions it changed.
func rewriteViews(ctx context.Context, cat *catalog.Catalog, rewrite func(v catalog.View, tree *pg_query.Node) bool) error {
	views, err := cat.Views(ctx)
	if err != nil {
		return err
	}
	for _, v := range views {
		tree, err := parseSQL(v.Definition)
		if err != nil || len(tree.Stmts) != 1 {
			continue // expanding it fails as it did before
		}
		stmt := tree.Stmts[0].Stmt
		if !rewrite(v, stmt) {
			continue
		}
		text, err := deparseNode(stmt)
		if err != nil {
			return fmt.Errorf("view %s.%s: %w", v.Namespace, v.Name, err)
		}
		if _, err := cat.SetViewDefinition(ctx, v.Namespace, v.Name, text); err != nil {
			return err
		}
	}
	return nil
}

// refersTo reports whether rv, in view v, names relation ns.name: by its
// namespace ("public" standing for the default namespace, as resolveTable
// takes it), or unqualified in a view of namespace ns or for a relation of
// the default namespace, which every search path ends with.
func refersTo(rv *pg_query.RangeVar, v catalog.View, ns, name string) bool {
	if rv.Relname != name || rv.Catalogname != "" {
		return false
	}
	switch pgcatalog.Namespace(rv.Schemaname) {
	case ns:
		return true
	case "":
		return v.Namespace == ns || ns == catalog.DefaultNamespace
	}
	return false
}

// renameRelationRefs points the references of a view to relation ns.old
// at newName; a reference without an alias gets the old name as alias, so
// column references qualified by it still bind.
func renameRelationRefs(tree *pg_query.Node, v catalog.View, ns, old, newName string) bool {
	ctes := cteRefs(tree)
	changed := false
	walk(tree, func(n *pg_query.Node) {
		rv := n.GetRangeVar()
		if rv == nil || ctes[rv] != nil || !refersTo(rv, v, ns, old) {
			return
		}
		if rv.Alias == nil {
			rv.Alias = &pg_query.Alias{Aliasname: rv.Relname}
		}
		rv.Relname = newName
		changed = true
	})
	return changed
}

// renameColumnRefs points a view's references to column from of t (bare,
// or qualified by a name t has in the view) at to, keeping from as the
// output name where the reference was a bare output column.
func renameColumnRefs(tree *pg_query.Node, v catalog.View, t *catalog.Table, from, to string) bool {
	ctes := cteRefs(tree)
	refnames := map[string]bool{}
	walk(tree, func(n *pg_query.Node) {
		if rv := n.GetRangeVar(); rv != nil && ctes[rv] == nil && refersTo(rv, v, t.Namespace, t.Name) {
			if rv.Alias != nil {
				refnames[rv.Alias.Aliasname] = true
			} else {
				refnames[rv.Relname] = true
			}
		}
	})
	if len(refnames) == 0 {
		return false
	}
	renamed := map[*pg_query.ColumnRef]bool{}
	walk(tree, func(n *pg_query.Node) {
		cr := n.GetColumnRef()
		if cr == nil {
			return
		}
		f := cr.Fields
		last := len(f) - 1
		if last < 0 || f[last].GetString_().GetSval() != from {
			return
		}
		if last == 0 || refnames[f[last-1].GetString_().GetSval()] {
			f[last] = pg_query.MakeStrNode(to)
			renamed[cr] = true
		}
	})
	if len(renamed) == 0 {
		return false
	}
	walk(tree, func(n *pg_query.Node) {
		if rt := n.GetResTarget(); rt != nil && rt.Name == "" && renamed[rt.Val.GetColumnRef()] {
			rt.Name = from
		}
	})
	return true
}

// relationsChanged drops the session's kept plans after a rename (other
// sessions' plans no longer resolve the old names, plancache.go, and
// prepared ones are checked before they run again: s.ddl counts the change
// in Engine.ddlGen).
func (s *Session) relationsChanged() {
	s.plans.clear()
}

// checkPlanTables refuses to run a plan whose tables changed since it was
// made, as PostgreSQL re-checks a prepared statement: a table renamed or
// dropped no longer has the name the statement used (42P01), and one whose
// columns were renamed, dropped or retyped would change the result
// (0A000, "cached plan must not change result type", which drivers such as
// pgx answer by preparing the statement again). Added columns do not
// invalidate a plan, which reads the columns it was made with.
//
// The catalog is asked again when this server changed some relation since
// the plan was last checked (Engine.ddlGen), and, for a change made by
// another server, when a plan that ran before finds in its snapshot a file
// with a column its tables do not know (checkPlanFiles): a file written
// after a rename carries the new name. Until such a file exists the plan's
// reads are what they were (every file has the names it knows).
func (s *Session) checkPlanTables(ctx context.Context, q *duckQuery) error {
	gen := s.e.ddlGen.Load()
	if q.gen == gen {
		return nil
	}
	if err := s.verifyPlanTables(ctx, q); err != nil {
		return err
	}
	q.gen = gen
	return nil
}

// checkPlanFiles is the second trigger of checkPlanTables, after the
// plan's snapshots were taken: for a plan that ran before, a file of a
// table with a column name the plan's table has neither as a column, a
// former name nor a dropped column makes the catalog be asked again.
func (s *Session) checkPlanFiles(ctx context.Context, q *duckQuery) error {
	ran := q.ran
	q.ran = true
	if !ran {
		return nil
	}
	for handle, t := range q.tables {
		e, ok := s.e.scans.get(handle)
		if !ok || !filesOutgrow(t, e.parts) {
			continue
		}
		return s.verifyPlanTables(ctx, q)
	}
	return nil
}

// filesOutgrow reports whether some file of parts has a column t does not
// know by any name.
func filesOutgrow(t *catalog.Table, parts []catalog.PartitionFiles) bool {
	var known map[string]bool
	for _, p := range parts {
		for _, f := range p.Files {
			for _, c := range f.ExistCols {
				if known == nil {
					known = map[string]bool{}
					for _, fld := range t.Schema.Fields() {
						known[fld.Name] = true
					}
					for _, n := range fileNames(t, -1) {
						known[n] = true
					}
				}
				if !known[c] {
					return true
				}
			}
		}
	}
	return false
}

// verifyPlanTables compares the plan's tables with the catalog's rows now.
func (s *Session) verifyPlanTables(ctx context.Context, q *duckQuery) error {
	seen := map[string]bool{}
	for _, t := range q.tables {
		if seen[t.ID] {
			continue
		}
		seen[t.ID] = true
		cur, err := s.cat.TableByID(ctx, t.ID)
		if sqlerr.Code(err) == sqlerr.UndefinedTable || (err == nil && (cur.Name != t.Name || cur.Namespace != t.Namespace)) {
			return sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", t.Name)
		}
		if err != nil {
			return err
		}
		for _, f := range t.Schema.Fields() {
			idx := cur.Schema.FieldIndices(f.Name)
			if len(idx) == 0 || !arrow.TypeEqual(cur.Schema.Field(idx[0]).Type, f.Type) {
				return sqlerr.New(sqlerr.FeatureNotSupported, "cached plan must not change result type")
			}
		}
	}
	return nil
}
