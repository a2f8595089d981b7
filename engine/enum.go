package engine

import (
	"context"
	"fmt"
	"hash/fnv"
	"maps"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/duckdb/duckdb-go/v2"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/pgcatalog"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Enum types (CREATE TYPE … AS ENUM, ALTER TYPE, DROP TYPE) as PostgreSQL
// has them, on lake columns whose files hold the labels as strings.
//
//   - The type and its labels are catalog rows (catalog/enum.go); a column
//     declared with it gets pg_type "enum:<oid>" (schema.EnumPGType), and a
//     loaded table carries the types of its columns (Table.Enums).
//   - In queries the scan declares an enum column as a DuckDB ENUM of the
//     labels in order, so ORDER BY, <, min and max follow declaration order;
//     labels a RENAME VALUE replaced are read as their new names.
//   - Casts to the type and literals compared with an enum value become
//     casts to a DuckDB ENUM type of the same labels, named by the type's OID
//     and a hash of its labels (duckEnumName): a name stands for one list of
//     labels, so concurrent sessions never disagree on it. A constant that
//     is no label fails at planning with PostgreSQL's 22P02.
//   - Every write checks its rows' labels (writer.CheckRecord): INSERT, COPY,
//     UPDATE, MERGE, CDC sync and Flight ingest refuse a value that is no
//     label with 22P02 before anything is written.
//   - Result columns of an enum type carry the type's OID (refineColumns),
//     which the pg_catalog emulation lists in pg_type and pg_enum.

// knownEnums are the enum types this process has seen, by OID: result
// columns of those OIDs are enum columns.
var knownEnums sync.Map // uint32 → struct{}

// noteEnums records a table's enum types for the session's statement.
func (s *Session) noteEnums(t *catalog.Table) {
	for oid, e := range t.Enums {
		s.noteEnum(oid, e)
	}
}

func (s *Session) noteEnum(oid uint32, e *catalog.Enum) {
	knownEnums.Store(oid, struct{}{})
	s.enumMu.Lock()
	defer s.enumMu.Unlock()
	if s.enums == nil {
		s.enums = map[uint32]*catalog.Enum{}
	}
	s.enums[oid] = e
}

// enumOf is the enum type of OID oid as the session last loaded it; nil for
// no enum type.
func (s *Session) enumOf(oid uint32) *catalog.Enum {
	if oid == 0 {
		return nil
	}
	s.enumMu.Lock()
	defer s.enumMu.Unlock()
	return s.enums[oid]
}

// isEnumOID reports whether oid is an enum type this process has seen.
func isEnumOID(oid uint32) bool {
	_, ok := knownEnums.Load(oid)
	return ok
}

// enumLabelError is PostgreSQL's error for text that is no label of e.
func enumLabelError(e *catalog.Enum, text string) error {
	return sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input value for enum %s: \"%s\"", e.Name, text)
}

// enumColumn is the DuckDB type and setter of a scanned enum column: an
// ENUM of the labels (VARCHAR for a type without labels, which holds no
// values). A former label name is set as its label; other text fails the
// scan with 22P02.
func enumColumn(e *catalog.Enum) (duckdb.TypeInfo, chunkSetter, error) {
	if len(e.Labels) == 0 {
		ti, err := duckdb.NewTypeInfo(duckdb.TYPE_VARCHAR)
		return ti, func(chunk duckdb.DataChunk, col, row int, arr arrow.Array, i int) error {
			if arr.IsNull(i) {
				return chunk.SetValue(col, row, nil)
			}
			return enumLabelError(e, arr.(*array.String).Value(i))
		}, err
	}
	ti, err := duckdb.NewEnumInfo(e.Labels[0], e.Labels[1:]...)
	if err != nil {
		return nil, nil, err
	}
	labels := make(map[string]string, len(e.Labels)+len(e.Former))
	for old, l := range e.Former {
		labels[old] = l
	}
	for _, l := range e.Labels {
		labels[l] = l
	}
	return ti, func(chunk duckdb.DataChunk, col, row int, arr arrow.Array, i int) error {
		if arr.IsNull(i) {
			return chunk.SetValue(col, row, nil)
		}
		v := arr.(*array.String).Value(i)
		l, ok := labels[v]
		if !ok {
			return enumLabelError(e, v)
		}
		return chunk.SetValue(col, row, l)
	}, nil
}

// duckEnumPrefix starts the names of the DuckDB ENUM types casts use.
const duckEnumPrefix = "lakesoul_enum_"

// duckEnumName is the DuckDB type standing for e's labels as they are now.
func duckEnumName(e *catalog.Enum) string {
	h := fnv.New64a()
	for _, l := range e.Labels {
		h.Write([]byte(l))
		h.Write([]byte{0})
	}
	return fmt.Sprintf("%s%d_%x", duckEnumPrefix, e.OID, h.Sum64())
}

// duckEnumOID is the enum OID of a DuckDB type name duckEnumName made; 0
// for other names.
func duckEnumOID(name string) uint32 {
	rest, ok := strings.CutPrefix(name, duckEnumPrefix)
	if !ok {
		return 0
	}
	num, _, _ := strings.Cut(rest, "_")
	n, err := strconv.ParseUint(num, 10, 32)
	if err != nil {
		return 0
	}
	return uint32(n)
}

// ensureDuckEnum creates e's DuckDB type if the database lacks it.
func (s *Session) ensureDuckEnum(ctx context.Context, e *catalog.Enum) (string, error) {
	name := duckEnumName(e)
	labels := make([]string, len(e.Labels))
	for i, l := range e.Labels {
		labels[i] = quoteLiteral(l)
	}
	if len(labels) == 0 {
		return "", sqlerr.Unsupported("casts to an enum type without labels", "ALTER TYPE … ADD VALUE first")
	}
	_, err := s.duck.ExecContext(ctx, fmt.Sprintf("CREATE TYPE IF NOT EXISTS %s AS ENUM (%s)", quoteIdent(name), strings.Join(labels, ", ")))
	if err != nil {
		return "", fmt.Errorf("enum type %s: %w", e.QualifiedName(), err)
	}
	return name, nil
}

// lookupEnum finds an enum type by its parts (name or schema.name) along
// the search path; nil when there is none.
func (s *Session) lookupEnum(ctx context.Context, parts []string) (*catalog.Enum, error) {
	var spaces []string
	switch len(parts) {
	case 1:
		spaces = s.searchPath()
	case 2:
		spaces = []string{pgcatalog.Namespace(parts[0])}
	default:
		return nil, nil
	}
	for _, ns := range spaces {
		e, err := s.cat.EnumByName(ctx, ns, parts[len(parts)-1])
		if err != nil || e != nil {
			if e != nil {
				s.noteEnum(e.OID, e)
			}
			return e, err
		}
	}
	return nil, nil
}

// builtinTypeNames are type names no enum lookup is tried for, besides
// those the engine types (typeNameOIDs): catalog types and DuckDB's own.
var builtinTypeNames = map[string]bool{
	"vector": true, "regclass": true, "regtype": true, "regproc": true, "regnamespace": true, "oid": true,
	"name": true, "double": true, "float": true, "blob": true, "hugeint": true, "tinyint": true, "string": true,
	"ubigint": true, "uinteger": true, "struct": true, "map": true, "xid": true, "inet": true, "money": true,
}

// typeNameParts are the names of tn, or nil for a pg_catalog or built-in
// type (no enum).
func typeNameParts(tn *pg_query.TypeName) []string {
	if tn == nil {
		return nil
	}
	var parts []string
	for _, n := range tn.Names {
		if s := n.GetString_(); s != nil {
			parts = append(parts, s.Sval)
		}
	}
	if len(parts) == 0 || parts[0] == "pg_catalog" || (len(parts) == 1 && (builtinTypeNames[parts[0]] || typeNameOIDs[parts[0]] != 0)) ||
		strings.HasPrefix(parts[len(parts)-1], duckEnumPrefix) || schema.EnumOID(arrow.Field{Type: arrow.BinaryTypes.String,
		Metadata: arrow.NewMetadata([]string{schema.MetaPGType}, []string{parts[len(parts)-1]})}) != 0 {
		return nil
	}
	return parts
}

// resolveColumnTypes names enum-typed columns of a CREATE TABLE or ALTER
// TABLE ADD COLUMN "enum:<oid>", which schema.FromPGType reads; a type name
// that is no enum, not served by the engine and not PostgreSQL's is 42704.
func (s *Session) resolveColumnTypes(ctx context.Context, defs []*pg_query.ColumnDef) error {
	for _, cd := range defs {
		parts := typeNameParts(cd.TypeName)
		if parts == nil {
			continue
		}
		e, err := s.lookupEnum(ctx, parts)
		if err != nil {
			return err
		}
		if e == nil {
			if len(parts) == 2 {
				return sqlerr.New(sqlerr.UndefinedObject, "type \"%s.%s\" does not exist", parts[0], parts[1])
			}
			// A type the engine does not serve: one PostgreSQL has is
			// refused by schema.FromPGType (0A000), any other does not exist.
			if _, _, ferr := schema.FromPGType(parts[0], nil, false); ferr != nil && serialTypes[parts[0]] == "" {
				ok, err := s.cat.BuiltinTypeExists(ctx, parts[0])
				if err != nil {
					return err
				}
				if !ok {
					return sqlerr.New(sqlerr.UndefinedObject, "type %q does not exist", parts[0])
				}
			}
			continue
		}
		if len(cd.TypeName.Typmods) > 0 {
			return sqlerr.New(sqlerr.SyntaxError, "type modifier is not allowed for type %q", e.Name)
		}
		cd.TypeName.Names = []*pg_query.Node{pg_query.MakeStrNode(schema.EnumPGType(e.OID))}
	}
	return nil
}

// tableColumnDefs are the column definitions of CREATE TABLE elements.
func tableColumnDefs(elts []*pg_query.Node) []*pg_query.ColumnDef {
	var out []*pg_query.ColumnDef
	for _, e := range elts {
		if cd := e.GetColumnDef(); cd != nil {
			out = append(out, cd)
		}
	}
	return out
}

// alterColumnDefs are the column definitions of ALTER TABLE's ADD COLUMN
// and ALTER COLUMN TYPE commands.
func alterColumnDefs(n *pg_query.AlterTableStmt) []*pg_query.ColumnDef {
	var out []*pg_query.ColumnDef
	for _, c := range n.Cmds {
		if cd := c.GetAlterTableCmd().GetDef().GetColumnDef(); cd != nil {
			out = append(out, cd)
		}
	}
	return out
}

// rewriteEnumCasts turns casts to enum types into casts to their DuckDB
// types; a constant cast that is no label is 22P02 now.
func (s *Session) rewriteEnumCasts(ctx context.Context, stmt *pg_query.Node) error {
	var casts []*pg_query.TypeCast
	walk(stmt, func(n *pg_query.Node) {
		if tc := n.GetTypeCast(); tc != nil && typeNameParts(tc.TypeName) != nil {
			casts = append(casts, tc)
		}
	})
	for _, tc := range casts {
		parts := typeNameParts(tc.TypeName)
		e, err := s.lookupEnum(ctx, parts)
		if err != nil {
			return err
		}
		if e == nil {
			if len(parts) == 2 {
				return sqlerr.New(sqlerr.UndefinedObject, "type \"%s.%s\" does not exist", parts[0], parts[1])
			}
			continue
		}
		if sv := tc.Arg.GetAConst().GetSval(); sv != nil && !e.Has(sv.Sval) {
			return enumLabelError(e, sv.Sval)
		}
		name, err := s.ensureDuckEnum(ctx, e)
		if err != nil {
			return err
		}
		tc.TypeName = &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode(name)}, Typemod: -1, Location: -1,
			ArrayBounds: tc.TypeName.ArrayBounds}
	}
	return nil
}

// castsToEnum reports whether stmt casts to a lake enum type (a query of
// no table then runs in DuckDB, where the type exists).
func (s *Session) castsToEnum(ctx context.Context, stmt *pg_query.Node) bool {
	found := false
	walk(stmt, func(n *pg_query.Node) {
		if tc := n.GetTypeCast(); tc != nil && !found {
			if parts := typeNameParts(tc.TypeName); parts != nil {
				e, err := s.lookupEnum(ctx, parts)
				found = err == nil && e != nil
			}
		}
	})
	return found
}

// coerceEnumLiteral casts an untyped literal compared with a value of enum
// type e to e (22P02 when it is no label), as PostgreSQL resolves it.
func (rw *pgRewriter) coerceEnumLiteral(n *pg_query.Node, e *catalog.Enum) error {
	sv := n.GetAConst().GetSval()
	if !e.Has(sv.Sval) {
		return enumLabelError(e, sv.Sval)
	}
	name, err := rw.s.ensureDuckEnum(context.Background(), e)
	if err != nil {
		return err
	}
	wrap(n, func(inner *pg_query.Node) *pg_query.Node {
		return &pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{Arg: inner,
			TypeName: &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode(name)}, Typemod: -1, Location: -1}, Location: -1}}}
	})
	return nil
}

// enumTypeName splits CREATE/ALTER TYPE's name into namespace and name.
func (s *Session) enumTypeName(nodes []*pg_query.Node) (ns, name string, err error) {
	var parts []string
	for _, n := range nodes {
		parts = append(parts, n.GetString_().GetSval())
	}
	if ns, name, err = splitRelationName(parts); err != nil {
		return "", "", err
	}
	if ns == "" {
		return s.searchPath()[0], name, nil
	}
	return pgcatalog.Namespace(ns), name, nil
}

// planCreateEnum plans CREATE TYPE name AS ENUM (labels).
func (s *Session) planCreateEnum(n *pg_query.CreateEnumStmt) (pgwire.Statement, error) {
	ns, name, err := s.enumTypeName(n.TypeName)
	if err != nil {
		return nil, err
	}
	var labels []string
	for _, v := range n.Vals {
		labels = append(labels, v.GetString_().GetSval())
	}
	return s.ddl("CREATE TYPE", func(ctx context.Context) error {
		_, err := s.cat.CreateEnum(ctx, ns, name, labels)
		return err
	}), nil
}

// planAlterEnum plans ALTER TYPE … ADD VALUE [IF NOT EXISTS] 'x'
// [BEFORE|AFTER 'y'] and ALTER TYPE … RENAME VALUE 'x' TO 'y'. Values
// already written keep their meaning: files hold labels, and a renamed
// label's former name reads as the new one.
func (s *Session) planAlterEnum(n *pg_query.AlterEnumStmt) (pgwire.Statement, error) {
	ns, name, err := s.enumTypeName(n.TypeName)
	if err != nil {
		return nil, err
	}
	return s.ddl("ALTER TYPE", func(ctx context.Context) error {
		if n.OldVal != "" {
			return s.cat.RenameEnumValue(ctx, ns, name, n.OldVal, n.NewVal)
		}
		return s.cat.AddEnumValue(ctx, ns, name, n.NewVal, n.SkipIfNewValExists, n.NewValNeighbor, !n.NewValIsAfter)
	}), nil
}

// planDropTypes plans DROP TYPE [IF EXISTS] names [CASCADE|RESTRICT]. With
// CASCADE the columns declared with a type are dropped first (as ALTER
// TABLE … DROP COLUMN); without it a type in use is 2BP01.
func (s *Session) planDropTypes(n *pg_query.DropStmt) (pgwire.Statement, error) {
	type typeRef struct{ ns, name, shown string }
	var refs []typeRef
	for _, obj := range n.Objects {
		tn := obj.GetTypeName()
		if tn == nil {
			return nil, sqlerr.New(sqlerr.SyntaxError, "DROP TYPE needs type names")
		}
		ns, name, err := s.enumTypeName(tn.Names)
		if err != nil {
			return nil, err
		}
		shown := name
		if len(tn.Names) > 1 {
			shown = ns + "." + name
		}
		refs = append(refs, typeRef{ns, name, shown})
	}
	cascade := n.Behavior == pg_query.DropBehavior_DROP_CASCADE
	return s.ddl("DROP TYPE", func(ctx context.Context) error {
		for _, r := range refs {
			if cascade {
				if err := s.dropEnumColumns(ctx, r.ns, r.name); err != nil {
					return err
				}
			}
			ok, err := s.cat.DropEnum(ctx, r.ns, r.name)
			if err != nil {
				return err
			}
			if !ok && !n.MissingOk {
				return sqlerr.New(sqlerr.UndefinedObject, "type \"%s\" does not exist", r.shown)
			}
		}
		return nil
	}), nil
}

// dropEnumColumns drops the columns declared with enum type ns.name.
func (s *Session) dropEnumColumns(ctx context.Context, ns, name string) error {
	e, err := s.cat.EnumByName(ctx, ns, name)
	if err != nil || e == nil {
		return err
	}
	deps, err := s.cat.EnumDependents(ctx, e.OID)
	if err != nil {
		return err
	}
	for _, d := range deps {
		t, err := s.resolveTable(ctx, d.Namespace, d.Table)
		if err != nil {
			return fmt.Errorf("column %s of table %s.%s: %w", d.Column, d.Namespace, d.Table, err)
		}
		nt := *t
		nt.Properties = maps.Clone(t.Properties)
		fields, err := applyAlterCmd(&nt, t.Schema.Fields(), &pg_query.AlterTableCmd{
			Subtype: pg_query.AlterTableType_AT_DropColumn, Name: d.Column})
		if err != nil {
			return err
		}
		nt.Schema = arrow.NewSchema(fields, nil)
		if err := s.flushBuffered(ctx, t.ID); err != nil {
			return err
		}
		if err := s.cat.AlterTable(ctx, &nt); err != nil {
			return err
		}
	}
	return nil
}
