package reader_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/reader"
)

// FileRows sums the footers' row counts — exactly while it reads every
// footer it lacks, by size beyond its budget (70 uncached files; each file
// of the same size here, so the estimate is exact in value but not said
// to be) — and, with the footers cached, exactly again.
func TestFileRows(t *testing.T) {
	f := newFixture(t, []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil, nil, -1)
	for i := range 70 {
		var rows [][]any
		for j := range 10 {
			rows = append(rows, []any{i*10 + j, j})
		}
		f.write([]string{"id", "v"}, rows...)
	}
	parts := []catalog.PartitionFiles{*f.parts[f.order[0]]}
	meta := reader.NewMetaCache(reader.DefaultMetaCacheBytes)
	scan := func(p []catalog.PartitionFiles) *reader.Scan {
		return &reader.Scan{Store: objstore.Local{}, Table: f.table, Partitions: p, Meta: meta}
	}
	few := []catalog.PartitionFiles{{Desc: parts[0].Desc, Files: parts[0].Files[:5]}}
	if n, exact, err := scan(few).FileRows(context.Background()); err != nil || n != 50 || !exact {
		t.Fatalf("5 files: %d rows, exact %v, %v", n, exact, err)
	}
	n, exact, err := scan(parts).FileRows(context.Background())
	if err != nil || exact || n < 600 || n > 800 {
		t.Fatalf("70 files, 65 uncached: %d rows, exact %v, %v; want about 700, estimated", n, exact, err)
	}
	if n, exact, err := scan(parts).FileRows(context.Background()); err != nil || n != 700 || !exact {
		t.Fatalf("70 files, footers cached: %d rows, exact %v, %v", n, exact, err)
	}
}
