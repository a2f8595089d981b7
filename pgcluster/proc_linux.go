package pgcluster

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// sysProcAttr runs a PostgreSQL binary as the account (when cred is set),
// in its own process group, and asks the kernel to send it SIGINT (fast
// shutdown) when the thread that started it exits. See startPostmaster for
// why that thread lives exactly as long as the postmaster.
func sysProcAttr(cred *syscall.Credential, deathSignal bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Credential: cred, Setpgid: true}
	if deathSignal {
		a.Pdeathsig = syscall.SIGINT
	}
	return a
}

// serverProcessAlive reports whether pid is a live (non-zombie) PostgreSQL
// server process whose working directory is dataDir (every server process
// chdirs into its data dir). When the working directory cannot be read, a
// live process named postgres counts as alive.
func serverProcessAlive(pid int, dataDir string) bool {
	comm, state, ok := procStat(pid)
	if !ok || state == 'Z' || comm != "postgres" {
		return false
	}
	cwd, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/cwd")
	if err != nil {
		return true
	}
	return sameDir(cwd, dataDir)
}

// serverProcessesIn lists the live PostgreSQL processes working in dataDir.
func serverProcessesIn(dataDir string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		comm, state, ok := procStat(pid)
		if !ok || state == 'Z' || comm != "postgres" {
			continue
		}
		if cwd, err := os.Readlink("/proc/" + e.Name() + "/cwd"); err == nil && sameDir(cwd, dataDir) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// procStat returns the command name and state letter of pid.
func procStat(pid int) (comm string, state byte, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0, false
	}
	s := string(b)
	lp, rp := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if lp < 0 || rp < lp || rp+2 >= len(s) {
		return "", 0, false
	}
	return s[lp+1 : rp], s[rp+2], true
}

// sameDir compares two directory paths after resolving symlinks.
func sameDir(a, b string) bool {
	if a == b {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}
