package reader

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/arrowutil"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// plainTestSchema holds every type plainReader decodes, nullable and not.
var plainTestSchema = arrow.NewSchema([]arrow.Field{
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "b", Type: arrow.BinaryTypes.Binary, Nullable: true},
	{Name: "i64", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
	{Name: "bo", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "tus", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
	{Name: "tms", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
	{Name: "tns", Type: &arrow.TimestampType{Unit: arrow.Nanosecond}, Nullable: true},
	{Name: "req", Type: arrow.BinaryTypes.String, Nullable: false},
	{Name: "allnull", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "reqi", Type: arrow.PrimitiveTypes.Int64, Nullable: false},
	// DECIMALs of precision ≤ 18 are stored as INT32 / INT64.
	{Name: "dec9", Type: &arrow.Decimal128Type{Precision: 9, Scale: 2}, Nullable: true},
	{Name: "dec18", Type: &arrow.Decimal128Type{Precision: 18, Scale: 4}, Nullable: true},
}, nil)

// plainTestRecord builds n rows of plainTestSchema; about nullEvery-th
// value of a nullable column is null (never, for nullEvery 0), in runs.
func plainTestRecord(n, nullEvery int, seed uint64) arrow.RecordBatch {
	rng := rand.New(rand.NewPCG(seed, 7))
	b := array.NewRecordBuilder(memory.DefaultAllocator, plainTestSchema)
	defer b.Release()
	null := func() bool { return nullEvery > 0 && rng.IntN(nullEvery) == 0 }
	for i := range n {
		for c, f := range plainTestSchema.Fields() {
			fb := b.Field(c)
			if f.Name == "allnull" || (f.Nullable && null()) {
				fb.AppendNull()
				continue
			}
			v := rng.Int64()
			switch fb := fb.(type) {
			case *array.StringBuilder:
				fb.Append(strings.Repeat("x", int(v%40)) + fmt.Sprint(i))
			case *array.BinaryBuilder:
				fb.Append([]byte(strings.Repeat("\x00y", int(v%5))))
			case *array.Int64Builder:
				fb.Append(v)
			case *array.Int32Builder:
				fb.Append(int32(v))
			case *array.Date32Builder:
				fb.Append(arrow.Date32(int32(v % 100000)))
			case *array.Float64Builder:
				fb.Append(float64(v) / 3)
			case *array.Float32Builder:
				fb.Append(float32(v) / 7)
			case *array.BooleanBuilder:
				fb.Append(v%3 == 0)
			case *array.TimestampBuilder:
				fb.Append(arrow.Timestamp(v % (1 << 50)))
			case *array.Decimal128Builder:
				// Negative and positive, up to the precision's limit.
				limit := int64(1_000_000_000)
				if f.Type.(*arrow.Decimal128Type).Precision == 18 {
					limit = 1_000_000_000_000_000_000
				}
				fb.Append(decimal128.FromI64(v%(2*limit-1) - (limit - 1)))
			}
		}
	}
	return b.NewRecordBatch()
}

// writePlainTestFile writes rec as the writer does (PLAIN, zstd, page
// index, DECIMAL as integers), with small pages and row groups so that batches cross both.
func writePlainTestFile(t testing.TB, rec arrow.RecordBatch, extra ...parquet.WriterProperty) []byte {
	t.Helper()
	var buf bytes.Buffer
	opts := append([]parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithDictionaryDefault(false), parquet.WithMaxRowGroupLength(1000), parquet.WithDataPageSize(512),
		parquet.WithBatchSize(64), parquet.WithPageIndexEnabled(true), parquet.WithStoreDecimalAsInteger(true)}, extra...)
	w, err := pqarrow.NewFileWriter(rec.Schema(), &buf, parquet.NewWriterProperties(opts...),
		pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readAllBatches reads every batch of rr as one record per column.
func readAllBatches(t *testing.T, rr batchReader) []arrow.Array {
	t.Helper()
	var chunks [][]arrow.Array
	for rr.Next() {
		rec := rr.RecordBatch()
		for c, col := range rec.Columns() {
			if len(chunks) <= c {
				chunks = append(chunks, nil)
			}
			col.Retain()
			chunks[c] = append(chunks[c], col)
		}
	}
	if err := rr.Err(); err != nil {
		t.Fatal(err)
	}
	out := make([]arrow.Array, len(chunks))
	for c, ch := range chunks {
		a, err := array.Concatenate(ch, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		releaseAll(ch)
		out[c] = a
	}
	return out
}

// TestPlainReaderMatchesPqarrow: for every type, with and without nulls,
// V1 and V2 pages, all or some row groups and any batch size, plainReader
// returns exactly what pqarrow's record reader returns.
func TestPlainReaderMatchesPqarrow(t *testing.T) {
	mem := arrowutil.NewPoolAllocator()
	mem.Poison = true
	for _, nullEvery := range []int{0, 10, 2} {
		rec := plainTestRecord(2500, nullEvery, uint64(nullEvery))
		defer rec.Release()
		for _, v2 := range []bool{false, true} {
			var extra []parquet.WriterProperty
			if v2 {
				extra = append(extra, parquet.WithDataPageVersion(parquet.DataPageV2))
			}
			data := writePlainTestFile(t, rec, extra...)
			for _, rowGroups := range [][]int{nil, {1, 2}} {
				for _, batch := range []int64{1, 7, 333, 4096} {
					name := fmt.Sprintf("nulls=%d/v2=%v/rg=%v/batch=%d", nullEvery, v2, rowGroups, batch)
					t.Run(name, func(t *testing.T) { comparePlain(t, data, nil, rowGroups, batch, mem) })
				}
			}
		}
	}
}

// openTestFile opens the Parquet file data for pqarrow reads in batches
// of batch rows, with its Arrow schema.
func openTestFile(t *testing.T, data []byte, batch int64) (*file.Reader, *pqarrow.FileReader, *arrow.Schema) {
	t.Helper()
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: batch}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	fsch, err := fr.Schema()
	if err != nil {
		t.Fatal(err)
	}
	return pf, fr, fsch
}

// comparePlain reads leaves (nil: all) of rowGroups of the file data through
// pqarrow and through plainReader in batches of batch rows and fails
// unless plainReader reads the file and both give the same columns.
func comparePlain(t *testing.T, data []byte, leaves, rowGroups []int, batch int64, mem memory.Allocator) {
	t.Helper()
	pf, fr, fsch := openTestFile(t, data, batch)
	if leaves == nil {
		leaves = make([]int, fsch.NumFields())
		for i := range leaves {
			leaves[i] = i
		}
	}
	if !plainReadable(pf.MetaData(), fsch, leaves, rowGroups) {
		t.Fatal("the file is not plain-readable")
	}
	want, err := fr.GetRecordReader(context.Background(), leaves, rowGroups)
	if err != nil {
		t.Fatal(err)
	}
	wantCols := readAllBatches(t, want)
	want.Release()
	got, err := newPlainReader("f.parquet", pf, fsch, leaves, rowGroups, batch, mem)
	if err != nil {
		t.Fatal(err)
	}
	gotCols := readAllBatches(t, got)
	got.Release()
	for c := range wantCols {
		name := fsch.Field(leaves[c]).Name
		if !arrow.TypeEqual(wantCols[c].DataType(), gotCols[c].DataType()) {
			t.Errorf("column %s: type %s, want %s", name, gotCols[c].DataType(), wantCols[c].DataType())
		}
		if !array.Equal(wantCols[c], gotCols[c]) {
			t.Errorf("column %s differs:\n got %v\nwant %v", name, gotCols[c], wantCols[c])
		}
		if gotCols[c].NullN() != wantCols[c].NullN() {
			t.Errorf("column %s: %d nulls, want %d", name, gotCols[c].NullN(), wantCols[c].NullN())
		}
	}
	releaseAll(wantCols)
	releaseAll(gotCols)
}

// TestPlainReadableRefuses: files and columns plainReader must leave to
// pqarrow.
func TestPlainReadableRefuses(t *testing.T) {
	rec := plainTestRecord(300, 5, 1)
	defer rec.Release()
	check := func(name string, data []byte, leaves []int, want bool) {
		t.Helper()
		pf, _, fsch := openTestFile(t, data, 0)
		if got := plainReadable(pf.MetaData(), fsch, leaves, nil); got != want {
			t.Errorf("%s: plainReadable = %v, want %v", name, got, want)
		}
	}
	check("plain", writePlainTestFile(t, rec), []int{0, 2}, true)
	check("dictionary column", writePlainTestFile(t, rec, parquet.WithDictionaryFor("s", true)), []int{0, 2}, false)
	check("dictionary column not read", writePlainTestFile(t, rec, parquet.WithDictionaryFor("s", true)), []int{2}, true)
	check("delta encoding", writePlainTestFile(t, rec, parquet.WithEncodingFor("i64", parquet.Encodings.DeltaBinaryPacked)), []int{2}, false)

	// Types whose stored values pqarrow converts.
	conv := arrow.NewSchema([]arrow.Field{
		{Name: "i16", Type: arrow.PrimitiveTypes.Int16, Nullable: true},
		{Name: "u32", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Second}, Nullable: true},
		// Over 18 digits: big-endian FIXED_LEN_BYTE_ARRAY.
		{Name: "dec", Type: &arrow.Decimal128Type{Precision: 20, Scale: 2}, Nullable: true},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, conv)
	defer b.Release()
	for range 10 {
		for _, fb := range b.Fields() {
			fb.AppendNull()
		}
	}
	crec := b.NewRecordBatch()
	defer crec.Release()
	data := writePlainTestFile(t, crec)
	for i, f := range conv.Fields() {
		switch f.Type.ID() {
		case arrow.LIST:
			// Not flat: the leaf index is not the field's.
		case arrow.TIMESTAMP:
			// Parquet has no seconds: pqarrow reads the stored milliseconds
			// as they are, and so may plainReader.
		default:
			check(f.Name, data, []int{i}, false)
		}
	}
	check("nested schema", data, []int{0}, false)

	b = array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(conv.Fields()[2:3], nil))
	defer b.Release()
	b.Field(0).(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{1, 2, 1 << 40}, nil)
	b.Field(0).AppendNull()
	trec := b.NewRecordBatch()
	defer trec.Release()
	comparePlain(t, writePlainTestFile(t, trec), nil, nil, 3, memory.DefaultAllocator)
}

// TestPlainReaderTimeRoundTrip: a timestamp read through plainReader is
// the instant written, not merely pqarrow's value.
func TestPlainReaderTimeRoundTrip(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{{Name: "t", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	now := time.Date(2026, 12, 5, 1, 2, 3, 4000, time.UTC)
	b.Field(0).(*array.TimestampBuilder).Append(arrow.Timestamp(now.UnixMicro()))
	rec := b.NewRecordBatch()
	defer rec.Release()
	pf, _, fsch := openTestFile(t, writePlainTestFile(t, rec), 0)
	r, err := newPlainReader("f", pf, fsch, []int{0}, nil, 10, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	if !r.Next() {
		t.Fatal(r.Err())
	}
	got := r.RecordBatch().Column(0).(*array.Timestamp).Value(0).ToTime(arrow.Microsecond)
	if !got.Equal(now) {
		t.Fatalf("got %v, want %v", got, now)
	}
}

// fakePages is a PageReader over pages made in the test.
type fakePages struct {
	pages []file.Page
	cur   file.Page
}

func (f *fakePages) SetMaxPageHeaderSize(int) {}
func (f *fakePages) Page() file.Page          { return f.cur }
func (f *fakePages) Next() bool {
	if len(f.pages) == 0 {
		return false
	}
	f.cur, f.pages = f.pages[0], f.pages[1:]
	return true
}
func (f *fakePages) Err() error { return nil }
func (f *fakePages) Reset(parquet.BufferedReader, int64, compress.Compression, *file.CryptoContext) {
}
func (f *fakePages) GetDictionaryPage() (*file.DictionaryPage, error) { return nil, nil }
func (f *fakePages) SeekToPageWithRow(int64) error                    { return nil }
func (f *fakePages) Close() error                                     { return nil }

// TestPlainColumnCorruptPages: pages whose contents contradict their
// headers are errors, never panics or shifted values.
func TestPlainColumnCorruptPages(t *testing.T) {
	le32 := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	str := func(s string) []byte { return append(le32(uint32(len(s))), s...) }
	levels := func(rle ...byte) []byte { return append(le32(uint32(len(rle))), rle...) }
	page := func(n int32, data ...[]byte) file.Page {
		return file.NewDataPageV1(memory.NewBufferBytes(bytes.Join(data, nil)), n,
			parquet.Encodings.Plain, parquet.Encodings.RLE, parquet.Encodings.RLE, 0)
	}
	for _, c := range []struct {
		name     string
		kind     plainKind
		nullable bool
		n        int
		pages    []file.Page
		ok       bool
	}{
		{"good strings", plainByteArray, false, 2, []file.Page{page(2, str("ab"), str(""))}, true},
		{"good nullable", plainByteArray, true, 3, []file.Page{page(3, levels(0x03, 0x05), str("a"), str("b"))}, true},
		{"length past the page", plainByteArray, false, 1, []file.Page{page(1, le32(1000), []byte("ab"))}, false},
		{"fewer values than rows", plainByteArray, false, 3, []file.Page{page(3, str("a"))}, false},
		{"truncated length", plainByteArray, false, 1, []file.Page{page(1, []byte{1, 0})}, false},
		{"fixed width too short", plainFixed, false, 2, []file.Page{page(2, []byte{1, 2, 3, 4, 5, 6, 7, 8})}, false},
		{"chunk ends early", plainFixed, false, 2, []file.Page{page(1, make([]byte, 8))}, false},
		{"levels length past the page", plainByteArray, true, 1, []file.Page{page(1, le32(99), []byte{2, 1})}, false},
		{"levels run out", plainByteArray, true, 4, []file.Page{page(4, levels(0x04, 0x01), str("a"), str("b"), str("c"), str("d"))}, false},
		{"bad rle value", plainByteArray, true, 2, []file.Page{page(2, levels(0x04, 0x07), str("a"), str("b"))}, false},
		{"bit-packed run past the region", plainByteArray, true, 8, []file.Page{page(8, levels(0x05, 0xff), str("a"))}, false},
		{"no page header bytes", plainByteArray, true, 1, []file.Page{page(1, []byte{1, 0})}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			col := &plainColumn{dt: arrow.BinaryTypes.String, kind: c.kind, nullable: c.nullable, pages: &fakePages{pages: c.pages}}
			if c.kind == plainFixed {
				col.dt, col.width = arrow.PrimitiveTypes.Int64, 8
			}
			a, err := col.read(c.n, memory.DefaultAllocator)
			if c.ok != (err == nil) {
				t.Fatalf("error %v, want ok=%v", err, c.ok)
			}
			if a != nil {
				if a.Len() != c.n {
					t.Errorf("%d rows, want %d", a.Len(), c.n)
				}
				a.Release()
			}
		})
	}
	// Through the reader, a bad page is 58030 naming the file.
	r := &plainReader{path: "bad.parquet", batch: 2, left: 2, mem: memory.DefaultAllocator,
		sc:   arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String}}, nil),
		cols: []*plainColumn{{dt: arrow.BinaryTypes.String, kind: plainByteArray, pages: &fakePages{pages: []file.Page{page(2, le32(50))}}}}}
	if r.Next() {
		t.Fatal("read a corrupt page")
	}
	if code := sqlerr.From(r.Err()).Code; code != sqlerr.IOError || !strings.Contains(r.Err().Error(), "bad.parquet") {
		t.Fatalf("error %v (%s), want 58030 naming the file", r.Err(), code)
	}
}

// TestPlainReaderPrefilter: with a row filter on any column of a type
// filters take (every such column of plainTestSchema in turn, alone and
// with a second condition), with and without nulls, V1 and V2 pages, any
// batch size (within a page, across pages and row groups), plainReader
// returns exactly the rows of pqarrow's read that
// pass the filter — every other column decoded at those rows only — and
// counts the rest as dropped.
func TestPlainReaderPrefilter(t *testing.T) {
	// A filter passing most rows gives up after its trial (and the rest of
	// the file is decoded whole): within the test's files.
	defer func(n int64) { prefilterTrialRows = n }(prefilterTrialRows)
	prefilterTrialRows = 300
	mem := arrowutil.NewPoolAllocator()
	mem.Poison = true
	tbl := &catalog.Table{ID: "t", Namespace: "s", Name: "t", Schema: plainTestSchema}
	for _, nullEvery := range []int{0, 10, 2} {
		rec := plainTestRecord(2500, nullEvery, uint64(nullEvery)+1)
		defer rec.Release()
		for _, v2 := range []bool{false, true} {
			var extra []parquet.WriterProperty
			if v2 {
				extra = append(extra, parquet.WithDataPageVersion(parquet.DataPageV2))
			}
			data := writePlainTestFile(t, rec, extra...)
			tested := 0
			for c, f := range plainTestSchema.Fields() {
				if condKindOf(f.Type) == 0 {
					continue
				}
				tested++
				for _, conds := range prefilterConds(rec, c) {
					for _, batch := range []int64{13, 1000} {
						name := fmt.Sprintf("nulls=%d/v2=%v/%s/batch=%d", nullEvery, v2, (&RowFilter{Conds: conds}).String(), batch)
						t.Run(name, func(t *testing.T) {
							m, err := compileRowFilter(tbl, &RowFilter{Conds: conds})
							if err != nil {
								t.Fatal(err)
							}
							comparePrefiltered(t, data, m, batch, mem)
						})
					}
				}
			}
			if tested < 10 {
				t.Fatalf("only %d columns of plainTestSchema can be filtered", tested)
			}
		}
	}
}

// prefilterConds are conditions on column c of rec: an interval holding
// about half its non-null values, an IN list of three of them, one that
// no value passes, one that 95 % pass, and the interval with an interval
// on reqi.
func prefilterConds(rec arrow.RecordBatch, c int) [][]Cond {
	col := rec.Column(c)
	name := rec.Schema().Field(c).Name
	kind := condKindOf(col.DataType())
	var vals []keyValue
	for r := range col.Len() {
		if col.IsValid(r) {
			vals = append(vals, valueAt(col, r))
		}
	}
	if len(vals) == 0 { // allnull: nothing passes any condition
		return [][]Cond{{{Column: name, Lower: int64(0)}}}
	}
	anyOf := func(v keyValue) any {
		if kind == kindStr {
			return v.s
		}
		return v.i
	}
	sorted := slices.Clone(vals)
	slices.SortFunc(sorted, kind.compare)
	half := Cond{Column: name, Lower: anyOf(sorted[len(sorted)/4]), LowerInclusive: true, Upper: anyOf(sorted[3*len(sorted)/4])}
	in := Cond{Column: name, In: true, Values: []any{anyOf(vals[0]), anyOf(vals[len(vals)/2]), anyOf(vals[len(vals)-1])}}
	none := Cond{Column: name, Lower: anyOf(sorted[len(sorted)-1])}
	most := Cond{Column: name, Lower: anyOf(sorted[len(sorted)/20]), LowerInclusive: true}
	reqi := Cond{Column: "reqi", Lower: int64(0)}
	return [][]Cond{{half}, {in}, {none}, {most}, {half, reqi}}
}

// comparePrefiltered reads every column of the file data through pqarrow,
// keeps the rows m passes, and fails unless plainReader with m as its
// prefilter drops the other rows — every batch it filtered holds passing
// rows only; once it gave up, m applied after it drops the rest — and gives
// the same columns.
func comparePrefiltered(t *testing.T, data []byte, m *keyMatcher, batch int64, mem memory.Allocator) {
	t.Helper()
	pf, fr, fsch := openTestFile(t, data, batch)
	leaves := make([]int, fsch.NumFields())
	for i := range leaves {
		leaves[i] = i
	}
	want, err := fr.GetRecordReader(context.Background(), leaves, nil)
	if err != nil {
		t.Fatal(err)
	}
	all := readAllBatches(t, want)
	want.Release()
	whole := array.NewRecordBatch(fsch, all, int64(all[0].Len()))
	releaseAll(all)
	defer whole.Release()
	rows := make([]int, whole.NumRows())
	for i := range rows {
		rows[i] = i
	}
	rows = m.keep(whole, rows)
	got, err := newPlainReader("f.parquet", pf, fsch, leaves, nil, batch, mem)
	if err != nil {
		t.Fatal(err)
	}
	got.prefilter(m.preds, leaves)
	var gotCols []arrow.Array
	var dropped int64
	for {
		filtering := got.pre != nil
		if !got.Next() {
			break
		}
		dropped += got.takeDropped()
		batch := got.RecordBatch()
		keep := make([]int, batch.NumRows())
		for i := range keep {
			keep[i] = i
		}
		keep = m.keep(batch, keep)
		if filtering && len(keep) != int(batch.NumRows()) {
			t.Fatalf("a batch the prefilter filtered holds %d rows failing it", int(batch.NumRows())-len(keep))
		}
		// After the prefilter gave up, the filter after it drops the rest.
		dropped += batch.NumRows() - int64(len(keep))
		for c, whole := range batch.Columns() {
			col, err := arrowutil.Take(memory.DefaultAllocator, whole, keep)
			if err != nil {
				t.Fatal(err)
			}
			if len(gotCols) <= c {
				gotCols = append(gotCols, nil)
			}
			if gotCols[c] == nil {
				gotCols[c] = col
			} else {
				prev := gotCols[c]
				gotCols[c], err = array.Concatenate([]arrow.Array{prev, col}, memory.DefaultAllocator)
				prev.Release()
				col.Release()
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	dropped += got.takeDropped()
	if err := got.Err(); err != nil {
		t.Fatal(err)
	}
	if gaveUp, share := got.pre == nil, float64(len(rows))/float64(whole.NumRows()); (share > 0.9 && !gaveUp) || (share < 0.6 && gaveUp) {
		t.Errorf("%d of %d rows passed; the prefilter gave up: %v", len(rows), whole.NumRows(), gaveUp)
	}
	got.Release()
	defer releaseAll(gotCols)
	if wantDropped := whole.NumRows() - int64(len(rows)); dropped != wantDropped {
		t.Errorf("dropped %d rows, want %d", dropped, wantDropped)
	}
	if len(rows) == 0 {
		if gotCols != nil && gotCols[0].Len() > 0 {
			t.Errorf("%d rows passed, want none", gotCols[0].Len())
		}
		return
	}
	if len(gotCols) != len(leaves) {
		t.Fatalf("%d columns, want %d", len(gotCols), len(leaves))
	}
	for c := range leaves {
		wantCol, err := arrowutil.Take(memory.DefaultAllocator, whole.Column(c), rows)
		if err != nil {
			t.Fatal(err)
		}
		name := fsch.Field(c).Name
		if !array.Equal(wantCol, gotCols[c]) || wantCol.NullN() != gotCols[c].NullN() {
			t.Errorf("column %s differs:\n got %v\nwant %v", name, gotCols[c], wantCol)
		}
		wantCol.Release()
	}
}
