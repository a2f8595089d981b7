package catalog_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/google/uuid"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/pgtest"
)

// Go benchmarks of the commit path (lakesoul.commit round trips). The test
// cluster runs with fsync off, so these measure the catalog's CPU and lock
// work, not the disk; `lakesoul bench commits` measures a durable cluster.

func BenchmarkCommit(b *testing.B) {
	for _, tc := range []struct {
		name     string
		parallel bool
		same     bool
		parts    int
	}{
		{"serial/one-partition", false, true, 1},
		{"serial/two-partitions", false, false, 2},
		{"parallel/distinct-partitions", true, false, 1},
		{"parallel/same-partition", true, true, 1},
	} {
		b.Run(tc.name, func(b *testing.B) {
			ctx := context.Background()
			c, tbl := benchTable(b)
			var seq atomic.Int64
			commitOne := func(worker int64) {
				parts := make([]catalog.PartitionCommit, tc.parts)
				for i := range parts {
					desc := "p=0"
					if !tc.same {
						desc = fmt.Sprintf("p=%d-%d", worker, i)
					}
					id := uuid.New()
					parts[i] = catalog.PartitionCommit{Desc: desc, CommitID: id,
						Ops: []catalog.FileOp{{Path: "file:///wh/t/" + desc + "/part-" + id.String() + "_0000.parquet", Op: "add", Size: 1 << 20, ExistCols: []string{"id", "v"}}}}
				}
				if _, err := c.Commit(ctx, nil, tbl.ID, catalog.MergeCommit, parts); err != nil {
					b.Error(err)
				}
			}
			b.ResetTimer()
			if tc.parallel {
				b.RunParallel(func(pb *testing.PB) {
					w := seq.Add(1)
					for pb.Next() {
						commitOne(w)
					}
				})
			} else {
				for b.Loop() {
					commitOne(0)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
		})
	}
}

// benchTable makes a catalog (on the test cluster) and a PK table.
func benchTable(b *testing.B) (*catalog.Catalog, *catalog.Table) {
	b.Helper()
	ctx := context.Background()
	dsn := pgtest.DSN(b)
	if err := catalog.MigrateUp(ctx, dsn); err != nil {
		b.Fatal(err)
	}
	c, err := catalog.Open(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	tbl := &catalog.Table{ID: "table_" + uuid.NewString(), Namespace: "default", Name: "bench", Path: "file:///wh/bench",
		Schema: arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64},
			{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true}, {Name: "p", Type: arrow.BinaryTypes.String, Nullable: true}}, nil), PKCols: []string{"id"}, RangeCols: []string{"p"}, HashBucketNum: 4}
	if err := c.CreateTable(ctx, tbl); err != nil {
		b.Fatal(err)
	}
	return c, tbl
}
