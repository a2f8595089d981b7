package tests

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadManyFilesBoundedFanIn: a bucket of 141 files (compaction off) —
// full upserts and partial ones (n only) — is merged at most 64 files at a
// time (the oldest merged ahead into spill files, EXPLAIN ANALYZE says how
// often), and reads back exactly what the commits say, through a direct
// scan and through DuckDB.
func TestReadManyFilesBoundedFanIn(t *testing.T) {
	t.Parallel()
	requirePG(t)
	srv, err := startServer(filepath.Join(testBaseDir(t), "data"), "fan-Secret1", "--compaction-workers", "0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.stopT(t)
	c := srv.connect(t)
	ctx := testCtx(t)
	const keys, upserts = 1000, 140
	mustExec(t, ctx, c, "CREATE SCHEMA fanin",
		"CREATE TABLE fanin.t (id bigint PRIMARY KEY, v text, n bigint) WITH (hash_bucket_num = 1)",
		fmt.Sprintf("INSERT INTO fanin.t SELECT i, 'b' || i, 0 FROM generate_series(0, %d) AS g(i)", keys-1))
	v, n := make([]string, keys), make([]int, keys)
	for k := range keys {
		v[k] = fmt.Sprintf("b%d", k)
	}
	for u := 1; u <= upserts; u++ {
		if u%3 == 0 { // partial: n only
			mustExec(t, ctx, c, fmt.Sprintf("INSERT INTO fanin.t (id, n) SELECT i, %d FROM generate_series(%d, %d, 7) AS g(i)", u, u%7, keys-1))
			for k := u % 7; k < keys; k += 7 {
				n[k] = u
			}
			continue
		}
		mustExec(t, ctx, c, fmt.Sprintf("INSERT INTO fanin.t SELECT i, 'u%d-' || i, %d FROM generate_series(%d, %d, 10) AS g(i)", u, -u, u%10, keys-1))
		for k := u % 10; k < keys; k += 10 {
			v[k], n[k] = fmt.Sprintf("u%d-%d", u, k), -u
		}
	}
	var want []string
	sum := 0
	for k := range keys {
		want = append(want, fmt.Sprintf("%d|%s|%d", k, v[k], n[k]))
		sum += n[k]
	}
	wantRows(t, "direct scan", queryStrings(t, ctx, c, "SELECT id, v, n FROM fanin.t ORDER BY id"), want)
	wantRows(t, "aggregate", queryStrings(t, ctx, c, "SELECT count(*), sum(n)::bigint, count(DISTINCT v) FROM fanin.t"),
		[]string{fmt.Sprintf("%d|%d|%d", keys, sum, countDistinct(v))})
	plan := strings.Join(queryStrings(t, ctx, c, "EXPLAIN ANALYZE SELECT * FROM fanin.t"), "\n")
	if !strings.Contains(plan, "Files Read: 141 of 141") || !strings.Contains(plan, "Merge Fan-in: at most 64 files at once (2 merges spilled ahead)") {
		t.Errorf("EXPLAIN ANALYZE:\n%s", plan)
	}
}

func countDistinct(ss []string) int {
	m := map[string]bool{}
	for _, s := range ss {
		m[s] = true
	}
	return len(m)
}
