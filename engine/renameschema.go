package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/pgcatalog"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// ALTER SCHEMA old RENAME TO new: the namespace and every object in it
// change name in one catalog transaction (lakesoul.rename_namespace); tables
// keep their files and directories. As in PostgreSQL, where stored
// definitions hold OIDs, whatever named an object of the schema still names
// it afterwards: the names stored definitions hold are qualified by their
// namespace when they are created (storedrefs.go), so every view query,
// column DEFAULT and CHECK condition that names the old schema is rewritten
// to name the new one (renameStoredNamespace) in the same transaction.
//
// LakeSoul's namespace "default" (PostgreSQL's public) is not renamed:
// LakeSoul's own clients find it by that name.

// renameSchema renames schema oldName (PostgreSQL's face name) to newName.
func (s *Session) renameSchema(ctx context.Context, oldName, newName string) error {
	old := pgcatalog.Namespace(oldName)
	if old == catalog.DefaultNamespace {
		return sqlerr.Unsupported("renaming schema public (LakeSoul's namespace \"default\", which LakeSoul's clients find by that name)",
			"CREATE SCHEMA new_name, then CREATE TABLE new_name.t AS SELECT * FROM public.t for each table")
	}
	if err := checkSchemaName(newName); err != nil {
		return err
	}
	err := s.catalogAtomically(ctx, func(cat *catalog.Catalog) error {
		if err := cat.RenameNamespace(ctx, old, newName); err != nil {
			return err
		}
		oldFace, newFace := storedNamespace(old), storedNamespace(newName)
		if err := rewriteViews(ctx, cat, func(_ catalog.View, tree *pg_query.Node) bool {
			return renameStoredNamespace(tree, oldFace, newFace)
		}); err != nil {
			return err
		}
		return rewriteTableDefinitions(ctx, cat, oldFace, newFace)
	})
	if err != nil {
		return err
	}
	s.relationsChanged()
	return nil
}

// checkSchemaName refuses a new schema name PostgreSQL reserves (42939):
// pg_ is the prefix of system schemas.
func checkSchemaName(name string) error {
	if strings.HasPrefix(name, "pg_") {
		return &sqlerr.Error{Code: sqlerr.ReservedName, Message: fmt.Sprintf("unacceptable schema name %q", name),
			Detail: `The prefix "pg_" is reserved for system schemas.`}
	}
	return nil
}

// rewriteTableDefinitions rewrites the column DEFAULTs and CHECK conditions
// of every table the role sees that name schema oldFace to name newFace.
func rewriteTableDefinitions(ctx context.Context, cat *catalog.Catalog, oldFace, newFace string) error {
	tables, err := cat.Tables(ctx, "")
	if err != nil {
		return err
	}
	for _, t := range tables {
		rename := func(text, what string) (string, bool, error) {
			if !strings.Contains(text, oldFace) {
				return text, false, nil
			}
			expr, err := parseStoredExpr(text, what)
			if err != nil {
				return text, false, nil // evaluating it fails as it did before
			}
			if !renameStoredNamespace(expr, oldFace, newFace) {
				return text, false, nil
			}
			out, err := deparseExpr(expr)
			return out, err == nil, err
		}
		changed := false
		fields := t.Schema.Fields()
		for i, f := range fields {
			def, _ := columnDefault(f)
			if def == "" {
				continue
			}
			text, ok, err := rename(def, "default of column "+f.Name)
			if err != nil {
				return err
			}
			if ok {
				fields[i] = withDefault(f, text)
				changed = true
			}
		}
		props := map[string]string{}
		for k, v := range t.Properties {
			props[k] = v
			if name, ok := strings.CutPrefix(k, checkPropertyPrefix); ok {
				text, ok, err := rename(v, "check constraint "+name)
				if err != nil {
					return err
				}
				if ok {
					props[k] = text
					changed = true
				}
			}
		}
		if !changed {
			continue
		}
		nt := *t
		nt.Schema = arrow.NewSchema(fields, nil)
		nt.Properties = props
		if err := cat.AlterTable(ctx, &nt); err != nil {
			return err
		}
	}
	return nil
}

// renameStoredNamespace points the names of stored definition tree that are
// qualified by schema oldFace at schema newFace: relations, the table of
// time travel calls, the sequence of sequence functions and enum types of
// casts — each kind of name qualifyStoredRefs qualifies. It reports whether
// it changed one.
func renameStoredNamespace(tree *pg_query.Node, oldFace, newFace string) bool {
	ctes := cteRefs(tree)
	changed := false
	walk(tree, func(n *pg_query.Node) {
		switch {
		case n.GetRangeVar() != nil:
			rv := n.GetRangeVar()
			if ctes[rv] == nil && rv.Catalogname == "" && rv.Schemaname == oldFace {
				rv.Schemaname = newFace
				changed = true
			}
		case n.GetRangeFunction() != nil:
			name, fc := timeTravelCall(n.GetRangeFunction())
			if name == "" || len(fc.Args) == 0 {
				return
			}
			text, ok := stringValue(fc.Args[0])
			if !ok {
				return
			}
			if schemaName, rel, err := splitTableName(text); err == nil && schemaName == oldFace {
				fc.Args[0] = pg_query.MakeAConstStrNode(quoteIdentifier(newFace)+"."+quoteIdentifier(rel), -1)
				changed = true
			}
		case n.GetFuncCall() != nil:
			fc := n.GetFuncCall()
			if seqFunctions[funcName(fc)] == "" || len(fc.Args) == 0 {
				return
			}
			text, ok := stringValue(sequenceArg(fc.Args[0]))
			if !ok {
				return
			}
			if parts, err := splitQualifiedName(text); err == nil && len(parts) == 2 && parts[0] == oldFace {
				fc.Args[0] = makeCast(pg_query.MakeAConstStrNode(quoteIdentifier(newFace)+"."+quoteIdentifier(parts[1]), -1), "regclass")
				changed = true
			}
		case n.GetTypeCast() != nil:
			if parts := typeNameParts(n.GetTypeCast().TypeName); len(parts) == 2 && parts[0] == oldFace {
				n.GetTypeCast().TypeName.Names[0] = pg_query.MakeStrNode(newFace)
				changed = true
			}
		}
	})
	return changed
}
