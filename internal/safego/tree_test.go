package safego

import (
	"go/ast"
	"go/token"
	"strconv"
	"strings"
	"testing"

	"github.com/lakesoul-go/lakesoul/internal/gosource"
)

// TestEveryGoroutineIsSafe parses every non-test Go file of the module and
// fails on each place where code could run on a goroutine without a
// recover of this package around it:
//
//   - a `go` statement anywhere but in this package's own implementation
//     (goAllowed): goroutines start through Go or Group.Start;
//   - a call of a method named Go other than safego.Go (errgroup.Group.Go,
//     sync.WaitGroup.Go and the like start unguarded goroutines);
//   - a callback handed to a function that runs it on a goroutine or thread
//     the module does not start (foreignCallers: time.AfterFunc,
//     context.AfterFunc, DuckDB's scalar and table functions) that is not
//     wrapped where it is handed over — by safego.Guard, or by a function
//     whose name starts with "guard" (the engine's guards of DuckDB
//     callbacks, which turn a panic into the query's error).
//
// Test files are exempt: a panic there fails the test, which is its job.
func TestEveryGoroutineIsSafe(t *testing.T) {
	var problems []string
	gosource.Each(t, nil, func(fset *token.FileSet, rel string, f *ast.File) {
		problems = append(problems, checkFile(fset, rel, f)...)
	})
	for _, p := range problems {
		t.Error(p)
	}
}

// goAllowed are the files whose `go` statements are the module's only
// ones: this package's implementation of Go and Group.Start.
var goAllowed = map[string]bool{"internal/safego/safego.go": true}

// foreignCallers are functions that run a callback argument on a goroutine
// or thread of their own, by import path and name, with the callback's
// argument index.
var foreignCallers = map[[2]string]int{
	{"time", "AfterFunc"}:                                   1,
	{"context", "AfterFunc"}:                                1,
	{"github.com/duckdb/duckdb-go/v2", "RegisterScalarUDF"}: 2,
	{"github.com/duckdb/duckdb-go/v2", "RegisterTableUDF"}:  2,
}

const safegoPath = "github.com/lakesoul-go/lakesoul/internal/safego"

// checkFile reports the unguarded goroutine starts of one file.
func checkFile(fset *token.FileSet, rel string, f *ast.File) []string {
	imports := map[string]string{} // local name → import path
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		local := defaultName(p)
		if im.Name != nil {
			local = im.Name.Name
		}
		imports[local] = p
	}
	pkgOf := func(e ast.Expr) string {
		if id, ok := e.(*ast.Ident); ok {
			return imports[id.Name]
		}
		return ""
	}
	var out []string
	report := func(n ast.Node, msg string) {
		pos := fset.Position(n.Pos())
		out = append(out, rel+":"+strconv.Itoa(pos.Line)+": "+msg)
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			if !goAllowed[rel] {
				report(n, "go statement: start goroutines with safego.Go or a safego.Group, so a panic cannot end the process")
			}
		case *ast.CallExpr:
			sel, ok := n.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if sel.Sel.Name == "Go" && pkgOf(sel.X) != safegoPath {
				report(n, "call of a method Go: it starts a goroutine without safego's recover (use safego.Group)")
			}
			if arg, ok := foreignCallers[[2]string{pkgOf(sel.X), sel.Sel.Name}]; ok {
				if arg >= len(n.Args) || !guarded(n.Args[arg], imports) {
					report(n, sel.Sel.Name+" runs its callback on a goroutine or thread the module does not start: wrap it in safego.Guard (or an engine guard) where it is handed over")
				}
			}
		}
		return true
	})
	return out
}

// packageNames are the package names of imports whose last path element
// is not their name.
var packageNames = map[string]string{"github.com/duckdb/duckdb-go/v2": "duckdb"}

// defaultName is the name an import of path binds without an explicit one:
// its package name, taken to be the last path element (a major-version
// suffix /vN skipped) where packageNames says nothing else.
func defaultName(path string) string {
	if n, ok := packageNames[path]; ok {
		return n
	}
	elems := strings.Split(path, "/")
	last := elems[len(elems)-1]
	if len(elems) > 1 && len(last) > 1 && last[0] == 'v' {
		if _, err := strconv.Atoi(last[1:]); err == nil {
			last = elems[len(elems)-2]
		}
	}
	return last
}

// guarded reports whether e is a call of safego.Guard or of a function
// whose name starts with "guard".
func guarded(e ast.Expr, imports map[string]string) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	switch fn := call.Fun.(type) {
	case *ast.SelectorExpr:
		if id, ok := fn.X.(*ast.Ident); ok && imports[id.Name] == safegoPath && fn.Sel.Name == "Guard" {
			return true
		}
		return strings.HasPrefix(fn.Sel.Name, "guard")
	case *ast.Ident:
		return strings.HasPrefix(fn.Name, "guard")
	}
	return false
}
