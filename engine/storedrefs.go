package engine

import (
	"context"
	"fmt"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/pgcatalog"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Names in stored definitions.
//
// A view's query, a column DEFAULT and a CHECK condition are stored as text
// and evaluated later, by whoever reads the view or writes the table. In
// PostgreSQL their names are bound when they are created — a view's
// relations, nextval('s'::regclass)'s sequence and a cast's type are OIDs
// from then on — so a reader's search_path, temporary tables or rights
// cannot make them name something else. Here every name a stored definition
// holds is resolved when it is created, along the creator's search_path and
// with the creator's rights (a creator cannot name what they cannot see),
// and written back qualified by the namespace it resolved to:
//
//   - relations (tables, views, sequences read as relations), in views;
//   - the table of lakesoul.snapshot/changes/history calls, in views;
//   - the sequence of every sequence function (seqFunctions: nextval,
//     currval, setval), wherever it appears;
//   - lake enum types of casts.
//
// Stored text is read along a fixed path — the object's own namespace, then
// the default one (storedPath) — never the reader's, so text stored before
// names were qualified cannot be redirected either. What a stored
// definition does when it runs is then checked against the role running
// it: tables are read and sequences advanced with the reader's rights, as
// any statement of theirs (a view grants nothing; PostgreSQL's views with
// security_invoker). Functions need no resolving: users cannot create any,
// and the engine's own that act on catalog objects are the sequence
// functions. The argument expressions of time travel in a view, which the
// catalog evaluates as the reader, may only be constants (storedArgsOK).
//
// Only the server stores definitions (lakesoul.guard_view_definition,
// lakesoul.guard_internal_keys): text that did not pass here never reaches
// a reader.

// storedNamespace is the name a stored definition gives namespace ns: the
// default namespace is PostgreSQL's public (no namespace may be called
// public: lakesoul.guard_namespace_name), others their own name.
func storedNamespace(ns string) string {
	if ns == catalog.DefaultNamespace {
		return "public"
	}
	return ns
}

// storedPath is the search path an unqualified name in a stored definition
// of an object in namespace ns is resolved along when it is read.
func storedPath(ns string) []string {
	if ns == catalog.DefaultNamespace || ns == "public" || ns == "" {
		return []string{catalog.DefaultNamespace}
	}
	return []string{ns, catalog.DefaultNamespace}
}

// qualifyStoredRefs resolves the names of stored definition tree along path
// with the session's rights and qualifies each with the namespace it
// resolved to; time travel arguments must be constants (storedArgsOK).
// creating (CREATE VIEW, DEFAULT, CHECK): every name must resolve,
// qualified ones too, and a temporary table cannot be named; otherwise
// (text read back) only
// unqualified names are resolved, and one that resolves nowhere is
// qualified by path[0], so it fails as missing rather than falling to the
// reader's search_path.
func (s *Session) qualifyStoredRefs(ctx context.Context, tree *pg_query.Node, path []string, creating bool) error {
	ctes := cteRefs(tree)
	var err error
	walk(tree, func(n *pg_query.Node) {
		if err != nil {
			return
		}
		switch {
		case n.GetRangeVar() != nil:
			rv := n.GetRangeVar()
			if ctes[rv] != nil || rv.Catalogname != "" ||
				pgcatalog.IsCatalogRelation(rv.Schemaname, rv.Relname) || isLakeCatalogRelation(rv.Schemaname) {
				return
			}
			if creating && s.isTempRef(rv) {
				err = sqlerr.Unsupported("a view of a temporary table", "views of lake tables and views; query the temporary table directly")
				return
			}
			var ns string
			if ns, err = s.storedRelation(ctx, rv.Schemaname, rv.Relname, path, creating); err == nil && ns != "" {
				rv.Schemaname = storedNamespace(ns)
			}
		case n.GetRangeFunction() != nil:
			name, fc := timeTravelCall(n.GetRangeFunction())
			if name == "" || len(fc.Args) == 0 {
				return
			}
			if err = storedArgsOK(name, fc.Args[1:]); err != nil {
				return
			}
			text, ok := stringValue(fc.Args[0])
			if !ok {
				return // bindTimeTravel refuses it
			}
			var schemaName, rel, ns string
			if schemaName, rel, err = splitTableName(text); err != nil {
				return
			}
			if schemaName != "" && !creating {
				return
			}
			if ns, err = s.storedTable(ctx, schemaName, rel, path); err == nil {
				fc.Args[0] = pg_query.MakeAConstStrNode(quoteIdentifier(storedNamespace(ns))+"."+quoteIdentifier(rel), -1)
			}
		case n.GetFuncCall() != nil:
			fc := n.GetFuncCall()
			if seqFunctions[funcName(fc)] == "" || funcName(fc) == "lastval" || len(fc.Args) == 0 {
				return
			}
			text, ok := stringValue(sequenceArg(fc.Args[0]))
			if !ok {
				err = sqlerr.Unsupported(funcName(fc)+" of a computed sequence name in a stored definition", funcName(fc)+"('schema.sequence')")
				return
			}
			var parts []string
			if parts, err = splitQualifiedName(text); err != nil || len(parts) == 0 || len(parts) > 2 {
				err = sqlerr.New(sqlerr.InvalidName, "invalid name syntax: %q", text)
				return
			}
			if len(parts) == 2 && !creating {
				return
			}
			var ns string
			if ns, err = s.storedSequence(ctx, parts, path); err == nil {
				fc.Args[0] = makeCast(pg_query.MakeAConstStrNode(quoteIdentifier(storedNamespace(ns))+"."+quoteIdentifier(parts[len(parts)-1]), -1), "regclass")
			}
		case n.GetTypeCast() != nil:
			tc := n.GetTypeCast()
			parts := typeNameParts(tc.TypeName)
			if parts == nil || len(parts) > 2 || len(parts) == 2 && !creating {
				return
			}
			var e *catalog.Enum
			if e, err = s.storedEnum(ctx, parts, path); err == nil && e != nil {
				tc.TypeName.Names = []*pg_query.Node{pg_query.MakeStrNode(storedNamespace(e.Namespace)), pg_query.MakeStrNode(e.Name)}
			}
		}
	})
	return err
}

// storedRelation finds the namespace of relation schemaName.name — a table,
// a view or a sequence the session sees — along path when schemaName is
// empty; "" when there is none and the name was qualified (it is then
// left as it is, for the binder to refuse).
func (s *Session) storedRelation(ctx context.Context, schemaName, name string, path []string, creating bool) (string, error) {
	spaces := path
	if schemaName != "" {
		spaces = []string{schemaName}
	}
	for _, ns := range spaces {
		t, err := s.lookupTable(ctx, ns, name)
		if err == nil {
			return t.Namespace, nil
		}
		if sqlerr.Code(err) != sqlerr.UndefinedTable {
			return "", err
		}
		if v, err := s.cat.ViewByName(ctx, ns, name); err != nil || v != nil {
			if v != nil {
				return v.Namespace, nil
			}
			return "", err
		}
		if _, ok, err := s.cat.SequenceID(ctx, ns, name); err != nil || ok {
			return seqNamespace(ns), err
		}
	}
	if creating {
		return "", sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", qualifiedText(schemaName, name))
	}
	if schemaName != "" {
		return "", nil
	}
	return path[0], nil
}

// storedTable finds the namespace of table schemaName.name (along path
// when schemaName is empty): 42P01 when the session sees none.
func (s *Session) storedTable(ctx context.Context, schemaName, name string, path []string) (string, error) {
	spaces := path
	if schemaName != "" {
		spaces = []string{schemaName}
	}
	for _, ns := range spaces {
		t, err := s.lookupTable(ctx, ns, name)
		if err == nil {
			return t.Namespace, nil
		}
		if sqlerr.Code(err) != sqlerr.UndefinedTable {
			return "", err
		}
	}
	return "", sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", qualifiedText(schemaName, name))
}

// storedSequence finds the namespace of the sequence parts names
// ([schema,] name; along path without a schema): 42P01 when the session
// sees none — so a definition cannot name another workspace's sequence.
func (s *Session) storedSequence(ctx context.Context, parts []string, path []string) (string, error) {
	spaces := path
	if len(parts) == 2 {
		spaces = []string{parts[0]}
	}
	name := parts[len(parts)-1]
	for _, ns := range spaces {
		if _, ok, err := s.cat.SequenceID(ctx, ns, name); err != nil || ok {
			return seqNamespace(ns), err
		}
	}
	schemaName := ""
	if len(parts) == 2 {
		schemaName = parts[0]
	}
	return "", sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", qualifiedText(schemaName, name))
}

// storedEnum finds the lake enum type parts names ([schema,] name; along
// path without a schema); nil when there is none (the name may be a type
// of DuckDB's, which planning checks).
func (s *Session) storedEnum(ctx context.Context, parts []string, path []string) (*catalog.Enum, error) {
	spaces := path
	if len(parts) == 2 {
		spaces = []string{parts[0]}
	}
	for _, ns := range spaces {
		e, err := s.cat.EnumByName(ctx, ns, parts[len(parts)-1])
		if err != nil || e != nil {
			return e, err
		}
	}
	return nil, nil
}

// qualifiedText is schema.name as an error names it ("name" alone without
// a schema).
func qualifiedText(schemaName, name string) string {
	if schemaName == "" {
		return name
	}
	return schemaName + "." + name
}

// storedTimeFunctions are the functions a stored time travel argument may
// call: the current time, which involves nothing but the clock.
var storedTimeFunctions = map[string]bool{"now": true, "statement_timestamp": true, "transaction_timestamp": true,
	"clock_timestamp": true}

// storedArgsOK refuses argument expressions of a time travel call in a view
// that are more than constants: the catalog evaluates them as whoever reads
// the view, so a function there would run with the reader's rights what the
// view's creator wrote. Constants, casts, operators, named arguments
// (partition => …), CURRENT_TIMESTAMP and its kin and now() are allowed.
func storedArgsOK(name string, args []*pg_query.Node) error {
	var bad string
	for _, a := range args {
		walk(a, func(x *pg_query.Node) {
			if bad != "" {
				return
			}
			switch v := x.Node.(type) {
			case *pg_query.Node_AConst, *pg_query.Node_TypeCast, *pg_query.Node_AExpr, *pg_query.Node_NamedArgExpr,
				*pg_query.Node_SqlvalueFunction, *pg_query.Node_String_, *pg_query.Node_Integer, *pg_query.Node_Float,
				*pg_query.Node_List:
			case *pg_query.Node_FuncCall:
				if !storedTimeFunctions[funcName(v.FuncCall)] || len(v.FuncCall.Args) > 0 {
					bad = "function " + funcName(v.FuncCall)
				}
			default:
				bad = "expressions other than constants"
			}
		})
	}
	if bad != "" {
		return sqlerr.Unsupported(fmt.Sprintf("a view whose lakesoul.%s arguments hold %s", name, bad),
			"constants, casts, operators and now() in a view's time travel: lakesoul."+name+"('s.t', now() - interval '1 day')")
	}
	return nil
}

// storedDefinition resolves the names of a definition being created (a
// view's query, a DEFAULT, a CHECK condition) along the session's
// search_path with its rights, and qualifies them (qualifyStoredRefs).
func (s *Session) storedDefinition(ctx context.Context, tree *pg_query.Node) error {
	return s.qualifyStoredRefs(ctx, tree, s.searchPath(), true)
}

// storedExpr parses stored expression text (a column DEFAULT, a CHECK
// condition) of a table of namespace ns for evaluation: its names are read
// along storedPath(ns), never the session's search_path.
func (s *Session) storedExpr(ctx context.Context, text, what, ns string) (*pg_query.Node, error) {
	expr, err := parseStoredExpr(text, what)
	if err != nil {
		return nil, err
	}
	if err := s.qualifyStoredRefs(ctx, expr, storedPath(ns), false); err != nil {
		return nil, err
	}
	return expr, nil
}
