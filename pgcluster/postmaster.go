package pgcluster

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lakesoul-go/lakesoul/internal/safego"
)

// logFile, in the data dir, receives the server's stderr and stdout.
const logFile = "postgresql.log"

// postmaster is a running (or exited) server process started by this
// package.
type postmaster struct {
	pid int
	// exited is closed once the process has exited and been reaped;
	// waitErr is valid from then on.
	exited  chan struct{}
	waitErr error
}

// signal sends sig to the postmaster unless it has already been reaped.
func (p *postmaster) signal(sig syscall.Signal) {
	select {
	case <-p.exited:
	default:
		_ = syscall.Kill(p.pid, sig)
	}
}

// postmasterArgs builds the postgres command line.
func postmasterArgs(o Options, socketDir string) []string {
	listen := ""
	if o.ListenTCP {
		listen = "127.0.0.1"
	}
	args := []string{
		"-D", o.DataDir,
		"-p", strconv.Itoa(o.Port),
		"-c", "unix_socket_directories=" + quoteDirList(socketDir),
		"-c", "unix_socket_permissions=0700",
		"-c", "listen_addresses=" + listen,
	}
	names := make([]string, 0, len(o.Settings))
	for name := range o.Settings {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		args = append(args, "-c", name+"="+o.Settings[name])
	}
	return args
}

// postmasterCommand is the command that runs postgres. With a data limit,
// /bin/sh lowers RLIMIT_DATA for itself (always allowed, whatever the
// accounts and capabilities) and execs postgres in its place, so the
// postmaster and every process it forks inherit the limit.
func postmasterCommand(o Options, socketDir string) *exec.Cmd {
	postgres := filepath.Join(o.BinDir, "postgres")
	args := postmasterArgs(o, socketDir)
	if o.BackendDataLimit <= 0 {
		return exec.Command(postgres, args...)
	}
	kib := max(o.BackendDataLimit>>10, 1)
	script := fmt.Sprintf(`ulimit -d %d && exec "$0" "$@"`, kib)
	return exec.Command("/bin/sh", append([]string{"-c", script, postgres}, args...)...)
}

// quoteDirList quotes dir as one element of unix_socket_directories, a
// comma-separated list whose elements may be double-quoted.
func quoteDirList(dir string) string {
	if !strings.ContainsAny(dir, `, "`) {
		return dir
	}
	return `"` + strings.ReplaceAll(dir, `"`, `""`) + `"`
}

// startPostmaster runs postgres for the data dir and returns once it has
// started (not yet once it accepts connections; see waitReady).
//
// The process is started and reaped by a goroutine locked to its OS thread
// for the process's whole life. The parent-death signal is tied to the
// thread that forked, not to the process, so this keeps it from firing
// while the caller lives and lets it fire when the caller dies.
func startPostmaster(o Options, owner *account, socketDir string) (*postmaster, error) {
	logPath := filepath.Join(o.DataDir, logFile)
	logOut, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: open server log: %w", err)
	}
	defer logOut.Close()
	if err := owner.chown(logPath); err != nil {
		return nil, err
	}
	cmd := postmasterCommand(o, socketDir)
	cmd.Dir = "/"
	cmd.Env = childEnv()
	cmd.Stdout, cmd.Stderr = logOut, logOut
	cmd.SysProcAttr = sysProcAttr(owner.cred, true)

	p := &postmaster{exited: make(chan struct{})}
	started := make(chan error, 1)
	safego.Go(func() {
		// Never unlocked: the thread ends with this goroutine, after the
		// postmaster has exited.
		runtime.LockOSThread()
		running := false
		// A panic is reported where the caller waits: as the start's
		// error, or as the postmaster's end (the thread, and with it the
		// postmaster, ends; Pdeathsig).
		defer safego.RecoverTo(func(err error) {
			if !running {
				started <- err
				return
			}
			p.waitErr = err
			close(p.exited)
		})
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		p.pid = cmd.Process.Pid
		running = true
		started <- nil
		p.waitErr = cmd.Wait()
		close(p.exited)
	})
	if err := <-started; err != nil {
		return nil, fmt.Errorf("pgcluster: start postgres: %w", err)
	}
	return p, nil
}

// waitReady waits until the postmaster reports in postmaster.pid that it
// accepts connections (after any crash recovery). If the process exits
// first, the error quotes the end of the server log.
func waitReady(ctx context.Context, p *postmaster, dataDir string, logStart int64) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-p.exited:
			return fmt.Errorf("pgcluster: postgres exited during startup (%v); server log:\n%s",
				p.waitErr, logTail(filepath.Join(dataDir, logFile), logStart))
		case <-ctx.Done():
			return fmt.Errorf("pgcluster: waiting for postgres to accept connections: %w", ctx.Err())
		case <-tick.C:
		}
		info, ok, err := readPidFile(dataDir)
		if err != nil {
			return err
		}
		if ok && info.pid == p.pid && info.status == pidFileStatusReady {
			return nil
		}
	}
}

// logSize returns the current length of the server log (0 if none), so a
// failure can quote only what this start wrote.
func logSize(dataDir string) int64 {
	fi, err := os.Stat(filepath.Join(dataDir, logFile))
	if err != nil {
		return 0
	}
	return fi.Size()
}

// logTail returns the last lines the log got from offset on.
func logTail(path string, offset int64) string {
	const maxLines = 30
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > maxLines {
		lines = lines[len(lines)-maxLines:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
