package engine_test

import (
	"context"
	"testing"
)

// A direct scan runs its units on several goroutines: it must yield every
// merged row exactly once across suspended Executes, and a portal closed
// half-way must stop its workers (run with -race).
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
	expectRows(t, s, `SELECT count(*) FROM d`, "20000")
}
