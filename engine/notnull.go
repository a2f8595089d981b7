package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/reader"
	"github.com/lakesoul-go/lakesoul/writer"
)

// checkNotNull verifies, before a partial upsert of table t commits, that
// the NOT NULL columns cols it did not write hold a value in every merged
// row of the partitions it wrote: the table as the session sees it
// (committed and staged files) with the written files on top. A key the
// write created has no older row to take them from and fails with 23502, as
// an INSERT leaving out a NOT NULL column does in PostgreSQL; keys that
// existed keep their values (LakeSoul's partial upsert).
func (s *Session) checkNotNull(ctx context.Context, t *catalog.Table, written []catalog.PartitionCommit, cols []string) error {
	parts, err := s.mergedWith(ctx, t, written) // checks.go
	if err != nil {
		return err
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
	query := fmt.Sprintf("SELECT %s FROM %s", strings.Join(counts, ", "), scanCallSQL(handle))
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
			return writer.NotNullViolation(t, cols[i], nil, 0)
		}
	}
	return nil
}
