package engine

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/pgtest"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/pgwire"
)

// newInternalSession opens a session on a fresh catalog and warehouse, and
// returns it with a function that executes statements, failing the test on
// any error.
func newInternalSession(t *testing.T) (*Session, func(string)) {
	t.Helper()
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	if err := catalog.MigrateUp(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cat.Close)
	e, err := New(ctx, Config{Catalog: cat, Store: objstore.Local{}, Warehouse: objstore.LocalURI(filepath.Join(t.TempDir(), "wh")), Logger: slog.Default()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	ps, err := e.NewSession(ctx, map[string]string{"user": e.catalogRole, "database": DatabaseName}, pgwire.Credential{})
	if err != nil {
		t.Fatal(err)
	}
	s := ps.(*Session)
	t.Cleanup(s.Close)
	exec := func(q string) {
		t.Helper()
		stmts, err := s.Parse(ctx, q, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range stmts {
			p, err := st.Bind(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := p.Execute(ctx, 0, discard{}); err != nil {
				t.Fatal(err)
			}
			p.Close()
		}
	}
	return s, exec
}

type discard struct{}

func (discard) WriteRow([]any) error { return nil }
