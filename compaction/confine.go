package compaction

import (
	"context"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/layout"
)

// Confinement (layout/paths.go): compaction and the lifecycle task read,
// write, list and delete only inside a table's own directory.
//
//   - A table is worked on only if its path is its directory
//     (layout.CheckRecordedDir: the directory the catalog records for it,
//     else <warehouse>/<namespace>/<table> when the warehouse is known, else
//     any root followed by the escaped names), so a
//     catalog row whose table_path points elsewhere is left alone.
//   - The lifecycle task also skips a table whose directory another catalog
//     row claims too (same namespace, name and path): rows of one's own
//     domain can be written directly, and a second row naming another
//     workspace's table must not make that table's files look like its
//     orphans or its expired files.
//   - Every file deleted (expired, redundant, discarded, orphaned, a dead
//     attempt's output) must be inside the directory of the table it belongs
//     to; the reader refuses input files outside it. A discarded file
//     belongs to the table its discard row names, and is deleted only if
//     that table does not know it (collectDiscarded).

// checkTable returns nil if t's path is its own directory.
func (c *compactor) checkTable(t *catalog.Table) error {
	return layout.CheckRecordedDir(t.Path, c.opt.Warehouse, t.Namespace, t.Name, t.Dir)
}

// ownDir returns nil if t's path is its own directory and no other table of
// tables claims it as its own too (a second row with the same namespace,
// name and path: which one is real cannot be told, so neither is touched).
// Rows whose path is not their own directory claim nothing: checkTable
// already keeps the lifecycle away from them.
func (c *compactor) ownDir(t *catalog.Table, tables []*catalog.Table) error {
	if err := c.checkTable(t); err != nil {
		return err
	}
	for _, o := range tables {
		if o.ID != t.ID && layout.SameDir(o.Path, t.Path) && c.checkTable(o) == nil {
			return &sharedDirError{table: t.QualifiedName() + " (" + t.ID + ")", other: o.QualifiedName() + " (" + o.ID + ")", dir: t.Path}
		}
	}
	return nil
}

type sharedDirError struct{ table, other, dir string }

func (e *sharedDirError) Error() string {
	return "compaction: tables " + e.table + " and " + e.other + " both claim the directory " + e.dir + "; neither is collected"
}

// deleteWithin deletes the files the catalog no longer references that lie
// inside dir and logs the others; it returns how many it deleted.
func (c *compactor) deleteWithin(ctx context.Context, dir string, paths []string) int {
	n := 0
	for _, p := range paths {
		if err := layout.CheckWithin(dir, p); err != nil {
			c.opt.Logger.Warn("lifecycle: refusing to delete a file outside its table's directory", "path", p, "dir", dir)
			continue
		}
		if c.deleteOne(ctx, p) {
			n++
		}
	}
	return n
}

func (c *compactor) deleteOne(ctx context.Context, p string) bool {
	if err := c.store.Delete(context.WithoutCancel(ctx), p); err != nil {
		c.opt.Logger.Warn("lifecycle: could not delete a file; it stays as an orphan", "path", p, "err", err)
		return false
	}
	return true
}
