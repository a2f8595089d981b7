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
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// ALTER TABLE commands that concern the rows a table already has, as
// PostgreSQL runs them:
//
//   - ADD COLUMN c type DEFAULT d: existing rows get d (evaluated for each row,
//     so a volatile default — nextval, gen_random_uuid() — differs per row);
//   - ADD COLUMN c serial/bigserial/smallserial: a sequence owned by the
//     column, its nextval as the default, NOT NULL;
//   - ADD COLUMN … NOT NULL: refused (23502) when a row has no value;
//   - ADD COLUMN … CHECK (…) and ADD CONSTRAINT … CHECK (…): refused (23514)
//     when an existing row breaks it;
//   - ALTER COLUMN c SET NOT NULL (validated likewise) / DROP NOT NULL.
//
// Each such statement is carried out as a sequence of steps the engine
// already has — ADD COLUMN without constraints, SET DEFAULT, an UPDATE that
// writes the default into every existing row, queries that look for
// violating rows, and then the constraint recorded on the table — all in
// one transaction block (the session's, or one of its own), so the table
// changes with every row filled, or not at all. Files are not changed in
// place: the UPDATE writes new ones (a partial upsert on primary-key tables,
// copy-on-write otherwise) that commit with the new schema.

// rowsCmd reports whether cmd needs the table's rows to be carried out.
func rowsCmd(cmd *pg_query.AlterTableCmd) bool {
	switch cmd.GetSubtype() {
	case pg_query.AlterTableType_AT_AddColumn:
		cd := cmd.Def.GetColumnDef()
		if _, serial := serialTypes[typeNameString(cd.GetTypeName())]; serial {
			return true
		}
		for _, c := range cd.GetConstraints() {
			switch c.GetConstraint().GetContype() {
			case pg_query.ConstrType_CONSTR_DEFAULT, pg_query.ConstrType_CONSTR_NOTNULL, pg_query.ConstrType_CONSTR_CHECK:
				return true
			}
		}
	case pg_query.AlterTableType_AT_AddConstraint:
		return cmd.Def.GetConstraint().GetContype() == pg_query.ConstrType_CONSTR_CHECK
	case pg_query.AlterTableType_AT_SetNotNull, pg_query.AlterTableType_AT_DropNotNull:
		return true
	}
	return false
}

// planAlterRows plans an ALTER TABLE with at least one command rowsCmd
// accepts: its commands run one after another, in one transaction block.
func (s *Session) planAlterRows(n *pg_query.AlterTableStmt) pgwire.Statement {
	return &funcStmt{tag: "ALTER TABLE", run: func(ctx context.Context, _ []any) (string, [][]any, error) {
		return s.inOwnBlock(ctx, "ALTER TABLE", func(ctx context.Context) error { return s.runAlterRows(ctx, n) })
	}}
}

// inOwnBlock runs fn inside the session's transaction block, or, outside
// one, inside a block of its own that commits when fn succeeds and rolls
// back when it fails: the statement's DDL and writes commit together.
func (s *Session) inOwnBlock(ctx context.Context, tag string, fn func(ctx context.Context) error) (string, [][]any, error) {
	implicit := !s.inBlock
	if implicit {
		s.beginTx(nil)
	}
	err := fn(ctx)
	if implicit {
		if err != nil {
			s.rollbackBlock(ctx)
			return "", nil, err
		}
		if end, err := s.commitBlock(ctx); err != nil || end != "COMMIT" {
			if err == nil {
				err = sqlerr.New(sqlerr.InternalError, "%s rolled back", tag)
			}
			return "", nil, err
		}
	}
	if err != nil {
		return "", nil, err
	}
	return tag, nil, nil
}

func (s *Session) runAlterRows(ctx context.Context, n *pg_query.AlterTableStmt) error {
	t, err := s.alterTarget(ctx, n)
	if t == nil || err != nil {
		return err
	}
	// Later steps name the table as resolved now.
	rel := &pg_query.RangeVar{Schemaname: t.Namespace, Relname: t.Name, Inh: true, Relpersistence: "p", Location: -1}
	for _, c := range n.Cmds {
		cmd := c.GetAlterTableCmd()
		if !rowsCmd(cmd) {
			if err := s.runAlterStep(ctx, rel, cmd); err != nil {
				return err
			}
			continue
		}
		switch cmd.Subtype {
		case pg_query.AlterTableType_AT_AddColumn:
			err = s.addColumnWithRows(ctx, rel, cmd)
		case pg_query.AlterTableType_AT_AddConstraint:
			err = s.addCheckWithRows(ctx, rel, cmd.Def.GetConstraint(), "")
		case pg_query.AlterTableType_AT_SetNotNull:
			err = s.setNotNull(ctx, rel, cmd.Name, true)
		case pg_query.AlterTableType_AT_DropNotNull:
			err = s.setNotNull(ctx, rel, cmd.Name, false)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// runAlterStep runs one ALTER TABLE command on rel through planAlterTable.
func (s *Session) runAlterStep(ctx context.Context, rel *pg_query.RangeVar, cmd *pg_query.AlterTableCmd) error {
	st, err := s.planAlterTable(ctx, &pg_query.AlterTableStmt{Relation: rel, Objtype: pg_query.ObjectType_OBJECT_TABLE,
		Cmds: []*pg_query.Node{{Node: &pg_query.Node_AlterTableCmd{AlterTableCmd: cmd}}}})
	if err != nil {
		return err
	}
	_, _, err = st.(*funcStmt).run(ctx, nil)
	return err
}

// addColumnWithRows adds a column with a default, SERIAL type, NOT NULL or
// CHECK to a table that may have rows.
func (s *Session) addColumnWithRows(ctx context.Context, rel *pg_query.RangeVar, cmd *pg_query.AlterTableCmd) error {
	cd := cmd.Def.GetColumnDef()
	t, err := s.resolveTable(ctx, rel.Schemaname, rel.Relname)
	if err != nil {
		return err
	}
	if findField(t, cd.Colname) >= 0 && cmd.MissingOk {
		_ = pgwire.SendNotice(ctx, pgwire.Notice{Code: sqlerr.DuplicateColumn,
			Message: fmt.Sprintf("column %q of relation %q already exists, skipping", cd.Colname, t.Name)})
		return nil
	}
	plain := &pg_query.ColumnDef{Colname: cd.Colname, TypeName: cd.TypeName, IsLocal: true, Location: -1}
	var def *pg_query.Node
	var defText string
	notNull := false
	var checks []*pg_query.Constraint
	if base, serial := serialTypes[typeNameString(cd.TypeName)]; serial {
		plain.TypeName = &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode(base)}, Location: -1}
		seq := t.Name + "_" + cd.Colname + "_seq"
		if err := s.cat.CreateSequence(ctx, t.Namespace, seq, catalog.SequenceOptions{OwnerTable: t.ID}); err != nil {
			return err
		}
		defText = sequenceDefault(t.Namespace, seq)
		notNull = true
	}
	for _, c := range cd.Constraints {
		con := c.GetConstraint()
		switch con.Contype {
		case pg_query.ConstrType_CONSTR_NULL:
		case pg_query.ConstrType_CONSTR_DEFAULT:
			if def != nil || defText != "" {
				return sqlerr.New(sqlerr.SyntaxError, "multiple default values specified for column %q of table %q", cd.Colname, t.Name)
			}
			def = con.RawExpr
		case pg_query.ConstrType_CONSTR_NOTNULL:
			notNull = true
		case pg_query.ConstrType_CONSTR_CHECK:
			checks = append(checks, con)
		default:
			return unsupportedAddColumnConstraint(con)
		}
	}
	if defText != "" {
		p, err := parseStoredExpr(defText, "default of column "+cd.Colname)
		if err != nil {
			return err
		}
		def = p
	}
	addCmd := &pg_query.AlterTableCmd{Subtype: pg_query.AlterTableType_AT_AddColumn, MissingOk: cmd.MissingOk,
		Def: &pg_query.Node{Node: &pg_query.Node_ColumnDef{ColumnDef: plain}}, Behavior: pg_query.DropBehavior_DROP_RESTRICT}
	if err := s.runAlterStep(ctx, rel, addCmd); err != nil {
		return err
	}
	if def != nil {
		if err := s.runAlterStep(ctx, rel, &pg_query.AlterTableCmd{Subtype: pg_query.AlterTableType_AT_ColumnDefault,
			Name: cd.Colname, Def: def, Behavior: pg_query.DropBehavior_DROP_RESTRICT}); err != nil {
			return err
		}
		// Every existing row gets the default, evaluated for it.
		text, err := deparseExpr(def)
		if err != nil {
			return err
		}
		if _, err := s.runInternal(ctx, fmt.Sprintf("UPDATE %s SET %s = %s", qualifiedName(rel), quoteIdent(cd.Colname), text)); err != nil {
			return err
		}
	}
	if notNull {
		if err := s.setNotNull(ctx, rel, cd.Colname, true); err != nil {
			return err
		}
	}
	for _, con := range checks {
		if err := s.addCheckWithRows(ctx, rel, con, cd.Colname); err != nil {
			return err
		}
	}
	return nil
}

// unsupportedAddColumnConstraint is the 0A000 of a constraint ADD COLUMN
// cannot give a lake table's column.
func unsupportedAddColumnConstraint(con *pg_query.Constraint) error {
	if con.Contype == pg_query.ConstrType_CONSTR_IDENTITY || con.Contype == pg_query.ConstrType_CONSTR_PRIMARY {
		return sqlerr.Unsupported("this constraint on an added column",
			"ADD COLUMN name type [DEFAULT …] [NOT NULL] [CHECK (…)], then ALTER COLUMN … ADD GENERATED … AS IDENTITY or ADD PRIMARY KEY")
	}
	return unsupportedConstraint(con)
}

// setNotNull records that column name of rel may (not) hold NULL; SET NOT
// NULL first checks that no row holds one (23502, PostgreSQL's words).
func (s *Session) setNotNull(ctx context.Context, rel *pg_query.RangeVar, name string, notNull bool) error {
	t, err := s.resolveTable(ctx, rel.Schemaname, rel.Relname)
	if err != nil {
		return err
	}
	i := findField(t, name)
	if i < 0 {
		return sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", name, t.Name)
	}
	if !notNull && (slices.Contains(t.PKCols, name) || slices.Contains(t.RangeCols, name)) {
		if slices.Contains(t.PKCols, name) {
			return sqlerr.New(sqlerr.InvalidTableDefinition, "column %q is in a primary key", name)
		}
		return sqlerr.Unsupported(fmt.Sprintf("dropping NOT NULL of partition column %q", name), "DROP NOT NULL of other columns")
	}
	if t.Schema.Field(i).Nullable == !notNull {
		return nil
	}
	if notNull {
		rows, err := s.runInternal(ctx, fmt.Sprintf("SELECT 1 FROM %s WHERE %s IS NULL LIMIT 1", qualifiedName(rel), quoteIdent(name)))
		if err != nil {
			return err
		}
		if len(rows) > 0 {
			return sqlerr.New(sqlerr.NotNullViolation, "column %q of relation %q contains null values", name, t.Name)
		}
	}
	return s.alterFields(ctx, t, func(nt *catalog.Table) error {
		fields := slices.Clone(nt.Schema.Fields())
		fields[i].Nullable = !notNull
		nt.Schema = arrow.NewSchema(fields, nil)
		return nil
	})
}

// addCheckWithRows adds CHECK constraint con (of column, "" for a table
// constraint) to rel after checking that no row breaks it (23514).
func (s *Session) addCheckWithRows(ctx context.Context, rel *pg_query.RangeVar, con *pg_query.Constraint, column string) error {
	t, err := s.resolveTable(ctx, rel.Schemaname, rel.Relname)
	if err != nil {
		return err
	}
	return s.alterFields(ctx, t, func(nt *catalog.Table) error {
		before := maps.Clone(nt.Properties)
		if err := s.addCheck(ctx, nt, con, column); err != nil { // checks.go
			return err
		}
		for k, v := range nt.Properties {
			if _, old := before[k]; old {
				continue
			}
			name := strings.TrimPrefix(k, checkPropertyPrefix)
			rows, err := s.runInternal(ctx, fmt.Sprintf("SELECT 1 FROM %s WHERE (%s) IS FALSE LIMIT 1", qualifiedName(rel), v))
			if err != nil {
				return err
			}
			if len(rows) > 0 {
				return sqlerr.New(sqlerr.CheckViolation, "check constraint %q of relation %q is violated by some row", name, t.Name)
			}
		}
		return nil
	})
}

// findField is the index of t's column name, or -1.
func findField(t *catalog.Table, name string) int {
	return slices.IndexFunc(t.Schema.Fields(), func(f arrow.Field) bool { return f.Name == name })
}

// qualifiedName is rel as SQL text.
func qualifiedName(rel *pg_query.RangeVar) string {
	return quoteIdent(rel.Schemaname) + "." + quoteIdent(rel.Relname)
}

// alterFields changes t's definition as change says, as one DDL step of
// the open block (its held catalog transaction).
func (s *Session) alterFields(ctx context.Context, t *catalog.Table, change func(nt *catalog.Table) error) error {
	_, _, err := s.ddl("ALTER TABLE", func(ctx context.Context) error {
		nt := *t
		nt.Properties = maps.Clone(t.Properties)
		if err := change(&nt); err != nil {
			return err
		}
		if err := s.flushBuffered(ctx, t.ID); err != nil {
			return err
		}
		return s.cat.AlterTable(ctx, &nt)
	}).run(ctx, nil)
	return err
}

// runInternal runs one statement of the engine's own making in the
// session, as the session's role, and returns its rows.
func (s *Session) runInternal(ctx context.Context, sql string) ([][]any, error) {
	tree, err := pg_query.Parse(sql)
	if err != nil {
		return nil, err
	}
	if len(tree.Stmts) != 1 {
		return nil, sqlerr.New(sqlerr.InternalError, "internal statement of %d statements", len(tree.Stmts))
	}
	st, err := s.plan(ctx, tree.Stmts[0].Stmt, nil)
	if err != nil {
		return nil, err
	}
	p, err := st.Bind(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	var rows rowsCollector
	if _, _, err := p.Execute(ctx, 0, &rows); err != nil {
		return nil, err
	}
	return rows, nil
}

// rowsCollector keeps the rows written to it.
type rowsCollector [][]any

func (r *rowsCollector) WriteRow(vals []any) error {
	*r = append(*r, slices.Clone(vals))
	return nil
}

// hasRows reports whether t has a live file as the session sees it (its
// block's writes included).
func (s *Session) hasRows(ctx context.Context, t *catalog.Table) (bool, error) {
	parts, err := s.cat.LiveFiles(ctx, t.ID, nil)
	if err != nil {
		return false, err
	}
	if s.inBlock {
		if parts, err = s.snapshotForBlock(ctx, t, parts); err != nil {
			return false, err
		}
	}
	return slices.ContainsFunc(parts, func(p catalog.PartitionFiles) bool { return len(p.Files) > 0 }), nil
}

// addPrimaryKeyWithRows gives t, which has rows, primary key keys, inside
// the open block: the key must be unique and not null over the rows
// (23505, 23502, PostgreSQL's words); the rows (the block's own writes
// included) are copied aside into a temporary table, the table is emptied
// (the block's writes of it dropped) and made a keyed table in the catalog
// (lakesoul.add_primary_key_emptying), and the rows are written again, keyed
// and bucketed, all committing with the block.
func (s *Session) addPrimaryKeyWithRows(ctx context.Context, t *catalog.Table, keys []string) error {
	nt, done, err := keyedDefinition(t, keys)
	if done || err != nil {
		return err
	}
	rel := qualifiedName(&pg_query.RangeVar{Schemaname: t.Namespace, Relname: t.Name})
	var cols, texts []string
	for _, k := range keys {
		rows, err := s.runInternal(ctx, fmt.Sprintf("SELECT 1 FROM %s WHERE %s IS NULL LIMIT 1", rel, quoteIdent(k)))
		if err != nil {
			return err
		}
		if len(rows) > 0 {
			return sqlerr.New(sqlerr.NotNullViolation, "column %q of relation %q contains null values", k, t.Name)
		}
		cols = append(cols, quoteIdent(k))
		texts = append(texts, quoteIdent(k)+"::text")
	}
	dup, err := s.runInternal(ctx, fmt.Sprintf("SELECT %s FROM %s GROUP BY %s HAVING count(*) > 1 LIMIT 1",
		strings.Join(texts, ", "), rel, strings.Join(cols, ", ")))
	if err != nil {
		return err
	}
	if len(dup) > 0 {
		vals := make([]string, len(dup[0]))
		for i, v := range dup[0] {
			vals[i] = fmt.Sprint(v)
		}
		e := sqlerr.New(sqlerr.UniqueViolation, "could not create unique index %q", t.Name+"_pkey")
		e.Detail = fmt.Sprintf("Key (%s)=(%s) is duplicated.", strings.Join(keys, ", "), strings.Join(vals, ", "))
		return e
	}
	tmp := quoteIdent("lakesoul_rekey_" + strings.ReplaceAll(t.ID, "-", "_"))
	if _, err := s.runInternal(ctx, fmt.Sprintf("CREATE TEMP TABLE %s AS SELECT * FROM %s", tmp, rel)); err != nil {
		return err
	}
	// The block's own writes of t (pg_restore -1: CREATE TABLE, COPY, ADD
	// PRIMARY KEY in one transaction) are in the copy: they go, as
	// TRUNCATE drops them, and the committed rows go in the catalog.
	if err := s.flushBuffered(ctx, t.ID); err != nil {
		return err
	}
	var descs []string
	for _, w := range s.staged {
		if w.table.ID == t.ID {
			for _, p := range w.parts {
				descs = append(descs, p.Desc)
			}
		}
	}
	for _, d := range descs {
		s.supersedeStaged(ctx, t, d)
	}
	if _, _, err := s.ddl("ALTER TABLE", func(ctx context.Context) error {
		return s.cat.AddPrimaryKeyEmptying(ctx, nt)
	}).run(ctx, nil); err != nil {
		return err
	}
	if _, err := s.runInternal(ctx, fmt.Sprintf("INSERT INTO %s OVERRIDING SYSTEM VALUE SELECT * FROM pg_temp.%s", rel, tmp)); err != nil {
		return err
	}
	_, err = s.runInternal(ctx, "DROP TABLE pg_temp."+tmp)
	return err
}
