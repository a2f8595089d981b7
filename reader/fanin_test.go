package reader_test

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/reader"
)

// TestBoundedFanIn: a bucket of 150 files — full upserts, partial upserts
// of one column or another, a column added by later files only, a sum
// merge operator, CDC deletes followed by partial upserts — reads back the same with a
// spill directory (merged in steps of at most reader.MaxFanIn files) as
// merged all at once, in key order and unordered, with a key filter and
// with a projection; the spill files are gone afterwards.
func TestBoundedFanIn(t *testing.T) {
	opF := arrow.Field{Name: "op", Type: arrow.BinaryTypes.String, Nullable: true}
	lateF := arrow.Field{Name: "late", Type: arrow.BinaryTypes.String, Nullable: true}
	f := withOps(newFixture(t, []arrow.Field{idF, nameF, nF, opF, lateF}, nil, []string{"id"}, 1),
		map[string]string{"merge_op.n": "sum", catalog.CDCColumnProperty: "op"})
	// Files 0-78 write full rows, file 79 deletes keys 0, 13, …; files
	// 80-149 only partial ones — n (summed) on keys 20-59, name on keys
	// 0-29, and from file 140 on the column late — so that a key's newest
	// files often lack a column that its older ones have.
	const files = 150
	for i := range files {
		var rows [][]any
		switch {
		case i == 79:
			for k := 0; k < 60; k += 13 {
				rows = append(rows, []any{k, nil, 0, "delete"})
			}
			f.write([]string{"id", "name", "n", "op"}, rows...)
		case i < 80:
			for k := i % 4; k < 60; k += 4 {
				rows = append(rows, []any{k, "f" + itoa(i), 1, "insert"})
			}
			f.write([]string{"id", "name", "n", "op"}, rows...)
		case i >= 140:
			for k := i % 5; k < 60; k += 5 {
				rows = append(rows, []any{k, "x" + itoa(i)})
			}
			f.write([]string{"id", "late"}, rows...)
		case i%2 == 0:
			for k := 20 + i%7; k < 60; k += 7 {
				rows = append(rows, []any{k, i})
			}
			f.write([]string{"id", "n"}, rows...)
		default:
			for k := i % 3; k < 30; k += 3 {
				rows = append(rows, []any{k, "p" + itoa(i)})
			}
			f.write([]string{"id", "name"}, rows...)
		}
	}
	parts := []catalog.PartitionFiles{*f.parts[f.order[0]]}
	if n := len(parts[0].Files); n != files {
		t.Fatalf("%d files, want %d", n, files)
	}
	spill := t.TempDir()
	for _, c := range []struct {
		name      string
		unordered bool
		keys      *reader.KeyFilter
		needed    []bool
	}{
		{"key order", false, nil, nil},
		{"unordered", true, nil, nil},
		{"key filter", true, &reader.KeyFilter{Conds: []reader.Cond{{Column: "id", Lower: int64(10), Upper: int64(40), LowerInclusive: true}}}, nil},
		{"projection", true, nil, []bool{false, true, false, false, false}},
	} {
		t.Run(c.name, func(t *testing.T) {
			read := func(spillDir string) ([]string, reader.ScanCounts) {
				st := &reader.ScanStats{}
				scan := &reader.Scan{Store: objstore.Local{}, Table: f.table, Partitions: parts, BatchRows: 5,
					Unordered: c.unordered, Keys: c.keys, Needed: c.needed, Spill: spillDir, Stats: st}
				mode := 0
				if c.unordered {
					mode = 2
				}
				rows, err := scanRows(t, scan, mode)
				if err != nil {
					t.Fatal(err)
				}
				return rows, st.Counts()
			}
			want, all := read("")
			got, stepped := read(spill)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("merged in steps:\n%s\nat once:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if len(want) == 0 {
				t.Fatal("no rows")
			}
			if all.MergeFiles != files || all.MergesSpilled != 0 {
				t.Errorf("without a spill directory: merges of %d files, %d spilled", all.MergeFiles, all.MergesSpilled)
			}
			if stepped.MergeFiles > reader.MaxFanIn || stepped.MergesSpilled != 2 {
				t.Errorf("with a spill directory: merges of up to %d files, %d spilled", stepped.MergeFiles, stepped.MergesSpilled)
			}
			if left, _ := os.ReadDir(spill); len(left) != 0 {
				t.Errorf("%d spill files left behind", len(left))
			}
		})
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
