package writer

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakesoul-go/lakesoul/catalog"
)

// CDCInsertOp is the op a row of a CDC table is written with when its
// writer gave none (an INSERT, COPY or ingest that leaves the op column
// out, or writes NULL there).
const CDCInsertOp = "insert"

// withCDCOps returns rec with every row of a CDC table carrying an op: the
// op column added filled with "insert" when rec lacks it, its NULLs made
// "insert" otherwise; rec itself (retained) when there is nothing to change.
// LakeSoul's readers (Spark, Flink, DataFusion, the Python package) drop the
// rows of a CDC table whose op column is not "delete" by SQL's rule, which a
// NULL op fails too: a row written without an op would vanish for them.
// It also makes a key written again after its delete exist again for this
// server's reader, which keeps a column a file lacks from older files. The
// caller releases the result.
func withCDCOps(t *catalog.Table, rec arrow.RecordBatch, mem memory.Allocator) arrow.RecordBatch {
	c := t.CDCColumn()
	if c == "" || !t.HasPK() || t.Schema.FieldIndices(c) == nil {
		rec.Retain()
		return rec
	}
	n := int(rec.NumRows())
	idx := rec.Schema().FieldIndices(c)
	if len(idx) > 0 && rec.Column(idx[0]).NullN() == 0 {
		rec.Retain()
		return rec
	}
	b := array.NewStringBuilder(mem)
	defer b.Release()
	b.Reserve(n)
	var old *array.String
	if len(idx) > 0 {
		old = rec.Column(idx[0]).(*array.String)
	}
	for i := range n {
		if old != nil && old.IsValid(i) {
			b.Append(old.Value(i))
		} else {
			b.Append(CDCInsertOp)
		}
	}
	ops := b.NewArray()
	defer ops.Release()
	cols := append([]arrow.Array(nil), rec.Columns()...)
	fields := append([]arrow.Field(nil), rec.Schema().Fields()...)
	if len(idx) > 0 {
		cols[idx[0]] = ops
		fields[idx[0]].Nullable = true
	} else {
		cols = append(cols, ops)
		fields = append(fields, arrow.Field{Name: c, Type: arrow.BinaryTypes.String, Nullable: true})
	}
	md := rec.Schema().Metadata()
	return array.NewRecordBatch(arrow.NewSchema(fields, &md), cols, int64(n))
}
