//go:build !linux

package pgcluster

import (
	"errors"
	"syscall"
)

// sysProcAttr runs a PostgreSQL binary as the account (when cred is set)
// and in its own process group. Outside Linux there is no parent-death
// signal: a postmaster outlives a caller that dies without calling Stop.
func sysProcAttr(cred *syscall.Credential, _ bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Setpgid: true}
}

// serverProcessAlive reports whether pid exists; without /proc it cannot
// tell a postmaster from an unrelated process that reused the PID.
func serverProcessAlive(pid int, _ string) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// serverProcessesIn cannot find leftover server processes without /proc;
// PostgreSQL itself reports them if they still hold the shared memory.
func serverProcessesIn(string) []int { return nil }
