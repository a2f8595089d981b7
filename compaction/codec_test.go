package compaction_test

import (
	"context"
	"fmt"
	"io"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/compaction"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/reader"
	"github.com/lakesoul-go/lakesoul/writer"
)

// readableCodecs are every Parquet codec this build decompresses: the
// writers of earlier versions of this server, and LakeSoul's own, may have
// written any of them.
func readableCodecs() []compress.Compression {
	var out []compress.Compression
	for c := compress.Compression(0); c < 16; c++ {
		if _, err := compress.GetCodec(c); err == nil {
			out = append(out, c)
		}
	}
	return out
}

// fileCodecs returns the codecs of every column chunk of a data file.
func fileCodecs(t *testing.T, uri string) map[compress.Compression]bool {
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
	out := map[compress.Compression]bool{}
	for g := range pf.NumRowGroups() {
		rg := pf.MetaData().RowGroup(g)
		for c := range rg.NumColumns() {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				t.Fatal(err)
			}
			out[cc.Compression()] = true
		}
	}
	return out
}

// unorderedRows reads every row of tbl as the engine's direct scans and
// append tables do (Unordered: units in any order, the PLAIN page path).
func unorderedRows(t *testing.T, e *env, tbl *catalog.Table) []string {
	t.Helper()
	parts, err := e.cat.LiveFiles(context.Background(), tbl.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	scan := &reader.Scan{Store: e.store, Table: tbl, Partitions: parts, Unordered: true}
	units, err := scan.ParallelUnits(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, u := range units {
		it, err := scan.Open(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		for {
			b, err := it.Next(context.Background())
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, rowStrings(b)...)
			b.Release()
		}
		it.Close()
	}
	sort.Strings(out)
	return out
}

// TestMixedCodecsReadAndCompact: a table whose files were written with
// every codec this build reads (earlier layouts of this server were zstd;
// other LakeSoul writers choose their own), one upsert per codec over
// overlapping keys, reads exactly what the same upserts written in the
// default layout read — merged (primary key) and unordered (append), by
// the merge path and the PLAIN page path — and a compaction rewrites every
// file into writer.DataCodec.
func TestMixedCodecsReadAndCompact(t *testing.T) {
	e := newEnv(t)
	codecs := readableCodecs()
	if len(codecs) < 4 {
		t.Fatalf("only %v readable", codecs)
	}
	def := writer.DataCodec
	t.Cleanup(func() { writer.DataCodec = def })
	for _, keyed := range []bool{true, false} {
		name, buckets, op := "pk", 2, catalog.MergeCommit
		if !keyed {
			name, buckets, op = "ap", 0, catalog.AppendCommit
		}
		mixed := e.table(name+"_mixed", cols, true, buckets, nil)
		ref := e.table(name+"_ref", cols, true, buckets, nil)
		for i, c := range codecs {
			var rows [][]any
			for k := range 300 {
				var v any = fmt.Sprintf("%v-%d-%d", c, i, k)
				if k%7 == 0 {
					v = nil
				}
				rows = append(rows, []any{(k*(i+3))%211 + 1, v, k * i, []string{"a", "b"}[k%2]})
			}
			writer.DataCodec = c
			e.write(mixed, op, []string{"id", "v", "n", "d"}, rows...)
			writer.DataCodec = def
			e.write(ref, op, []string{"id", "v", "n", "d"}, rows...)
		}
		seen := map[compress.Compression]bool{}
		for _, d := range []string{"d=a", "d=b"} {
			for _, f := range e.files(mixed, d).Files {
				for c := range fileCodecs(t, f.Path) {
					seen[c] = true
				}
			}
		}
		if len(seen) != len(codecs) {
			t.Fatalf("%s: the files hold codecs %v, want each of %v", name, seen, codecs)
		}
		want := e.read(ref)
		expectSame(t, name+": merged read of mixed codecs", e.read(mixed), want)
		expectSame(t, name+": unordered read of mixed codecs", unorderedRows(t, e, mixed), unorderedRows(t, e, ref))
		for _, d := range []string{"d=a", "d=b"} {
			if res := compactOne(t, e, mixed, d, compaction.Options{}); res.Status != compaction.Compacted {
				t.Fatalf("%s %s: %+v", name, d, res)
			}
			for _, f := range e.files(mixed, d).Files {
				if got := fileCodecs(t, f.Path); len(got) != 1 || !got[def] {
					t.Errorf("%s: compacted file %s has codecs %v, want only %v", name, f.Path, got, def)
				}
			}
		}
		expectSame(t, name+": read after compaction", e.read(mixed), want)
	}
}
