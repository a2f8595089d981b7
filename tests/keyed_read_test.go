package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/internal/pgtest"
)

// keyedSchema creates, in schema ns, a 4-bucket table of 3000 keys written
// in one COPY-sized INSERT, then upserts in many small statements: full
// rows, partial rows (n only), and — in the CDC table — deletes.
func keyedSchema(t *testing.T, ctx context.Context, c *pgx.Conn, ns string) {
	t.Helper()
	mustExec(t, ctx, c,
		"DROP SCHEMA IF EXISTS "+ns+" CASCADE",
		"CREATE SCHEMA "+ns,
		"CREATE TABLE "+ns+".k (id bigint, name text, n int, PRIMARY KEY (id)) WITH (hash_bucket_num = 4)",
		"CREATE TABLE "+ns+".c (id text, v int, op text, PRIMARY KEY (id)) WITH (hash_bucket_num = 2, cdc_column = 'op')",
		"INSERT INTO "+ns+".k SELECT i, 'name' || i, 0 FROM generate_series(0, 5998, 2) AS g(i)",
		"INSERT INTO "+ns+".c SELECT 'c' || lpad(i::text, 5, '0'), i, 'insert' FROM generate_series(1, 2000) AS g(i)")
	for u := 1; u <= 12; u++ {
		mustExec(t, ctx, c,
			fmt.Sprintf("INSERT INTO %s.k SELECT i, 'u%d-' || i, %d FROM generate_series(%d, 5998, 398) AS g(i)", ns, u, u, u*2),
			fmt.Sprintf("INSERT INTO %s.k (id, n) SELECT i, %d FROM generate_series(%d, 5998, 602) AS g(i)", ns, 100+u, u*4),
			fmt.Sprintf("INSERT INTO %s.c SELECT 'c' || lpad(i::text, 5, '0'), %d, CASE WHEN i %% 3 = 0 THEN 'delete' ELSE 'update' END FROM generate_series(%d, 2000, 97) AS g(i)", ns, 1000+u, u))
	}
}

// TestKeyedReadsPgx: primary-key lookups over pgx with $1 (extended
// protocol) and with literals (simple protocol) return what the same
// queries return with pruning defeated (by an expression on the key), for present
// keys, absent keys, IN lists, ranges and keys with partial upserts and CDC
// deletes; EXPLAIN ANALYZE shows that few files were read.
func TestKeyedReadsPgx(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	c := srv.connect(t)
	ctx := testCtx(t)
	keyedSchema(t, ctx, c, "keyed")
	for _, q := range []struct {
		pruned, unpruned string
		args             []any
	}{
		{"SELECT * FROM keyed.k WHERE id = $1", "SELECT * FROM keyed.k WHERE id + 0 = $1", []any{int64(800)}},
		{"SELECT * FROM keyed.k WHERE id = $1", "SELECT * FROM keyed.k WHERE id + 0 = $1", []any{int64(1206)}},
		{"SELECT * FROM keyed.k WHERE id = $1", "SELECT * FROM keyed.k WHERE id + 0 = $1", []any{int64(801)}}, // absent
		{"SELECT name, n FROM keyed.k WHERE id IN ($1, $2, $3)", "SELECT name, n FROM keyed.k WHERE id + 0 IN ($1, $2, $3)",
			[]any{int64(4), int64(3000), int64(5998)}},
		{"SELECT count(*), sum(n) FROM keyed.k WHERE id >= $1 AND id < $2", "SELECT count(*), sum(n) FROM keyed.k WHERE id + 0 >= $1 AND id + 0 < $2",
			[]any{int64(1000), int64(1100)}},
		{"SELECT * FROM keyed.k WHERE id = $1 AND n > $2", "SELECT * FROM keyed.k WHERE id + 0 = $1 AND n > $2", []any{int64(1206), int32(0)}},
		{"SELECT * FROM keyed.c WHERE id = $1", "SELECT * FROM keyed.c WHERE id || '' = $1", []any{"c00098"}},
		{"SELECT * FROM keyed.c WHERE id = $1", "SELECT * FROM keyed.c WHERE id || '' = $1", []any{"c00099"}}, // deleted
		{"SELECT * FROM keyed.c WHERE id BETWEEN $1 AND $2", "SELECT * FROM keyed.c WHERE id || '' BETWEEN $1 AND $2", []any{"c00090", "c00110"}},
	} {
		for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
			args := append([]any{mode}, q.args...)
			got := queryStrings(t, ctx, c, q.pruned, args...)
			want := queryStrings(t, ctx, c, q.unpruned, args...)
			slices.Sort(got)
			slices.Sort(want)
			wantRows(t, fmt.Sprintf("%s %v (mode %v)", q.pruned, q.args, mode), got, want)
		}
	}
	// Literals, as psql sends them.
	wantRows(t, "literal lookup", queryStrings(t, ctx, c, "SELECT id, n FROM keyed.k WHERE id = 1206"),
		queryStrings(t, ctx, c, "SELECT id, n FROM keyed.k WHERE id + 0 = 1206"))
	// The lookup read few of the bucket's files (compaction may have merged them meanwhile).
	plan := strings.Join(queryStrings(t, ctx, c, "EXPLAIN ANALYZE SELECT * FROM keyed.k WHERE id = $1", int64(1206)), "\n")
	var read, of int
	if i := strings.Index(plan, "Files Read: "); i < 0 {
		t.Fatalf("EXPLAIN ANALYZE:\n%s", plan)
	} else if _, err := fmt.Sscanf(plan[i:], "Files Read: %d of %d", &read, &of); err != nil || read > 3 || (read >= of && of > 1) {
		t.Fatalf("files read %d of %d (%v):\n%s", read, of, err, plan)
	}
	// A key of the wrong type is 22P02, as in PostgreSQL.
	if _, err := tryQueryStrings(ctx, c, "SELECT * FROM keyed.k WHERE id = 'abc'"); pgCode(err) != "22P02" {
		t.Fatalf("id = 'abc': %v", err)
	}
	if _, err := tryQueryStrings(ctx, c, "SELECT * FROM keyed.k WHERE id = $1", pgx.QueryExecModeSimpleProtocol, "abc"); pgCode(err) != "22P02" {
		t.Fatalf("id = 'abc' as a parameter: %v", err)
	}
}

// TestExplainPsql: EXPLAIN and EXPLAIN ANALYZE through psql print one plan
// line per row under "QUERY PLAN": the lake scan's pruning and counters,
// then DuckDB's plan or the direct scan.
func TestExplainPsql(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	c := srv.connect(t)
	ctx := testCtx(t)
	keyedSchema(t, ctx, c, "explained")
	p := &psqlClient{t: t, path: psqlPath(t), srv: srv}
	out, errOut, err := p.run(ctx, nil, "EXPLAIN SELECT * FROM explained.k WHERE id = 1206",
		"EXPLAIN ANALYZE SELECT * FROM explained.k WHERE id = 1206",
		"EXPLAIN (ANALYZE, COSTS OFF) SELECT count(*) FROM explained.k WHERE n > 3")
	if err != nil {
		t.Fatalf("psql: %v\n%s", err, errOut)
	}
	for _, want := range []string{"QUERY PLAN", "Lake Scan on explained.k", "Buckets: 1 of 4 read", "Key Filter: id = 1206",
		"Direct Scan", "Files Read: ", "Row Groups Read: ", "Rows: ", "Execution Time: ", "DuckDB Plan:", "LAKESOUL_SCAN"} {
		if !strings.Contains(out, want) {
			t.Errorf("psql EXPLAIN output lacks %q:\n%s", want, out)
		}
	}
	if _, errOut, err := p.run(ctx, nil, "EXPLAIN (FORMAT JSON) SELECT * FROM explained.k"); err == nil || !strings.Contains(errOut, "not supported") {
		t.Errorf("EXPLAIN (FORMAT JSON): %v %s", err, errOut)
	}
}

// TestReadAfterCommitOnAnotherServer: two servers on one catalog and
// warehouse. Server B keeps serving the same prepared lookups and scans
// (its caches warm); every commit made through server A — an upsert, a new
// partition, a CDC delete, a dropped partition — is visible in B's very
// next read. A server that trusted its caches without asking the catalog
// would return the old rows here.
func TestReadAfterCommitOnAnotherServer(t *testing.T) {
	requirePG(t)
	cluster := pgtest.Cluster(t)
	if err := cluster.CreateDatabase(testCtx(t), "twoservers"); err != nil {
		t.Fatal(err)
	}
	url := cluster.ConnString("twoservers")
	base := testBaseDir(t)
	warehouse := filepath.Join(base, "warehouse")
	if err := os.MkdirAll(warehouse, 0o777); err != nil {
		t.Fatal(err)
	}
	start := func(name string) *server {
		s, err := startServer(filepath.Join(base, name), "two-pw", "--catalog-url", url, "--warehouse", "file://"+warehouse,
			"--compaction-workers", "0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.stopT(t) })
		return s
	}
	a, b := start("a"), start("b")
	ctx := testCtx(t)
	ca, cb := a.connect(t), b.connect(t)
	mustExec(t, ctx, ca, "CREATE SCHEMA two",
		"CREATE TABLE two.t (id bigint, d text, v int, PRIMARY KEY (id)) PARTITION BY LIST (d) WITH (hash_bucket_num = 2)",
		"CREATE TABLE two.c (id bigint, v int, op text, PRIMARY KEY (id)) WITH (cdc_column = 'op')",
		"INSERT INTO two.t SELECT i, 'p' || (i % 3), 0 FROM generate_series(1, 300) AS g(i)",
		"INSERT INTO two.c SELECT i, 0, 'insert' FROM generate_series(1, 50) AS g(i)")
	lookup := func(id int64) string {
		rows := queryStrings(t, ctx, cb, "SELECT v FROM two.t WHERE id = $1", id)
		return strings.Join(rows, ",")
	}
	for i := 1; i <= 40; i++ {
		id := int64(1 + (i*37)%300)
		// B reads (and caches) the current state first.
		lookup(id)
		queryStrings(t, ctx, cb, "SELECT count(*) FROM two.t WHERE d = $1", fmt.Sprintf("p%d", id%3))
		mustExec(t, ctx, ca, fmt.Sprintf("INSERT INTO two.t (id, d, v) VALUES (%d, 'p%d', %d)", id, id%3, i))
		if got := lookup(id); got != fmt.Sprint(i) {
			t.Fatalf("round %d: server B read v=%q for id %d after server A committed %d", i, got, id, i)
		}
		if got := queryStrings(t, ctx, cb, "SELECT v FROM two.t WHERE id = "+fmt.Sprint(id)); strings.Join(got, ",") != fmt.Sprint(i) {
			t.Fatalf("round %d: literal lookup on B read %q", i, got)
		}
	}
	// A new partition appears at once.
	queryStrings(t, ctx, cb, "SELECT count(*) FROM two.t")
	mustExec(t, ctx, ca, "INSERT INTO two.t VALUES (1000, 'new', 7)")
	wantRows(t, "new partition on B", queryStrings(t, ctx, cb, "SELECT count(*) FROM two.t"), []string{"301"})
	wantRows(t, "new partition by key on B", queryStrings(t, ctx, cb, "SELECT v FROM two.t WHERE d = $1 AND id = $2", "new", int64(1000)), []string{"7"})
	// A CDC delete hides the key at once.
	wantRows(t, "cdc before", queryStrings(t, ctx, cb, "SELECT v FROM two.c WHERE id = $1", int64(9)), []string{"0"})
	mustExec(t, ctx, ca, "DELETE FROM two.c WHERE id = 9")
	wantRows(t, "cdc delete on B", queryStrings(t, ctx, cb, "SELECT v FROM two.c WHERE id = $1", int64(9)), nil)
	// A dropped partition disappears at once.
	mustExec(t, ctx, ca, "CALL lakesoul.drop_partition('two.t', 'd=new')")
	wantRows(t, "dropped partition on B", queryStrings(t, ctx, cb, "SELECT count(*) FROM two.t"), []string{"300"})
	wantRows(t, "dropped partition by key on B", queryStrings(t, ctx, cb, "SELECT v FROM two.t WHERE d = $1 AND id = $2", "new", int64(1000)), nil)
	// Written again, it is a new partition with new files, not the old ones.
	mustExec(t, ctx, ca, "INSERT INTO two.t VALUES (1000, 'new', 8)")
	wantRows(t, "recreated partition on B", queryStrings(t, ctx, cb, "SELECT v FROM two.t WHERE d = $1 AND id = $2", "new", int64(1000)), []string{"8"})
}
