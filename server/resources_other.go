//go:build !linux

package server

// physicalMemory is unknown on this platform: DuckDB's and Go's defaults apply.
func physicalMemory() int64 { return 0 }

// freeSpace is unknown on this platform: DuckDB's default applies.
func freeSpace(string) int64 { return 0 }
