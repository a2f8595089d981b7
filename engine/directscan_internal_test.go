package engine

import (
	"context"
	"testing"
)

// Plain projections of a table take the direct route, and so do reads
// whose WHERE the reader evaluates exactly (key filter, row filter,
// partition values); anything that needs DuckDB's evaluation does not.
// TestDirectScanMatchesDuckDB (tests/) proves the two routes send the same
// bytes.
func TestDirectScanIsUsed(t *testing.T) {
	ctx := context.Background()
	s, exec := newInternalSession(t)
	exec("CREATE TABLE k (id int PRIMARY KEY, v text, d text) PARTITION BY LIST (d); CREATE TABLE a (x int)")
	for q, want := range map[string]bool{
		"SELECT * FROM k":                                     true,
		"SELECT v, id FROM k":                                 true,
		"SELECT k.v AS value FROM k":                          true,
		"SELECT z.* FROM k z LIMIT 5 OFFSET 2":                true,
		"SELECT id FROM public.k LIMIT ALL":                   true,
		"SELECT * FROM k WHERE id = 1":                        true,
		"SELECT * FROM k WHERE d = 'x'":                       true,
		"SELECT v FROM k WHERE id IN (1, 2) AND d = 'x'":      true,
		"SELECT * FROM k WHERE id BETWEEN 3 AND 9":            true,
		"SELECT * FROM k WHERE 5 < id":                        true,
		"SELECT * FROM k WHERE id = $1":                       true,
		"SELECT * FROM k WHERE id = '7'":                      true,
		"SELECT * FROM k WHERE v = 'x'":                       true,
		"SELECT * FROM k WHERE v <> 'x' AND id NOT IN (1, 2)": true,
		"SELECT * FROM k WHERE d >= 'a' AND d < 'b'":          true,
		"SELECT * FROM k WHERE v LIKE 'x%'":                   false,
		"SELECT * FROM k WHERE v = 'x' OR id = 1":             false,
		"SELECT * FROM k WHERE id = 1 OR id = 2":              false,
		"SELECT * FROM k WHERE id = 1.5":                      false,
		"SELECT * FROM k WHERE id = 1 AND v = 'x'":            true,
		"SELECT * FROM k WHERE d > 'x'":                       true,
		"SELECT * FROM k WHERE id::text = '1'":                false,
		"SELECT * FROM k WHERE id = $1::float8":               false,
		"SELECT * FROM k ORDER BY id":                         false,
		"SELECT DISTINCT v FROM k":                            false,
		"SELECT id + 1 FROM k":                                false,
		"SELECT count(*) FROM k":                              false,
		"SELECT * FROM k, k AS k2":                            false,
		"SELECT * FROM a":                                     true,
		"SELECT x FROM a WHERE x < 3":                         true,
		"SELECT count(*) FROM a":                              false,
		"SELECT * FROM k LIMIT 1 + 1":                         false,
		"WITH c AS (SELECT * FROM k) SELECT * FROM c":         false,
		"SELECT * FROM lakesoul.snapshot('k', now())":         false,
		"SELECT * FROM k UNION ALL SELECT * FROM k":           false,
	} {
		stmts, err := s.Parse(ctx, q, nil)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		st := stmts[0].(*trackedStmt).Statement
		if ls, ok := st.(*literalStmt); ok {
			st = ls.q // its literals as parameters (literalplan.go)
		}
		dq, ok := st.(*duckQuery)
		if !ok {
			t.Fatalf("%s: planned as %T", q, st)
		}
		if got := dq.direct != nil; got != want {
			t.Errorf("%s: direct = %v, want %v", q, got, want)
		}
	}
}
