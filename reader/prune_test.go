package reader_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	pqfile "github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/arrowutil"
	"github.com/lakesoul-go/lakesoul/layout"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/reader"
	"github.com/lakesoul-go/lakesoul/sqlerr"
	"github.com/lakesoul-go/lakesoul/writer"
)

// pruneModel is a table of many files with overlapping keys, written with
// small row groups and pages so that every pruning level has something to
// skip. Some files are "old": written without statistics, page index or
// bloom filters, as files of earlier writers are.
type pruneModel struct {
	t       *testing.T
	rng     *rand.Rand
	table   *catalog.Table
	parts   map[string]*catalog.PartitionFiles
	descs   []string
	cols    []string // non-key, non-range columns
	keyCols []string
	cdc     bool
}

// keyspace bounds the generated keys; lookups also ask for keys outside it.
const keyspace = 400

func newPruneModel(t *testing.T, seed uint64, keyTypes []arrow.DataType, props map[string]string, buckets int, ranged bool) *pruneModel {
	m := &pruneModel{t: t, rng: rand.New(rand.NewPCG(seed, 7)), parts: map[string]*catalog.PartitionFiles{}}
	var fields []arrow.Field
	for i, dt := range keyTypes {
		name := fmt.Sprintf("k%d", i)
		fields = append(fields, arrow.Field{Name: name, Type: dt})
		m.keyCols = append(m.keyCols, name)
	}
	fields = append(fields, arrow.Field{Name: "a", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true})
	m.cols = []string{"a", "n"}
	var rangeCols []string
	if ranged {
		fields = append(fields, arrow.Field{Name: "p", Type: arrow.BinaryTypes.String})
		rangeCols = []string{"p"}
	}
	if c := props[catalog.CDCColumnProperty]; c != "" {
		fields = append(fields, arrow.Field{Name: c, Type: arrow.BinaryTypes.String, Nullable: true})
		m.cols = append(m.cols, c)
		m.cdc = true
	}
	m.table = &catalog.Table{ID: "table_prune", Namespace: "s", Name: "t",
		Path:   objstore.LocalURI(filepath.Join(t.TempDir(), "t")),
		Schema: arrow.NewSchema(fields, nil), RangeCols: rangeCols, PKCols: m.keyCols, HashBucketNum: buckets,
		Properties: props}
	return m
}

// keyValue is key component c of key number k.
func (m *pruneModel) keyValue(c, k int) any {
	switch m.table.Schema.Field(c).Type.ID() {
	case arrow.STRING:
		return fmt.Sprintf("key-%05d", k)
	default:
		return int64(k*3 - 200) // negatives too
	}
}

// writeBatch writes rows of random keys with a random subset of the other
// columns (a partial upsert unless all are present).
func (m *pruneModel) writeBatch(old bool) {
	n := 1 + m.rng.IntN(150)
	cols := slices.Clone(m.keyCols)
	for _, c := range m.cols {
		if m.rng.IntN(3) > 0 || old || (m.cdc && c == m.table.CDCColumn()) {
			cols = append(cols, c)
		}
	}
	if len(m.table.RangeCols) > 0 {
		cols = append(cols, "p")
	}
	var fields []arrow.Field
	for _, c := range cols {
		fields = append(fields, m.table.Schema.Field(m.table.Schema.FieldIndices(c)[0]))
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	lo := m.rng.IntN(keyspace)
	span := 1 + m.rng.IntN(keyspace)
	for range n {
		k := (lo + m.rng.IntN(span)) % keyspace
		for i, c := range cols {
			fb := b.Field(i)
			switch {
			case c == "p":
				fb.(*array.StringBuilder).Append([]string{"x", "y"}[k%2])
			case slices.Contains(m.keyCols, c):
				ki := slices.Index(m.keyCols, c)
				k2 := k
				if ki > 0 {
					k2 = k % 7 // a composite key's second part repeats
				}
				switch v := m.keyValue(ki, k2).(type) {
				case string:
					fb.(*array.StringBuilder).Append(v)
				case int64:
					switch bb := fb.(type) {
					case *array.Int64Builder:
						bb.Append(v)
					case *array.Int32Builder:
						bb.Append(int32(v))
					}
				}
			case c == m.table.CDCColumn():
				fb.(*array.StringBuilder).Append([]string{"insert", "update", "delete"}[m.rng.IntN(3)])
			case c == "a":
				if m.rng.IntN(5) == 0 {
					fb.AppendNull()
				} else {
					fb.(*array.StringBuilder).Append(fmt.Sprintf("v%d", m.rng.IntN(1000)))
				}
			case c == "n":
				fb.(*array.Int64Builder).Append(int64(m.rng.IntN(100)))
			}
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	w := &writer.Writer{Store: objstore.Local{}, Table: m.table, Intent: layout.RandomNames{}, RowGroupRows: 40, PageBytes: 128}
	parts, err := w.Write(context.Background(), rec)
	if err != nil {
		m.t.Fatal(err)
	}
	for _, p := range parts {
		pf, ok := m.parts[p.Desc]
		if !ok {
			pf = &catalog.PartitionFiles{Desc: p.Desc}
			m.parts[p.Desc] = pf
			m.descs = append(m.descs, p.Desc)
		}
		for _, op := range p.Ops {
			if old {
				stripIndexes(m.t, op.Path)
			}
			st, err := os.Stat(mustLocal(m.t, op.Path))
			if err != nil {
				m.t.Fatal(err)
			}
			pf.Files = append(pf.Files, catalog.DataFile{Path: op.Path, Size: st.Size(), ExistCols: op.ExistCols})
		}
	}
}

func mustLocal(t *testing.T, uri string) string {
	t.Helper()
	p, err := objstore.LocalPath(uri)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// stripIndexes rewrites a data file the way older writers wrote them: the
// same rows in the same order, without page index or bloom filters (and,
// for every other file, without statistics), one large row group, and not
// marked as ours.
func stripIndexes(t *testing.T, uri string) {
	t.Helper()
	path := mustLocal(t, uri)
	tbl := readParquetTable(t, path)
	defer tbl.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	stripped++
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithStats(stripped%2 == 0),
		parquet.WithDictionaryDefault(false), parquet.WithCreatedBy("parquet-old 1.0"))
	if err := pqarrow.WriteTable(tbl, f, 1<<20, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())); err != nil {
		t.Fatal(err)
	}
}

// stripped counts the files stripIndexes rewrote.
var stripped int

func readParquetTable(t *testing.T, path string) arrow.Table {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tbl, err := pqarrow.ReadTable(context.Background(), f, nil, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func (m *pruneModel) partitions() []catalog.PartitionFiles {
	var out []catalog.PartitionFiles
	for _, d := range m.descs {
		out = append(out, *m.parts[d])
	}
	return out
}

// scanRows reads every unit of scan (key order, unordered, or unordered
// with selections) as sorted row strings.
func scanRows(t *testing.T, scan *reader.Scan, mode int) ([]string, error) {
	t.Helper()
	units, err := scan.Units()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, u := range units {
		it, err := scan.Open(context.Background(), u)
		if err != nil {
			return nil, err
		}
		for {
			var b reader.Selected
			if mode == 2 {
				b, err = reader.NextSelected(context.Background(), it)
			} else {
				b.RecordBatch, err = it.Next(context.Background())
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				it.Close()
				return nil, err
			}
			for i := range b.Len() {
				out = append(out, rowString(b.RecordBatch, b.Row(i)))
			}
			b.Release()
		}
		it.Close()
	}
	sort.Strings(out)
	return out, nil
}

func rowString(b arrow.RecordBatch, r int) string {
	var cells []string
	for c := range int(b.NumCols()) {
		v := "NULL"
		if col := b.Column(c); !col.IsNull(r) {
			v = col.ValueStr(r)
		}
		cells = append(cells, b.ColumnName(c)+"="+v)
	}
	return strings.Join(cells, " ")
}

// randomFilter draws a key filter: points (present and absent keys), IN
// lists, ranges open or closed on either side, empty lists and intervals,
// on one or every key column.
func (m *pruneModel) randomFilter() *reader.KeyFilter {
	f := &reader.KeyFilter{}
	for ki, c := range m.keyCols {
		if ki > 0 && m.rng.IntN(2) == 0 {
			continue
		}
		limit := keyspace + 20
		if ki > 0 {
			limit = 9
		}
		val := func() any { return m.keyValue(ki, m.rng.IntN(limit)) }
		cond := reader.Cond{Column: c}
		switch m.rng.IntN(6) {
		case 0, 1:
			cond.In, cond.Values = true, []any{val()}
		case 2:
			cond.In = true
			for range m.rng.IntN(6) {
				cond.Values = append(cond.Values, val())
			}
		default:
			if m.rng.IntN(4) > 0 {
				cond.Lower, cond.LowerInclusive = val(), m.rng.IntN(2) == 0
			}
			if m.rng.IntN(4) > 0 {
				cond.Upper, cond.UpperInclusive = val(), m.rng.IntN(2) == 0
			}
		}
		f.Conds = append(f.Conds, cond)
	}
	return f
}

// matches is the model's own reading of a filter on a row string.
func (m *pruneModel) matches(f *reader.KeyFilter, row string) bool {
	cells := map[string]string{}
	for _, kv := range strings.Split(row, " ") {
		k, v, _ := strings.Cut(kv, "=")
		cells[k] = v
	}
	for _, c := range f.Conds {
		cmp := func(bound any) int {
			if s, ok := bound.(string); ok {
				return strings.Compare(cells[c.Column], s)
			}
			var v int64
			fmt.Sscan(cells[c.Column], &v)
			switch b := bound.(int64); {
			case v < b:
				return -1
			case v > b:
				return 1
			}
			return 0
		}
		if c.In {
			if !slices.ContainsFunc(c.Values, func(v any) bool { return cmp(v) == 0 }) {
				return false
			}
			continue
		}
		if c.Lower != nil {
			if d := cmp(c.Lower); d < 0 || (d == 0 && !c.LowerInclusive) {
				return false
			}
		}
		if c.Upper != nil {
			if d := cmp(c.Upper); d > 0 || (d == 0 && !c.UpperInclusive) {
				return false
			}
		}
	}
	return true
}

// TestPrunedMergeMatchesFullMerge is the model test of pruning: for random
// tables (single and composite keys of text and integers, partial upserts,
// merge operators, CDC deletes, partitions, old files without indexes) and
// random key filters, a filtered scan returns exactly the rows of the full
// merge whose key matches — in key order, unordered and with selections,
// with a cold and a warm metadata cache — and across the run every level
// of pruning skipped something.
func TestPrunedMergeMatchesFullMerge(t *testing.T) {
	configs := []struct {
		name    string
		keys    []arrow.DataType
		props   map[string]string
		buckets int
		ranged  bool
	}{
		{"bigint", []arrow.DataType{arrow.PrimitiveTypes.Int64}, nil, 1, false},
		{"text", []arrow.DataType{arrow.BinaryTypes.String}, nil, 2, true},
		{"composite", []arrow.DataType{arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.String}, nil, 2, false},
		{"cdc", []arrow.DataType{arrow.BinaryTypes.String}, map[string]string{catalog.CDCColumnProperty: "op"}, 1, false},
		{"mergeops", []arrow.DataType{arrow.PrimitiveTypes.Int64},
			map[string]string{reader.MergeOpPrefix + "n": "SumAll", reader.MergeOpPrefix + "a": "UseLastNotNull"}, 1, false},
	}
	var total reader.ScanCounts
	for ci, cfg := range configs {
		t.Run(cfg.name, func(t *testing.T) {
			m := newPruneModel(t, uint64(ci+1), cfg.keys, cfg.props, cfg.buckets, cfg.ranged)
			for i := range 30 {
				m.writeBatch(i%7 == 3)
			}
			parts := m.partitions()
			mem := arrowutil.NewPoolAllocator()
			mem.Poison = true
			full, err := scanRows(t, &reader.Scan{Store: objstore.Local{}, Table: m.table, Partitions: parts, Mem: mem}, 0)
			if err != nil {
				t.Fatal(err)
			}
			cache := reader.NewMetaCache(1 << 30)
			// Every other query reads through a chunk cache, so chunks are
			// admitted, then served decoded (chunkcache.go).
			chunks := reader.NewChunkCache(1 << 30)
			defer func() {
				if n, _, hits, _ := chunks.Stats(); n == 0 || hits == 0 {
					t.Errorf("the chunk cache was never used: %d chunks, %d hits", n, hits)
				}
			}()
			for q := range 120 {
				var qchunks *reader.ChunkCache
				if q%2 == 1 {
					qchunks = chunks
				}
				f := m.randomFilter()
				var want []string
				for _, r := range full {
					if m.matches(f, r) {
						want = append(want, r)
					}
				}
				for mode := range 3 {
					stats := &reader.ScanStats{}
					scan := &reader.Scan{Store: objstore.Local{}, Table: m.table, Partitions: parts, Mem: mem,
						Unordered: mode > 0, BatchRows: 1 + q%50, Keys: f, Meta: cache, Chunks: qchunks, Stats: stats}
					got, err := scanRows(t, scan, mode)
					if err != nil {
						t.Fatalf("filter %s: %v", f, err)
					}
					if !slices.Equal(got, want) {
						t.Fatalf("filter %s (mode %d): %d rows, want %d\n got %q\nwant %q", f, mode, len(got), len(want), got, want)
					}
					c := stats.Counts()
					if c.RowsOut != int64(len(want)) {
						t.Fatalf("filter %s: RowsOut %d, want %d", f, c.RowsOut, len(want))
					}
					total.Add(c)
				}
			}
		})
	}
	if total.FilesSkippedStats == 0 || total.FilesSkippedBloom == 0 || total.RowGroupsSkippedStats == 0 ||
		total.RowGroupsSkippedBloom == 0 || total.PagesSkipped == 0 {
		t.Fatalf("a pruning level never skipped anything: %+v", total)
	}
	t.Logf("%+v", total)
}

// TestDamagedIndexesAreErrors damages a data file's bloom filter (its
// bitset, then its header), column index and offset index: a keyed read
// then fails with 58030 naming the file, never returns a wrong answer.
func TestDamagedIndexesAreErrors(t *testing.T) {
	for _, c := range []struct {
		name   string
		damage func(md *metadata.FileMetaData) (off int64, n int)
		filter reader.KeyFilter
	}{
		{"bloom bitset", func(md *metadata.FileMetaData) (int64, int) {
			cc := columnChunk(t, md, 0)
			return cc.BloomFilterOffset() + int64(cc.BloomFilterLength()) - 64, 64
		}, reader.KeyFilter{Conds: []reader.Cond{{Column: "id", In: true, Values: []any{int64(7)}}}}},
		{"bloom header", func(md *metadata.FileMetaData) (int64, int) {
			return columnChunk(t, md, 0).BloomFilterOffset(), 8
		}, reader.KeyFilter{Conds: []reader.Cond{{Column: "id", In: true, Values: []any{int64(7)}}}}},
		{"column index", func(md *metadata.FileMetaData) (int64, int) {
			l := columnChunk(t, md, 0).GetColumnIndexLocation()
			return l.Offset, int(l.Length)
		}, reader.KeyFilter{Conds: []reader.Cond{{Column: "id", Lower: int64(10), Upper: int64(20)}}}},
		{"offset index", func(md *metadata.FileMetaData) (int64, int) {
			l := columnChunk(t, md, 0).GetOffsetIndexLocation()
			return l.Offset, int(l.Length)
		}, reader.KeyFilter{Conds: []reader.Cond{{Column: "id", Lower: int64(10), Upper: int64(20)}}}},
		{"footer", func(md *metadata.FileMetaData) (int64, int) {
			return md.GetSourceFileSize() - 8 - int64(md.Size()), 16
		}, reader.KeyFilter{Conds: []reader.Cond{{Column: "id", In: true, Values: []any{int64(7)}}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, []arrow.Field{idF, nameF}, nil, []string{"id"}, 1)
			var rows [][]any
			for i := range 500 {
				rows = append(rows, []any{i, fmt.Sprint("n", i)})
			}
			f.write([]string{"id", "name"}, rows...)
			file := f.parts[layout.NonPartitioned].Files[0]
			path := mustLocal(t, file.Path)
			pf, err := pqfile.OpenParquetFile(path, false)
			if err != nil {
				t.Fatal(err)
			}
			off, n := c.damage(pf.MetaData())
			pf.Close()
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for i := range n {
				data[off+int64(i)] ^= 0x5a
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			filter := c.filter
			scan := &reader.Scan{Store: objstore.Local{}, Table: f.table, Partitions: []catalog.PartitionFiles{*f.parts[layout.NonPartitioned]},
				Keys: &filter, Meta: reader.NewMetaCache(1 << 20)}
			rows2, err := scanRows(t, scan, 1)
			if sqlerr.Code(err) != sqlerr.IOError || !strings.Contains(err.Error(), filepath.Base(path)) {
				t.Fatalf("read with a damaged %s: %v (%v), rows %q", c.name, err, sqlerr.Code(err), rows2)
			}
		})
	}
}

// TestDamagedDataPagesAreErrors damages a data page of a non-key column —
// its header, then its compressed values — and reads the file whole (the
// plain page decoder) and merged with a newer file: 58030 naming the file,
// never rows.
func TestDamagedDataPagesAreErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		at   func(loc *metadata.PageLocation) (int64, int)
	}{
		{"page header", func(loc *metadata.PageLocation) (int64, int) { return loc.Offset, 6 }},
		{"compressed values", func(loc *metadata.PageLocation) (int64, int) {
			return loc.Offset + int64(loc.CompressedPageSize) - 24, 16
		}},
	} {
		for _, merged := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/merged=%v", c.name, merged), func(t *testing.T) {
				f := newFixture(t, []arrow.Field{idF, nameF}, nil, []string{"id"}, 1)
				var rows [][]any
				for i := range 500 {
					rows = append(rows, []any{i, fmt.Sprint("n", i)})
				}
				f.write([]string{"id", "name"}, rows...)
				file := f.parts[layout.NonPartitioned].Files[0]
				if merged {
					f.write([]string{"id", "name"}, []any{7, "newer"})
				}
				path := mustLocal(t, file.Path)
				pf, err := pqfile.OpenParquetFile(path, false)
				if err != nil {
					t.Fatal(err)
				}
				oi, err := pf.GetPageIndexReader().RowGroup(0)
				if err != nil {
					t.Fatal(err)
				}
				idx, err := oi.GetOffsetIndex(1)
				if err != nil {
					t.Fatal(err)
				}
				pf.Close()
				off, n := c.at(idx.GetPageLocations()[0])
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				for i := range n {
					data[off+int64(i)] ^= 0x5a
				}
				if err := os.WriteFile(path, data, 0o644); err != nil {
					t.Fatal(err)
				}
				scan := &reader.Scan{Store: objstore.Local{}, Table: f.table, Partitions: []catalog.PartitionFiles{*f.parts[layout.NonPartitioned]}}
				got, err := scanRows(t, scan, 2)
				if sqlerr.Code(err) != sqlerr.IOError || !strings.Contains(err.Error(), filepath.Base(path)) {
					t.Fatalf("read with a damaged %s: %v (%v), %d rows", c.name, err, sqlerr.Code(err), len(got))
				}
			})
		}
	}
}

func columnChunk(t *testing.T, md *metadata.FileMetaData, col int) *metadata.ColumnChunkMetaData {
	t.Helper()
	cc, err := md.RowGroup(0).ColumnChunk(col)
	if err != nil {
		t.Fatal(err)
	}
	return cc
}

// Concurrent filtered scans share one metadata cache, small enough to
// evict all the time, and still return exactly the matching rows (run
// with -race).
func TestMetaCacheConcurrentScans(t *testing.T) {
	m := newPruneModel(t, 99, []arrow.DataType{arrow.PrimitiveTypes.Int64}, nil, 2, false)
	for i := range 20 {
		m.writeBatch(i%5 == 2)
	}
	parts := m.partitions()
	full, err := scanRows(t, &reader.Scan{Store: objstore.Local{}, Table: m.table, Partitions: parts}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var filters []*reader.KeyFilter
	for range 64 {
		filters = append(filters, m.randomFilter())
	}
	cache := reader.NewMetaCache(16 << 10)
	chunks := reader.NewChunkCache(8 << 10) // evicts all the time
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			for i := g; i < len(filters); i += 8 {
				f := filters[i]
				got, err := scanRows(t, &reader.Scan{Store: objstore.Local{}, Table: m.table, Partitions: parts,
					Unordered: true, Keys: f, Meta: cache, Chunks: chunks}, 2)
				if err != nil {
					errs <- err
					return
				}
				var want []string
				for _, r := range full {
					if m.matches(f, r) {
						want = append(want, r)
					}
				}
				if !slices.Equal(got, want) {
					errs <- fmt.Errorf("filter %s: %d rows, want %d", f, len(got), len(want))
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if files, bytes, _, _ := cache.Stats(); bytes > 16<<10 && files > 1 {
		t.Fatalf("cache holds %d files, %d bytes over its budget", files, bytes)
	}
	if n, bytes, _, _ := chunks.Stats(); bytes > 8<<10 && n > 1 {
		t.Fatalf("chunk cache holds %d chunks, %d bytes over its budget", n, bytes)
	}
}
