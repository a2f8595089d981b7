package engine

import (
	"context"
	"sync"
	"testing"

	"github.com/lakesoul-go/lakesoul/pgwire"
)

// TestMultiTableReadIsOneSnapshot: a statement reading several tables lists
// their files in one catalog snapshot, so a transaction block that commits
// to both between the two listings is invisible to the statement as a
// whole, never half (count(a) = count(b) holds in every read).
func TestMultiTableReadIsOneSnapshot(t *testing.T) {
	ctx := context.Background()
	s, exec := newInternalSession(t)
	exec("CREATE TABLE snap_a (id int PRIMARY KEY); CREATE TABLE snap_b (id int PRIMARY KEY); " +
		"INSERT INTO snap_a VALUES (1); INSERT INTO snap_b VALUES (1)")
	ps, err := s.e.NewSession(ctx, map[string]string{"user": s.e.catalogRole, "database": DatabaseName}, pgwire.Credential{})
	if err != nil {
		t.Fatal(err)
	}
	other := ps.(*Session)
	defer other.Close()
	var once sync.Once
	testHookTableListed = func(string) {
		once.Do(func() {
			for _, q := range []string{"BEGIN", "INSERT INTO snap_a VALUES (2)", "INSERT INTO snap_b VALUES (2)", "COMMIT"} {
				stmts, err := other.Parse(ctx, q, nil)
				if err != nil {
					t.Error(err)
					return
				}
				p, err := stmts[0].Bind(ctx, nil)
				if err != nil {
					t.Error(err)
					return
				}
				if _, _, err := p.Execute(ctx, 0, discard{}); err != nil {
					t.Error(err)
				}
				p.Close()
			}
		})
	}
	defer func() { testHookTableListed = nil }()
	var rows rowsOf
	stmts, err := s.Parse(ctx, "SELECT (SELECT count(*) FROM snap_a) AS a, (SELECT count(*) FROM snap_b) AS b", nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := stmts[0].Bind(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.Execute(ctx, 0, &rows); err != nil {
		t.Fatal(err)
	}
	p.Close()
	testHookTableListed = nil
	if len(rows) != 1 || rows[0][0] != rows[0][1] {
		t.Fatalf("counts of a and b in one statement: %v, want equal (one snapshot)", rows)
	}
	// The committed block is visible to the next statement, whole.
	rows = nil
	stmts, _ = s.Parse(ctx, "SELECT (SELECT count(*) FROM snap_a), (SELECT count(*) FROM snap_b)", nil)
	p, _ = stmts[0].Bind(ctx, nil)
	if _, _, err := p.Execute(ctx, 0, &rows); err != nil {
		t.Fatal(err)
	}
	p.Close()
	if len(rows) != 1 || rows[0][0] != int64(2) || rows[0][1] != int64(2) {
		t.Fatalf("after the commit: %v, want 2 and 2", rows)
	}
}

type rowsOf [][]any

func (r *rowsOf) WriteRow(v []any) error {
	*r = append(*r, append([]any(nil), v...))
	return nil
}
