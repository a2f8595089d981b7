package compaction

import "context"

// SetBeforeCommit installs a hook that runs after a compaction wrote its
// files and before it commits (tests only).
func SetBeforeCommit(o *Options, f func(ctx context.Context, desc string, readVersion int)) {
	o.beforeCommit = f
}

// LevelOf exposes levelOf to tests.
func LevelOf(path string) int { return levelOf(path) }

// NormalizePath exposes normalizePath to tests.
func NormalizePath(p string) string { return normalizePath(p) }
