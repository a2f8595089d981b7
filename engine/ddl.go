package engine

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/google/uuid"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/pgcatalog"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/reader"
	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// DefaultHashBucketNum is the bucket count of a primary-key table created
// without WITH (hash_bucket_num = N). A power of two, so JVM and native LakeSoul
// clients agree on buckets (reference §3.2).
const DefaultHashBucketNum = 4

func (s *Session) planCreateSchema(n *pg_query.CreateSchemaStmt) (pgwire.Statement, error) {
	if len(n.SchemaElts) > 0 {
		return nil, sqlerr.Unsupported("CREATE SCHEMA with schema elements", "CREATE SCHEMA name, then CREATE TABLE name.table")
	}
	name := n.Schemaname
	if name == "" {
		return nil, sqlerr.New(sqlerr.SyntaxError, "CREATE SCHEMA needs a name")
	}
	if err := checkSchemaName(name); err != nil { // renameschema.go
		return nil, err
	}
	return s.ddl("CREATE SCHEMA", func(ctx context.Context) error {
		// The namespace's workspace: SET lakesoul.workspace, else the
		// role's only workspace, else public (LakeSoul's current domain).
		domain := s.settings["lakesoul.workspace"].value
		if domain == "" {
			var err error
			if domain, err = s.cat.DefaultWorkspace(ctx); err != nil {
				return err
			}
		}
		err := s.cat.CreateNamespaceIn(ctx, pgcatalog.Namespace(name), domain)
		switch {
		case err != nil && n.IfNotExists && sqlerr.Code(err) == sqlerr.DuplicateSchema:
			return nil
		case sqlerr.Code(err) == sqlerr.DuplicateSchema:
			return &sqlerr.Error{Code: sqlerr.DuplicateSchema, Message: fmt.Sprintf("schema %q already exists", name), Err: err}
		case sqlerr.Code(err) == sqlerr.InsufficientPrivilege:
			// The catalog refused the namespace row (its privileges or
			// row-level security); PostgreSQL words this as the missing
			// CREATE privilege on the database. The catalog's own message
			// names LakeSoul's tables and stays in the log.
			return &sqlerr.Error{Code: sqlerr.InsufficientPrivilege,
				Message: fmt.Sprintf("permission denied for database %s", DatabaseName), Err: err}
		}
		return err
	}), nil
}

// tableOptions are the WITH (...) options CREATE TABLE understands; any other
// option is stored verbatim in table_info.properties (LakeSoul table options).
const optHashBucketNum = "hash_bucket_num"

func (s *Session) planCreateTable(ctx context.Context, n *pg_query.CreateStmt) (pgwire.Statement, error) {
	rel := n.Relation
	if rel.Relpersistence == "t" {
		return s.planCreateTempTable(n) // temptable.go
	}
	if len(n.InhRelations) > 0 || n.OfTypename != nil || n.Partbound != nil {
		return nil, sqlerr.Unsupported("INHERITS / OF type / PARTITION OF", "CREATE TABLE t (...) [PARTITION BY LIST (cols)]")
	}
	ns := pgcatalog.Namespace(rel.Schemaname)
	if ns == "" {
		ns = s.searchPath()[0]
	}
	if n.IfNotExists {
		// As PostgreSQL: an existing relation makes the statement a notice
		// before its definition is looked at (bun/migrate's lock table
		// declares a UNIQUE column that lake tables do not have).
		exists, err := s.relationIn(ctx, ns, rel.Relname)
		if err != nil {
			return nil, err
		}
		if exists {
			return relationExistsSkipping(rel.Relname), nil
		}
	}
	if err := s.resolveColumnTypes(ctx, tableColumnDefs(n.TableElts)); err != nil { // enum.go
		return nil, err
	}
	t := &catalog.Table{
		ID:         "table_" + uuid.NewString(),
		Namespace:  ns,
		Name:       rel.Relname,
		Properties: map[string]string{},
	}
	var fields []arrow.Field
	notNull := map[string]bool{}
	var seqs []ownedSequence // columndefault.go
	type pendingCheck struct {
		con    *pg_query.Constraint
		column string
	}
	var checks []pendingCheck
	for _, elt := range n.TableElts {
		switch {
		case elt.GetColumnDef() != nil:
			cd := elt.GetColumnDef()
			if slices.ContainsFunc(fields, func(f arrow.Field) bool { return f.Name == cd.Colname }) {
				return nil, sqlerr.New(sqlerr.DuplicateObject, "column %q specified more than once", cd.Colname)
			}
			if err := systemColumnConflict(cd.Colname); err != nil { // systemcols.go
				return nil, err
			}
			f, seq, err := s.columnWithDefault(ctx, ns, rel.Relname, cd) // columndefault.go
			if err != nil {
				return nil, err
			}
			if seq != nil {
				seqs = append(seqs, *seq)
				notNull[cd.Colname] = true
			}
			fields = append(fields, f)
			for _, c := range cd.Constraints {
				con := c.GetConstraint()
				switch con.Contype {
				case pg_query.ConstrType_CONSTR_DEFAULT, pg_query.ConstrType_CONSTR_IDENTITY:
					// columnWithDefault
					if con.Contype == pg_query.ConstrType_CONSTR_IDENTITY {
						notNull[cd.Colname] = true
					}
				case pg_query.ConstrType_CONSTR_PRIMARY:
					if len(t.PKCols) > 0 {
						return nil, sqlerr.New(sqlerr.InvalidTableDefinition, "multiple primary keys for table %q are not allowed", rel.Relname)
					}
					t.PKCols = []string{cd.Colname}
				case pg_query.ConstrType_CONSTR_NOTNULL:
					notNull[cd.Colname] = true
				case pg_query.ConstrType_CONSTR_NULL:
				case pg_query.ConstrType_CONSTR_CHECK:
					checks = append(checks, pendingCheck{con, cd.Colname})
				default:
					return nil, unsupportedConstraint(con)
				}
			}
		case elt.GetConstraint() != nil:
			con := elt.GetConstraint()
			if con.Contype == pg_query.ConstrType_CONSTR_CHECK {
				checks = append(checks, pendingCheck{con, ""})
				continue
			}
			if con.Contype != pg_query.ConstrType_CONSTR_PRIMARY {
				return nil, unsupportedConstraint(con)
			}
			if len(t.PKCols) > 0 {
				return nil, sqlerr.New(sqlerr.InvalidTableDefinition, "multiple primary keys for table %q are not allowed", rel.Relname)
			}
			for _, k := range con.Keys {
				t.PKCols = append(t.PKCols, k.GetString_().Sval)
			}
		default:
			return nil, sqlerr.Unsupported("this table element", "column definitions and PRIMARY KEY")
		}
	}
	if len(fields) == 0 {
		return nil, sqlerr.New(sqlerr.InvalidTableDefinition, "a lake table needs at least one column")
	}
	has := func(c string) bool {
		return slices.ContainsFunc(fields, func(f arrow.Field) bool { return f.Name == c })
	}
	for _, c := range t.PKCols {
		if !has(c) {
			return nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q named in key does not exist", c)
		}
		notNull[c] = true
	}
	if ps := n.Partspec; ps != nil {
		if ps.Strategy != pg_query.PartitionStrategy_PARTITION_STRATEGY_LIST {
			return nil, sqlerr.Unsupported("PARTITION BY "+strings.TrimPrefix(ps.Strategy.String(), "PARTITION_STRATEGY_"),
				"PARTITION BY LIST (cols): one directory per value, as LakeSoul range partitions")
		}
		for _, p := range ps.PartParams {
			pe := p.GetPartitionElem()
			if pe.Name == "" {
				return nil, sqlerr.Unsupported("partitioning by an expression", "PARTITION BY LIST (column, …)")
			}
			if !has(pe.Name) {
				return nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q named in partition key does not exist", pe.Name)
			}
			if strings.ContainsAny(pe.Name, ",=") {
				// A partition desc is `col=value,…`: such a name would not
				// parse back (LakeSoul refuses these descs too).
				return nil, sqlerr.New(sqlerr.InvalidTableDefinition, "partition column %q: names of partition columns cannot contain ',' or '='", pe.Name)
			}
			if slices.Contains(t.PKCols, pe.Name) {
				return nil, sqlerr.New(sqlerr.InvalidTableDefinition, "column %q cannot be both a partition column and part of the primary key", pe.Name)
			}
			t.RangeCols = append(t.RangeCols, pe.Name)
		}
	}
	for i := range fields {
		if notNull[fields[i].Name] {
			fields[i].Nullable = false
		}
	}
	for _, c := range t.PKCols {
		idx := slices.IndexFunc(fields, func(f arrow.Field) bool { return f.Name == c })
		if fields[idx].Type.ID() == arrow.BINARY {
			return nil, sqlerr.Unsupported("a bytea primary key", "primary keys of integer, float, text, date, timestamp, numeric or boolean type")
		}
		if schema.IsInterval(fields[idx].Type) {
			// LakeSoul's bucket hash has no interval form, and PostgreSQL's
			// interval equality ('1 mon' = '30 days') is not the equality
			// of its three fields, which the merge would need.
			return nil, sqlerr.Unsupported("an interval primary key", "primary keys of integer, float, text, date, timestamp, numeric or boolean type; keep the interval a non-key column")
		}
	}
	t.Schema = arrow.NewSchema(fields, nil)
	t.HashBucketNum = -1
	if t.HasPK() {
		t.HashBucketNum = DefaultHashBucketNum
	}
	for _, o := range n.Options {
		d := o.GetDefElem()
		key, val := d.Defname, defElemValue(d)
		if d.Defnamespace != "" {
			key = d.Defnamespace + "." + key
		}
		switch key {
		case optHashBucketNum, catalog.HashBucketNumProperty:
			nb, err := strconv.Atoi(val)
			if err != nil || nb < 1 {
				return nil, sqlerr.New(sqlerr.InvalidParameterValue, "hash_bucket_num must be a positive integer, got %q", val)
			}
			if !t.HasPK() {
				return nil, sqlerr.New(sqlerr.InvalidParameterValue, "hash_bucket_num needs a PRIMARY KEY: buckets are chosen by hashing the key")
			}
			t.HashBucketNum = nb
		case "cdc_column", reader.CDCColumnProperty:
			t.Properties[reader.CDCColumnProperty] = val
			t.Properties["use_cdc"] = "true"
		default:
			if err := checkUserOption(key); err != nil {
				return nil, err
			}
			t.Properties[key] = val
		}
	}
	for _, c := range checks {
		if err := s.addCheck(ctx, t, c.con, c.column); err != nil { // checks.go
			return nil, err
		}
	}
	if err := checkTableOptions(t); err != nil {
		return nil, err
	}
	path, err := s.e.newTableDir(ns, rel.Relname)
	if err != nil {
		return nil, err
	}
	t.Path = path
	return s.ddl("CREATE TABLE", func(ctx context.Context) error {
		if err := s.checkNotDropped(t); err != nil {
			return err
		}
		if v, err := s.cat.ViewByName(ctx, ns, t.Name); err != nil {
			return err
		} else if v != nil {
			if n.IfNotExists {
				return nil
			}
			return sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", t.Name)
		}
		err := s.catalogAtomically(ctx, func(cat *catalog.Catalog) error {
			if err := cat.CreateTable(ctx, t); err != nil {
				return err
			}
			// The sequences of SERIAL and IDENTITY columns, owned by the
			// table, in the same catalog transaction.
			for _, q := range seqs {
				q.opts.OwnerTable = t.ID
				if err := cat.CreateSequence(ctx, ns, q.name, q.opts); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil && n.IfNotExists && sqlerr.Code(err) == sqlerr.DuplicateTable {
			return nil
		}
		return err
	}), nil
}

// relationIn reports whether namespace ns has a table or view name.
func (s *Session) relationIn(ctx context.Context, ns, name string) (bool, error) {
	if _, err := s.cat.TableByName(ctx, ns, name); err == nil {
		return true, nil
	} else if sqlerr.Code(err) != sqlerr.UndefinedTable {
		return false, err
	}
	v, err := s.cat.ViewByName(ctx, ns, name)
	return v != nil, err
}

// relationExistsSkipping is CREATE TABLE IF NOT EXISTS of an existing
// relation: PostgreSQL's notice, nothing done.
func relationExistsSkipping(name string) pgwire.Statement {
	return &funcStmt{tag: "CREATE TABLE", run: func(ctx context.Context, _ []any) (string, [][]any, error) {
		_ = pgwire.SendNotice(ctx, pgwire.Notice{Code: "42P07", Message: fmt.Sprintf("relation %q already exists, skipping", name)})
		return "CREATE TABLE", nil, nil
	}}
}

// unsupportedConstraint is the 0A000 of a constraint lake tables do not
// have, with what works instead.
func unsupportedConstraint(con *pg_query.Constraint) error {
	what := fmt.Sprintf("constraint %s on a lake table", strings.TrimPrefix(con.Contype.String(), "CONSTR_"))
	switch con.Contype {
	case pg_query.ConstrType_CONSTR_FOREIGN:
		return sqlerr.Unsupported("FOREIGN KEY constraints on lake tables", "foreign keys are not enforced across lake tables; check references with a join (… WHERE NOT EXISTS …)")
	case pg_query.ConstrType_CONSTR_UNIQUE:
		return sqlerr.Unsupported("UNIQUE constraints other than the primary key", "PRIMARY KEY (cols): the key is unique by merge-on-read")
	case pg_query.ConstrType_CONSTR_EXCLUSION:
		return sqlerr.Unsupported("EXCLUDE constraints", "PRIMARY KEY, CHECK (condition)")
	}
	return sqlerr.Unsupported(what, "PRIMARY KEY, NOT NULL, DEFAULT, CHECK, GENERATED AS IDENTITY")
}

// columnField is the lake column of a column definition (nullable; the
// caller applies constraints).
func columnField(cd *pg_query.ColumnDef) (arrow.Field, error) {
	name := typeNameString(cd.TypeName)
	mods, err := typeMods(cd.TypeName)
	if err != nil {
		return arrow.Field{}, sqlerr.New(sqlerr.SyntaxError, "column %q: %v", cd.Colname, err)
	}
	dt, pgType, err := schema.FromPGType(name, mods, len(cd.TypeName.ArrayBounds) > 0)
	if err != nil {
		return arrow.Field{}, sqlerr.Wrap(sqlerr.FeatureNotSupported, err, fmt.Sprintf("column %q has an unsupported type", cd.Colname))
	}
	f := arrow.Field{Name: cd.Colname, Type: dt, Nullable: true}
	if pgType != "" {
		f.Metadata = arrow.NewMetadata([]string{schema.MetaPGType}, []string{pgType})
	}
	return f, nil
}

// checkUserOption refuses key as a table option a statement names
// (CREATE TABLE … WITH, ALTER TABLE … SET/RESET) when the server writes it
// itself (catalog.InternalProperties: CHECK constraints, comments, the key
// and buckets, …), with the statement that sets it as the hint.
func checkUserOption(key string) error {
	p, ok := catalog.InternalPropertyOf(key)
	if !ok {
		return nil
	}
	e := sqlerr.New(sqlerr.InvalidParameterValue, "table property %q cannot be set or reset as an option", key)
	e.Hint = "The server maintains it: " + p.Use + "."
	return e
}

// checkTableOptions validates the options with meaning for merge-on-read:
// merge operators and the CDC column.
func checkTableOptions(t *catalog.Table) error {
	col := func(name string) (arrow.Field, bool) {
		idx := t.Schema.FieldIndices(name)
		if len(idx) == 0 {
			return arrow.Field{}, false
		}
		return t.Schema.Field(idx[0]), true
	}
	if c := t.Properties[reader.CDCColumnProperty]; c != "" {
		f, ok := col(c)
		switch {
		case !ok:
			return sqlerr.New(sqlerr.UndefinedColumn, "cdc_column %q is not a column of the table", c)
		case !t.HasPK():
			return sqlerr.New(sqlerr.InvalidTableDefinition, "a CDC table needs a PRIMARY KEY")
		case f.Type.ID() != arrow.STRING:
			return sqlerr.New(sqlerr.InvalidTableDefinition, "cdc_column %q must be text (values insert, update, delete)", c)
		case slices.Contains(t.PKCols, c) || slices.Contains(t.RangeCols, c):
			return sqlerr.New(sqlerr.InvalidTableDefinition, "cdc_column %q cannot be a key or partition column", c)
		}
	}
	for k, v := range t.Properties {
		name, ok := strings.CutPrefix(k, reader.MergeOpPrefix)
		if !ok {
			continue
		}
		f, ok := col(name)
		if !ok {
			return sqlerr.New(sqlerr.UndefinedColumn, "merge operator for unknown column %q", name)
		}
		if !t.HasPK() || slices.Contains(t.PKCols, name) || slices.Contains(t.RangeCols, name) {
			return sqlerr.New(sqlerr.InvalidTableDefinition, "merge operators apply to non-key columns of tables with a PRIMARY KEY")
		}
		op, err := reader.ParseMergeOp(v)
		if err != nil {
			return sqlerr.Wrap(sqlerr.InvalidParameterValue, err, "invalid merge operator")
		}
		if err := reader.CheckMergeOp(op, f.Type); err != nil {
			return sqlerr.Wrap(sqlerr.InvalidParameterValue, err, fmt.Sprintf("merge operator for column %q", name))
		}
	}
	return nil
}

func (s *Session) planDrop(n *pg_query.DropStmt) (pgwire.Statement, error) {
	if n.RemoveType == pg_query.ObjectType_OBJECT_TYPE {
		return s.planDropTypes(n) // enum.go
	}
	if n.RemoveType == pg_query.ObjectType_OBJECT_FUNCTION {
		return s.planDropFunctions(n) // tempfunc.go
	}
	cascade := n.Behavior == pg_query.DropBehavior_DROP_CASCADE
	var names [][]string
	for _, obj := range n.Objects {
		var parts []string
		if l := obj.GetList(); l != nil {
			for _, it := range l.Items {
				parts = append(parts, it.GetString_().Sval)
			}
		} else if s := obj.GetString_(); s != nil {
			parts = []string{s.Sval}
		}
		names = append(names, parts)
	}
	switch n.RemoveType {
	case pg_query.ObjectType_OBJECT_TABLE:
		if st, ok := s.planDropTemp(names, n.MissingOk); ok { // temptable.go
			return st, nil
		}
		return s.ddl("DROP TABLE", func(ctx context.Context) error {
			for _, parts := range names {
				if err := s.dropTable(ctx, parts, n.MissingOk); err != nil {
					return err
				}
			}
			return nil
		}), nil
	case pg_query.ObjectType_OBJECT_VIEW:
		return s.ddl("DROP VIEW", func(ctx context.Context) error {
			return s.dropNamed(ctx, "view", names, n.MissingOk, s.cat.DropView) // sequence.go
		}), nil
	case pg_query.ObjectType_OBJECT_SEQUENCE:
		return s.ddl("DROP SEQUENCE", func(ctx context.Context) error {
			return s.dropNamed(ctx, "sequence", names, n.MissingOk, s.cat.DropSequence) // sequence.go
		}), nil
	case pg_query.ObjectType_OBJECT_INDEX:
		return s.ddl("DROP INDEX", func(ctx context.Context) error {
			for _, parts := range names {
				if err := s.dropIndex(ctx, parts, n.MissingOk); err != nil { // vectorindex.go
					return err
				}
			}
			return nil
		}), nil
	case pg_query.ObjectType_OBJECT_SCHEMA:
		return s.ddl("DROP SCHEMA", func(ctx context.Context) error {
			for _, parts := range names {
				paths, err := s.cat.DropNamespace(ctx, pgcatalog.Namespace(parts[0]), cascade)
				if err != nil {
					if n.MissingOk && sqlerr.Code(err) == sqlerr.InvalidSchemaName {
						continue
					}
					return err
				}
				for _, p := range paths {
					s.dropTableDir(ctx, pgcatalog.Namespace(parts[0]), p)
				}
			}
			return nil
		}), nil
	}
	return nil, sqlerr.Unsupported("DROP "+strings.TrimPrefix(n.RemoveType.String(), "OBJECT_"), "DROP TABLE, DROP SCHEMA, DROP SEQUENCE, DROP VIEW, DROP INDEX, DROP TYPE")
}

// splitRelationName splits a dotted object name into lake namespace (""
// when unqualified; the PostgreSQL face's schema name mapped by
// pgcatalog.Namespace) and name, as PostgreSQL's DeconstructQualifiedName
// does: a third, leading part is the database, which must be this one (ORMs
// and dbt write "db"."schema"."name"; another is 0A000); more parts are 42601.
func splitRelationName(parts []string) (ns, name string, err error) {
	switch len(parts) {
	case 1:
		return "", parts[0], nil
	case 2:
		return pgcatalog.Namespace(parts[0]), parts[1], nil
	case 3:
		if parts[0] != DatabaseName {
			return "", "", sqlerr.New(sqlerr.FeatureNotSupported, "cross-database references are not implemented: %s", strings.Join(parts, "."))
		}
		return pgcatalog.Namespace(parts[1]), parts[2], nil
	}
	return "", "", sqlerr.New(sqlerr.SyntaxError, "improper qualified name (too many dotted names): %s", strings.Join(parts, "."))
}

func (s *Session) dropTable(ctx context.Context, parts []string, missingOK bool) error {
	ns, name, err := splitRelationName(parts)
	if err != nil {
		return err
	}
	t, err := s.lookupTable(ctx, ns, name)
	if err != nil {
		if missingOK && sqlerr.Code(err) == sqlerr.UndefinedTable {
			return nil
		}
		return err
	}
	var path string
	err = s.catalogAtomically(ctx, func(cat *catalog.Catalog) error {
		var err error
		if path, err = cat.DropTable(ctx, t.Namespace, t.Name); err != nil {
			return err
		}
		return cat.DropTableSequences(ctx, t.ID) // SERIAL, IDENTITY
	})
	if err != nil {
		return err
	}
	t.Path = path
	if err := s.e.checkTableDir(t); err != nil {
		s.e.log.Warn("drop: table files are not in the table's own directory; left in place", "table", t.QualifiedName(), "err", err)
		return nil
	}
	s.dropTableDir(ctx, t.Namespace, path)
	return nil
}
