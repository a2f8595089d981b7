package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

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

// TestExternalCatalogUserLogins: with a catalog whose pg_hba.conf demands
// scram-sha-256 from every role but the owner, a workspace user's catalog
// statements run on a login PostgreSQL itself authenticates — with the keys
// of the user's SCRAM login to pgwire, or with the password of a cleartext
// login over TLS — and the catalog's sessions of that user are the user's.
func TestExternalCatalogUserLogins(t *testing.T) {
	requirePG(t)
	cluster := pgtest.SCRAMCluster(t)
	ctx := testCtx(t)
	if err := cluster.CreateDatabase(ctx, "ext"); err != nil {
		t.Fatal(err)
	}
	base := testBaseDir(t)
	certFile, keyFile := writeSelfSigned(t, base)
	s, err := startServer(filepath.Join(base, "data"), "ext-pw", "--catalog-url", cluster.ConnString("ext"),
		"--tls-cert", certFile, "--tls-key", keyFile, "--password-auth", "cleartext-tls")
	if err != nil {
		t.Fatal(err)
	}
	defer s.stopT(t)
	admin := s.connect(t)
	mustExec(t, ctx, admin,
		"SELECT lakesoul.create_workspace('extu')",
		"SELECT lakesoul.create_user('ext_ursula', 'ursula-pw', 'extu', admin => true)")
	for _, sslmode := range []string{"disable", "require"} { // SCRAM keys, then a cleartext password over TLS
		dsn := strings.Replace(s.dsn("ext_ursula", "ursula-pw", database), "sslmode=disable", "sslmode="+sslmode, 1)
		u, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatalf("%s: ursula logs in: %v", sslmode, err)
		}
		wantRows(t, sslmode+": ursula's catalog session", queryStrings(t, ctx, u,
			"SELECT current_user, session_user, (SELECT count(*) FROM pg_stat_activity WHERE usename = 'ext_ursula' AND pid = pg_backend_pid())"),
			[]string{"ext_ursula|ext_ursula|1"})
		if _, err := u.Exec(ctx, "SELECT set_config('role', 'none', true), pg_read_file('/etc/passwd')"); pgCode(err) != "42501" {
			t.Errorf("%s: role none then pg_read_file: %v, want 42501", sslmode, err)
		}
		mustExec(t, ctx, u, "CREATE SCHEMA IF NOT EXISTS extu_s", "CREATE TABLE IF NOT EXISTS extu_s.t (id int PRIMARY KEY)",
			"INSERT INTO extu_s.t VALUES (1)")
		wantRows(t, sslmode+": ursula's table", queryStrings(t, ctx, u, "SELECT count(*) FROM extu_s.t"), []string{"1"})
		u.Close(ctx)
	}
}
