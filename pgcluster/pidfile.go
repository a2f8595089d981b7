package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// pidFile is the lock file a postmaster keeps in its data dir. Its first
// line is the postmaster PID (negative for a single-user backend), its
// eighth the status: "starting", "stopping", "ready" or "standby".
const pidFile = "postmaster.pid"

// pidFileStatusReady is the status a postmaster writes once it accepts
// connections (what pg_ctl -w waits for).
const pidFileStatusReady = "ready"

// pidFileInfo is what pgcluster reads from postmaster.pid.
type pidFileInfo struct {
	pid    int
	status string
}

// readPidFile reads the data dir's postmaster.pid; ok is false when there
// is none. A file still being written may parse partially.
func readPidFile(dataDir string) (info pidFileInfo, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(dataDir, pidFile))
	if errors.Is(err, fs.ErrNotExist) {
		return info, false, nil
	}
	if err != nil {
		return info, false, fmt.Errorf("pgcluster: read %s: %w", pidFile, err)
	}
	lines := strings.Split(string(b), "\n")
	if pid, err := strconv.Atoi(strings.TrimSpace(lines[0])); err == nil {
		info.pid = pid
		if info.pid < 0 {
			info.pid = -info.pid
		}
	}
	if len(lines) > 7 {
		info.status = strings.TrimSpace(lines[7])
	}
	return info, true, nil
}

// checkNotRunning fails with ErrAlreadyRunning when a live postmaster
// serves dataDir. It reports whether a stale postmaster.pid was found.
func checkNotRunning(dataDir string) (stale bool, err error) {
	info, ok, err := readPidFile(dataDir)
	if err != nil || !ok {
		return false, err
	}
	if info.pid > 0 && serverProcessAlive(info.pid, dataDir) {
		return false, fmt.Errorf("%w: %s is served by PID %d (status %q); stop that server first, pgcluster does not attach to it",
			ErrAlreadyRunning, dataDir, info.pid, info.status)
	}
	return true, nil
}

// clearStale removes what a dead postmaster left behind so the next one
// starts: leftover server processes still attached to the old shared
// memory are killed (and waited for), then the stale lock files are
// removed. PostgreSQL would itself refuse to start while such processes
// live, or while the old PID has been reused by an unrelated process.
func clearStale(ctx context.Context, log *slog.Logger, dataDir, socketDir string, port int) error {
	orphans := serverProcessesIn(dataDir)
	if len(orphans) > 0 {
		log.Warn("pgcluster: killing server processes left by the dead postmaster", "dir", dataDir, "pids", orphans)
	}
	for _, pid := range orphans {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for _, pid := range orphans {
		for serverProcessAlive(pid, dataDir) {
			select {
			case <-ctx.Done():
				return fmt.Errorf("pgcluster: waiting for leftover server process %d to exit: %w", pid, ctx.Err())
			case <-tick.C:
			}
		}
	}
	for _, p := range []string{
		filepath.Join(dataDir, pidFile),
		filepath.Join(socketDir, socketFile(port)+".lock"),
		filepath.Join(socketDir, socketFile(port)),
	} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("pgcluster: remove stale %s: %w", p, err)
		}
	}
	return nil
}
