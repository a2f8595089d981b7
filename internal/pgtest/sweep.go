package pgtest

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// dirPrefix starts the name of every cluster dir pgtest creates in
// os.TempDir(); the creating process's PID follows it.
const dirPrefix = "lakesoul-pgtest-"

// sweepAbandoned removes the cluster dirs of test binaries that died
// without cleaning up: those whose creating process and postmaster are
// both gone. Anything it is unsure about is left alone.
func sweepAbandoned() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, dir := range dirs {
		rest := strings.TrimPrefix(filepath.Base(dir), dirPrefix)
		pid, err := strconv.Atoi(rest[:max(strings.IndexByte(rest, '-'), 0)])
		if err != nil || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Geteuid() {
			continue
		}
		if b, err := os.ReadFile(filepath.Join(dir, "data", "postmaster.pid")); err == nil {
			line, _, _ := strings.Cut(string(b), "\n")
			if pm, err := strconv.Atoi(strings.TrimSpace(line)); err != nil || processAlive(max(pm, -pm)) {
				continue // still shutting down; a later run removes it
			}
		}
		os.RemoveAll(dir)
	}
}

// processAlive reports whether pid runs and is not a zombie (which it
// becomes when its parent died and nobody reaps it).
func processAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no /proc: trust kill
	}
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}
