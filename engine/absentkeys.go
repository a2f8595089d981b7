package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/writer"
)

// Partial writes of deleted keys.
//
// A write that leaves columns of a primary-key table out (INSERT with a
// column list, ON CONFLICT DO NOTHING, COPY with a column list, Arrow
// ingest of fewer columns) is LakeSoul's partial upsert: readers merge a
// key's rows column by column, newest first, so a key that exists keeps its
// values in the columns left out. A key that does not exist must read them
// as PostgreSQL's INSERT leaves them: NULL (a column with a default is
// always written). On a table without a CDC column a deleted key has no
// older rows (DELETE rewrites the files without it). On a CDC table DELETE
// writes a marker and LakeSoul's merge drops the key only when its newest
// op is "delete": a key written again keeps merging over the rows before its
// delete, so without more the columns the new write leaves out would come
// back from the deleted row.
//
// So the sink of every such write (tableSink.commit, all write paths end
// there) resets the left-out columns of the keys it writes whose newest row
// is a delete marker, before its own files: the commit adds, first, a file
// with those keys, NULL in each left-out column and op "delete", then the
// written files. Merged, the key reads the written columns from the new
// rows and NULL from the reset. A NOT NULL column left out makes such a key
// 23502, as for a key never written (checkNotNull). Keys never written, or
// whose delete compaction removed, have no older rows and need nothing.

// cdcDeleteOp is the op of a CDC table's delete marker.
const cdcDeleteOp = "delete"

// resetColumns returns the columns a partial write of the sink leaves out
// that a deleted key must read as NULL: non-key columns of a CDC table the
// written schema lacks; nil when the write is not partial, writes no new
// key (keysExist), or the table has no CDC column.
func (k *tableSink) resetColumns() []arrow.Field {
	cdc := k.t.CDCColumn()
	if cdc == "" || !k.t.HasPK() || k.keysExist || k.schema == nil {
		return nil
	}
	var out []arrow.Field
	for _, f := range k.t.Schema.Fields() {
		if f.Name == cdc || slices.Contains(k.t.PKCols, f.Name) || slices.Contains(k.t.RangeCols, f.Name) {
			continue
		}
		if len(k.schema.FieldIndices(f.Name)) == 0 {
			out = append(out, f)
		}
	}
	return out
}

// resetDeletedKeys writes, ahead of the sink's files (k.parts), the reset
// rows of the keys it wrote whose newest row before the write is a delete
// marker (see above); cols are resetColumns.
func (k *tableSink) resetDeletedKeys(ctx context.Context, cols []arrow.Field) error {
	s, t := k.s, k.t
	var descs []catalog.PartitionCommit
	var written []catalog.PartitionFiles
	for _, p := range k.parts {
		descs = append(descs, catalog.PartitionCommit{Desc: p.Desc})
		pf := catalog.PartitionFiles{Desc: p.Desc, Version: -1}
		for _, op := range p.Ops {
			if op.Op == "add" {
				pf.Files = append(pf.Files, catalog.DataFile{Path: op.Path, Size: op.Size, ExistCols: op.ExistCols})
			}
		}
		written = append(written, pf)
	}
	before, err := s.mergedWith(ctx, t, descs) // the partitions as the write found them
	if err != nil {
		return err
	}
	if len(before) == 0 {
		return nil
	}
	feed := s.token + ":deletedkeys:" + t.ID
	mine := s.token + ":writtenkeys:" + t.ID
	s.e.scans.putChangeFeed(feed, t, before) // delete markers are rows
	s.e.scans.putFixed(mine, t, written)
	defer s.e.scans.drop(feed)
	defer s.e.scans.drop(mine)

	cdc := t.CDCColumn()
	var sel, on []string
	var fields []arrow.Field
	for _, f := range t.Schema.Fields() {
		if slices.Contains(t.RangeCols, f.Name) || slices.Contains(t.PKCols, f.Name) {
			sel = append(sel, "__old."+quoteIdent(f.Name))
			on = append(on, fmt.Sprintf("__new.%s IS NOT DISTINCT FROM __old.%s", quoteIdent(f.Name), quoteIdent(f.Name)))
			fields = append(fields, f)
		}
	}
	for _, f := range cols {
		f.Nullable = true // (a NOT NULL one fails below before any row is written)
		sel = append(sel, fmt.Sprintf("CAST(NULL AS %s)", schema.DuckDBType(f.Type)))
		fields = append(fields, f)
	}
	sel = append(sel, quoteLiteral(cdcDeleteOp))
	fields = append(fields, t.Schema.Field(t.Schema.FieldIndices(cdc)[0]))
	query := fmt.Sprintf("SELECT %s FROM %s AS __old WHERE __old.%s = %s AND EXISTS (SELECT 1 FROM %s AS __new WHERE %s)",
		strings.Join(sel, ", "), scanCallSQL(feed), quoteIdent(cdc), quoteLiteral(cdcDeleteOp), scanCallSQL(mine), strings.Join(on, " AND "))
	rec, err := s.collect(ctx, query, nil, arrow.NewSchema(fields, nil))
	if err != nil {
		return err
	}
	defer rec.Release()
	if rec.NumRows() == 0 {
		return nil
	}
	for _, f := range cols {
		if !f.Nullable {
			return writer.NotNullViolation(t, f.Name, nil, 0)
		}
	}
	w := &writer.Writer{Store: s.e.store, Table: t, Intent: k.w.Intent, Mem: s.e.scans.mem}
	reset, err := w.Write(ctx, rec)
	if err != nil {
		return err
	}
	// The reset files go first: merged, the written rows come after them.
	k.parts = mergePartitionCommits(reset, k.parts)
	return nil
}
