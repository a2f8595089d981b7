package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/reader"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// checkNotNull verifies, before a partial upsert of table t commits, that
// the NOT NULL columns cols it did not write hold a value in every merged
// row of the partitions it wrote: the table as the session sees it
// (committed and staged files) with the written files on top. A key the
// write created has no older row to take them from and fails with 23502, as
// an INSERT leaving out a NOT NULL column does in PostgreSQL; keys that
// existed keep their values (LakeSoul's partial upsert).
func (s *Session) checkNotNull(ctx context.Context, t *catalog.Table, written []catalog.PartitionCommit, cols []string) error {
	var descs []string
	for _, p := range written {
		descs = append(descs, p.Desc)
	}
	parts, err := s.cat.LiveFiles(ctx, t.ID, descs)
	if err != nil {
		return err
	}
	if parts, err = s.snapshotForBlock(ctx, t, parts); err != nil {
		return err
	}
	for _, w := range written {
		i := slices.IndexFunc(parts, func(p catalog.PartitionFiles) bool { return p.Desc == w.Desc })
		if i < 0 {
			parts = append(parts, catalog.PartitionFiles{Desc: w.Desc, Version: -1})
			i = len(parts) - 1
		}
		parts[i].Files = slices.Clone(parts[i].Files)
		for _, op := range w.Ops {
			if op.Op == "add" {
				parts[i].Files = append(parts[i].Files, catalog.DataFile{Path: op.Path, Size: op.Size, ExistCols: op.ExistCols})
			}
		}
	}
	if err := reader.CheckFiles(t, parts); err != nil {
		return err
	}
	handle := s.token + ":notnull:" + t.ID
	s.e.scans.putFixed(handle, t, parts)
	counts := make([]string, len(cols))
	for i, c := range cols {
		counts[i] = fmt.Sprintf("count(*) FILTER (WHERE %s IS NULL)", quoteIdent(c))
	}
	query := fmt.Sprintf("SELECT %s FROM lakesoul_scan('%s')", strings.Join(counts, ", "), strings.ReplaceAll(handle, "'", "''"))
	nulls := make([]int64, len(cols))
	ptrs := make([]any, len(cols))
	for i := range nulls {
		ptrs[i] = &nulls[i]
	}
	if err := s.duck.QueryRowContext(ctx, query).Scan(ptrs...); err != nil {
		return err
	}
	for i, n := range nulls {
		if n > 0 {
			return sqlerr.New(sqlerr.NotNullViolation, "null value in column %q of relation %q violates not-null constraint", cols[i], t.Name)
		}
	}
	return nil
}
