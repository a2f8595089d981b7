package catalog_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/schema"
)

// userOptionKeys are the constant property keys (or prefixes, ending in
// ".") the server writes that users set too, as options of CREATE TABLE …
// WITH and ALTER TABLE … SET: their writers only copy or rename what a user
// gave.
var userOptionKeys = map[string]string{
	catalog.CDCColumnProperty: "cdc_column, a LakeSoul option",
	"use_cdc":                 "written with cdc_column, as LakeSoul does",
	"merge_op.":               "merge operators, options of their columns (renamed with them)",
}

// dynamicKeySites are the functions that write property keys computed at
// run time, and why the key is safe there. A new one must be added here,
// with its reason.
var dynamicKeySites = map[string]string{
	"engine/ddl.go:planCreateTable":                  "CREATE TABLE … WITH options, each passed through checkUserOption",
	"engine/alter.go:applyAlterCmd":                  "ALTER TABLE … SET/RESET options, each passed through checkUserOption",
	"engine/comment.go:planComment":                  "CommentProperty or CommentProperty + \".\" + column",
	"engine/rename.go:renamedColumnTable":            "moves a renamed column's merge_op./comment. keys and rewrites pg_check. conditions it names",
	"engine/renameschema.go:rewriteTableDefinitions": "copies a table's properties and rewrites the pg_check. conditions naming the renamed schema, keys unchanged",
	"catalog/catalog.go:CreateTable":                 "copies Table.Properties, which the writers above filled",
	"catalog/catalog.go:tableDefinition":             "copies Table.Properties, which the writers above filled",
}

// TestInternalPropertyKeysAreListed finds every table property key the
// server's Go code writes or deletes (an assignment to, or delete from, a
// Properties map or the catalog's props map, in every non-test file of the
// module) and checks that each constant key is in InternalProperties or a
// user option, and that every computed key is written only where a
// reason is recorded. A writer of a new internal key that is not listed
// fails here; a listed key is refused as a user option (engine's
// TestInternalPropertiesRefusedAsOptions).
func TestInternalPropertyKeysAreListed(t *testing.T) {
	root := filepath.Join("..")
	fset := token.NewFileSet()
	type file struct {
		rel string
		pkg string
		f   *ast.File
	}
	var files []file
	consts := map[string]string{} // "pkg.Name" → value
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		files = append(files, file{filepath.ToSlash(rel), f.Name.Name, f})
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i < len(vs.Values) {
						if v, ok := constString(vs.Values[i], f.Name.Name, consts); ok {
							consts[f.Name.Name+"."+n.Name] = v
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Constants defined by other constants: a second pass resolves them.
	for _, fl := range files {
		for _, decl := range fl.f.Decls {
			if gd, ok := decl.(*ast.GenDecl); ok && gd.Tok == token.CONST {
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if i < len(vs.Values) {
							if v, ok := constString(vs.Values[i], fl.pkg, consts); ok {
								consts[fl.pkg+"."+n.Name] = v
							}
						}
					}
				}
			}
		}
	}

	var found []string
	for _, fl := range files {
		for _, decl := range fl.f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			site := fl.rel + ":" + fd.Name.Name
			check := func(key ast.Expr, pos token.Pos) {
				where := fset.Position(pos).String()
				if v, ok := constString(key, fl.pkg, consts); ok {
					found = append(found, v)
					if _, ok := catalog.InternalPropertyOf(v); !ok && userOptionKeys[v] == "" {
						t.Errorf("%s: property key %q is neither in catalog.InternalProperties nor a user option", where, v)
					}
					return
				}
				if b, ok := key.(*ast.BinaryExpr); ok && b.Op == token.ADD {
					if v, ok := constString(b.X, fl.pkg, consts); ok {
						found = append(found, v+"…")
						p, internal := catalog.InternalPropertyOf(v)
						if !(internal && strings.HasSuffix(p.Key, ".") && p.Key == v) && userOptionKeys[v] == "" {
							t.Errorf("%s: property key prefix %q is neither an internal prefix nor a user option", where, v)
						}
						return
					}
				}
				if dynamicKeySites[site] == "" {
					t.Errorf("%s (%s): property key computed at run time where no reason is recorded (dynamicKeySites)", where, site)
				}
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.AssignStmt:
					for _, lhs := range n.Lhs {
						if ix, ok := lhs.(*ast.IndexExpr); ok && isPropertiesMap(ix.X) {
							check(ix.Index, ix.Pos())
						}
					}
				case *ast.CallExpr:
					if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "delete" && len(n.Args) == 2 && isPropertiesMap(n.Args[0]) {
						check(n.Args[1], n.Pos())
					}
				}
				return true
			})
		}
	}
	// The scan must see the writers it is about, or it proves nothing.
	for _, want := range []string{catalog.CheckPropertyPrefix + "…", catalog.DroppedColumnProperty, catalog.HashBucketNumProperty,
		catalog.HashPartitionsProperty} {
		if !slices.Contains(found, want) {
			t.Errorf("the scan found no write of %q (found %v)", want, found)
		}
	}
}

// isPropertiesMap reports whether x is a table's property map: a
// selector ending in .Properties, or catalog's props.
func isPropertiesMap(x ast.Expr) bool {
	switch x := x.(type) {
	case *ast.SelectorExpr:
		return x.Sel.Name == "Properties"
	case *ast.Ident:
		return x.Name == "props"
	}
	return false
}

// constString evaluates a string constant expression: a literal, a
// constant of pkg or another package (by its package name), or a sum of
// them.
func constString(e ast.Expr, pkg string, consts map[string]string) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind == token.STRING {
			v, err := strconv.Unquote(e.Value)
			return v, err == nil
		}
	case *ast.Ident:
		v, ok := consts[pkg+"."+e.Name]
		return v, ok
	case *ast.SelectorExpr:
		if p, ok := e.X.(*ast.Ident); ok {
			v, ok := consts[p.Name+"."+e.Sel.Name]
			return v, ok
		}
	case *ast.BinaryExpr:
		if e.Op == token.ADD {
			a, ok1 := constString(e.X, pkg, consts)
			b, ok2 := constString(e.Y, pkg, consts)
			return a + b, ok1 && ok2
		}
	case *ast.ParenExpr:
		return constString(e.X, pkg, consts)
	}
	return "", false
}

// TestInternalMetadataKeys: every field metadata key the schema package
// defines (the Meta* constants) is in schema.InternalMetadata, which the
// catalog refuses from logins other than the server's.
func TestInternalMetadataKeys(t *testing.T) {
	fset := token.NewFileSet()
	paths, err := filepath.Glob(filepath.Join("..", "schema", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !strings.HasPrefix(name.Name, "Meta") || i >= len(vs.Values) {
						continue
					}
					v, ok := constString(vs.Values[i], "schema", nil)
					if !ok {
						continue
					}
					n++
					if !slices.Contains(schema.InternalMetadata, v) {
						t.Errorf("schema.%s = %q is not in schema.InternalMetadata", name.Name, v)
					}
				}
			}
		}
	}
	if n < 4 {
		t.Fatalf("found %d Meta* constants in package schema; the scan is broken", n)
	}
}
