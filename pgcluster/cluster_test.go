package pgcluster_test

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lakesoul-go/lakesoul/pgcluster"
)

// requireBinaries skips the test when no PostgreSQL is installed, unless
// LAKESOUL_REQUIRE_PG=1 demands one.
func requireBinaries(t *testing.T) {
	t.Helper()
	if _, err := pgcluster.FindBinDir(""); err != nil {
		if os.Getenv("LAKESOUL_REQUIRE_PG") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

// newDataDir returns a not-yet-existing data dir path in a fresh directory
// that the postgres account can reach when the tests run as root
// (t.TempDir's parent has mode 0700).
func newDataDir(t *testing.T) string {
	t.Helper()
	base, err := os.MkdirTemp("", "pgcluster-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(base, "data")
}

// testLogger sends the cluster's log lines to the test log.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, nil))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func testOptions(t *testing.T, dataDir string) pgcluster.Options {
	return pgcluster.Options{
		DataDir:  dataDir,
		Settings: map[string]string{"fsync": "off"},
		Logger:   testLogger(t),
	}
}

// open starts a cluster and stops it when the test ends.
func open(t *testing.T, o pgcluster.Options) *pgcluster.Cluster {
	t.Helper()
	c, err := pgcluster.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return c
}

func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func exec(t *testing.T, conn *pgx.Conn, sql string, args ...any) {
	t.Helper()
	if _, err := conn.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func count(t *testing.T, conn *pgx.Conn, sql string) int {
	t.Helper()
	var n int
	if err := conn.QueryRow(context.Background(), sql).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

func TestLifecycle(t *testing.T) {
	requireBinaries(t)
	ctx := context.Background()
	dataDir := newDataDir(t)
	c, err := pgcluster.Open(ctx, testOptions(t, dataDir))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop(ctx)

	fi, err := os.Stat(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("data dir mode %v, want 0700", fi.Mode().Perm())
	}
	if os.Geteuid() == 0 {
		pg, err := user.Lookup("postgres")
		if err != nil {
			t.Fatal(err)
		}
		if uid := fi.Sys().(*syscall.Stat_t).Uid; strconv.Itoa(int(uid)) != pg.Uid {
			t.Errorf("data dir owned by uid %d, want postgres (%s)", uid, pg.Uid)
		}
	}
	if c.DataDir() != dataDir || c.Port() == 0 || c.SocketDir() != dataDir {
		t.Errorf("DataDir %q Port %d SocketDir %q", c.DataDir(), c.Port(), c.SocketDir())
	}

	conn := connect(t, c.ConnString("postgres"))
	var user string
	if err := conn.QueryRow(ctx, "SELECT current_user").Scan(&user); err != nil || user != pgcluster.DefaultSuperUser {
		t.Fatalf("current_user = %q, %v", user, err)
	}
	exec(t, conn, "CREATE TABLE kept (id int)")
	exec(t, conn, "INSERT INTO kept VALUES (1), (2)")

	const odd = `odd name's db`
	for range 2 { // the second call finds it
		if err := c.CreateDatabase(ctx, odd); err != nil {
			t.Fatal(err)
		}
	}
	oddConn := connect(t, c.ConnString(odd))
	if err := oddConn.QueryRow(ctx, "SELECT current_database()").Scan(&user); err != nil || user != odd {
		t.Fatalf("current_database() = %q, %v", user, err)
	}
	oddConn.Close(ctx)

	// A second Open of a served data dir fails; it does not attach.
	if _, err := pgcluster.Open(ctx, testOptions(t, dataDir)); !errors.Is(err, pgcluster.ErrAlreadyRunning) {
		t.Fatalf("second Open: %v, want ErrAlreadyRunning", err)
	}

	dsn, port := c.ConnString("postgres"), c.Port()
	conn.Close(ctx)
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Done():
	default:
		t.Fatal("Done not closed after Stop")
	}
	if err := c.Stop(ctx); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "postmaster.pid")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("postmaster.pid after Stop: %v", err)
	}

	o := testOptions(t, dataDir)
	o.SuperUser = "someone_else"
	if _, err := pgcluster.Open(ctx, o); err == nil || !strings.Contains(err.Error(), "superuser") {
		t.Fatalf("Open with another superuser: %v", err)
	}

	// Restart: same port, same DSN, data kept.
	c2 := open(t, testOptions(t, dataDir))
	if c2.Port() != port || c2.ConnString("postgres") != dsn {
		t.Fatalf("restart changed the DSN: %q, was %q", c2.ConnString("postgres"), dsn)
	}
	if n := count(t, connect(t, dsn), "SELECT count(*) FROM kept"); n != 2 {
		t.Fatalf("kept has %d rows after restart, want 2", n)
	}
}

func TestRecoversFromKilledPostmaster(t *testing.T) {
	requireBinaries(t)
	ctx := context.Background()
	dataDir := newDataDir(t)
	c, err := pgcluster.Open(ctx, testOptions(t, dataDir))
	if err != nil {
		t.Fatal(err)
	}
	conn := connect(t, c.ConnString("postgres"))
	exec(t, conn, "CREATE TABLE survived (id int)")
	exec(t, conn, "INSERT INTO survived VALUES (42)")

	// Freeze this session's backend so it cannot notice its postmaster's
	// death: it stays attached to the shared memory, which makes
	// PostgreSQL refuse to start until Open disposes of it.
	var backend int
	if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(backend, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(c.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-c.Done()
	if _, err := os.Stat(filepath.Join(dataDir, "postmaster.pid")); err != nil {
		t.Fatalf("expected a stale postmaster.pid: %v", err)
	}
	if err := c.Stop(ctx); err != nil {
		t.Fatalf("Stop of a dead server: %v", err)
	}

	c2 := open(t, testOptions(t, dataDir))
	if c2.Port() != c.Port() {
		t.Errorf("port changed after crash: %d, was %d", c2.Port(), c.Port())
	}
	if n := count(t, connect(t, c2.ConnString("postgres")), "SELECT count(*) FROM survived WHERE id = 42"); n != 1 {
		t.Fatalf("committed row lost after crash: count %d", n)
	}
	if err := syscall.Kill(backend, 0); !errors.Is(err, syscall.ESRCH) {
		// Reparented to init, it may linger as a zombie there; it must
		// not be running.
		if st, _ := os.ReadFile("/proc/" + strconv.Itoa(backend) + "/stat"); !strings.Contains(string(st), ") Z") {
			t.Errorf("frozen backend %d still alive: %s", backend, st)
		}
	}
}

func TestSocketDirFallbackForLongPath(t *testing.T) {
	requireBinaries(t)
	ctx := context.Background()
	dataDir := filepath.Join(newDataDir(t), strings.Repeat("long-directory-name/", 5), "data")
	c, err := pgcluster.Open(ctx, testOptions(t, dataDir))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop(ctx)
	socketDir := c.SocketDir()
	t.Cleanup(func() { os.RemoveAll(socketDir) })
	if socketDir == dataDir || filepath.Dir(socketDir) != filepath.Clean(os.TempDir()) {
		t.Fatalf("socket dir %q, want a private dir under %s", socketDir, os.TempDir())
	}
	dsn := c.ConnString("postgres")
	connect(t, dsn).Close(ctx)
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}

	// The choice is recorded: a restart uses (and if need be recreates)
	// the same socket dir, so the DSN stays valid.
	if err := os.RemoveAll(socketDir); err != nil {
		t.Fatal(err)
	}
	c2 := open(t, testOptions(t, dataDir))
	if c2.SocketDir() != socketDir || c2.ConnString("postgres") != dsn {
		t.Fatalf("restart moved the socket: %q, was %q", c2.ConnString("postgres"), dsn)
	}
	connect(t, dsn)
}

func TestListenTCP(t *testing.T) {
	requireBinaries(t)
	o := testOptions(t, newDataDir(t))
	o.ListenTCP = true
	c := open(t, o)
	conn := connect(t, "host=127.0.0.1 port="+strconv.Itoa(c.Port())+" user="+c.SuperUser()+" dbname=postgres sslmode=disable")
	if n := count(t, conn, "SELECT 1"); n != 1 {
		t.Fatal(n)
	}
}

func TestUnreachableDataDir(t *testing.T) {
	requireBinaries(t)
	if os.Geteuid() != 0 {
		t.Skip("only root runs PostgreSQL as another account")
	}
	private := filepath.Dir(newDataDir(t))
	if err := os.Chmod(private, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := pgcluster.Open(context.Background(), testOptions(t, filepath.Join(private, "data")))
	if !errors.Is(err, pgcluster.ErrNotTraversable) || !strings.Contains(err.Error(), private) {
		t.Fatalf("Open under a 0700 root dir: %v, want ErrNotTraversable naming %s", err, private)
	}
	t.Log(err)
}

func TestManagedSettingsRejected(t *testing.T) {
	o := testOptions(t, newDataDir(t))
	o.Settings["Listen_Addresses"] = "*"
	if _, err := pgcluster.Open(context.Background(), o); err == nil || !strings.Contains(err.Error(), "ListenTCP") {
		t.Fatalf("Open with listen_addresses setting: %v", err)
	}
}

func TestFindBinDir(t *testing.T) {
	requireBinaries(t)
	dir, err := pgcluster.FindBinDir("")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"initdb", "postgres"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
	if got, err := pgcluster.FindBinDir(dir); err != nil || got != dir {
		t.Errorf("FindBinDir(%q) = %q, %v", dir, got, err)
	}
	empty := t.TempDir()
	if _, err := pgcluster.FindBinDir(empty); !errors.Is(err, pgcluster.ErrNoBinaries) || !strings.Contains(err.Error(), empty) {
		t.Errorf("FindBinDir(empty dir) = %v", err)
	}
	t.Setenv("PATH", empty)
	if got, err := pgcluster.FindBinDir(""); err == nil && !strings.HasPrefix(got, "/usr/lib/postgresql/") {
		t.Errorf("without PATH, FindBinDir = %q", got)
	} else if err != nil && !strings.Contains(err.Error(), "apt-get install postgresql") {
		t.Errorf("error lacks the install hint: %v", err)
	}
}

// TestBackendDataLimit: with a data limit, a backend that needs more
// memory fails its statement with 53200 and lives on, and the cluster
// keeps serving the other sessions (no out-of-memory kill, no restart).
func TestBackendDataLimit(t *testing.T) {
	requireBinaries(t)
	o := testOptions(t, newDataDir(t))
	o.BackendDataLimit = 128 << 20
	c := open(t, o)
	other := connect(t, c.ConnString("postgres"))
	hog := connect(t, c.ConnString("postgres"))
	var n int
	err := hog.QueryRow(context.Background(), "SELECT length(repeat('a', 200000000))").Scan(&n)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "53200" {
		t.Fatalf("allocating 200 MB under a 128 MiB limit: %v, want 53200", err)
	}
	if got := count(t, hog, "SELECT 1"); got != 1 {
		t.Fatalf("the failed session: %d", got)
	}
	if got := count(t, other, "SELECT 2"); got != 2 {
		t.Fatalf("another session: %d", got)
	}
	if got := count(t, other, "SELECT length(repeat('a', 20000000))"); got != 20000000 {
		t.Fatalf("an allocation within the limit: %d", got)
	}
}
