package reader_test

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/arrowutil"
	"github.com/lakesoul-go/lakesoul/layout"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/reader"
	"github.com/lakesoul-go/lakesoul/writer"
)

// fixture is a table on local disk with an in-memory commit history standing in
// for the catalog (the catalog's snapshot replay is tested in package catalog).
type fixture struct {
	t     *testing.T
	table *catalog.Table
	parts map[string]*catalog.PartitionFiles
	order []string
}

func newFixture(t *testing.T, fields []arrow.Field, rangeCols, pk []string, buckets int) *fixture {
	dir := t.TempDir()
	tbl := &catalog.Table{ID: "table_test", Namespace: "s", Name: "t", Path: objstore.LocalURI(filepath.Join(dir, "t")),
		Schema: arrow.NewSchema(fields, nil), RangeCols: rangeCols, PKCols: pk, HashBucketNum: buckets}
	return &fixture{t: t, table: tbl, parts: map[string]*catalog.PartitionFiles{}}
}

// write writes rows given as column name → values (nil = NULL) and appends the
// resulting files to the partitions' histories, as a commit would.
func (f *fixture) write(cols []string, rows ...[]any) []catalog.PartitionCommit {
	f.t.Helper()
	var fields []arrow.Field
	for _, c := range cols {
		fields = append(fields, f.table.Schema.Field(f.table.Schema.FieldIndices(c)[0]))
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	for _, r := range rows {
		for i, v := range r {
			appendValue(b.Field(i), v)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	w := &writer.Writer{Store: objstore.Local{}, Table: f.table, Intent: layout.RandomNames{}}
	parts, err := w.Write(context.Background(), rec)
	if err != nil {
		f.t.Fatalf("write: %v", err)
	}
	for _, p := range parts {
		pf, ok := f.parts[p.Desc]
		if !ok {
			pf = &catalog.PartitionFiles{Desc: p.Desc}
			f.parts[p.Desc] = pf
			f.order = append(f.order, p.Desc)
		}
		for _, op := range p.Ops {
			pf.Files = append(pf.Files, catalog.DataFile{Path: op.Path, Size: op.Size, ExistCols: op.ExistCols})
		}
	}
	return parts
}

func appendValue(b array.Builder, v any) {
	if v == nil {
		b.AppendNull()
		return
	}
	switch bb := b.(type) {
	case *array.Int64Builder:
		bb.Append(int64(v.(int)))
	case *array.Int32Builder:
		bb.Append(int32(v.(int)))
	case *array.StringBuilder:
		bb.Append(v.(string))
	case *array.Float64Builder:
		bb.Append(v.(float64))
	default:
		panic(fmt.Sprintf("test builder %T", b))
	}
}

// read returns all rows as sorted strings "c1=v1 c2=v2 …" with NULL for
// nulls. It reads in key order, unordered (pass-through merges) and
// unordered with selections (reader.NextSelected), which must all agree.
func (f *fixture) read() []string {
	f.t.Helper()
	ordered := f.readMode(false, false)
	for _, selected := range []bool{false, true} {
		unordered := f.readMode(true, selected)
		if strings.Join(ordered, "\n") != strings.Join(unordered, "\n") {
			f.t.Fatalf("unordered scan (selections %v) differs:\n%s\nkey order:\n%s", selected,
				strings.Join(unordered, "\n"), strings.Join(ordered, "\n"))
		}
	}
	return ordered
}

func (f *fixture) readMode(unordered, selected bool) []string {
	f.t.Helper()
	var parts []catalog.PartitionFiles
	for _, d := range f.order {
		parts = append(parts, *f.parts[d])
	}
	// Freed buffers are poisoned: a use after free reads garbage.
	mem := arrowutil.NewPoolAllocator()
	mem.Poison = true
	scan := &reader.Scan{Store: objstore.Local{}, Table: f.table, Partitions: parts, BatchRows: 3, Unordered: unordered, Mem: mem}
	units, err := scan.Units()
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, u := range units {
		it, err := scan.Open(context.Background(), u)
		if err != nil {
			f.t.Fatal(err)
		}
		for {
			var b reader.Selected
			if selected {
				b, err = reader.NextSelected(context.Background(), it)
			} else {
				b.RecordBatch, err = it.Next(context.Background())
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				f.t.Fatal(err)
			}
			for i := 0; i < b.Len(); i++ {
				r := b.Row(i)
				var cells []string
				for c := 0; c < int(b.NumCols()); c++ {
					col := b.Column(c)
					v := "NULL"
					if !col.IsNull(r) {
						v = col.ValueStr(r)
					}
					cells = append(cells, b.ColumnName(c)+"="+v)
				}
				out = append(out, strings.Join(cells, " "))
			}
			b.Release()
		}
		it.Close()
	}
	sort.Strings(out)
	return out
}

func (f *fixture) expect(want ...string) {
	f.t.Helper()
	sort.Strings(want)
	got := f.read()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		f.t.Fatalf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

var (
	idF    = arrow.Field{Name: "id", Type: arrow.PrimitiveTypes.Int64}
	nameF  = arrow.Field{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true}
	phoneF = arrow.Field{Name: "phone", Type: arrow.BinaryTypes.String, Nullable: true}
	addrF  = arrow.Field{Name: "address", Type: arrow.BinaryTypes.String, Nullable: true}
	dateF  = arrow.Field{Name: "d", Type: arrow.BinaryTypes.String, Nullable: true}
)

// Scenario 19: three upserts of one key read back as the last.
func TestUpsertLastWins(t *testing.T) {
	f := newFixture(t, []arrow.Field{idF, nameF}, nil, []string{"id"}, 4)
	f.write([]string{"id", "name"}, []any{1, "a"}, []any{2, "x"})
	f.write([]string{"id", "name"}, []any{1, "b"})
	f.write([]string{"id", "name"}, []any{1, "c"})
	f.expect("id=1 name=c", "id=2 name=x")
}

// Scenario 20: equal keys within one write resolve to the later-arriving row.
func TestDuplicateKeysInOneWrite(t *testing.T) {
	f := newFixture(t, []arrow.Field{idF, nameF}, nil, []string{"id"}, 2)
	f.write([]string{"id", "name"}, []any{5, "first"}, []any{3, "z"}, []any{5, "second"}, []any{5, "third"})
	f.expect("id=3 name=z", "id=5 name=third")
}

// Scenario 21: the same key in two range partitions is two rows, and range
// values come back from the partition description.
func TestSameKeyTwoPartitions(t *testing.T) {
	f := newFixture(t, []arrow.Field{idF, nameF, dateF}, []string{"d"}, []string{"id"}, 4)
	f.write([]string{"id", "name", "d"}, []any{1, "a", "2024-01-01"}, []any{1, "b", "2024-01-02"})
	f.expect("id=1 name=a d=2024-01-01", "id=1 name=b d=2024-01-02")
}

// Scenarios 22, 23, 24 (UseLast): partial upserts keep unwritten columns,
// an explicit NULL overwrites, a new key written partially has NULLs.
func TestPartialUpsert(t *testing.T) {
	f := newFixture(t, []arrow.Field{idF, nameF, phoneF, addrF}, nil, []string{"id"}, 4)
	f.write([]string{"id", "name", "phone", "address"}, []any{1, "Jake", "137", "a1"}, []any{2, "Ann", "138", "b1"})
	f.write([]string{"id", "address"}, []any{1, "a2"})
	f.expect("id=1 name=Jake phone=137 address=a2", "id=2 name=Ann phone=138 address=b1")
	f.write([]string{"id", "phone"}, []any{2, nil}, []any{4, "44"})
	f.expect("id=1 name=Jake phone=137 address=a2", "id=2 name=Ann phone=NULL address=b1",
		"id=4 name=NULL phone=44 address=NULL")
}

// Scenario 27: streams writing disjoint columns merge into one wide row per key.
func TestMultiStreamWideTable(t *testing.T) {
	ip := arrow.Field{Name: "ip", Type: arrow.BinaryTypes.String}
	cols := []arrow.Field{ip}
	for _, c := range []string{"sy", "us", "free", "cache", "level", "des"} {
		cols = append(cols, arrow.Field{Name: c, Type: arrow.BinaryTypes.String, Nullable: true})
	}
	f := newFixture(t, cols, nil, []string{"ip"}, 2)
	f.write([]string{"ip", "sy", "us"}, []any{"1.1.1.1", "30", "40"}, []any{"1.1.1.2", "31", "41"})
	f.write([]string{"ip", "free", "cache"}, []any{"1.1.1.1", "1g", "2g"})
	f.write([]string{"ip", "level", "des"}, []any{"1.1.1.2", "error", "killed"}, []any{"1.1.1.3", "ok", "fine"})
	f.expect(
		"ip=1.1.1.1 sy=30 us=40 free=1g cache=2g level=NULL des=NULL",
		"ip=1.1.1.2 sy=31 us=41 free=NULL cache=NULL level=error des=killed",
		"ip=1.1.1.3 sy=NULL us=NULL free=NULL cache=NULL level=ok des=fine")
}

// Append tables concatenate: duplicates stay.
func TestAppendTableKeepsDuplicates(t *testing.T) {
	f := newFixture(t, []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, nameF}, nil, nil, -1)
	f.write([]string{"id", "name"}, []any{1, "a"})
	f.write([]string{"id", "name"}, []any{1, "a"})
	f.write([]string{"id"}, []any{2})
	f.expect("id=1 name=a", "id=1 name=a", "id=2 name=NULL")
}

// Scenario 41: files carry the bucket of LakeSoul's hash (int 1 → bucket 3 of 4).
// String key "1" → bucket 0.
func TestBucketFileNames(t *testing.T) {
	f := newFixture(t, []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int32}, nameF}, nil, []string{"id"}, 4)
	parts := f.write([]string{"id", "name"}, []any{1, "a"})
	if p := parts[0].Ops[0].Path; !strings.HasSuffix(p, "_0003.parquet") || !strings.Contains(p, "/part-") {
		t.Fatalf("file %s, want part-<id>_0003.parquet", p)
	}
	g := newFixture(t, []arrow.Field{{Name: "k", Type: arrow.BinaryTypes.String}, nameF}, nil, []string{"k"}, 4)
	parts = g.write([]string{"k", "name"}, []any{"1", "a"})
	if p := parts[0].Ops[0].Path; !strings.HasSuffix(p, "_0000.parquet") {
		t.Fatalf("file %s, want part-<id>_0000.parquet", p)
	}
}

// Many keys across many files and batches merge to one row per key.
func TestMergeManyFiles(t *testing.T) {
	f := newFixture(t, []arrow.Field{idF, {Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil, []string{"id"}, 2)
	for round := 0; round < 5; round++ {
		var rows [][]any
		for k := round; k < 40; k += 2 {
			rows = append(rows, []any{k, round})
		}
		f.write([]string{"id", "n"}, rows...)
	}
	got := f.read()
	if len(got) != 40 {
		t.Fatalf("%d rows, want 40", len(got))
	}
	for _, r := range got {
		var id, n int
		fmt.Sscanf(r, "id=%d n=%d", &id, &n)
		// Round r wrote keys r, r+2, …: the last round to write id wins.
		want := id
		if id >= 4 {
			want = 3 + (id+1)%2
		}
		if n != want {
			t.Fatalf("row %q: n=%d want %d", r, n, want)
		}
	}
}

// One file with runs of equal keys that cross batch boundaries (BatchRows is
// 3 in the fixture): the single-file path keeps the last row of each run.
func TestSingleFileRunsAcrossBatches(t *testing.T) {
	f := newFixture(t, []arrow.Field{idF, nameF}, nil, []string{"id"}, 1)
	var rows [][]any
	n := 0
	for _, k := range []int{1, 1, 1, 1, 2, 2, 3, 3, 3, 3, 3, 4, 5, 5} {
		n++
		rows = append(rows, []any{k, fmt.Sprintf("v%d", n)})
	}
	f.write([]string{"id", "name"}, rows...)
	f.expect("id=1 name=v4", "id=2 name=v6", "id=3 name=v11", "id=4 name=v12", "id=5 name=v14")
	// A table with a merge operator takes the general path and sums instead.
	g := withOps(newFixture(t, []arrow.Field{idF, nF}, nil, []string{"id"}, 1), map[string]string{"merge_op.n": "SumAll"})
	g.write([]string{"id", "n"}, []any{1, 1}, []any{1, 2}, []any{1, 3}, []any{1, 4}, []any{2, 5})
	g.expect("id=1 n=10", "id=2 n=5")
}

// max_file_size splits a bucket into several files of one commit; a run of
// equal keys across the split still reads as its last row.
func TestMaxFileSizeSplits(t *testing.T) {
	f := newFixture(t, []arrow.Field{idF, nameF}, nil, []string{"id"}, 1)
	f.table.Properties = map[string]string{"max_file_size": "40"}
	var rows [][]any
	for i := 0; i < 20; i++ {
		rows = append(rows, []any{i / 3, fmt.Sprintf("v%d", i)})
	}
	parts := f.write([]string{"id", "name"}, rows...)
	if len(parts[0].Ops) < 3 {
		t.Fatalf("%d files, want the bucket split by max_file_size", len(parts[0].Ops))
	}
	f.expect("id=0 name=v2", "id=1 name=v5", "id=2 name=v8", "id=3 name=v11", "id=4 name=v14", "id=5 name=v17", "id=6 name=v19")
}

// Rows that win outright (passed through from their files) and rows merged
// from partial upserts interleave in one bucket across many small batches,
// so unordered merges hold batches for merged rows, flush them early and
// release them in between; both read modes must give the merged table.
func TestUnorderedMixedMerge(t *testing.T) {
	f := newFixture(t, []arrow.Field{idF, nameF, phoneF, addrF}, nil, []string{"id"}, 1)
	want := map[int][3]string{}
	var base [][]any
	for k := range 200 {
		base = append(base, []any{k, fmt.Sprintf("n%d", k), fmt.Sprintf("p%d", k), fmt.Sprintf("a%d", k)})
		want[k] = [3]string{fmt.Sprintf("n%d", k), fmt.Sprintf("p%d", k), fmt.Sprintf("a%d", k)}
	}
	f.write([]string{"id", "name", "phone", "address"}, base...)
	var full, partial [][]any
	for k := 0; k < 260; k += 3 {
		if k%7 == 0 {
			partial = append(partial, []any{k, fmt.Sprintf("q%d", k)})
			w := want[k]
			w[1] = fmt.Sprintf("q%d", k)
			want[k] = w
			continue
		}
		full = append(full, []any{k, fmt.Sprintf("m%d", k), nil, fmt.Sprintf("b%d", k)})
		want[k] = [3]string{fmt.Sprintf("m%d", k), "NULL", fmt.Sprintf("b%d", k)}
	}
	f.write([]string{"id", "name", "phone", "address"}, full...)
	f.write([]string{"id", "phone"}, partial...)
	var rows []string
	for k, w := range want {
		if w[0] == "" {
			w[0], w[2] = "NULL", "NULL" // a key only the partial upsert wrote
		}
		rows = append(rows, fmt.Sprintf("id=%d name=%s phone=%s address=%s", k, w[0], w[1], w[2]))
	}
	f.expect(rows...)
}
