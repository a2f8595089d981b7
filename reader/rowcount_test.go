package reader_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/reader"
	"github.com/lakesoul-go/lakesoul/sqlerr"
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

// Row-group statistics whose minimum exceeds their maximum fail a filtered
// read with 58030 naming the file, never rows pruned by them.
func TestDamagedStatisticsAreErrors(t *testing.T) {
	f := newFixture(t, []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil, nil, -1)
	var rows [][]any
	for i := range 500 {
		rows = append(rows, []any{i, 1000 + i})
	}
	f.write([]string{"id", "v"}, rows...)
	file := f.parts[f.order[0]].Files[0]
	path := mustLocal(t, file.Path)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The footer holds v's maximum, 1499, as 8 little-endian bytes (as
	// max_value and max): make it 999, below the minimum.
	footerLen := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	footer := data[len(data)-8-footerLen : len(data)-8]
	hi, lo := binary.LittleEndian.AppendUint64(nil, 1499), binary.LittleEndian.AppendUint64(nil, 999)
	if bytes.Count(footer, hi) == 0 {
		t.Fatal("the footer holds no maximum 1499")
	}
	copy(footer, bytes.ReplaceAll(footer, hi, lo))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	scan := &reader.Scan{Store: objstore.Local{}, Table: f.table, Partitions: []catalog.PartitionFiles{*f.parts[f.order[0]]},
		Rows: &reader.RowFilter{Conds: []reader.Cond{{Column: "v", Lower: int64(1200)}}}, Meta: reader.NewMetaCache(1 << 20)}
	got, err := scanRows(t, scan, 1)
	if sqlerr.Code(err) != sqlerr.IOError || !strings.Contains(err.Error(), filepath.Base(path)) {
		t.Fatalf("read with damaged statistics: %v (%v), rows %d", err, sqlerr.Code(err), len(got))
	}
}
