//go:build !lakesoul_faults

// Package faults lets tests inject panics at named points of the server, to
// prove that a panic anywhere — a statement, a goroutine a statement
// started, a DuckDB callback, a background job — fails only the work it
// happened in. The points are compiled in only with the build tag
// lakesoul_faults (faults_on.go); in every other build Point does nothing
// and costs nothing.
package faults

// Enabled reports whether this build injects faults.
const Enabled = false

// Point marks a place where a fault may be injected: with the build tag,
// it panics when the server's LAKESOUL_FAULTS names the point for key (a
// table's qualified name). Here it does nothing.
func Point(name, key string) {}
