package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/jackc/pgx/v5"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/pgcatalog"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// The DDL a pg_dump script sends that CREATE TABLE does not cover: pg_dump
// creates a table without its primary key and adds the key afterwards
// (ALTER TABLE ONLY t ADD CONSTRAINT t_pkey PRIMARY KEY (…)), and hands
// every object to its owner (ALTER … OWNER TO).

// primaryKeyCmd returns the ADD [CONSTRAINT name] PRIMARY KEY of an ALTER
// TABLE whose only command it is.
func primaryKeyCmd(n *pg_query.AlterTableStmt) (*pg_query.Constraint, bool) {
	if len(n.Cmds) != 1 {
		return nil, false
	}
	cmd := n.Cmds[0].GetAlterTableCmd()
	if cmd.GetSubtype() != pg_query.AlterTableType_AT_AddConstraint {
		return nil, false
	}
	con := cmd.GetDef().GetConstraint()
	if con == nil || con.Contype != pg_query.ConstrType_CONSTR_PRIMARY {
		return nil, false
	}
	return con, true
}

// planAddPrimaryKey: a table that already has exactly this key keeps it (the
// statement restores what CREATE TABLE … PRIMARY KEY made); a table without
// a key that holds no rows becomes a primary-key table with
// DefaultHashBucketNum buckets (lakesoul.add_primary_key, which refuses a
// table with rows: they were not written bucketed by the key).
func (s *Session) planAddPrimaryKey(n *pg_query.AlterTableStmt, con *pg_query.Constraint) (pgwire.Statement, error) {
	if len(con.Including) > 0 || len(con.Options) > 0 || con.Indexname != "" || con.Indexspace != "" || con.Deferrable {
		return nil, sqlerr.Unsupported("PRIMARY KEY with INCLUDE, WITH, USING INDEX or DEFERRABLE on a lake table", "ADD PRIMARY KEY (cols)")
	}
	var keys []string
	for _, k := range con.Keys {
		keys = append(keys, k.GetString_().GetSval())
	}
	return &funcStmt{tag: "ALTER TABLE", run: func(ctx context.Context, _ []any) (string, [][]any, error) {
		t, err := s.alterTarget(ctx, n)
		if t == nil || err != nil {
			return "", nil, err
		}
		rows, err := s.hasRows(ctx, t)
		if err != nil {
			return "", nil, err
		}
		if rows {
			// alterrows.go: checked, emptied and written again under the key.
			return s.inOwnBlock(ctx, "ALTER TABLE", func(ctx context.Context) error { return s.addPrimaryKeyWithRows(ctx, t, keys) })
		}
		return s.ddl("ALTER TABLE", func(ctx context.Context) error {
			nt, done, err := keyedDefinition(t, keys)
			if done || err != nil {
				return err
			}
			if slices.ContainsFunc(s.staged, func(w stagedWrite) bool { return w.table.ID == t.ID }) ||
				slices.ContainsFunc(s.buffered, func(w *bufferedWrite) bool { return w.table.ID == t.ID }) {
				return sqlerr.Unsupported("adding a primary key to a table written in the same transaction block",
					"COMMIT the rows first; a key can only be added while the table has none")
			}
			return s.cat.AddPrimaryKey(ctx, nt)
		}).run(ctx, nil)
	}}, nil
}

// keyedDefinition is t's definition with primary key keys (4 buckets), or
// done when t already has exactly that key (PostgreSQL's error when it has
// another).
func keyedDefinition(t *catalog.Table, keys []string) (nt *catalog.Table, done bool, err error) {
	if t.HasPK() {
		if slices.Equal(t.PKCols, keys) {
			return nil, true, nil
		}
		return nil, false, sqlerr.New(sqlerr.InvalidTableDefinition, "multiple primary keys for table %q are not allowed", t.Name)
	}
	c := *t
	fields := slices.Clone(t.Schema.Fields())
	for _, k := range keys {
		i := slices.IndexFunc(fields, func(f arrow.Field) bool { return f.Name == k })
		switch {
		case i < 0:
			return nil, false, sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", k, t.Name)
		case slices.Contains(t.RangeCols, k):
			return nil, false, sqlerr.New(sqlerr.InvalidTableDefinition, "column %q cannot be both a partition column and part of the primary key", k)
		case fields[i].Type.ID() == arrow.BINARY:
			return nil, false, sqlerr.Unsupported("a bytea primary key", "primary keys of integer, float, text, date, timestamp, numeric or boolean type")
		}
		fields[i].Nullable = false
	}
	c.PKCols = keys
	c.HashBucketNum = DefaultHashBucketNum
	c.Schema = arrow.NewSchema(fields, nil)
	if err := checkTableOptions(&c); err != nil {
		return nil, false, err
	}
	return &c, false, nil
}

// ownerCmd reports whether an ALTER TABLE is a single OWNER TO, and its role.
func ownerCmd(n *pg_query.AlterTableStmt) (*pg_query.RoleSpec, bool) {
	if len(n.Cmds) != 1 {
		return nil, false
	}
	cmd := n.Cmds[0].GetAlterTableCmd()
	if cmd.GetSubtype() != pg_query.AlterTableType_AT_ChangeOwner {
		return nil, false
	}
	return cmd.Newowner, true
}

// planOwnerTo accepts OWNER TO the role that owns every lake object (the
// owner the pg_catalog emulation shows, lakesoul_pg.lake_owner) once the
// object exists, and refuses any other: access to lake objects is granted
// through workspaces, not ownership.
func (s *Session) planOwnerTo(what string, role *pg_query.RoleSpec, exists func(context.Context) error) (pgwire.Statement, error) {
	return &funcStmt{tag: "ALTER " + what, run: func(ctx context.Context, _ []any) (string, [][]any, error) {
		if err := exists(ctx); err != nil {
			return "", nil, err
		}
		var owner string
		err := s.withUserTx(ctx, func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, "SELECT pg_catalog.pg_get_userbyid(lakesoul_pg.lake_owner())::text").Scan(&owner)
		})
		if err != nil {
			return "", nil, fmt.Errorf("lake owner: %w", err)
		}
		name := role.GetRolename()
		switch role.GetRoletype() {
		case pg_query.RoleSpecType_ROLESPEC_CURRENT_USER, pg_query.RoleSpecType_ROLESPEC_SESSION_USER, pg_query.RoleSpecType_ROLESPEC_CURRENT_ROLE:
			name = s.user
		}
		if name != owner {
			return "", nil, sqlerr.Unsupported(fmt.Sprintf("changing the owner of a lake %s", what),
				fmt.Sprintf("every lake object is owned by %q; grant access through workspaces (GRANT workspace role TO user)", owner))
		}
		return "ALTER " + what, nil, nil
	}}, nil
}

// planAlterOwner is ALTER SCHEMA/TABLE … OWNER TO (planOwnerTo).
func (s *Session) planAlterOwner(n *pg_query.AlterOwnerStmt) (pgwire.Statement, error) {
	if n.ObjectType != pg_query.ObjectType_OBJECT_SCHEMA {
		return nil, sqlerr.Unsupported("ALTER "+strings.TrimPrefix(n.ObjectType.String(), "OBJECT_")+" OWNER TO", "ALTER SCHEMA/TABLE … OWNER TO the lake owner")
	}
	name := n.Object.GetString_().GetSval()
	return s.planOwnerTo("SCHEMA", n.Newowner, func(ctx context.Context) error {
		ok, err := s.cat.NamespaceExists(ctx, pgcatalog.Namespace(name))
		if err != nil {
			return err
		}
		if !ok {
			return sqlerr.New(sqlerr.InvalidSchemaName, "schema %q does not exist", name)
		}
		return nil
	})
}

// relationExists checks that rv names a lake table or view (pg_dump hands
// views to their owner with ALTER TABLE too).
func (s *Session) relationExists(ctx context.Context, rv *pg_query.RangeVar) error {
	_, err := s.lookupTable(ctx, rv.Schemaname, rv.Relname)
	if err == nil || sqlerr.Code(err) != sqlerr.UndefinedTable {
		return err
	}
	for _, ns := range s.searchPath() {
		if rv.Schemaname != "" {
			ns = pgcatalog.Namespace(rv.Schemaname)
		}
		if v, verr := s.cat.ViewByName(ctx, ns, rv.Relname); verr != nil {
			return verr
		} else if v != nil {
			return nil
		}
		if rv.Schemaname != "" {
			break
		}
	}
	return err
}

// planAddIdentity is ALTER TABLE t ALTER COLUMN c ADD GENERATED {ALWAYS | BY
// DEFAULT} AS IDENTITY [(SEQUENCE NAME s, options)], as pg_dump restores an
// identity column: the column gets the sequence (owned by the table, named
// <table>_<column>_seq unless SEQUENCE NAME says otherwise) and becomes an
// identity column as if CREATE TABLE had declared it. The column must be an
// integer column without a default.
func (s *Session) planAddIdentity(n *pg_query.AlterTableStmt, cmd *pg_query.AlterTableCmd) (pgwire.Statement, error) {
	con := cmd.Def.GetConstraint()
	if con == nil || con.Contype != pg_query.ConstrType_CONSTR_IDENTITY {
		return nil, sqlerr.New(sqlerr.SyntaxError, "ADD GENERATED needs an identity specification")
	}
	var seqName []string
	var opts []*pg_query.Node
	for _, o := range con.Options {
		if d := o.GetDefElem(); d.GetDefname() == "sequence_name" {
			for _, p := range d.Arg.GetList().GetItems() {
				seqName = append(seqName, p.GetString_().GetSval())
			}
			continue
		}
		opts = append(opts, o)
	}
	seqOpts, err := sequenceOptions(opts)
	if err != nil {
		return nil, err
	}
	identity := identityKind(con)
	return s.ddl("ALTER TABLE", func(ctx context.Context) error {
		t, err := s.alterTarget(ctx, n)
		if t == nil || err != nil {
			return err
		}
		fields := slices.Clone(t.Schema.Fields())
		i := slices.IndexFunc(fields, func(f arrow.Field) bool { return f.Name == cmd.Name })
		if i < 0 {
			return sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", cmd.Name, t.Name)
		}
		if !arrow.IsInteger(fields[i].Type.ID()) {
			return sqlerr.New(sqlerr.InvalidParameterValue, "identity column type must be smallint, integer, or bigint")
		}
		if def, _ := columnDefault(fields[i]); def != "" {
			return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "column %q of relation %q already has a default value", cmd.Name, t.Name)
		}
		ns, name := t.Namespace, t.Name+"_"+cmd.Name+"_seq"
		switch len(seqName) {
		case 0:
		case 1:
			name = seqName[0]
		default:
			ns, name = seqName[len(seqName)-2], seqName[len(seqName)-1]
		}
		if !sameSequenceNamespace(ns, t.Namespace) {
			return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "sequence must be in same schema as table it is linked to")
		}
		seqOpts.OwnerTable = t.ID
		if err := s.cat.CreateSequence(ctx, ns, name, seqOpts); err != nil {
			return err
		}
		fields[i] = withIdentity(withDefault(fields[i], sequenceDefault(ns, name)), identity)
		nt := *t
		nt.Schema = arrow.NewSchema(fields, nil)
		err = s.flushBuffered(ctx, t.ID)
		if err == nil {
			err = s.cat.AlterTable(ctx, &nt)
		}
		if err != nil {
			// The sequence was made for the column: it goes with the
			// failed statement (a failure to drop it is reported too).
			if _, derr := s.cat.DropSequence(context.WithoutCancel(ctx), ns, name); derr != nil {
				err = errors.Join(err, fmt.Errorf("drop sequence %s.%s: %w", ns, name, derr))
			}
		}
		return err
	}), nil
}
