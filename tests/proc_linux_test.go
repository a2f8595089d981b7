package tests

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// childSysProcAttr makes the kernel send the server SIGTERM should the test
// binary die, so that it does not outlive the run.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}

// procInfo returns the command name and state letter of pid from /proc.
func procInfo(pid int) (comm string, state byte, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0, false
	}
	s := string(b)
	open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || closing < open || closing+2 >= len(s) {
		return "", 0, false
	}
	return s[open+1 : closing], s[closing+2], true
}

// postgresAlive reports whether pid is a live (non-zombie) postgres process.
func postgresAlive(pid int) bool {
	comm, state, ok := procInfo(pid)
	return ok && state != 'Z' && comm == "postgres"
}

// postgresProcessesIn lists the live postgres processes whose working
// directory is dir (every PostgreSQL server process chdirs into its data
// dir).
func postgresProcessesIn(dir string) []int {
	want, err := filepath.EvalSymlinks(dir)
	if err != nil {
		want = dir
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !postgresAlive(pid) {
			continue
		}
		cwd, err := os.Readlink("/proc/" + e.Name() + "/cwd")
		if err != nil {
			continue
		}
		if cwd == dir || cwd == want {
			pids = append(pids, pid)
		}
	}
	return pids
}
