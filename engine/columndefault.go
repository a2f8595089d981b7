package engine

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Column defaults, SERIAL and GENERATED AS IDENTITY.
//
// A column's DEFAULT is kept as PostgreSQL expression text in the column's
// metadata (schema.MetaDefault, in table_info's schema JSON); SERIAL and
// IDENTITY columns get a sequence of the catalog owned by the table
// (<table>_<column>_seq, dropped with it) and the default nextval of it, and
// IDENTITY records its kind (schema.MetaIdentity). An INSERT that leaves a
// column with a default out writes the default, evaluated for each row —
// on a primary-key table too, where a column without a default keeps its old
// value (LakeSoul's partial upsert).

// serialTypes are PostgreSQL's auto-increment column types and the integer
// types they stand for.
var serialTypes = map[string]string{"serial": "int4", "serial4": "int4", "bigserial": "int8", "serial8": "int8",
	"smallserial": "int2", "serial2": "int2"}

// ownedSequence is a sequence CREATE TABLE makes for a column.
type ownedSequence struct {
	name string
	opts catalog.SequenceOptions
}

// columnWithDefault is columnField with the column's DEFAULT, SERIAL or
// IDENTITY applied; seq is the sequence to create with the table.
func (s *Session) columnWithDefault(ctx context.Context, ns, table string, cd *pg_query.ColumnDef) (arrow.Field, *ownedSequence, error) {
	var def, identity string
	var defaultExpr *pg_query.Node
	var seq *ownedSequence
	seqDefault := func(opts catalog.SequenceOptions) {
		seq = &ownedSequence{name: table + "_" + cd.Colname + "_seq", opts: opts}
		def = sequenceDefault(ns, seq.name)
	}
	if base, ok := serialTypes[typeNameString(cd.TypeName)]; ok {
		cd.TypeName = &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode(base)}, Location: -1}
		seqDefault(catalog.SequenceOptions{})
	}
	for _, c := range cd.Constraints {
		con := c.GetConstraint()
		switch con.Contype {
		case pg_query.ConstrType_CONSTR_DEFAULT:
			if def != "" {
				return arrow.Field{}, nil, sqlerr.New(sqlerr.SyntaxError, "multiple default values specified for column %q of table %q", cd.Colname, table)
			}
			if err := s.defaultDefinition(ctx, con.RawExpr); err != nil {
				return arrow.Field{}, nil, err
			}
			text, err := deparseExpr(con.RawExpr)
			if err != nil {
				return arrow.Field{}, nil, err
			}
			def, defaultExpr = text, con.RawExpr
		case pg_query.ConstrType_CONSTR_IDENTITY:
			if def != "" {
				return arrow.Field{}, nil, sqlerr.New(sqlerr.SyntaxError, "both default and identity specified for column %q of table %q", cd.Colname, table)
			}
			opts, err := sequenceOptions(con.Options)
			if err != nil {
				return arrow.Field{}, nil, err
			}
			seqDefault(opts)
			identity = identityKind(con)
		}
	}
	f, err := columnField(cd)
	if err != nil {
		return arrow.Field{}, nil, err
	}
	if identity != "" && !arrow.IsInteger(f.Type.ID()) {
		return arrow.Field{}, nil, sqlerr.New(sqlerr.InvalidParameterValue, "identity column type must be smallint, integer, or bigint")
	}
	if def == "" {
		return f, nil, nil
	}
	if seq == nil {
		def = typedDefaultText(defaultExpr, f, def)
		// The expression must translate (its errors are CREATE TABLE's).
		if _, err := s.defaultSQL(ctx, ns, def, f); err != nil {
			return arrow.Field{}, nil, err
		}
	}
	return withIdentity(withDefault(f, def), identity), seq, nil
}

// defaultDefinition checks a DEFAULT expression being created, as
// PostgreSQL does (no column references, no subqueries: 0A000), and binds
// its names with the creator's search_path and rights (storedrefs.go).
func (s *Session) defaultDefinition(ctx context.Context, expr *pg_query.Node) error {
	var refs, sub bool
	walk(expr, func(n *pg_query.Node) {
		refs = refs || n.GetColumnRef() != nil
		sub = sub || n.GetSubLink() != nil
	})
	if refs {
		return sqlerr.New(sqlerr.FeatureNotSupported, "cannot use column reference in DEFAULT expression")
	}
	if sub {
		return sqlerr.New(sqlerr.FeatureNotSupported, "cannot use subquery in DEFAULT expression")
	}
	return s.storedDefinition(ctx, expr)
}

// identityKind is the schema.MetaIdentity value of an identity constraint:
// "always" (GENERATED ALWAYS) or "by default".
func identityKind(con *pg_query.Constraint) string {
	if con.GeneratedWhen == "a" {
		return "always"
	}
	return "by default"
}

// withIdentity is f marked as an identity column of the given kind ("": f
// as it is).
func withIdentity(f arrow.Field, identity string) arrow.Field {
	if identity == "" {
		return f
	}
	f.Metadata = arrow.NewMetadata(append(f.Metadata.Keys(), schema.MetaIdentity), append(f.Metadata.Values(), identity))
	return f
}

// sequenceDefault is the default text of a column numbered by sequence
// ns.name (SERIAL, IDENTITY): PostgreSQL's nextval('public.t_id_seq'::regclass),
// qualified (storedrefs.go); the catalog shows the name as regclass output
// does, unqualified where the search path finds it
// (lakesoul_pg.default_text, migration 27), as TypeORM and others compare it.
func sequenceDefault(ns, name string) string {
	return fmt.Sprintf("nextval(%s::regclass)", quoteLiteral(quoteIdentifier(storedNamespace(ns))+"."+quoteIdentifier(name)))
}

// withDefault is f with default expression text def ("" drops it).
func withDefault(f arrow.Field, def string) arrow.Field {
	var keys, vals []string
	for i, k := range f.Metadata.Keys() {
		if k != schema.MetaDefault {
			keys, vals = append(keys, k), append(vals, f.Metadata.Values()[i])
		}
	}
	if def != "" {
		keys, vals = append(keys, schema.MetaDefault), append(vals, def)
	}
	f.Metadata = arrow.NewMetadata(keys, vals)
	return f
}

// columnDefault is the default expression text of f ("" without one) and
// whether f is an identity column that refuses written values.
func columnDefault(f arrow.Field) (def string, always bool) {
	if i := f.Metadata.FindKey(schema.MetaDefault); i >= 0 {
		def = f.Metadata.Values()[i]
	}
	if i := f.Metadata.FindKey(schema.MetaIdentity); i >= 0 {
		always = f.Metadata.Values()[i] == "always"
	}
	return def, always
}

// replaceSetToDefault replaces each DEFAULT of an INSERT's VALUES lists by
// the default expression of its target column (NULL without one); it
// reports the target columns some row gives a value other than DEFAULT.
func (s *Session) replaceSetToDefault(ctx context.Context, src *pg_query.Node, target []string, t *catalog.Table) (map[string]bool, error) {
	explicit := map[string]bool{}
	sel := src.GetSelectStmt()
	if sel == nil || len(sel.ValuesLists) == 0 {
		for _, c := range target {
			explicit[c] = true
		}
		return explicit, nil
	}
	for _, row := range sel.ValuesLists {
		for j, item := range row.GetList().GetItems() {
			if j >= len(target) {
				continue
			}
			if item.GetSetToDefault() == nil {
				explicit[target[j]] = true
				continue
			}
			f := t.Schema.Field(t.Schema.FieldIndices(target[j])[0])
			def, _ := columnDefault(f)
			if def == "" {
				item.Node = &pg_query.Node_AConst{AConst: &pg_query.A_Const{Isnull: true, Location: -1}}
				continue
			}
			expr, err := s.storedExpr(ctx, def, "default of column "+f.Name, t.Namespace) // storedrefs.go
			if err != nil {
				return nil, err
			}
			item.Node = expr.Node
		}
	}
	return explicit, nil
}

// defaultSQL is the DuckDB expression of default expression text def of
// column f of a table in namespace ns, for this session (nextval bound to
// it).
func (s *Session) defaultSQL(ctx context.Context, ns, def string, f arrow.Field) (string, error) {
	val, err := s.storedExpr(ctx, def, "default of column "+f.Name, ns) // storedrefs.go
	if err != nil {
		return "", err
	}
	sel := selectNode([]*pg_query.Node{resTarget("", val)}, nil, nil)
	if _, _, _, _, err := s.prepareDuck(ctx, sel, nil); err != nil {
		return "", err
	}
	expr, err := s.duckExprSQL(sel.GetSelectStmt().TargetList[0].GetResTarget().Val)
	if err != nil {
		return "", err
	}
	return lakeWriteCast(expr, f), nil
}

// catalogAtomically runs fn's catalog calls in one catalog transaction: the
// open block's held one, or a transaction of their own.
func (s *Session) catalogAtomically(ctx context.Context, fn func(cat *catalog.Catalog) error) error {
	if s.ddlTx != nil {
		return fn(s.cat)
	}
	cat, held, err := s.cat.Hold(ctx)
	if err != nil {
		return err
	}
	if err := fn(cat); err != nil {
		held.Rollback(context.WithoutCancel(ctx))
		return err
	}
	return held.Commit(ctx)
}

// quotedDefaultTypes are the types whose constants PostgreSQL shows as a
// quoted literal cast to the type (format_type's name): a default given as
// a string literal is stored coerced to its column's type, so pg_attrdef,
// information_schema.columns.column_default and pg_dump show 'x'::text, as
// ORMs' schema diffs (drizzle-kit, TypeORM, Prisma) compare them. Numbers
// and booleans fold to bare constants there and are left as written.
var quotedDefaultTypes = map[uint32]string{
	schema.OIDText: "text", schema.OIDVarchar: "character varying", schema.OIDBPChar: "bpchar",
	schema.OIDDate: "date", schema.OIDTimestamp: "timestamp without time zone",
	schema.OIDTimestamptz: "timestamp with time zone", schema.OIDTime: "time without time zone",
	schema.OIDInterval: "interval", schema.OIDUUID: "uuid", schema.OIDJSON: "json", schema.OIDJSONB: "jsonb",
	schema.OIDBytea: "bytea",
}

// typedDefaultText is the text a DEFAULT expression expr (deparsed as text)
// of column f is stored as: a bare string literal cast to the column's type
// where PostgreSQL shows it so, else text.
func typedDefaultText(expr *pg_query.Node, f arrow.Field, text string) string {
	sv := expr.GetAConst().GetSval()
	if sv == nil {
		return text
	}
	oid, _ := schema.PGTypeOf(f)
	name, ok := quotedDefaultTypes[oid]
	if !ok {
		return text
	}
	return quoteLiteral(sv.Sval) + "::" + name
}
