//go:build !linux

package tests

import (
	"syscall"
)

func childSysProcAttr() *syscall.SysProcAttr { return nil }

// postgresAlive and postgresProcessesIn need /proc; elsewhere the
// postmaster.pid check has to do.
func postgresAlive(pid int) bool { return false }

func postgresProcessesIn(dir string) []int { return nil }
