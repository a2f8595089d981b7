package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/lakesoul-go/lakesoul/bench"
)

// pgbenchTables creates pgbench's four tables as lake tables (README:
// pgbench) and loads them for scale 1, as `pgbench -i` would.
var pgbenchTables = []string{
	"CREATE TABLE pgbench_branches (bid int PRIMARY KEY, bbalance int, filler char(88))",
	"CREATE TABLE pgbench_tellers (tid int PRIMARY KEY, bid int, tbalance int, filler char(84)) WITH (hash_bucket_num = 2)",
	"CREATE TABLE pgbench_accounts (aid int PRIMARY KEY, bid int, abalance int, filler char(84)) WITH (hash_bucket_num = 4)",
	"CREATE TABLE pgbench_history (tid int, bid int, aid int, delta int, mtime timestamp, filler char(22))",
	"INSERT INTO pgbench_branches VALUES (1, 0, '')",
	"INSERT INTO pgbench_tellers SELECT g, 1, 0, '' FROM generate_series(1, 10) g",
	"INSERT INTO pgbench_accounts SELECT g, 1, 0, '' FROM generate_series(1, 100000) g",
}

// TestPgbenchTPCB runs pgbench's default TPC-B script against lakesoul serve
// with several clients: every transaction either commits whole or not at
// all, and the four sums pgbench's invariant names agree — sum(abalance) =
// sum(bbalance) = sum(tbalance) = sum(delta) — as on PostgreSQL.
func TestPgbenchTPCB(t *testing.T) {
	requirePG(t)
	pgbench, err := bench.FindPgbench()
	if err != nil {
		t.Fatal(err)
	}
	s := startServerT(t, filepath.Join(testBaseDir(t), "data"), "pgbench-pw")
	defer s.stopT(t)
	ctx := testCtx(t)
	c := s.connect(t)
	mustExec(t, ctx, c, pgbenchTables...)
	cmd := exec.CommandContext(ctx, pgbench, "-n", "-c", "4", "-j", "2", "-T", "20", "-M", "simple",
		"-h", "127.0.0.1", "-p", fmt.Sprint(s.port), "-U", adminRole, database)
	cmd.Env = append(os.Environ(), "PGPASSWORD=pgbench-pw", "PGSSLMODE=disable")
	out, err := cmd.CombinedOutput()
	t.Logf("pgbench:\n%s", out)
	if err != nil {
		t.Fatalf("pgbench: %v", err)
	}
	sums := queryStrings(t, ctx, c, `SELECT (SELECT sum(abalance) FROM pgbench_accounts)::bigint,
		(SELECT sum(bbalance) FROM pgbench_branches)::bigint, (SELECT sum(tbalance) FROM pgbench_tellers)::bigint,
		(SELECT coalesce(sum(delta), 0) FROM pgbench_history)::bigint, (SELECT count(*) FROM pgbench_history)`)
	var a, b, tl, d, n int64
	if _, err := fmt.Sscanf(sums[0], "%d|%d|%d|%d|%d", &a, &b, &tl, &d, &n); err != nil {
		t.Fatalf("sums %q: %v", sums, err)
	}
	t.Logf("%d transactions: sum(abalance) %d, sum(bbalance) %d, sum(tbalance) %d, sum(delta) %d", n, a, b, tl, d)
	if n == 0 {
		t.Fatal("no transaction committed")
	}
	if a != d || b != d || tl != d {
		t.Fatalf("TPC-B invariant broken: sum(abalance) %d, sum(bbalance) %d, sum(tbalance) %d, sum(delta) %d", a, b, tl, d)
	}
}
