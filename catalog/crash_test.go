package catalog_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/pgtest"
	"github.com/lakesoul-go/lakesoul/pgcluster"
)

// Crash safety: a writer killed (SIGKILL) after writing its files but before
// or during its commit, and the catalog PostgreSQL going down in the middle of
// a commit, leave no visible change, no stuck lock, and the next commit works.

const crashHelperEnv = "LAKESOUL_CRASH_HELPER"

// TestCrashHelperProcess is the writer process the crash tests kill; it only
// runs when re-executed by them. It "uploads" a data file, reports it, and
// then either waits to be killed (mode before) or commits the file (mode
// during; the test holds the partition's lock so the commit waits).
func TestCrashHelperProcess(t *testing.T) {
	mode := os.Getenv(crashHelperEnv)
	if mode == "" {
		t.Skip("helper process for the crash tests")
	}
	ctx := context.Background()
	c, err := catalog.Open(ctx, os.Getenv("LAKESOUL_CRASH_DSN"))
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	path := filepath.Join(os.Getenv("LAKESOUL_CRASH_DIR"), "part-"+uuid.NewString()+"_0000.parquet")
	if err := os.WriteFile(path, []byte("PAR1 data PAR1"), 0o644); err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("uploaded", path)
	if mode == "before" {
		time.Sleep(time.Hour)
	}
	fmt.Println("committing")
	_, err = c.Commit(ctx, nil, os.Getenv("LAKESOUL_CRASH_TABLE"), catalog.MergeCommit,
		[]catalog.PartitionCommit{{Desc: "-5", CommitID: uuid.New(), Ops: []catalog.FileOp{{Path: "file://" + path, Op: "add", Size: 14}}}})
	fmt.Println("committed", err)
	os.Exit(0)
}

// startWriter re-executes this test binary as a writer process and returns it
// with a reader of its output lines.
func startWriter(t *testing.T, mode, dsn, tableID, dir string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashHelperProcess$")
	cmd.Env = append(os.Environ(), crashHelperEnv+"="+mode, "LAKESOUL_CRASH_DSN="+dsn,
		"LAKESOUL_CRASH_TABLE="+tableID, "LAKESOUL_CRASH_DIR="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd, bufio.NewScanner(out)
}

// expectLine reads output lines until one starts with prefix.
func expectLine(t *testing.T, sc *bufio.Scanner, prefix string) string {
	t.Helper()
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), prefix) {
			return sc.Text()
		}
		if strings.HasPrefix(sc.Text(), "error") {
			t.Fatalf("writer: %s", sc.Text())
		}
	}
	t.Fatalf("writer ended before printing %q: %v", prefix, sc.Err())
	return ""
}

func kill(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
}

// noAdvisoryLocks fails if any advisory lock is still held or awaited.
func noAdvisoryLocks(t *testing.T, c *catalog.Catalog) {
	t.Helper()
	var n int
	if err := c.Pool().QueryRow(context.Background(), "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d advisory locks left (%v)", n, err)
	}
}

func TestWriterKilledBeforeCommit(t *testing.T) {
	c, dsn := openCatalog(t)
	tbl := newTable(t, c, "default", "t", nil, []string{"id"})
	dir := t.TempDir()
	cmd, out := startWriter(t, "before", dsn, tbl.ID, dir)
	path := strings.TrimPrefix(expectLine(t, out, "uploaded"), "uploaded ")
	kill(t, cmd)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the uploaded file should stay as an orphan: %v", err)
	}
	if fp := catalogCounts(t, c, tbl.ID); fp != " | " {
		t.Fatalf("catalog changed: %q", fp)
	}
	noAdvisoryLocks(t, c)
	if v := commit(t, c, tbl, catalog.MergeCommit, catalog.PartitionCommit{Desc: "-5", CommitID: uuid.New(), Ops: add("next")}); v["-5"] != 0 {
		t.Fatalf("next commit: %v", v)
	}
}

func TestWriterKilledDuringCommit(t *testing.T) {
	c, dsn := openCatalog(t)
	ctx := context.Background()
	tbl := newTable(t, c, "default", "t", nil, []string{"id"})
	release := holdPartitionLock(t, dsn, tbl.ID, "-5")
	cmd, out := startWriter(t, "during", dsn, tbl.ID, t.TempDir())
	expectLine(t, out, "committing")
	waitForLockWaiters(t, c, 1)
	var pid int
	if err := c.Pool().QueryRow(ctx, `SELECT pid FROM pg_stat_activity
		WHERE wait_event_type = 'Lock' AND query LIKE '%lakesoul.commit%' AND datname = current_database()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	kill(t, cmd)
	// The backend notices its client is gone (client_connection_check_interval)
	// while it still waits, and rolls back.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var alive bool
		if err := c.Pool().QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1)", pid).Scan(&alive); err != nil {
			t.Fatal(err)
		}
		if !alive {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the killed writer's backend is still running")
		}
		time.Sleep(20 * time.Millisecond)
	}
	release()
	if fp := catalogCounts(t, c, tbl.ID); fp != " | " {
		t.Fatalf("catalog changed: %q", fp)
	}
	noAdvisoryLocks(t, c)
	if v := commit(t, c, tbl, catalog.MergeCommit, catalog.PartitionCommit{Desc: "-5", CommitID: uuid.New(), Ops: add("next")}); v["-5"] != 0 {
		t.Fatalf("next commit: %v", v)
	}
}

// TestCatalogRestartMidCommit stops or crashes the catalog PostgreSQL while a
// two-partition commit is in flight (it waits for the second partition's
// lock, its first partition's rows already written in its transaction).
func TestCatalogRestartMidCommit(t *testing.T) {
	ctx := context.Background()
	cl := pgtest.Cluster(t)
	if err := cl.CreateDatabase(ctx, "crash"); err != nil {
		t.Fatal(err)
	}
	dsn := cl.ConnString("crash")
	if err := catalog.MigrateUp(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	c, err := catalog.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { c.Close() }()
	tbl := newTable(t, c, "default", "t", []string{"d"}, []string{"id"})
	restart := func() {
		if err := cl.Stop(ctx); err != nil {
			t.Logf("stop: %v", err)
		}
		cl2, err := pgcluster.Open(ctx, cl.Options())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cl2.Stop(context.Background()) })
		cl = cl2
	}
	// lockHolder holds partition d=b's lock on its own connection.
	lockHolder := func(t *testing.T) {
		t.Helper()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close(context.Background()) })
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "SELECT lakesoul.partition_lock($1, 'd=b')", tbl.ID); err != nil {
			t.Fatal(err)
		}
	}
	twoParts := func(a, b string) []catalog.PartitionCommit {
		return []catalog.PartitionCommit{{Desc: "d=a", CommitID: uuid.New(), Ops: add(a)}, {Desc: "d=b", CommitID: uuid.New(), Ops: add(b)}}
	}

	t.Run("restart: the interrupted commit is not visible", func(t *testing.T) {
		lockHolder(t)
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := conn.Exec(ctx, `SELECT * FROM lakesoul.commit($1, 'MergeCommit',
				'[{"partition_desc": "d=a", "commit_id": "`+uuid.NewString()+`", "file_ops": [{"path": "x1", "file_op": "add", "size": 1}]},
				  {"partition_desc": "d=b", "commit_id": "`+uuid.NewString()+`", "file_ops": [{"path": "x2", "file_op": "add", "size": 1}]}]')`, tbl.ID)
			done <- err
		}()
		waitForLockWaiters(t, c, 1)
		restart()
		if err := <-done; err == nil {
			t.Fatal("the interrupted commit reported success")
		}
		c.Close()
		if c, err = catalog.Open(ctx, dsn); err != nil {
			t.Fatal(err)
		}
		if fp := catalogCounts(t, c, tbl.ID); fp != " | " {
			t.Fatalf("catalog changed: %q", fp)
		}
		noAdvisoryLocks(t, c)
		v := commit(t, c, tbl, catalog.MergeCommit, twoParts("a0", "b0")...)
		if fmt.Sprint(v) != "map[d=a:0 d=b:0]" {
			t.Fatalf("next commit: %v", v)
		}
	})

	// Commit re-sends an interrupted commit once the catalog is back; the
	// commit id makes it land exactly once.
	exactlyOnce := func(t *testing.T, interrupt func()) {
		lockHolder(t)
		parts := twoParts("a", "b")
		done := make(chan error, 1)
		var got map[string]int
		go func() {
			var err error
			got, err = c.Commit(ctx, nil, tbl.ID, catalog.MergeCommit, parts)
			done <- err
		}()
		waitForLockWaiters(t, c, 1)
		before := catalogCounts(t, c, tbl.ID)
		interrupt()
		if err := <-done; err != nil {
			t.Fatalf("commit across the interruption: %v", err)
		}
		var rows, versions int
		if err := c.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM data_commit_info WHERE commit_id = ANY ($1)),
			(SELECT count(*) FROM partition_info WHERE table_id = $2 AND snapshot && $1)`,
			[]uuid.UUID{parts[0].CommitID, parts[1].CommitID}, tbl.ID).Scan(&rows, &versions); err != nil {
			t.Fatal(err)
		}
		if rows != 2 || versions != 2 {
			t.Fatalf("commit landed %d data_commit_info rows and %d versions, want 2 and 2 (before: %s)", rows, versions, before)
		}
		if len(got) != 2 {
			t.Fatalf("versions %v", got)
		}
		noAdvisoryLocks(t, c)
	}
	t.Run("restart: a retrying client commits exactly once", func(t *testing.T) {
		exactlyOnce(t, restart)
	})
	t.Run("backend killed: crash recovery, then exactly once", func(t *testing.T) {
		exactlyOnce(t, func() {
			var pid int
			if err := c.Pool().QueryRow(ctx, `SELECT pid FROM pg_stat_activity
				WHERE wait_event_type = 'Lock' AND query LIKE '%lakesoul.commit%'`).Scan(&pid); err != nil {
				t.Fatal(err)
			}
			// The postmaster treats a backend killed by SIGKILL as a crash:
			// it ends every session, recovers and restarts in place.
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		})
	})
}
