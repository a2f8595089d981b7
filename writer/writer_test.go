package writer

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/klauspost/compress/zstd"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/layout"
	"github.com/lakesoul-go/lakesoul/objstore"
)

func testTable(t testing.TB, fields []arrow.Field, pk []string, buckets int) *catalog.Table {
	return &catalog.Table{ID: "table_test", Namespace: "s", Name: "t",
		Path:   objstore.LocalURI(filepath.Join(t.TempDir(), "t")),
		Schema: arrow.NewSchema(fields, nil), PKCols: pk, HashBucketNum: buckets}
}

// keyStrings are string keys that stress the 8-byte prefix: shared
// prefixes of every length around 8, empty strings, bytes above 0x7f,
// and NUL bytes (which the zero padding must not confuse with "shorter").
var keyStrings = []string{"", "a", "a\x00", "ab", "abcdefg", "abcdefgh", "abcdefgh\x00", "abcdefghi",
	"abcdefghij", "abcdefgi", "abcdefh", "\xff", "\xff\xff\xff\xff\xff\xff\xff\xff", "\xff\xff\xff\xff\xff\xff\xff\xff\x01",
	"zzzzzzzzzzzzzzzz1", "zzzzzzzzzzzzzzzz0", "é", "e"}

// TestSortByPK checks the typed fast paths and the generic comparer
// against a stable sort by the key: order by key, equal keys in arrival
// order.
func TestSortByPK(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const n = 2000
	cases := []struct {
		name   string
		fields []arrow.Field
		pk     []string
		fill   func(b *array.RecordBuilder, i int)
		cmp    func(rec arrow.RecordBatch, x, y int) int
	}{
		{"text", []arrow.Field{{Name: "k", Type: arrow.BinaryTypes.String}}, []string{"k"},
			func(b *array.RecordBuilder, i int) {
				s := keyStrings[rng.IntN(len(keyStrings))]
				if rng.IntN(3) == 0 {
					s = fmt.Sprintf("%s%d", s, rng.IntN(50))
				}
				b.Field(0).(*array.StringBuilder).Append(s)
			},
			func(rec arrow.RecordBatch, x, y int) int {
				a := rec.Column(0).(*array.String)
				return strings.Compare(a.Value(x), a.Value(y))
			}},
		{"bigint", []arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}}, []string{"k"},
			func(b *array.RecordBuilder, i int) {
				vals := []int64{math.MinInt64, math.MaxInt64, -1, 0, 1, math.MinInt64 + 1}
				v := vals[rng.IntN(len(vals))]
				if rng.IntN(2) == 0 {
					v = rng.Int64N(200) - 100
				}
				b.Field(0).(*array.Int64Builder).Append(v)
			},
			func(rec arrow.RecordBatch, x, y int) int {
				a := rec.Column(0).(*array.Int64)
				return cmp.Compare(a.Value(x), a.Value(y))
			}},
		{"int", []arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int32}}, []string{"k"},
			func(b *array.RecordBuilder, i int) {
				vals := []int32{math.MinInt32, math.MaxInt32, -1, 0, 1}
				v := vals[rng.IntN(len(vals))]
				if rng.IntN(2) == 0 {
					v = rng.Int32N(200) - 100
				}
				b.Field(0).(*array.Int32Builder).Append(v)
			},
			func(rec arrow.RecordBatch, x, y int) int {
				a := rec.Column(0).(*array.Int32)
				return cmp.Compare(a.Value(x), a.Value(y))
			}},
		{"composite", []arrow.Field{{Name: "a", Type: arrow.BinaryTypes.String}, {Name: "b", Type: arrow.PrimitiveTypes.Int64}},
			[]string{"a", "b"},
			func(b *array.RecordBuilder, i int) {
				b.Field(0).(*array.StringBuilder).Append(keyStrings[rng.IntN(4)])
				b.Field(1).(*array.Int64Builder).Append(rng.Int64N(10) - 5)
			},
			func(rec arrow.RecordBatch, x, y int) int {
				a, b := rec.Column(0).(*array.String), rec.Column(1).(*array.Int64)
				return cmp.Or(strings.Compare(a.Value(x), a.Value(y)), cmp.Compare(b.Value(x), b.Value(y)))
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := &Writer{Table: testTable(t, c.fields, c.pk, 1), Intent: layout.RandomNames{}}
			b := array.NewRecordBuilder(memory.DefaultAllocator, w.Table.Schema)
			defer b.Release()
			for i := range n {
				c.fill(b, i)
			}
			rec := b.NewRecordBatch()
			defer rec.Release()
			// A subset of the rows in arrival order, as a bucket's rows are.
			var idx []int32
			for r := range n {
				if rng.IntN(4) != 0 {
					idx = append(idx, int32(r))
				}
			}
			want := slices.Clone(idx)
			slices.SortStableFunc(want, func(x, y int32) int { return c.cmp(rec, int(x), int(y)) })
			if err := w.sortByPK(rec, idx); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(idx, want) {
				for i := range idx {
					if idx[i] != want[i] {
						t.Fatalf("position %d: row %d, want row %d", i, idx[i], want[i])
					}
				}
			}
		})
	}
}

// TestWriteSortedFiles writes rows with repeated keys into buckets and
// reads the files back: every file is in key order, each key's rows in
// arrival order, and together they hold every row once; files of more
// than one row group too.
func TestWriteSortedFiles(t *testing.T) {
	t.Run("3 buckets", func(t *testing.T) { testWriteSortedFiles(t, 10000, 3) })
	t.Run("3 row groups", func(t *testing.T) { testWriteSortedFiles(t, 2*RowGroupRows+77, 1) })
}

func testWriteSortedFiles(t *testing.T, n, buckets int) {
	fields := []arrow.Field{{Name: "k", Type: arrow.BinaryTypes.String}, {Name: "seq", Type: arrow.PrimitiveTypes.Int64},
		{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true}}
	tbl := testTable(t, fields, []string{"k"}, buckets)
	b := array.NewRecordBuilder(memory.DefaultAllocator, tbl.Schema)
	defer b.Release()
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range n {
		b.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("key-%06d", rng.IntN(n/3)))
		b.Field(1).(*array.Int64Builder).Append(int64(i))
		if i%5 == 0 {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.StringBuilder).Append(strings.Repeat("x", i%13))
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	w := &Writer{Store: objstore.Local{}, Table: tbl, Intent: layout.RandomNames{}}
	parts, err := w.Write(context.Background(), rec)
	if err != nil {
		t.Fatal(err)
	}
	seen := make([]bool, n)
	files := 0
	for _, p := range parts {
		for _, op := range p.Ops {
			files++
			got, groups := readFile(t, op.Path)
			if want := (int(got.NumRows()) + RowGroupRows - 1) / RowGroupRows; groups != want {
				t.Errorf("%s: %d rows in %d row groups, want %d", op.Path, got.NumRows(), groups, want)
			}
			keys, seqs, vals := got.Column(0).(*array.String), got.Column(1).(*array.Int64), got.Column(2).(*array.String)
			for i := 0; i < int(got.NumRows()); i++ {
				s := seqs.Value(i)
				if seen[s] {
					t.Fatalf("row %d written twice", s)
				}
				seen[s] = true
				if keys.Value(i) != rec.Column(0).(*array.String).Value(int(s)) ||
					vals.IsNull(i) != (s%5 == 0) || (!vals.IsNull(i) && len(vals.Value(i)) != int(s%13)) {
					t.Fatalf("%s row %d: values of row %d do not match", op.Path, i, s)
				}
				if i > 0 {
					if c := cmp.Or(strings.Compare(keys.Value(i-1), keys.Value(i)), cmp.Compare(seqs.Value(i-1), s)); c >= 0 {
						t.Fatalf("%s row %d: (%s, %d) after (%s, %d)", op.Path, i, keys.Value(i), s, keys.Value(i-1), seqs.Value(i-1))
					}
				}
			}
			got.Release()
		}
	}
	if files != buckets {
		t.Errorf("%d files, want one per bucket (%d)", files, buckets)
	}
	for s, ok := range seen {
		if !ok {
			t.Fatalf("row %d missing", s)
		}
	}
}

// readFile reads a whole Parquet file written by the writer; it also
// returns the file's number of row groups.
func readFile(t testing.TB, uri string) (arrow.RecordBatch, int) {
	t.Helper()
	path, err := objstore.LocalPath(uri)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pf, err := file.NewParquetReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	tr := array.NewTableReader(tbl, tbl.NumRows())
	defer tr.Release()
	if !tr.Next() {
		t.Fatalf("%s: no rows", uri)
	}
	rec := tr.RecordBatch()
	rec.Retain()
	return rec, pf.NumRowGroups()
}

// TestWritePartitionedBuckets writes a range-partitioned PK table: each
// partition's commit holds one file per bucket present, every row of a
// file belongs to the commit's partition and hashes to the file's bucket,
// files are in key order, and no row is lost.
func TestWritePartitionedBuckets(t *testing.T) {
	fields := []arrow.Field{{Name: "d", Type: arrow.BinaryTypes.String}, {Name: "k", Type: arrow.BinaryTypes.String},
		{Name: "seq", Type: arrow.PrimitiveTypes.Int64}}
	tbl := testTable(t, fields, []string{"k"}, 3)
	tbl.RangeCols = []string{"d"}
	b := array.NewRecordBuilder(memory.DefaultAllocator, tbl.Schema)
	defer b.Release()
	const n = 3000
	days := []string{"2026-01-02", "2026-01-01", "2026-01-03"}
	for i := range n {
		b.Field(0).(*array.StringBuilder).Append(days[i%3])
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("k%04d", (i*7)%1000))
		b.Field(2).(*array.Int64Builder).Append(int64(i))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	parts, err := (&Writer{Store: objstore.Local{}, Table: tbl, Intent: layout.RandomNames{}}).Write(context.Background(), rec)
	if err != nil {
		t.Fatal(err)
	}
	var gotDescs []string
	seen := 0
	for _, p := range parts {
		gotDescs = append(gotDescs, p.Desc)
		if len(p.Ops) != 3 {
			t.Errorf("partition %s: %d files, want 3", p.Desc, len(p.Ops))
		}
		for _, op := range p.Ops {
			got, _ := readFile(t, op.Path)
			fileBucket, ok := layout.BucketOfFile(op.Path)
			if !ok {
				t.Fatalf("%s: no bucket in the file name", op.Path)
			}
			keys, seqs := got.Column(0).(*array.String), got.Column(1).(*array.Int64)
			hashes := make([]uint32, got.NumRows())
			if err := layout.HashRows([]arrow.Array{keys}, hashes); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < int(got.NumRows()); i++ {
				s := seqs.Value(i)
				seen++
				if want := "d=" + days[s%3]; p.Desc != want {
					t.Fatalf("%s: row %d of partition %s in %s", op.Path, s, want, p.Desc)
				}
				if want := layout.BucketOf(hashes[i], 3); fileBucket != want {
					t.Fatalf("%s: row %d of bucket %d in bucket %d's file", op.Path, s, want, fileBucket)
				}
				if i > 0 && cmp.Or(strings.Compare(keys.Value(i-1), keys.Value(i)), cmp.Compare(seqs.Value(i-1), s)) >= 0 {
					t.Fatalf("%s row %d: out of order", op.Path, i)
				}
			}
			got.Release()
		}
	}
	if want := []string{"d=2026-01-02", "d=2026-01-01", "d=2026-01-03"}; !slices.Equal(gotDescs, want) {
		t.Errorf("partitions %v, want %v (first appearance)", gotDescs, want)
	}
	if seen != n {
		t.Errorf("%d rows in files, want %d", seen, n)
	}
}

// Pages are zstd frames without content checksums (writer/zstd.go), and they
// decode back through the registered codec; frames that carry a checksum
// (other writers' files) still decode and are verified.
func TestZstdPagesWithoutChecksum(t *testing.T) {
	codec, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	src := bytes.Repeat([]byte("lakesoul page data "), 1000)
	frame := codec.EncodeLevel(nil, src, 1)
	// Frame header descriptor: bit 2 is the content checksum flag.
	if len(frame) < 5 || frame[4]&0x04 != 0 {
		t.Fatalf("frame header % x: content checksum flag set", frame[:min(5, len(frame))])
	}
	if got := codec.Decode(nil, frame); !bytes.Equal(got, src) {
		t.Fatal("round trip differs")
	}
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
	withSum := enc.EncodeAll(src, nil)
	if got := codec.Decode(nil, withSum); !bytes.Equal(got, src) {
		t.Fatal("frame with checksum: round trip differs")
	}
	withSum[len(withSum)-1] ^= 0xff // corrupt the checksum
	if _, err := codec.(compress.ErrorCodec).DecodeWithError(nil, withSum); err == nil {
		t.Fatal("corrupt checksum accepted")
	}
}

// TestVectorColumnWithNulls writes a vector column (fixed-size list of
// float32) whose NULLs lie between valid entries — what UPDATE … SET emb =
// NULL and a later copy-on-write rewrite produce — and reads back every
// value and NULL in place.
func TestVectorColumnWithNulls(t *testing.T) {
	vec := arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float32)
	fields := []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "emb", Type: vec, Nullable: true}}
	tbl := testTable(t, fields, []string{"id"}, 1)
	b := array.NewRecordBuilder(memory.DefaultAllocator, tbl.Schema)
	defer b.Release()
	const n = 3000
	null := func(i int) bool { return i%3 == 1 || i%7 == 0 || (i >= 1000 && i < 1100) }
	lb := b.Field(1).(*array.FixedSizeListBuilder)
	vb := lb.ValueBuilder().(*array.Float32Builder)
	for i := range n {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if null(i) {
			lb.AppendNull() // appends the entry's 3 child slots too
			continue
		}
		lb.Append(true)
		vb.AppendValues([]float32{float32(i), float32(-i), 0.5}, nil)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	w := &Writer{Store: objstore.Local{}, Table: tbl, Intent: layout.RandomNames{}, RowGroupRows: 700}
	parts, err := w.Write(context.Background(), rec)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := readFile(t, parts[0].Ops[0].Path)
	defer got.Release()
	if got.NumRows() != n {
		t.Fatalf("%d rows, want %d", got.NumRows(), n)
	}
	ids, embs := got.Column(0).(*array.Int64), got.Column(1).(*array.FixedSizeList)
	vals := embs.ListValues().(*array.Float32)
	for r := range n {
		i := int(ids.Value(r))
		if embs.IsNull(r) != null(i) {
			t.Fatalf("row %d (id %d): NULL %v, want %v", r, i, embs.IsNull(r), null(i))
		}
		if !null(i) {
			if start := (embs.Offset() + r) * 3; vals.Value(start) != float32(i) || vals.Value(start+1) != float32(-i) || vals.Value(start+2) != 0.5 {
				t.Fatalf("row %d (id %d): %v", r, i, vals.Float32Values()[start:start+3])
			}
		}
	}
}
