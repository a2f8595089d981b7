package engine_test

import (
	"context"
	"slices"
	"testing"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// A direct scan runs its units on several goroutines: it must yield every
// merged row exactly once across suspended Executes, and a portal closed
// half-way or canceled must stop its workers (run with -race).
func TestDirectScanPortal(t *testing.T) {
	s := newSession(t)
	ctx := context.Background()
	mustRun(t, s, `CREATE TABLE d (id bigint PRIMARY KEY, v text) WITH (hash_bucket_num = 4)`)
	mustRun(t, s, `INSERT INTO d SELECT i, 'v' || i FROM range(20000) AS r(i)`)
	mustRun(t, s, `INSERT INTO d SELECT i, 'w' || i FROM range(0, 20000, 3) AS r(i)`)
	for _, closeEarly := range []bool{false, true} {
		stmts, err := s.Parse(ctx, `SELECT id, v FROM d`, nil)
		if err != nil {
			t.Fatal(err)
		}
		p, err := stmts[0].Bind(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		c := &rowCollector{}
		for calls := 0; ; calls++ {
			_, done, err := p.Execute(ctx, 1500, c)
			if err != nil {
				t.Fatal(err)
			}
			if done || (closeEarly && calls == 2) {
				break
			}
		}
		p.Close()
		if closeEarly {
			if len(c.rows) != 4500 {
				t.Fatalf("closed after three Executes of 1500: %d rows", len(c.rows))
			}
			continue
		}
		seen := map[string]bool{}
		for _, r := range c.rows {
			if seen[r] {
				t.Fatalf("row %s twice", r)
			}
			seen[r] = true
		}
		if len(c.rows) != 20000 || !seen["3|w3"] || !seen["4|v4"] || seen["3|v3"] {
			t.Fatalf("%d rows; 3|w3 %v, 4|v4 %v, stale 3|v3 %v", len(c.rows), seen["3|w3"], seen["4|v4"], seen["3|v3"])
		}
	}
	// Canceled between two Executes (CancelRequest, statement_timeout):
	// the next Execute reports 57014 and the session goes on.
	stmts, err := s.Parse(ctx, `SELECT * FROM d`, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := stmts[0].Bind(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	if _, done, err := p.Execute(cctx, 100, &rowCollector{}); err != nil || done {
		t.Fatalf("first Execute: done %v, %v", done, err)
	}
	cancel()
	var err2 error
	for range 100 { // at most the rest of the current batch comes first
		var done bool
		if _, done, err2 = p.Execute(cctx, 100, &rowCollector{}); err2 != nil || done {
			break
		}
	}
	p.Close()
	if sqlerr.Code(err2) != sqlerr.QueryCanceled {
		t.Fatalf("Execute after cancel: %v, want 57014", err2)
	}
	expectRows(t, s, `SELECT count(*) FROM d`, "20000")
}

// A direct scan inside a transaction block sees the block's own writes,
// buffered or written, like the DuckDB route.
func TestDirectScanReadsOwnWrites(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE o (id int PRIMARY KEY, v text)`)
	mustRun(t, s, `INSERT INTO o VALUES (1, 'a'), (2, 'b')`)
	mustRun(t, s, `BEGIN`)
	mustRun(t, s, `INSERT INTO o VALUES (2, 'B'), (3, 'c')`)
	rows := mustRun(t, s, `SELECT * FROM o`)
	slices.Sort(rows)
	if want := []string{"1|a", "2|B", "3|c"}; !slices.Equal(rows, want) {
		t.Fatalf("in the block: %v, want %v", rows, want)
	}
	mustRun(t, s, `ROLLBACK`)
	rows = mustRun(t, s, `SELECT * FROM o`)
	slices.Sort(rows)
	if want := []string{"1|a", "2|b"}; !slices.Equal(rows, want) {
		t.Fatalf("after ROLLBACK: %v, want %v", rows, want)
	}
}
