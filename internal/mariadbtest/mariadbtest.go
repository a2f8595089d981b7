// Package mariadbtest starts throwaway MariaDB servers for tests: Debian's
// mariadbd (apt-get install mariadb-server) in a temp data dir made by
// mariadb-install-db, on a random loopback port, with the binary log on in
// ROW format — a source for CDC. When the tests run as root the server runs
// as the `mysql` account (mariadbd refuses root). Without the binaries the
// tests skip, unless LAKESOUL_REQUIRE_MARIADB=1 (set by .ci/run).
package mariadbtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"vitess.io/vitess/go/mysql"

	"github.com/lakesoul-go/lakesoul/internal/safego"
)

// EnvRequire, when "1", turns skips for a missing MariaDB into failures.
const EnvRequire = "LAKESOUL_REQUIRE_MARIADB"

// User and Password are the account Start creates, with every privilege
// (replication ones included).
const (
	User     = "cdc"
	Password = "cdc-Secret7"
)

// Server is a running throwaway MariaDB.
type Server struct {
	Port   int
	Socket string
	dir    string
	cmd    *exec.Cmd
	done   chan struct{}
}

// URL is a CONNECTION string for the server as User.
func (s *Server) URL() string {
	return fmt.Sprintf("mysql://%s:%s@127.0.0.1:%d", User, Password, s.Port)
}

// Params are connection parameters as User over TCP.
func (s *Server) Params() *mysql.ConnParams {
	return &mysql.ConnParams{Host: "127.0.0.1", Port: s.Port, Uname: User, Pass: Password}
}

// Exec runs statements as User, failing the test on error.
func (s *Server) Exec(t testing.TB, sqls ...string) {
	t.Helper()
	c, err := mysql.Connect(context.Background(), s.Params())
	if err != nil {
		t.Fatalf("mariadbtest: connect: %v", err)
	}
	defer c.Close()
	for _, q := range sqls {
		if _, err := c.ExecuteFetch(q, 0, false); err != nil {
			t.Fatalf("mariadbtest: %s: %v", q, err)
		}
	}
}

func binaries() (daemon, install string, err error) {
	for _, p := range []string{"/usr/sbin/mariadbd", "/usr/sbin/mysqld"} {
		if _, err := os.Stat(p); err == nil {
			daemon = p
			break
		}
	}
	install, _ = exec.LookPath("mariadb-install-db")
	if daemon == "" || install == "" {
		return "", "", fmt.Errorf("mariadbd or mariadb-install-db not found (apt-get install mariadb-server)")
	}
	return daemon, install, nil
}

// Start starts a server for the test; it is stopped and removed when the
// test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	daemon, install, err := binaries()
	if err != nil {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("mariadbtest: %v (%s=1)", err, EnvRequire)
		}
		t.Skipf("mariadbtest: %v (%s=1 makes this a failure)", err, EnvRequire)
	}
	dir, err := os.MkdirTemp("", "lakesoul-mariadb-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("mysql")
		if err != nil {
			t.Fatalf("mariadbtest: running as root, MariaDB runs as the mysql account, which is missing: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Mkdir(data, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(data, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	run := func(name string, args ...string) *exec.Cmd {
		cmd := exec.Command(name, args...)
		cmd.Dir = "/"
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
		return cmd
	}
	out, err := run(install, "--no-defaults", "--datadir="+data, "--auth-root-authentication-method=normal",
		"--skip-test-db", "--skip-name-resolve").CombinedOutput()
	if err != nil {
		os.RemoveAll(dir)
		t.Fatalf("mariadbtest: mariadb-install-db: %v\n%s", err, out)
	}
	s := &Server{dir: dir, Socket: filepath.Join(data, "mysqld.sock"), done: make(chan struct{})}
	for attempt := 0; ; attempt++ {
		s.Port = freePort(t)
		s.cmd = run(daemon, "--no-defaults", "--datadir="+data, "--socket="+s.Socket, "--port="+strconv.Itoa(s.Port),
			"--bind-address=127.0.0.1", "--skip-name-resolve", "--log-bin="+filepath.Join(data, "binlog"),
			"--binlog-format=ROW", "--server-id=1", "--log-error="+filepath.Join(data, "error.log"),
			"--pid-file="+filepath.Join(data, "mysqld.pid"), "--innodb-buffer-pool-size=64M",
			"--innodb-flush-log-at-trx-commit=2", "--sync-binlog=0", "--skip-log-slave-updates")
		var err error
		if s.done, err = startLocked(s.cmd); err != nil {
			t.Fatal(err)
		}
		if err := s.waitReady(); err == nil {
			break
		} else if attempt >= 2 {
			s.stop()
			log, _ := os.ReadFile(filepath.Join(data, "error.log"))
			os.RemoveAll(dir)
			t.Fatalf("mariadbtest: %v\n%s", err, log)
		}
		s.stop()
	}
	t.Cleanup(func() {
		s.stop()
		os.RemoveAll(dir)
	})
	return s
}

// waitReady waits for the root login over the socket and creates User.
func (s *Server) waitReady() error {
	deadline := time.Now().Add(60 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return fmt.Errorf("mariadbd exited")
		default:
		}
		c, err := mysql.Connect(context.Background(), &mysql.ConnParams{UnixSocket: s.Socket, Uname: "root"})
		if err == nil {
			defer c.Close()
			for _, q := range []string{
				fmt.Sprintf("CREATE USER '%s'@'%%' IDENTIFIED BY '%s'", User, Password),
				fmt.Sprintf("GRANT ALL ON *.* TO '%s'@'%%' WITH GRANT OPTION", User),
			} {
				if _, err := c.ExecuteFetch(q, 0, false); err != nil {
					return err
				}
			}
			return nil
		}
		last = err
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("mariadbd not ready: %v", last)
}

// Stop stops the server (SIGTERM, then SIGKILL); Restart starts it again on
// the same data and port.
func (s *Server) stop() {
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// Stop stops the server; the test may Restart it.
func (s *Server) Stop() { s.stop() }

// Restart starts a stopped server again on its data dir and port.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	args := s.cmd.Args
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = "/"
	cmd.SysProcAttr = s.cmd.SysProcAttr
	done, err := startLocked(cmd)
	if err != nil {
		t.Fatal(err)
	}
	s.cmd, s.done = cmd, done
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := mysql.Connect(context.Background(), s.Params())
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) || strings.Contains(err.Error(), "exited") {
			t.Fatalf("mariadbtest: restart: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Query runs a query as User and returns its column names and rows, NULL
// as "NULL", failing the test on error.
func (s *Server) Query(t testing.TB, q string) (names []string, rows [][]string) {
	t.Helper()
	c, err := mysql.Connect(context.Background(), s.Params())
	if err != nil {
		t.Fatalf("mariadbtest: connect: %v", err)
	}
	defer c.Close()
	r, err := c.ExecuteFetch(q, 1<<20, true)
	if err != nil {
		t.Fatalf("mariadbtest: %s: %v", q, err)
	}
	for _, f := range r.Fields {
		names = append(names, f.Name)
	}
	for _, row := range r.Rows {
		cells := make([]string, len(row))
		for i, v := range row {
			cells[i] = "NULL"
			if !v.IsNull() {
				cells[i] = v.ToString()
			}
		}
		rows = append(rows, cells)
	}
	return names, rows
}

// startLocked starts cmd and waits for it on an OS thread locked for the
// child's whole life; done is closed when it exited. The parent-death
// signal (Pdeathsig) follows the thread that started the child, not the
// process: started from any runtime thread, mariadbd was killed whenever
// some other goroutine later locked that thread and ended (the tests'
// lake-server starter does, when the server it waits for is SIGKILLed), so
// TestCDCMySQL's source died under its load.
func startLocked(cmd *exec.Cmd) (done chan struct{}, err error) {
	done = make(chan struct{})
	started := make(chan error, 1)
	safego.Go(func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the child
		running := false
		defer safego.RecoverTo(func(err error) { // reported where the caller waits
			if !running {
				started <- err
				return
			}
			close(done)
		})
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		running = true
		started <- nil
		_ = cmd.Wait()
		close(done)
	})
	if err := <-started; err != nil {
		return nil, err
	}
	return done, nil
}
