package tests

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKilledServeTakesItsCatalog (issue 37, item 5): when `lakesoul serve`
// is killed with SIGKILL (nothing of it runs to clean up), its private
// PostgreSQL gets the parent-death signal and shuts down within seconds, so
// a supervisor's restart finds nothing to kill: the next start on the same
// data dir is a clean one (no stale postmaster.pid to clear) and has the
// committed rows.
func TestKilledServeTakesItsCatalog(t *testing.T) {
	requirePG(t)
	ctx := testCtx(t)
	dataDir := filepath.Join(testBaseDir(t), "data")
	const pw = "pdeath-Secret1"
	srv, err := startServer(dataDir, pw, "--compaction-workers", "0")
	if err != nil {
		t.Fatal(err)
	}
	c := srv.connect(t)
	mustExec(t, ctx, c, "CREATE SCHEMA pd", "CREATE TABLE pd.t (id int PRIMARY KEY, v text)", "INSERT INTO pd.t VALUES (1, 'a')")
	c.Close(ctx)
	pm := srv.postmasterPID
	if pm == 0 || !postgresAlive(pm) {
		t.Fatalf("the private PostgreSQL (pid %d) is not running", pm)
	}
	if err := syscall.Kill(srv.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-srv.exited
	deadline := time.Now().Add(15 * time.Second)
	for postgresAlive(pm) || len(postgresProcessesIn(srv.pgDir())) > 0 {
		if time.Now().After(deadline) {
			pids := postgresProcessesIn(srv.pgDir())
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGQUIT)
			}
			t.Fatalf("15 s after serve was killed, its PostgreSQL still runs: postmaster %d, processes %v", pm, pids)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(srv.pgDir(), "postmaster.pid")); !os.IsNotExist(err) {
		t.Errorf("postmaster.pid after the PostgreSQL exited: %v (it did not shut down cleanly)", err)
	}

	again, err := startServer(dataDir, pw, "--compaction-workers", "0")
	if err != nil {
		t.Fatal(err)
	}
	defer again.stopT(t)
	wantRows(t, "after the restart", queryStrings(t, ctx, again.connect(t), "SELECT id, v FROM pd.t"), []string{"1|a"})
	if log, err := os.ReadFile(again.logPath); err != nil {
		t.Fatal(err)
	} else if strings.Contains(string(log), "did not shut down cleanly") {
		t.Error("the restart cleared after a PostgreSQL that did not shut down cleanly")
	}
}
