//go:build !linux

package main

import "os"

// isTerminal reports false: progress lines are shown on Linux terminals only.
func isTerminal(*os.File) bool { return false }
