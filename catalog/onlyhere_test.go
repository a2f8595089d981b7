package catalog_test

import (
	"context"
	"go/ast"
	"go/token"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/internal/gosource"
)

// ownersOfCatalogSQL are the directories whose Go code may name the
// catalog's relations in SQL: this package (the catalog client) and
// sqlfuncs and migrations (the catalog's own SQL).
var ownersOfCatalogSQL = []string{"catalog/", "sqlfuncs/", "migrations/"}

// TestCatalogRelationsOnlyInCatalog: catalog access goes through package
// catalog. Every relation of a migrated catalog's public and lakesoul
// schemas (read from the database, so a relation added by a later migration
// is covered) is looked for in the SQL strings of every non-test Go file of
// the module outside ownersOfCatalogSQL: schema-qualified anywhere in a
// string that reads like SQL, or unqualified after FROM, JOIN, INTO, UPDATE
// or TABLE. Each hit is a place that reads or writes the catalog behind the
// catalog client's back (its roles, retries and error classification); it
// belongs behind a catalog method.
func TestCatalogRelationsOnlyInCatalog(t *testing.T) {
	ctx := context.Background()
	_, dsn := openCatalog(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT DISTINCT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname IN ('public', 'lakesoul') AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S') ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	rels, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	for _, must := range []string{"table_info", "partition_info", "data_commit_info", "namespace", "table_path_id", "compaction_job", "access_key"} {
		if !slices.Contains(rels, must) {
			t.Fatalf("the migrated catalog has no relation %s: not the catalog (%v)", must, rels)
		}
	}
	alt := strings.Join(rels, "|")
	qualified := regexp.MustCompile(`(?i)\b(public|lakesoul)\s*\.\s*"?(` + alt + `)\b"?\s*(\(?)`)
	unqualified := regexp.MustCompile(`(?i)\b(from|join|into|update|table)\s+"?(` + alt + `)\b"?\s*(\(?)`)
	sqlish := regexp.MustCompile(`(?i)\b(select|insert|update|delete|from|join)\b`)

	gosource.Each(t, ownersOfCatalogSQL, func(fset *token.FileSet, rel string, f *ast.File) {
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil || !sqlish.MatchString(s) {
				return true
			}
			for _, re := range []*regexp.Regexp{qualified, unqualified} {
				for _, m := range re.FindAllStringSubmatch(s, -1) {
					if m[3] == "(" {
						continue // a function of the same name (lakesoul.sequence(…) is not the table)
					}
					t.Errorf("%s:%d: SQL names catalog relation %s.%s outside package catalog (%q)", rel, fset.Position(lit.Pos()).Line, m[1], m[2], m[0])
				}
			}
			return true
		})
	})
}
