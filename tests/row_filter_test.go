package tests

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestRowFiltersPgx: WHERE terms on non-key columns (=, <>, IN, NOT IN,
// ranges; literals and $n) and on partition columns (ranges, <>, IN) are
// applied by the reader, and return exactly what the same queries return
// when the terms are hidden from it behind an expression (DuckDB alone then
// filters): NULLs match no term, and a key whose newest version fails a
// term is left out even when an older version passed it. EXPLAIN shows the
// row filter and the partitions the ranges pruned.
func TestRowFiltersPgx(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	c := srv.connect(t)
	ctx := testCtx(t)
	mustExec(t, ctx, c, "DROP SCHEMA IF EXISTS rowf CASCADE", "CREATE SCHEMA rowf",
		"CREATE TABLE rowf.t (id bigint, v text, n int, d text, PRIMARY KEY (id)) PARTITION BY LIST (d) WITH (hash_bucket_num = 2)",
		"INSERT INTO rowf.t SELECT i, CASE WHEN i % 10 = 0 THEN NULL ELSE 'v' || (i % 7) END, i % 100, 'p' || (i % 4) FROM generate_series(1, 4000) AS g(i)",
		// Newer versions: n moves out of the ranges below for some keys,
		// v becomes NULL or changes for others (partial upserts).
		"INSERT INTO rowf.t (id, n, d) SELECT i, 500 + i % 3, 'p' || (i % 4) FROM generate_series(1, 4000, 9) AS g(i)",
		"INSERT INTO rowf.t (id, v, d) SELECT i, CASE WHEN i % 2 = 0 THEN NULL ELSE 'w' END, 'p' || (i % 4) FROM generate_series(3, 4000, 11) AS g(i)")
	for _, q := range []struct {
		filtered, hidden string
		args             []any
	}{
		{"SELECT * FROM rowf.t WHERE v = 'v3'", "SELECT * FROM rowf.t WHERE v || '' = 'v3'", nil},
		{"SELECT * FROM rowf.t WHERE v = $1", "SELECT * FROM rowf.t WHERE v || '' = $1", []any{"w"}},
		{"SELECT id, v FROM rowf.t WHERE v <> $1", "SELECT id, v FROM rowf.t WHERE v || '' <> $1", []any{"v1"}},
		{"SELECT id FROM rowf.t WHERE v IN ('v1', 'v2', 'w')", "SELECT id FROM rowf.t WHERE v || '' IN ('v1', 'v2', 'w')", nil},
		{"SELECT id FROM rowf.t WHERE v NOT IN ('v1', 'v2')", "SELECT id FROM rowf.t WHERE v || '' NOT IN ('v1', 'v2')", nil},
		{"SELECT id, n FROM rowf.t WHERE n >= $1 AND n < $2", "SELECT id, n FROM rowf.t WHERE n + 0 >= $1 AND n + 0 < $2", []any{int32(10), int32(20)}},
		{"SELECT id, n FROM rowf.t WHERE n BETWEEN 499 AND 501", "SELECT id, n FROM rowf.t WHERE n + 0 BETWEEN 499 AND 501", nil},
		{"SELECT * FROM rowf.t WHERE d >= 'p1' AND d < 'p3' AND n < 5", "SELECT * FROM rowf.t WHERE d || '' >= 'p1' AND d || '' < 'p3' AND n + 0 < 5", nil},
		{"SELECT id, d FROM rowf.t WHERE d <> $1 AND v = 'v5'", "SELECT id, d FROM rowf.t WHERE d || '' <> $1 AND v || '' = 'v5'", []any{"p2"}},
		{"SELECT count(*), sum(n) FROM rowf.t WHERE d IN ('p0', 'p3') AND v <> 'w'", "SELECT count(*), sum(n) FROM rowf.t WHERE d || '' IN ('p0', 'p3') AND v || '' <> 'w'", nil},
		{"SELECT * FROM rowf.t WHERE id > 3900 AND v = 'w'", "SELECT * FROM rowf.t WHERE id + 0 > 3900 AND v || '' = 'w'", nil},
	} {
		for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
			args := append([]any{mode}, q.args...)
			got := queryStrings(t, ctx, c, q.filtered, args...)
			want := queryStrings(t, ctx, c, q.hidden, args...)
			if len(want) == 0 {
				t.Fatalf("%s: no rows to compare", q.hidden)
			}
			slices.Sort(got)
			slices.Sort(want)
			wantRows(t, fmt.Sprintf("%s %v (mode %v)", q.filtered, q.args, mode), got, want)
		}
	}
	plan := strings.Join(queryStrings(t, ctx, c, "EXPLAIN ANALYZE SELECT * FROM rowf.t WHERE d > 'p1' AND d <> 'p3' AND v = 'v4'"), "\n")
	for _, want := range []string{"Partitions: 1 read of 4 listed", "Row Filter: v = 'v4'"} {
		if !strings.Contains(plan, want) {
			t.Errorf("EXPLAIN ANALYZE lacks %q:\n%s", want, plan)
		}
	}
}
