package tests

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestColumnIndexPgx: over pgx, CREATE INDEX on a non-key column makes
// EXPLAIN ANALYZE of = $1 / IN lookups on it show files skipped by the
// column's bloom filters once compaction wrote them, and every lookup
// returns the same rows with the index, without it (DROP INDEX) and with
// pruning defeated by an expression.
func TestColumnIndexPgx(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	c := srv.connect(t)
	ctx := testCtx(t)
	mustExec(t, ctx, c,
		"DROP SCHEMA IF EXISTS colidx CASCADE",
		"CREATE SCHEMA colidx",
		"CREATE TABLE colidx.o (id bigint, customer text, amount int, PRIMARY KEY (id)) WITH (hash_bucket_num = 8)")
	for b := range 5 {
		mustExec(t, ctx, c, fmt.Sprintf(`INSERT INTO colidx.o SELECT i, 'c' || lpad((i * 7919 %% 20011)::text, 5, '0'), i %% 1000
			FROM generate_series(%d, %d) AS g(i)`, b*1000, b*1000+999))
	}
	queries := []struct {
		q, unpruned string
		args        []any
	}{
		{"SELECT id, amount FROM colidx.o WHERE customer = $1", "SELECT id, amount FROM colidx.o WHERE customer || '' = $1", []any{"c07919"}},
		{"SELECT id FROM colidx.o WHERE customer = $1", "SELECT id FROM colidx.o WHERE customer || '' = $1", []any{"c07918"}}, // absent
		{"SELECT id, customer FROM colidx.o WHERE customer IN ($1, $2)", "SELECT id, customer FROM colidx.o WHERE customer || '' IN ($1, $2)", []any{"c15838", "c00000"}},
	}
	results := func(label string) [][]string {
		var out [][]string
		for _, q := range queries {
			for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
				args := append([]any{mode}, q.args...)
				got, want := queryStrings(t, ctx, c, q.q, args...), queryStrings(t, ctx, c, q.unpruned, args...)
				slices.Sort(got)
				slices.Sort(want)
				wantRows(t, fmt.Sprintf("%s: %s %v (mode %v)", label, q.q, q.args, mode), got, want)
				out = append(out, got)
			}
		}
		return out
	}
	skipped := func() (int, string) {
		// Simple protocol: a statement prepared before CREATE or DROP INDEX
		// keeps the indexes it was planned with (its results are the same).
		plan := strings.Join(queryStrings(t, ctx, c, "EXPLAIN ANALYZE SELECT id FROM colidx.o WHERE customer = $1",
			pgx.QueryExecModeSimpleProtocol, "c07918"), "\n")
		m := regexp.MustCompile(`Files Skipped by Row Filter: \d+ by statistics, (\d+) by bloom filters`).FindStringSubmatch(plan)
		if m == nil {
			t.Fatalf("no index line in the plan:\n%s", plan)
		}
		n, _ := strconv.Atoi(m[1])
		return n, plan
	}
	without := results("no index")
	mustExec(t, ctx, c, "CREATE INDEX o_customer ON colidx.o (customer)", "CALL lakesoul.compact('colidx.o')")
	if n, plan := skipped(); n < 4 || !strings.Contains(plan, "Index Filter: customer = 'c07918'") {
		t.Fatalf("the bloom filters of the indexed column skipped %d files:\n%s", n, plan)
	}
	with := results("index")
	wantRows(t, "results with and without the index", flat(with), flat(without))
	mustExec(t, ctx, c, "DROP INDEX colidx.o_customer")
	// The compacted files keep their bloom filters (they still prove
	// absence); the plan no longer names the index.
	if _, plan := skipped(); strings.Contains(plan, "Index Filter") {
		t.Fatalf("the plan names an index after DROP INDEX:\n%s", plan)
	}
	wantRows(t, "results after DROP INDEX", flat(results("dropped")), flat(without))
}

func flat(rs [][]string) []string {
	var out []string
	for i, r := range rs {
		out = append(out, fmt.Sprint(i, ":", strings.Join(r, ",")))
	}
	return out
}

// TestPsqlIndexes: psql's \di lists a lake table's column indexes beside
// its primary-key index, \d shows them under Indexes, pg_indexes gives
// their definitions; DROP INDEX removes them.
func TestPsqlIndexes(t *testing.T) {
	t.Parallel()
	p := &psqlClient{t: t, path: psqlPath(t), srv: sharedServer(t)}
	ctx := testCtx(t)
	p.exec(ctx, "CREATE SCHEMA surf_di", "CREATE TABLE surf_di.t (id int PRIMARY KEY, v text, n bigint)",
		"CREATE INDEX t_v ON surf_di.t (v)", "CREATE INDEX ON surf_di.t (n, v)")
	p.check(ctx, `\di surf_di.*`, "surf_di|t_n_v_idx|index|lakesoul|t", "surf_di|t_pkey|index|lakesoul|t", "surf_di|t_v|index|lakesoul|t")
	p.check(ctx, "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'surf_di' ORDER BY 1",
		"t_n_v_idx|CREATE INDEX t_n_v_idx ON surf_di.t USING btree (n, v)",
		"t_pkey|CREATE UNIQUE INDEX t_pkey ON surf_di.t USING btree (id)",
		"t_v|CREATE INDEX t_v ON surf_di.t USING btree (v)")
	if out, errOut, err := p.run(ctx, nil, `\d surf_di.t`); err != nil || !strings.Contains(out, `"t_v" btree (v)`) ||
		!strings.Contains(out, `"t_n_v_idx" btree (n, v)`) || !strings.Contains(out, `"t_pkey" PRIMARY KEY, btree (id)`) {
		t.Fatalf(`\d does not list the indexes: %v\n%s\n%s`, err, out, errOut)
	}
	p.exec(ctx, "DROP INDEX surf_di.t_v")
	p.check(ctx, `\di surf_di.*`, "surf_di|t_n_v_idx|index|lakesoul|t", "surf_di|t_pkey|index|lakesoul|t")
}
