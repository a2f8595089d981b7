package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/internal/pgtest"
)

// compactions counts the CompactionCommit versions of a table.
func compactions(t *testing.T, c *pgx.Conn, table string) int {
	t.Helper()
	rows := queryStrings(t, testCtx(t), c, fmt.Sprintf(`SELECT count(*) FROM lakesoul.history('%s') WHERE commit_op = 'CompactionCommit'`, table))
	n, _ := strconv.Atoi(rows[0])
	return n
}

func waitCompactions(t *testing.T, c *pgx.Conn, table string, want int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for compactions(t, c, table) < want {
		if time.Now().After(deadline) {
			t.Fatalf("no compaction of %s within a minute", table)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// `lakesoul serve` runs a compaction worker by default: the eleventh commit
// of a partition queues it and wakes the worker; reads are unchanged.
func TestServeCompactsByDefault(t *testing.T) {
	s := sharedServer(t)
	ctx := testCtx(t)
	c := s.connect(t)
	mustExec(t, ctx, c, "CREATE SCHEMA cmp_default",
		"CREATE TABLE cmp_default.t (id bigint PRIMARY KEY, v text) WITH (hash_bucket_num = 2)")
	for i := 0; i <= 10; i++ {
		mustExec(t, ctx, c, fmt.Sprintf("INSERT INTO cmp_default.t VALUES (%d, 'v%d'), (1, 'last%d')", i+10, i, i))
	}
	waitCompactions(t, c, "cmp_default.t", 1)
	wantRows(t, "rows after compaction", queryStrings(t, ctx, c, "SELECT count(*), max(v) FILTER (WHERE id = 1) FROM cmp_default.t"),
		[]string{"12|last10"})
}

// `lakesoul compactor --catalog-url` runs workers alone: with the server's
// own workers off (--compaction-workers 0) nothing is compacted until two
// compactor processes run against the catalog; they share the queue (each
// due partition compacted once) and stop cleanly on SIGINT.
func TestCompactorCommand(t *testing.T) {
	requirePG(t)
	cluster := pgtest.Cluster(t)
	if err := cluster.CreateDatabase(testCtx(t), "cmp"); err != nil {
		t.Fatal(err)
	}
	url := cluster.ConnString("cmp")
	base := testBaseDir(t)
	s, err := startServer(filepath.Join(base, "data"), "cmp-pw", "--catalog-url", url, "--compaction-workers", "0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.stopT(t)
	ctx := testCtx(t)
	c := s.connect(t)
	mustExec(t, ctx, c, "CREATE SCHEMA cmp",
		"CREATE TABLE cmp.t (id bigint PRIMARY KEY, v text, d text) PARTITION BY LIST (d) WITH (hash_bucket_num = 2)")
	for i := 0; i <= 10; i++ {
		mustExec(t, ctx, c, fmt.Sprintf("INSERT INTO cmp.t VALUES (%d, 'a', 'x'), (%d, 'b', 'y'), (%d, 'c', 'z')", i, i, i))
	}
	time.Sleep(500 * time.Millisecond)
	if n := compactions(t, c, "cmp.t"); n != 0 {
		t.Fatalf("%d compactions with workers off", n)
	}
	var procs []*exec.Cmd
	for i := 0; i < 2; i++ {
		logf, err := os.Create(filepath.Join(base, fmt.Sprintf("compactor-%d.log", i)))
		if err != nil {
			t.Fatal(err)
		}
		defer logf.Close()
		cmd := exec.Command(lakesoulBin, "compactor", "--catalog-url", url, "--workers", "2", "--no-migrate")
		cmd.Env = serverEnv()
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, cmd)
	}
	defer func() {
		for _, p := range procs {
			_ = p.Process.Kill()
		}
	}()
	waitCompactions(t, c, "cmp.t", 3)
	time.Sleep(300 * time.Millisecond)
	if n := compactions(t, c, "cmp.t"); n != 3 {
		t.Fatalf("%d compactions for 3 due partitions", n)
	}
	wantRows(t, "rows", queryStrings(t, ctx, c, "SELECT count(*), count(DISTINCT d) FROM cmp.t"), []string{"33|3"})
	for i, p := range procs {
		if err := p.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		if err := p.Wait(); err != nil {
			log, _ := os.ReadFile(filepath.Join(base, fmt.Sprintf("compactor-%d.log", i)))
			t.Fatalf("compactor %d: %v\n%s", i, err, log)
		}
	}
}
