// Package gosource hands tests that check the whole module (every goroutine
// starts through safego, catalog relations are named only by package
// catalog) the module's non-test Go files, parsed, so that each such test
// enumerates the same files.
package gosource

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// minFiles is fewer files than the module has: a walk that parses fewer
// did not walk the module.
const minFiles = 100

// Each parses every non-test Go file of the module that holds the test's
// working directory — outside testdata, vendor, dot and underscore
// directories, nested modules and the directories skip names (module-relative,
// slash-separated, ending in "/") — and calls fn with its module-relative
// path. It fails t when the module cannot be walked or a file parsed.
func Each(t *testing.T, skip []string, fn func(fset *token.FileSet, rel string, f *ast.File)) {
	t.Helper()
	root := moduleRoot(t)
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		name := d.Name()
		if d.IsDir() {
			if path == root {
				return nil
			}
			if name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // another module
			}
			for _, s := range skip {
				if rel+"/" == s {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		fn(fset, rel, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < minFiles {
		t.Fatalf("parsed only %d files under %s: not the module", files, root)
	}
}

// moduleRoot is the directory of the module's go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
