package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/lakesoul-go/lakesoul/bench"
)

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
	// pgbench's tables as lake tables (README: pgbench), loaded for
	// scale 1 as `pgbench -i` would.
	mustExec(t, ctx, c, bench.PgbenchTableSQL(1, true)...)
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
