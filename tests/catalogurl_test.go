package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lakesoul-go/lakesoul/internal/pgtest"
)

// TestExternalCatalog runs `lakesoul serve --catalog-url` against a PostgreSQL
// it does not own: the server migrates it, serves tables from it, and leaves
// it running on stop; `lakesoul migrate version` reports the schema version.
func TestExternalCatalog(t *testing.T) {
	requirePG(t)
	cluster := pgtest.Cluster(t)
	if err := cluster.CreateDatabase(testCtx(t), "ext"); err != nil {
		t.Fatal(err)
	}
	url := cluster.ConnString("ext")
	base := testBaseDir(t)
	dataDir := filepath.Join(base, "data")
	s, err := startServer(dataDir, "ext-pw", "--catalog-url", url)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	c := s.connect(t)
	mustExec(t, ctx, c,
		"CREATE SCHEMA ext",
		"CREATE TABLE ext.t (id int PRIMARY KEY, v text)",
		"INSERT INTO ext.t VALUES (1, 'a'), (2, 'b')",
		"INSERT INTO ext.t VALUES (2, 'B')")
	wantRows(t, "external catalog rows", queryStrings(t, ctx, c, "SELECT id, v FROM ext.t ORDER BY id"), []string{"1|a", "2|B"})
	c.Close(ctx)

	// No private cluster was created, and stopping leaves the external one up.
	if _, err := os.Stat(filepath.Join(dataDir, "pg")); !os.IsNotExist(err) {
		t.Fatalf("a private cluster dir exists with --catalog-url: %v", err)
	}
	if err := s.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	<-s.exited
	if code := s.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("exit status %d; log:\n%s", code, s.logTail(4000))
	}

	out, err := exec.Command(lakesoulBin, "migrate", "version", "--catalog-url", url).CombinedOutput()
	if err != nil {
		t.Fatalf("migrate version: %v\n%s", err, out)
	}
	if v := strings.TrimSpace(string(out)); v == "" || v == "0" || strings.Contains(v, "dirty") {
		t.Fatalf("migrate version printed %q", v)
	}
	// The data is in the external catalog. A second server sharing it
	// shares the warehouse too: a server uses only tables in its own
	// warehouse (tests/paths_test.go).
	s2, err := startServer(filepath.Join(base, "data2"), "ext-pw", "--catalog-url", url,
		"--warehouse", "file://"+filepath.Join(dataDir, "warehouse"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		s2.cmd.Process.Signal(os.Interrupt)
		<-s2.exited
	}()
	c2 := s2.connect(t)
	defer c2.Close(ctx)
	wantRows(t, "rows through a second server", queryStrings(t, ctx, c2, "SELECT count(*) FROM ext.t"), []string{"2"})
}
