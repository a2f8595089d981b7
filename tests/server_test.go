package tests

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

const (
	// adminRole and database are what `lakesoul serve` serves.
	adminRole = "lakesoul"
	database  = "lakesoul"
	// startTimeout and stopTimeout only guard against hangs.
	startTimeout = 3 * time.Minute
	stopTimeout  = 2 * time.Minute
	// testTimeout bounds one test's client work.
	testTimeout = 5 * time.Minute
)

// server is a running `lakesoul serve` subprocess.
type server struct {
	// base is the temp dir holding the data dir and the log; only set for
	// servers whose owner removes it.
	base     string
	dataDir  string
	addr     string // 127.0.0.1:port
	port     int
	password string // as given on the command line; "" = generated
	logPath  string
	cmd      *exec.Cmd
	exited   chan struct{}
	waitErr  error
	// postmasterPID is the private PostgreSQL's PID once it is ready.
	postmasterPID int
}

// newBaseDir makes a temp dir that the postgres account can traverse
// (os.MkdirTemp makes it 0700; PostgreSQL runs as postgres under root).
func newBaseDir() (string, error) {
	dir, err := os.MkdirTemp("", "lakesoul-e2e-*")
	if err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// testBaseDir is newBaseDir removed when the test ends (after the servers
// started later by the test are stopped: cleanups run last-in first-out).
func testBaseDir(t *testing.T) string {
	t.Helper()
	dir, err := newBaseDir()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("remove %s: %v", dir, err)
		}
	})
	return dir
}

// freeAddr returns a TCP address on 127.0.0.1 that was free a moment ago.
func freeAddr() (string, int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", 0, err
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	return l.Addr().String(), port, nil
}

// serverEnv is the environment of the subprocess: ours without LAKESOUL_*
// settings, so that the flags alone configure the server.
func serverEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LAKESOUL_") {
			env = append(env, kv)
		}
	}
	// Freed Arrow buffers are poisoned, so a use after free shows up as
	// wrong results (arrowutil.PoolAllocator).
	return append(env, "LAKESOUL_POISON_FREED=1")
}

// startServer runs `lakesoul serve` on dataDir and returns once it accepts
// a pgx connection as the admin. password "" omits --admin-password. Its
// log goes to <dataDir>/../lakesoul-<n>.log. Should another process take
// the chosen port first, it retries on another.
func startServer(dataDir, password string, extraArgs ...string) (*server, error) {
	return startServerEnv(dataDir, password, nil, extraArgs...)
}

// startServerEnv is startServer with env added to the server's environment.
func startServerEnv(dataDir, password string, env []string, extraArgs ...string) (*server, error) {
	return startServerBin(lakesoulBin, dataDir, password, env, extraArgs...)
}

// startServerBin is startServerEnv running binary bin.
func startServerBin(bin, dataDir, password string, env []string, extraArgs ...string) (*server, error) {
	for attempt := 1; ; attempt++ {
		s, err := startServerOnce(bin, dataDir, password, env, extraArgs...)
		if err != nil && attempt < 3 && strings.Contains(err.Error(), "address already in use") {
			continue
		}
		return s, err
	}
}

func startServerOnce(bin, dataDir, password string, env []string, extraArgs ...string) (*server, error) {
	addr, port, err := freeAddr()
	if err != nil {
		return nil, err
	}
	logs, _ := filepath.Glob(filepath.Join(filepath.Dir(dataDir), "lakesoul-*.log"))
	s := &server{
		dataDir:  dataDir,
		addr:     addr,
		port:     port,
		password: password,
		logPath:  filepath.Join(filepath.Dir(dataDir), fmt.Sprintf("lakesoul-%d.log", len(logs)+1)),
		exited:   make(chan struct{}),
	}
	logFile, err := os.Create(s.logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	args := []string{"serve", "--data-dir", dataDir, "--listen", addr, "--log-level", "debug"}
	if password != "" {
		args = append(args, "--admin-password", password)
	}
	args = append(args, extraArgs...)
	s.cmd = exec.Command(bin, args...)
	s.cmd.Env = append(serverEnv(), env...)
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	s.cmd.SysProcAttr = childSysProcAttr()
	// The parent-death signal follows the thread that started the child, not
	// the process: start and wait on a thread locked for the child's whole
	// life, or the server gets SIGTERM when some other goroutine that later
	// locks and ends that thread (pgcluster does) exits.
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the child
		if err := s.cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		s.waitErr = s.cmd.Wait()
		close(s.exited)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	if err := s.waitReady(); err != nil {
		s.kill()
		return nil, fmt.Errorf("%w\nserver log:\n%s", err, s.logTail(8000))
	}
	if info, ok := readPostmasterPid(s.pgDir()); ok {
		s.postmasterPID = info.pid
	}
	return s, nil
}

// waitReady polls until a pgx connection as the admin succeeds.
func (s *server) waitReady() error {
	deadline := time.Now().Add(startTimeout)
	var lastErr error
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			return fmt.Errorf("lakesoul serve exited before accepting connections: %v", s.waitErr)
		default:
		}
		pw, err := s.adminPassword()
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			var c *pgx.Conn
			c, err = pgx.Connect(ctx, s.dsn(adminRole, pw, database))
			if err == nil {
				err = c.Ping(ctx)
				c.Close(ctx)
			}
			cancel()
			if err == nil {
				return nil
			}
		}
		lastErr = err
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("lakesoul serve not ready after %v: %v", startTimeout, lastErr)
}

// adminPassword is the password given on the command line or, when it
// was generated, the one saved in <data-dir>/admin-password.
func (s *server) adminPassword() (string, error) {
	if s.password != "" {
		return s.password, nil
	}
	b, err := os.ReadFile(filepath.Join(s.dataDir, "admin-password"))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// login connects to the server as user with password (failing the test when
// it cannot); the connection closes when the test ends.
func (s *server) login(t *testing.T, ctx context.Context, user, password string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(ctx, s.dsn(user, password, database))
	if err != nil {
		t.Fatalf("%s logs in: %v", user, err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// dsn is a URL connecting to the server as user with password to db.
func (s *server) dsn(user, password, db string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.UserPassword(user, password),
		Host:     s.addr,
		Path:     "/" + db,
		RawQuery: "sslmode=disable&connect_timeout=30",
	}
	return u.String()
}

// connect opens a pgx connection as the admin, closed when the test ends.
func (s *server) connect(t *testing.T) *pgx.Conn {
	t.Helper()
	pw, err := s.adminPassword()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := pgx.Connect(ctx, s.dsn(adminRole, pw, database))
	if err != nil {
		t.Fatalf("connect to %s: %v", s.addr, err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// pgDir is the private PostgreSQL's data dir.
func (s *server) pgDir() string { return filepath.Join(s.dataDir, "pg") }

// stop sends SIGTERM and checks that the server exits with status 0 and
// that its private PostgreSQL is gone.
func (s *server) stop() error {
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("SIGTERM: %w", err)
	}
	select {
	case <-s.exited:
	case <-time.After(stopTimeout):
		s.kill()
		return fmt.Errorf("lakesoul serve did not exit within %v of SIGTERM; killed", stopTimeout)
	}
	var errs []error
	if code := s.cmd.ProcessState.ExitCode(); code != 0 {
		errs = append(errs, fmt.Errorf("lakesoul serve exited with status %d after SIGTERM (%v); log:\n%s",
			code, s.waitErr, s.logTail(4000)))
	}
	if _, err := os.Stat(filepath.Join(s.pgDir(), "postmaster.pid")); !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, fmt.Errorf("postmaster.pid still present in %s after the server exited (stat: %v)", s.pgDir(), err))
	}
	if pids := postgresProcessesIn(s.pgDir()); len(pids) > 0 {
		errs = append(errs, fmt.Errorf("postgres processes %v still run in %s after the server exited", pids, s.pgDir()))
	}
	if s.postmasterPID > 0 && postgresAlive(s.postmasterPID) {
		errs = append(errs, fmt.Errorf("postmaster %d still runs after the server exited", s.postmasterPID))
	}
	return errors.Join(errs...)
}

// stopT is stop for a test.
func (s *server) stopT(t *testing.T) {
	t.Helper()
	if err := s.stop(); err != nil {
		t.Error(err)
	}
}

// kill ends the subprocess and its PostgreSQL without ceremony (used only
// on failure paths).
func (s *server) kill() {
	select {
	case <-s.exited:
	default:
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(stopTimeout):
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	}
	for _, pid := range postgresProcessesIn(s.pgDir()) {
		_ = syscall.Kill(pid, syscall.SIGQUIT)
	}
}

// startServerT starts a server for one test; it is killed when the test
// ends unless the test stopped it.
func startServerT(t *testing.T, dataDir, password string) *server {
	t.Helper()
	requirePG(t)
	s, err := startServer(dataDir, password)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		select {
		case <-s.exited:
		default:
			t.Errorf("server on %s still running at the end of the test; killing it", s.addr)
			s.kill()
		}
		if t.Failed() {
			t.Logf("server log %s:\n%s", s.logPath, s.logTail(8000))
		}
	})
	return s
}

// logTail is the end of the server's log.
func (s *server) logTail(n int) string {
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		return err.Error()
	}
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// postmasterPidInfo is what the tests read from postmaster.pid: the PID
// (line 1), port (line 4) and socket dir (line 5).
type postmasterPidInfo struct {
	pid       int
	port      int
	socketDir string
}

func readPostmasterPid(pgDir string) (postmasterPidInfo, bool) {
	b, err := os.ReadFile(filepath.Join(pgDir, "postmaster.pid"))
	if err != nil {
		return postmasterPidInfo{}, false
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) < 5 {
		return postmasterPidInfo{}, false
	}
	var info postmasterPidInfo
	info.pid, _ = strconv.Atoi(strings.TrimSpace(lines[0]))
	info.port, _ = strconv.Atoi(strings.TrimSpace(lines[3]))
	info.socketDir = strings.TrimSpace(lines[4])
	return info, info.pid > 0 && info.port > 0
}

// catalogConn connects straight to the server's private catalog
// PostgreSQL (unix socket, as the superuser), to inspect LakeSoul's
// metadata tables.
func (s *server) catalogConn(t *testing.T) *pgx.Conn {
	t.Helper()
	return s.catalogConnAs(t, adminRole)
}

// catalogConnAs connects straight to the private catalog as role (the
// socket trusts every role), as a LakeSoul client with that role's own
// catalog credentials would.
func (s *server) catalogConnAs(t *testing.T, role string) *pgx.Conn {
	t.Helper()
	info, ok := readPostmasterPid(s.pgDir())
	if !ok {
		t.Fatalf("cannot read %s/postmaster.pid", s.pgDir())
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg, err := pgx.ParseConfig(fmt.Sprintf("user=%s dbname=%s sslmode=disable", role, database))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Host, cfg.Port = info.socketDir, uint16(info.port)
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("connect to the catalog: %v", err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// referenceDB creates database name afresh on the catalog's PostgreSQL
// cluster and connects to it: the reference for tests that run the same
// text on lakesoul and on PostgreSQL itself. The connection closes with the
// test.
func (s *server) referenceDB(t *testing.T, name string) *pgx.Conn {
	t.Helper()
	ctx := testCtx(t)
	cat := s.catalogConn(t)
	mustExec(t, ctx, cat, "DROP DATABASE IF EXISTS "+name, "CREATE DATABASE "+name)
	cfg := cat.Config().Copy()
	cfg.Database = name
	ref, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("connect to the reference database %s: %v", name, err)
	}
	t.Cleanup(func() { ref.Close(context.Background()) })
	return ref
}

// pgCode is the SQLSTATE of err, or "" when err carries none.
func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// testCtx is a context bounding one test's client work.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// mustExec runs statements, failing the test on the first error.
func mustExec(t *testing.T, ctx context.Context, c *pgx.Conn, sqls ...string) {
	t.Helper()
	for _, q := range sqls {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// queryStrings runs q and returns its rows with every value as text
// ("NULL" for NULL), columns joined by '|'; it fails the test on an error.
func queryStrings(t *testing.T, ctx context.Context, c *pgx.Conn, q string, args ...any) []string {
	t.Helper()
	out, err := tryQueryStrings(ctx, c, q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

// tryQueryStrings is queryStrings returning the error.
func tryQueryStrings(ctx context.Context, c *pgx.Conn, q string, args ...any) ([]string, error) {
	rows, err := c.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return nil, err
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = formatValue(v)
		}
		out = append(out, strings.Join(parts, "|"))
	}
	return out, rows.Err()
}

func formatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case time.Time:
		if x.Hour() == 0 && x.Minute() == 0 && x.Second() == 0 && x.Nanosecond() == 0 {
			return x.Format("2006-01-02")
		}
		return x.Format(time.RFC3339Nano)
	}
	return fmt.Sprint(v)
}

// wantRows compares rows to want.
func wantRows(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") || len(got) != len(want) {
		t.Errorf("%s:\n got  %q\n want %q", what, got, want)
	}
}

// countRows is SELECT count(*) FROM table.
func countRows(t *testing.T, ctx context.Context, c *pgx.Conn, table string) int64 {
	t.Helper()
	var n int64
	if err := c.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

// filesUnder lists the regular files below dir (relative paths), or nil
// when dir does not exist.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return out
}
