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
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/reader"
	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// planAlterTable handles ADD COLUMN, DROP COLUMN, ALTER COLUMN TYPE (lossless
// widening only), ALTER COLUMN SET/DROP DEFAULT and SET/RESET (options). Nothing is rewritten: files keep
// the schema they were written with and the reader maps them onto the table's
// current schema (missing columns read as NULL, dropped ones are ignored,
// narrower types are widened) — except for ADD COLUMN of a dropped column's
// name, which first rewrites the files without the dropped values
// (readdedColumns).
func (s *Session) planAlterTable(ctx context.Context, n *pg_query.AlterTableStmt) (pgwire.Statement, error) {
	if role, ok := ownerCmd(n); ok && n.Objtype == pg_query.ObjectType_OBJECT_VIEW {
		return s.planOwnerTo("VIEW", role, func(ctx context.Context) error { return s.relationExists(ctx, n.Relation) })
	}
	if role, ok := ownerCmd(n); ok && n.Objtype == pg_query.ObjectType_OBJECT_SEQUENCE {
		return s.planOwnerTo("SEQUENCE", role, func(ctx context.Context) error { return s.sequenceExists(ctx, n.Relation) })
	}
	if n.Objtype != pg_query.ObjectType_OBJECT_TABLE {
		return nil, sqlerr.Unsupported("ALTER "+strings.TrimPrefix(n.Objtype.String(), "OBJECT_"), "ALTER TABLE")
	}
	if len(n.Cmds) == 1 && n.Cmds[0].GetAlterTableCmd().GetSubtype() == pg_query.AlterTableType_AT_AddIdentity {
		return s.planAddIdentity(n, n.Cmds[0].GetAlterTableCmd()) // restoreddl.go
	}
	if con, ok := primaryKeyCmd(n); ok { // restoreddl.go: pg_dump adds keys after CREATE TABLE
		return s.planAddPrimaryKey(n, con)
	}
	if role, ok := ownerCmd(n); ok {
		// pg_dump writes ALTER TABLE … OWNER TO for sequences too.
		return s.planOwnerTo("TABLE", role, func(ctx context.Context) error {
			err := s.relationExists(ctx, n.Relation)
			if sqlerr.Code(err) == sqlerr.UndefinedTable && s.sequenceExists(ctx, n.Relation) == nil {
				return nil
			}
			return err
		})
	}
	if err := s.resolveColumnTypes(ctx, alterColumnDefs(n)); err != nil { // enum.go
		return nil, err
	}
	if slices.ContainsFunc(n.Cmds, func(c *pg_query.Node) bool { return rowsCmd(c.GetAlterTableCmd()) }) {
		return s.planAlterRows(n), nil // alterrows.go: defaults, NOT NULL and CHECKs over existing rows
	}
	rewrote := "" // the table whose files were rewritten for a re-added column
	ddl := s.ddl("ALTER TABLE", func(ctx context.Context) error {
		t, err := s.alterTarget(ctx, n)
		if t == nil || err != nil {
			return err
		}
		if name, ok := droppedAndAdded(n); ok {
			// The files are rewritten before the DDL, while the column
			// still exists: they would keep its values.
			return sqlerr.Unsupported(fmt.Sprintf("dropping and adding column %q in one ALTER TABLE", name),
				"two ALTER TABLE statements (in one transaction block if they must commit together)")
		}
		if len(readdedColumns(t, n)) > 0 && rewrote != t.ID {
			// The column was dropped after the files were checked.
			return sqlerr.New(sqlerr.SerializationFailure, "could not serialize access due to a concurrent DROP COLUMN on %q", t.Name)
		}
		// A new default's names are bound now, with the creator's
		// search_path and rights (storedrefs.go).
		for _, c := range n.Cmds {
			if cmd := c.GetAlterTableCmd(); cmd.Subtype == pg_query.AlterTableType_AT_ColumnDefault && cmd.Def != nil {
				if err := s.defaultDefinition(ctx, cmd.Def); err != nil { // columndefault.go
					return err
				}
			}
		}
		nt := *t
		nt.Properties = maps.Clone(t.Properties)
		fields := slices.Clone(t.Schema.Fields())
		for _, c := range n.Cmds {
			if fields, err = applyAlterCmd(&nt, fields, c.GetAlterTableCmd()); err != nil {
				return err
			}
		}
		// A new default must translate (its errors are ALTER TABLE's, not
		// a later INSERT's).
		for _, c := range n.Cmds {
			if cmd := c.GetAlterTableCmd(); cmd.Subtype == pg_query.AlterTableType_AT_ColumnDefault && cmd.Def != nil {
				f := fields[slices.IndexFunc(fields, func(f arrow.Field) bool { return f.Name == cmd.Name })]
				if def, _ := columnDefault(f); def != "" && !callsSequenceFunctions(cmd.Def) {
					if _, err := s.defaultSQL(ctx, t.Namespace, def, f); err != nil {
						return err
					}
				}
			}
		}
		nt.Schema = arrow.NewSchema(fields, nil)
		if err := checkTableOptions(&nt); err != nil {
			return err
		}
		// Rows the open block buffered have the old columns: they are
		// written as files of the old schema first (txn.go).
		if err := s.flushBuffered(ctx, t.ID); err != nil {
			return err
		}
		return s.cat.AlterTable(ctx, &nt)
	})
	if !slices.ContainsFunc(n.Cmds, func(c *pg_query.Node) bool {
		return c.GetAlterTableCmd().GetSubtype() == pg_query.AlterTableType_AT_AddColumn
	}) {
		return ddl, nil // re-adds no column: the table is read once, by the DDL
	}
	return &funcStmt{tag: "ALTER TABLE", run: func(ctx context.Context, args []any) (string, [][]any, error) {
		t, err := s.alterTarget(ctx, n)
		if err != nil || t == nil || len(readdedColumns(t, n)) == 0 {
			return ddl.run(ctx, args)
		}
		// Files written before the column was dropped hold its values
		// under the name: they are rewritten without it first, in the
		// same transaction as the ADD COLUMN, so the new column is new.
		return s.inOwnBlock(ctx, "ALTER TABLE", func(ctx context.Context) error {
			if err := s.rewriteCurrentColumns(ctx, t); err != nil {
				return err
			}
			rewrote = t.ID
			defer func() { rewrote = "" }()
			_, _, err := ddl.run(ctx, args)
			return err
		})
	}}, nil
}

// readdedColumns are the columns n adds whose names t lists as dropped:
// files written before the drop may hold values under those names.
func readdedColumns(t *catalog.Table, n *pg_query.AlterTableStmt) []string {
	dropped := strings.Split(t.Properties[droppedColumnProperty], ",")
	var out []string
	for _, c := range n.Cmds {
		cmd := c.GetAlterTableCmd()
		if cmd.GetSubtype() != pg_query.AlterTableType_AT_AddColumn {
			continue
		}
		if name := cmd.Def.GetColumnDef().GetColname(); slices.Contains(dropped, name) && findField(t, name) < 0 {
			out = append(out, name)
		}
	}
	return out
}

// droppedAndAdded finds a column name n both drops and adds.
func droppedAndAdded(n *pg_query.AlterTableStmt) (string, bool) {
	dropped := map[string]bool{}
	for _, c := range n.Cmds {
		cmd := c.GetAlterTableCmd()
		switch cmd.GetSubtype() {
		case pg_query.AlterTableType_AT_DropColumn:
			dropped[cmd.Name] = true
		case pg_query.AlterTableType_AT_AddColumn:
			if name := cmd.Def.GetColumnDef().GetColname(); dropped[name] {
				return name, true
			}
		}
	}
	return "", false
}

// rewriteCurrentColumns rewrites every partition of t into new files
// holding exactly t's current columns (merge-on-read applied), replacing
// all of the partition's files: afterwards no live file holds a
// dropped column. Inside a transaction block the new files commit with it.
func (s *Session) rewriteCurrentColumns(ctx context.Context, t *catalog.Table) error {
	rel := &pg_query.RangeVar{Schemaname: t.Namespace, Relname: t.Name, Inh: true, Relpersistence: "p", Location: -1}
	d, err := s.dmlTarget(ctx, rel, nil, nil)
	if err != nil {
		return err
	}
	// A partition whose rows are all deleted may still have files holding
	// the dropped values (under CDC delete markers): replaced too.
	d.rewriteAll = true
	var targets []*pg_query.Node
	for _, f := range d.t.Schema.Fields() {
		targets = append(targets, resTarget(f.Name, colRef(d.alias, f.Name)))
	}
	st, err := s.planRewrite(ctx, d, "ALTER TABLE", targets, d.t.Schema.Fields(), false, nil, nil)
	if err != nil {
		return err
	}
	_, _, err = st.(*funcStmt).run(ctx, nil)
	return err
}

// droppedColumnProperty is LakeSoul's property listing dropped column names.
const droppedColumnProperty = catalog.DroppedColumnProperty

func applyAlterCmd(t *catalog.Table, fields []arrow.Field, cmd *pg_query.AlterTableCmd) ([]arrow.Field, error) {
	find := func(name string) int {
		return slices.IndexFunc(fields, func(f arrow.Field) bool { return f.Name == name })
	}
	isKey := func(name string) bool { return slices.Contains(t.PKCols, name) || slices.Contains(t.RangeCols, name) }
	switch cmd.Subtype {
	case pg_query.AlterTableType_AT_AddColumn:
		cd := cmd.Def.GetColumnDef()
		if find(cd.Colname) >= 0 {
			if cmd.MissingOk {
				return fields, nil
			}
			return nil, sqlerr.New(sqlerr.DuplicateObject, "column %q of relation %q already exists", cd.Colname, t.Name)
		}
		if err := systemColumnConflict(cd.Colname); err != nil { // systemcols.go
			return nil, err
		}
		// A dropped column's name is free again once no live file holds
		// it (planAlterTable rewrote them in this transaction); files of
		// older snapshots still hold the dropped values under it.
		if d := t.Properties[droppedColumnProperty]; d != "" {
			names := slices.DeleteFunc(strings.Split(d, ","), func(n string) bool { return n == cd.Colname })
			if len(names) == 0 {
				delete(t.Properties, droppedColumnProperty)
			} else {
				t.Properties[droppedColumnProperty] = strings.Join(names, ",")
			}
		}
		// Another column's files may hold its values under a former name:
		// a new column of that name would read them back.
		if slices.Contains(fileNames(&catalog.Table{Schema: arrow.NewSchema(fields, nil)}, -1), cd.Colname) {
			return nil, sqlerr.Unsupported(fmt.Sprintf("adding column %q, a former name of a renamed column", cd.Colname), "a new column name")
		}
		for _, c := range cd.Constraints {
			if con := c.GetConstraint(); con.Contype != pg_query.ConstrType_CONSTR_NULL {
				return nil, sqlerr.Unsupported("constraints on an added column", "ADD COLUMN name type (existing rows read NULL)")
			}
		}
		if _, serial := serialTypes[typeNameString(cd.TypeName)]; serial {
			return nil, sqlerr.Unsupported("adding a SERIAL column", "CREATE TABLE with the SERIAL column, then INSERT … SELECT")
		}
		f, err := columnField(cd)
		if err != nil {
			return nil, err
		}
		return append(fields, f), nil
	case pg_query.AlterTableType_AT_DropColumn:
		i := find(cmd.Name)
		if i < 0 {
			if cmd.MissingOk {
				return fields, nil
			}
			return nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", cmd.Name, t.Name)
		}
		if isKey(cmd.Name) {
			return nil, sqlerr.Unsupported(fmt.Sprintf("dropping primary-key or partition column %q", cmd.Name), "DROP COLUMN of other columns")
		}
		if len(fields) == 1 {
			return nil, sqlerr.New(sqlerr.InvalidTableDefinition, "a lake table needs at least one column")
		}
		delete(t.Properties, reader.MergeOpPrefix+cmd.Name)
		// Its files may hold it under former names too (rename.go).
		dropped := append(schema.FormerNames(fields[i]), cmd.Name)
		if d := t.Properties[droppedColumnProperty]; d != "" {
			t.Properties[droppedColumnProperty] = d + "," + strings.Join(dropped, ",")
		} else {
			t.Properties[droppedColumnProperty] = strings.Join(dropped, ",")
		}
		if t.CDCColumn() == cmd.Name {
			delete(t.Properties, catalog.CDCColumnProperty)
			delete(t.Properties, "use_cdc")
		}
		return slices.Delete(fields, i, i+1), nil
	case pg_query.AlterTableType_AT_AlterColumnType:
		i := find(cmd.Name)
		if i < 0 {
			return nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", cmd.Name, t.Name)
		}
		cd := cmd.Def.GetColumnDef()
		if cd.RawDefault != nil {
			return nil, sqlerr.Unsupported("ALTER COLUMN TYPE ... USING", "lossless widening without USING")
		}
		mods, err := typeMods(cd.TypeName)
		if err != nil {
			return nil, sqlerr.New(sqlerr.SyntaxError, "column %q: %v", cmd.Name, err)
		}
		dt, _, err := schema.FromPGType(typeNameString(cd.TypeName), mods, len(cd.TypeName.ArrayBounds) > 0)
		if err != nil {
			return nil, sqlerr.Wrap(sqlerr.FeatureNotSupported, err, fmt.Sprintf("column %q: unsupported type", cmd.Name))
		}
		if isKey(cmd.Name) && !arrow.TypeEqual(dt, fields[i].Type) {
			return nil, sqlerr.Unsupported(fmt.Sprintf("changing the type of key or partition column %q", cmd.Name), "widening other columns")
		}
		if !reader.CanWiden(fields[i].Type, dt) {
			return nil, sqlerr.Unsupported(fmt.Sprintf("changing column %q from %s to %s", cmd.Name, fields[i].Type, dt),
				"lossless widening (smallint → integer → bigint, real → double precision, integer → double precision)")
		}
		fields[i].Type = dt
		return fields, nil
	case pg_query.AlterTableType_AT_ColumnDefault:
		// SET DEFAULT expr / DROP DEFAULT: the default is metadata of the
		// column (columndefault.go); written rows are not touched.
		i := find(cmd.Name)
		if i < 0 {
			return nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", cmd.Name, t.Name)
		}
		if _, always := columnDefault(fields[i]); always || fields[i].Metadata.FindKey(schema.MetaIdentity) >= 0 {
			return nil, sqlerr.New(sqlerr.SyntaxError, "column %q of relation %q is an identity column", cmd.Name, t.Name)
		}
		def := ""
		if cmd.Def != nil {
			// Checked and bound by defaultDefinition first (planAlterTable).
			text, err := deparseExpr(cmd.Def)
			if err != nil {
				return nil, err
			}
			def = typedDefaultText(cmd.Def, fields[i], text) // columndefault.go
		}
		fields[i] = withDefault(fields[i], def)
		return fields, nil
	case pg_query.AlterTableType_AT_DropConstraint:
		// CHECK constraints are table properties (checks.go); the primary
		// key is the table's layout and stays.
		if _, ok := t.Properties[checkPropertyPrefix+cmd.Name]; ok {
			delete(t.Properties, checkPropertyPrefix+cmd.Name)
			return fields, nil
		}
		if t.HasPK() && cmd.Name == t.Name+"_pkey" {
			return nil, sqlerr.Unsupported("dropping the primary key of a lake table", "CREATE TABLE new AS SELECT … FROM old, without a key")
		}
		if cmd.MissingOk {
			return fields, nil
		}
		return nil, sqlerr.New(sqlerr.UndefinedObject, "constraint %q of relation %q does not exist", cmd.Name, t.Name)
	case pg_query.AlterTableType_AT_SetRelOptions, pg_query.AlterTableType_AT_ResetRelOptions:
		for _, o := range cmd.Def.GetList().GetItems() {
			d := o.GetDefElem()
			key := d.Defname
			if d.Defnamespace != "" {
				key = d.Defnamespace + "." + key
			}
			if key == optHashBucketNum || key == catalog.HashBucketNumProperty {
				return nil, sqlerr.Unsupported("changing hash_bucket_num", "re-bucketing comes with compaction (newBucketNum)")
			}
			if err := checkUserOption(key); err != nil { // ddl.go
				return nil, err
			}
			if key == "cdc_column" {
				key = catalog.CDCColumnProperty
			}
			if cmd.Subtype == pg_query.AlterTableType_AT_ResetRelOptions {
				delete(t.Properties, key)
				continue
			}
			t.Properties[key] = defElemValue(d)
		}
		return fields, nil
	}
	return nil, sqlerr.Unsupported("this ALTER TABLE action", "ADD COLUMN, DROP COLUMN, ALTER COLUMN TYPE (widening), ALTER COLUMN SET/DROP DEFAULT, DROP CONSTRAINT (checks), SET (...), RESET (...)")
}

// alterTarget resolves the table of an ALTER TABLE; nil without an error
// when IF EXISTS names a table that does not exist.
func (s *Session) alterTarget(ctx context.Context, n *pg_query.AlterTableStmt) (*catalog.Table, error) {
	t, err := s.resolveTable(ctx, n.Relation.Schemaname, n.Relation.Relname)
	if err != nil && n.MissingOk && sqlerr.Code(err) == sqlerr.UndefinedTable {
		return nil, nil
	}
	return t, err
}
