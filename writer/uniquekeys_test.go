package writer

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/layout"
	"github.com/lakesoul-go/lakesoul/objstore"
)

// TestUniqueKeysMarker: for every key kind the writer sorts by (bigint,
// int, text, composite) and both ways data files are written (Write, and
// runs merged by MergeRuns), a file's footer says its keys are unique
// exactly when no key repeats in the file — read back from the file
// itself. Duplicates are placed at random, so some fall on row-group
// boundaries (row groups of 7 rows), and both answers occur.
func TestUniqueKeysMarker(t *testing.T) {
	kinds := []struct {
		name   string
		fields []arrow.Field
		pk     []string
	}{
		{"bigint", []arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}}, []string{"k"}},
		{"int", []arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int32}}, []string{"k"}},
		{"text", []arrow.Field{{Name: "k", Type: arrow.BinaryTypes.String}}, []string{"k"}},
		{"composite", []arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}, {Name: "k2", Type: arrow.BinaryTypes.String}}, []string{"k", "k2"}},
	}
	for _, kind := range kinds {
		for _, runs := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/runs=%v", kind.name, runs), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(len(kind.name)), 3))
				fields := append(kind.fields, arrow.Field{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true})
				tbl := testTable(t, fields, kind.pk, 2)
				seen := map[bool]int{}
				for range 40 {
					rec := uniqueKeysBatch(rng, arrow.NewSchema(fields, nil), len(kind.pk))
					w := &Writer{Store: objstore.Local{}, Table: tbl, Intent: layout.RandomNames{}, RowGroupRows: 7}
					var parts []catalog.PartitionCommit
					var err error
					if runs {
						// Two runs of halves of the batch merged into data files.
						cuts := [][2]int64{{0, rec.NumRows()}}
						if half := rec.NumRows() / 2; half > 0 {
							cuts = [][2]int64{{0, half}, {half, rec.NumRows()}}
						}
						w.Runs = true
						parts, _ = writeBatches(t, w, rec, cuts)
						parts, err = w.MergeRuns(context.Background(), parts)
					} else {
						parts, err = w.Write(context.Background(), rec)
					}
					rec.Release()
					if err != nil {
						t.Fatal(err)
					}
					for _, p := range parts {
						for _, op := range p.Ops {
							marked, repeats := uniqueKeysOfFile(t, op.Path, len(kind.pk))
							if marked == repeats {
								t.Fatalf("%s: marked unique %v, a key repeats %v", op.Path, marked, repeats)
							}
							seen[marked]++
						}
					}
				}
				if seen[true] == 0 || seen[false] == 0 {
					t.Fatalf("files marked unique / not: %v; the test wants both", seen)
				}
			})
		}
	}
}

// uniqueKeysBatch is a batch of 1–40 rows whose keys repeat with some
// probability (the first nk columns are the key).
func uniqueKeysBatch(rng *rand.Rand, sch *arrow.Schema, nk int) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	n := 1 + rng.IntN(40)
	domain := 1 << 20
	if rng.IntN(2) == 0 {
		domain = 3 * n // repeats likely
	}
	for range n {
		k := rng.IntN(domain)
		for c := range nk {
			switch fb := b.Field(c).(type) {
			case *array.Int64Builder:
				fb.Append(int64(k) - int64(domain/2))
			case *array.Int32Builder:
				fb.Append(int32(k))
			case *array.StringBuilder:
				fb.Append(fmt.Sprintf("key-%d", k%5))
			}
		}
		b.Field(nk).(*array.Int64Builder).Append(int64(k))
	}
	return b.NewRecordBatch()
}

// uniqueKeysOfFile reports whether the file's footer marks its keys unique
// and whether a key (its first nk columns) repeats in it.
func uniqueKeysOfFile(t *testing.T, uri string, nk int) (marked, repeats bool) {
	t.Helper()
	p, err := objstore.LocalPath(uri)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := file.OpenParquetFile(p, false)
	if err != nil {
		t.Fatal(err)
	}
	marked = pf.MetaData().KeyValueMetadata().FindValue(layout.UniqueKeysKey) != nil
	pf.Close()
	rec, _ := readFile(t, uri)
	defer rec.Release()
	keys := map[string]bool{}
	for r := range int(rec.NumRows()) {
		var parts []string
		for c := range nk {
			parts = append(parts, rec.Column(c).ValueStr(r))
		}
		k := strings.Join(parts, "\x00")
		if keys[k] {
			repeats = true
		}
		keys[k] = true
	}
	return marked, repeats
}
