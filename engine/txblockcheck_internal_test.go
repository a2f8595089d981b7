package engine

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestPreventTransactionBlockIsTheOnlyRefusal enumerates the engine's
// source: every refusal of a statement because a transaction block is
// open ("cannot run inside a transaction block") or because none is ("can
// only be used in transaction blocks") is made by the checks of
// implicittx.go, which know the pipeline's implicit transaction (the first
// statement of a pipeline runs on its own; a pipeline's implicit
// transaction is not a block for RequireTransactionBlock). A check written
// elsewhere, against inBlock, would treat a pipeline as a block.
func TestPreventTransactionBlockIsTheOnlyRefusal(t *testing.T) {
	allowed := map[string]bool{
		"preventTransactionBlock":       true,
		"preventTransactionBlockAtPlan": true,
		"requireTransactionBlock":       true,
		"warnNoTransactionBlock":        true,
		// SAVEPOINT, RELEASE and ROLLBACK TO need an explicit block: every
		// implicit transaction is refused, as in PostgreSQL.
		"planSavepoint": true,
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				if !strings.Contains(lit.Value, "inside a transaction block") && !strings.Contains(lit.Value, "only be used in transaction blocks") {
					return true
				}
				checked++
				if !allowed[fn.Name.Name] {
					t.Errorf("%s: %s refuses by itself (%s); call preventTransactionBlock or requireTransactionBlock (implicittx.go)",
						fset.Position(lit.Pos()), fn.Name.Name, lit.Value)
				}
				return true
			})
		}
	}
	if checked < 3 {
		t.Fatalf("found %d refusals: the scan no longer sees the checks", checked)
	}
}
