package writer

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/layout"
	"github.com/lakesoul-go/lakesoul/objstore"
)

// TestMergeRuns writes rows in several batches (keys repeating within and
// across them), merges the runs and checks that each bucket holds exactly
// the rows, in exactly the order, that one Write of all of them gives — in
// one file, or in key-ordered files under the size cap — with a row group
// bound and a bloom checksum per group, and that the runs are gone.
func TestMergeRuns(t *testing.T) {
	for _, c := range []struct {
		name     string
		maxBytes string
		cuts     [][2]int64
		allRuns  bool // the first batch is a run too (as an ingest writes it), else a data file
	}{
		{"one file per bucket", "", [][2]int64{{0, 1000}, {1000, 5500}, {5500, 5600}, {5600, 9000}}, false},
		{"every batch a run", "", [][2]int64{{0, 1000}, {1000, 5500}, {5500, 5600}, {5600, 9000}}, true},
		{"split at the size cap", "20000", [][2]int64{{0, 1000}, {1000, 5500}, {5500, 5600}, {5600, 9000}}, true},
		{"a single batch written as runs", "", [][2]int64{{0, 9000}}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			fields := []arrow.Field{{Name: "k", Type: arrow.BinaryTypes.String}, {Name: "seq", Type: arrow.PrimitiveTypes.Int64},
				{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true}}
			tbl := testTable(t, fields, []string{"k"}, 3)
			if c.maxBytes != "" {
				tbl.Properties = map[string]string{"max_file_size": c.maxBytes}
			}
			const n = 9000
			b := array.NewRecordBuilder(memory.DefaultAllocator, tbl.Schema)
			defer b.Release()
			rng := rand.New(rand.NewPCG(2, 2))
			for i := range n {
				b.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("key-%05d", rng.IntN(n/2)))
				b.Field(1).(*array.Int64Builder).Append(int64(i))
				if i%7 == 0 {
					b.Field(2).AppendNull()
				} else {
					b.Field(2).(*array.StringBuilder).Append(strings.Repeat("y", i%11))
				}
			}
			all := b.NewRecordBatch()
			defer all.Release()

			w := &Writer{Store: objstore.Local{}, Table: tbl, Intent: layout.RandomNames{}, RowGroupRows: 700}
			w.Runs = c.allRuns
			runs, firstFiles := writeBatches(t, w, all, c.cuts)
			merged, err := w.MergeRuns(context.Background(), runs)
			if err != nil {
				t.Fatal(err)
			}
			// The reference: the same rows in one Write.
			one := &Writer{Store: objstore.Local{}, Table: tbl, Intent: layout.RandomNames{}}
			want, err := one.Write(context.Background(), all)
			if err != nil {
				t.Fatal(err)
			}
			rows := func(ops []catalog.FileOp, groupRows int) map[int][]string {
				out := map[int][]string{}
				for _, op := range ops {
					bucket, _ := layout.BucketOfFile(op.Path)
					rec, groups := readFile(t, op.Path)
					if groups != (int(rec.NumRows())+groupRows-1)/groupRows {
						t.Errorf("%s: %d rows in %d row groups", op.Path, rec.NumRows(), groups)
					}
					for i := range int(rec.NumRows()) {
						out[bucket] = append(out[bucket], fmt.Sprintf("%s/%d/%v", rec.Column(0).ValueStr(i), rec.Column(1).(*array.Int64).Value(i), rec.Column(2).ValueStr(i)))
					}
					rec.Release()
				}
				return out
			}
			got, ref := rows(merged[0].Ops, 700), rows(want[0].Ops, RowGroupRows)
			for bucket := range 3 {
				if !slices.Equal(got[bucket], ref[bucket]) {
					t.Errorf("bucket %d: merged runs hold %d rows, differing from the %d of one write", bucket, len(got[bucket]), len(ref[bucket]))
				}
			}
			files := map[int]int{}
			for _, op := range merged[0].Ops {
				if codec, pageIndex := fileCodec(t, op.Path); codec != DataCodec || !pageIndex {
					t.Errorf("%s: codec %v, page index %v: not a data file", op.Path, codec, pageIndex)
				}
				bucket, _ := layout.BucketOfFile(op.Path)
				files[bucket]++
				if !slices.Equal(op.ExistCols, []string{"k", "seq", "v"}) {
					t.Errorf("%s: exist cols %v", op.Path, op.ExistCols)
				}
			}
			for bucket := range 3 {
				if c.maxBytes == "" && files[bucket] != 1 {
					t.Errorf("bucket %d: %d files after the merge, want 1", bucket, files[bucket])
				}
				if c.maxBytes != "" && files[bucket] < 2 {
					t.Errorf("bucket %d: %d files under a %s-byte cap, want several", bucket, files[bucket], c.maxBytes)
				}
			}
			for i, op := range runs[0].Ops {
				if want := c.allRuns || i >= firstFiles; layout.IsRunFile(op.Path) != want {
					t.Errorf("%s: named as a run: %v, want %v", op.Path, !want, want)
				}
				p, _ := objstore.LocalPath(op.Path)
				if _, err := os.Stat(p); !os.IsNotExist(err) {
					t.Errorf("run %s still exists (%v)", op.Path, err)
				}
			}
		})
	}
}

// writeBatches writes the rows [cut[0], cut[1]) of all with w, one Write
// per cut, in turn, and returns their commits joined (all holds one
// partition) and the number of files the first Write made. From the second
// Write on, w writes runs, as an ingest writes its later batches.
func writeBatches(tb testing.TB, w *Writer, all arrow.RecordBatch, cuts [][2]int64) (runs []catalog.PartitionCommit, firstFiles int) {
	tb.Helper()
	for _, cut := range cuts {
		part := all.NewSlice(cut[0], cut[1])
		parts, err := w.Write(context.Background(), part)
		part.Release()
		if err != nil {
			tb.Fatal(err)
		}
		if runs == nil {
			runs, firstFiles = parts, len(parts[0].Ops)
		} else {
			runs[0].Ops = append(runs[0].Ops, parts[0].Ops...)
		}
		w.Runs = true
	}
	return runs, firstFiles
}

// fileCodec is the codec of a file's first column chunk and whether it has
// an offset index.
func fileCodec(t *testing.T, uri string) (compress.Compression, bool) {
	t.Helper()
	p, err := objstore.LocalPath(uri)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := file.OpenParquetFile(p, false)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	cc, err := pf.MetaData().RowGroup(0).ColumnChunk(0)
	if err != nil {
		t.Fatal(err)
	}
	return cc.Compression(), cc.GetOffsetIndexLocation() != nil
}

// TestMergeRunsKeyKinds: the merge's heap compares key prefixes first;
// for integer keys (exact prefixes), text keys sharing prefixes of every
// length around 8 bytes (keyStrings) and a composite key (no prefixes),
// the merged runs hold exactly the rows, in order, of one Write.
func TestMergeRunsKeyKinds(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct {
		name string
		key  []arrow.Field
		app  func(b *array.RecordBuilder, i int)
	}{
		{"bigint", []arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}}, func(b *array.RecordBuilder, i int) {
			b.Field(0).(*array.Int64Builder).Append(rng.Int64N(600) - 300)
		}},
		{"integer", []arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int32}}, func(b *array.RecordBuilder, i int) {
			b.Field(0).(*array.Int32Builder).Append(rng.Int32N(600) - 300)
		}},
		{"text", []arrow.Field{{Name: "k", Type: arrow.BinaryTypes.String}}, func(b *array.RecordBuilder, i int) {
			b.Field(0).(*array.StringBuilder).Append(keyStrings[rng.IntN(len(keyStrings))] + strings.Repeat("q", rng.IntN(3)))
		}},
		{"composite", []arrow.Field{{Name: "k", Type: arrow.BinaryTypes.String}, {Name: "k2", Type: arrow.PrimitiveTypes.Int64}},
			func(b *array.RecordBuilder, i int) {
				b.Field(0).(*array.StringBuilder).Append(keyStrings[rng.IntN(len(keyStrings))])
				b.Field(1).(*array.Int64Builder).Append(rng.Int64N(3))
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fields := append(slices.Clone(c.key), arrow.Field{Name: "seq", Type: arrow.PrimitiveTypes.Int64})
			var pk []string
			for _, f := range c.key {
				pk = append(pk, f.Name)
			}
			tbl := testTable(t, fields, pk, 2)
			const n = 3000
			b := array.NewRecordBuilder(memory.DefaultAllocator, tbl.Schema)
			defer b.Release()
			for i := range n {
				c.app(b, i)
				b.Field(len(c.key)).(*array.Int64Builder).Append(int64(i))
			}
			all := b.NewRecordBatch()
			defer all.Release()
			w := &Writer{Store: objstore.Local{}, Table: tbl, Intent: layout.RandomNames{}, Runs: true, RowGroupRows: 500}
			runs, _ := writeBatches(t, w, all, [][2]int64{{0, 700}, {700, 1900}, {1900, 2000}, {2000, n}})
			merged, err := w.MergeRuns(context.Background(), runs)
			if err != nil {
				t.Fatal(err)
			}
			one := &Writer{Store: objstore.Local{}, Table: tbl, Intent: layout.RandomNames{}}
			want, err := one.Write(context.Background(), all)
			if err != nil {
				t.Fatal(err)
			}
			rows := func(ops []catalog.FileOp) map[int][]string {
				out := map[int][]string{}
				for _, op := range ops {
					bucket, _ := layout.BucketOfFile(op.Path)
					rec, _ := readFile(t, op.Path)
					for i := range int(rec.NumRows()) {
						var f []string
						for c := range int(rec.NumCols()) {
							f = append(f, rec.Column(c).ValueStr(i))
						}
						out[bucket] = append(out[bucket], strings.Join(f, "/"))
					}
					rec.Release()
				}
				return out
			}
			got, ref := rows(merged[0].Ops), rows(want[0].Ops)
			for bucket := range 2 {
				if len(ref[bucket]) == 0 || !slices.Equal(got[bucket], ref[bucket]) {
					t.Errorf("bucket %d: merged runs hold %d rows, differing from the %d of one write", bucket, len(got[bucket]), len(ref[bucket]))
				}
			}
		})
	}
}
