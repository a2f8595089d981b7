package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// The hint of an unsupported statement names every statement the router
// plans, because both come from routes (issue 14, item 10).
func TestUnsupportedHintListsRoutes(t *testing.T) {
	tree, err := pg_query.Parse("CLUSTER t")
	if err != nil {
		t.Fatal(err)
	}
	_, err = (&Session{}).routeStatement(context.Background(), tree.Stmts[0].Stmt, nil)
	var se *sqlerr.Error
	if sqlerr.Code(err) != sqlerr.FeatureNotSupported || !errors.As(err, &se) {
		t.Fatalf("CLUSTER: %v, want 0A000", err)
	}
	for _, r := range routes {
		if !strings.Contains(se.Hint, r.shown) {
			t.Errorf("hint %q does not name %s", se.Hint, r.shown)
		}
	}
	for _, w := range []string{"UPDATE", "DELETE", "MERGE", "COPY", "TRUNCATE", "ALTER TABLE", "DEALLOCATE"} {
		if !strings.Contains(se.Hint, w) {
			t.Errorf("hint %q does not name %s", se.Hint, w)
		}
	}
}
