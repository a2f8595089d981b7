package reader_test

import (
	"bytes"
	"context"
	"encoding/binary"
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

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/arrowutil"
	"github.com/lakesoul-go/lakesoul/layout"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/reader"
	"github.com/lakesoul-go/lakesoul/sqlerr"
	"github.com/lakesoul-go/lakesoul/writer"
)

// streamCols are the value columns of TestStreamedMatchesMerge's tables,
// one under each merge operator.
var streamCols = []struct {
	f  arrow.Field
	op string
}{
	{arrow.Field{Name: "u", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, "UseLast"},
	{arrow.Field{Name: "lnn", Type: arrow.BinaryTypes.String, Nullable: true}, "UseLastNotNull"},
	{arrow.Field{Name: "sa", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, "SumAll"},
	{arrow.Field{Name: "sl", Type: arrow.PrimitiveTypes.Float64, Nullable: true}, "SumLast"},
	{arrow.Field{Name: "ja", Type: arrow.BinaryTypes.String, Nullable: true}, "JoinedAllByComma"},
	{arrow.Field{Name: "jl", Type: arrow.BinaryTypes.String, Nullable: true}, "JoinedLastBySemicolon"},
	{arrow.Field{Name: "mx", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, "Max"},
	{arrow.Field{Name: "mn", Type: arrow.BinaryTypes.String, Nullable: true}, "Min"},
}

// TestStreamedMatchesMerge is the property that streaming files without
// merging (unitplan.go) changes no answer: random primary-key tables —
// bigint, text and composite keys (whose leading column repeats across
// keys), every merge operator, CDC tables (files with and without the op
// column), NULL values, range partitions, one and several buckets — take
// writes of fresh disjoint key ranges with unique keys, of fresh ranges
// with repeated keys, and of keys overlapping earlier writes, some with a
// subset of the columns. After every write the table is read with
// streaming and with every unit merged whole (reader.MergeAlways), in key
// order, unordered and unordered with selections, for all columns, for
// value columns only and for no column (count(*)) — the consumer reading
// only those (OnlyNeeded) or key columns too — with and without a
// metadata cache: the rows must be equal. Over the run, files must have
// been streamed and segments merged.
func TestStreamedMatchesMerge(t *testing.T) {
	configs := []struct {
		name    string
		keys    []arrow.DataType
		cdc     bool
		buckets int
		ranged  bool
	}{
		{"bigint", []arrow.DataType{arrow.PrimitiveTypes.Int64}, false, 1, false},
		{"text", []arrow.DataType{arrow.BinaryTypes.String}, false, 2, true},
		{"composite-int-text", []arrow.DataType{arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.String}, false, 1, false},
		{"composite-text-bigint", []arrow.DataType{arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64}, true, 2, false},
		{"bigint-cdc", []arrow.DataType{arrow.PrimitiveTypes.Int64}, true, 1, true},
	}
	var total, filtered reader.ScanCounts
	splitParts, filteredParts = 0, 0
	reader.SetSplitFileBytes(t, 1) // every streamed file of several row groups is split
	for ci, cfg := range configs {
		t.Run(cfg.name, func(t *testing.T) {
			m := newStreamModel(t, uint64(ci+11), cfg.keys, cfg.cdc, cfg.buckets, cfg.ranged)
			cache := reader.NewMetaCache(1 << 30)
			for w := range 18 {
				m.write()
				parts := m.partitions()
				var valueCols []bool
				for _, f := range m.table.Schema.Fields() {
					valueCols = append(valueCols, f.Name == "u" || f.Name == "sa" || f.Name == "ja")
				}
				for _, needed := range [][]bool{nil, valueCols, make([]bool, len(valueCols))} {
					// Without OnlyNeeded, key columns always come back.
					onlyNeeded := m.rng.IntN(2) == 0
					visible := needed
					if needed != nil && !onlyNeeded {
						visible = slices.Clone(needed)
						for i := range m.keys {
							visible[i] = true
						}
					}
					// A row filter, half the time: files streamed decode its
					// failing rows' other columns not at all, and split files'
					// row groups it rules out are skipped.
					var rows *reader.RowFilter
					if m.rng.IntN(2) == 0 {
						lo := int64(m.rng.IntN(1000))
						rows = &reader.RowFilter{Conds: []reader.Cond{{Column: "u", Lower: lo, LowerInclusive: true, Upper: lo + 300}}}
						if m.rng.IntN(2) == 0 {
							rows.Conds = append(rows.Conds, reader.Cond{Column: "sa", Lower: int64(100)})
						}
					}
					for mode := range 3 {
						scan := func(merge bool) (*reader.Scan, *reader.ScanStats) {
							mem := arrowutil.NewPoolAllocator()
							mem.Poison = true
							st := &reader.ScanStats{}
							s := &reader.Scan{Store: objstore.Local{}, Table: m.table, Partitions: parts, Mem: mem, Unordered: mode > 0,
								BatchRows: 1 + m.rng.IntN(40), Needed: needed, OnlyNeeded: onlyNeeded, Stats: st, Rows: rows}
							if w%2 == 1 {
								s.Meta = cache
							}
							if merge {
								reader.MergeAlways(s)
							}
							return s, st
						}
						ms, _ := scan(true)
						want, err := scanRows(t, ms, mode)
						if err != nil {
							t.Fatal(err)
						}
						if mode == 1 {
							// Segments and row groups as parallel units.
							ps, _ := scan(false)
							ps.Meta = cache
							pst := &reader.ScanStats{}
							ps.Stats = pst
							got, err := scanParallelRows(t, ps)
							if err != nil {
								t.Fatal(err)
							}
							if rows != nil {
								filtered.Add(pst.Counts())
							}
							if g, wn := neededCells(m.table, visible, got), neededCells(m.table, visible, want); !slices.Equal(g, wn) {
								t.Fatalf("write %d, parallel units, columns %v: %d rows, merged %d\n got %q\nwant %q", w, needed, len(g), len(wn), g, wn)
							}
						}
						ss, st := scan(false)
						got, err := scanRows(t, ss, mode)
						if err != nil {
							t.Fatal(err)
						}
						if mode == 0 && needed == nil {
							// Compaction reads in key order and writes sorted files.
							ks, _ := scan(false)
							checkKeyOrder(t, ks)
						}
						// Columns the consumer does not read may come back
						// NULL (a streamed file's keys under OnlyNeeded).
						got, want = neededCells(m.table, visible, got), neededCells(m.table, visible, want)
						if !slices.Equal(got, want) {
							t.Fatalf("write %d, mode %d, columns %v: streamed %d rows, merged %d\n got %q\nwant %q",
								w, mode, needed, len(got), len(want), got, want)
						}
						total.Add(st.Counts())
					}
				}
			}
		})
	}
	if total.FilesStreamed == 0 || total.MergeFiles < 2 || splitParts == 0 {
		t.Fatalf("streamed %d files, merged at most %d at once, read %d parts of files: the test wants all", total.FilesStreamed, total.MergeFiles, splitParts)
	}
	// A keyed file read alone is split by row group under a row filter
	// too, and the filter's statistics skip row groups of it.
	if filteredParts == 0 || filtered.RowGroupsSkippedStats == 0 {
		t.Fatalf("under row filters: read %d parts of files, skipped %d row groups by statistics: the test wants both", filteredParts, filtered.RowGroupsSkippedStats)
	}
	t.Logf("%+v", total)
}

// scanParallelRows reads the units of scan.ParallelUnits as sorted row
// strings, requiring some unit to be a part of a file.
func scanParallelRows(t *testing.T, scan *reader.Scan) ([]string, error) {
	t.Helper()
	units, err := scan.ParallelUnits(context.Background())
	if err != nil {
		return nil, err
	}
	var out []string
	for _, u := range units {
		if u.RowGroups != nil {
			splitParts++
			if scan.Rows != nil {
				filteredParts++
			}
		}
		it, err := scan.Open(context.Background(), u)
		if err != nil {
			return nil, err
		}
		for {
			b, err := it.Next(context.Background())
			if err == io.EOF {
				break
			}
			if err != nil {
				it.Close()
				return nil, err
			}
			for r := range int(b.NumRows()) {
				out = append(out, rowString(b, r))
			}
			b.Release()
		}
		it.Close()
	}
	sort.Strings(out)
	return out, nil
}

// splitParts counts the units of split files scanParallelRows read,
// filteredParts those of scans with a row filter.
var splitParts, filteredParts int

// checkKeyOrder requires every unit of scan to return its rows in strictly
// ascending key order.
func checkKeyOrder(t *testing.T, scan *reader.Scan) {
	t.Helper()
	var types []arrow.DataType
	var keyCols []int
	for _, k := range scan.Table.PKCols {
		i := scan.Table.Schema.FieldIndices(k)[0]
		keyCols = append(keyCols, i)
		types = append(types, scan.Table.Schema.Field(i).Type)
	}
	cmp, err := arrowutil.NewRowComparer(types)
	if err != nil {
		t.Fatal(err)
	}
	units, err := scan.Units()
	if err != nil {
		t.Fatal(err)
	}
	keys := func(b arrow.RecordBatch) []arrow.Array {
		var out []arrow.Array
		for _, c := range keyCols {
			out = append(out, b.Column(c))
		}
		return out
	}
	for _, u := range units {
		it, err := scan.Open(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		var prev arrow.RecordBatch
		for {
			b, err := it.Next(context.Background())
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			for r := range int(b.NumRows()) {
				var c int
				switch {
				case r > 0:
					c = cmp.Compare(keys(b), r-1, keys(b), r)
				case prev != nil:
					c = cmp.Compare(keys(prev), int(prev.NumRows())-1, keys(b), 0)
				default:
					c = -1
				}
				if c >= 0 {
					t.Fatalf("unit %s/%d: row %s not above the row before it", u.Desc, u.Bucket, rowString(b, r))
				}
			}
			if prev != nil {
				prev.Release()
			}
			prev = b
		}
		if prev != nil {
			prev.Release()
		}
		it.Close()
	}
}

// neededCells keeps, of rows printed by rowString, the cells of the
// columns needed selects (nil: all), sorted again.
func neededCells(t *catalog.Table, needed []bool, rows []string) []string {
	if needed == nil {
		return rows
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		var cells []string
		for _, c := range strings.Split(r, " ") {
			name, _, _ := strings.Cut(c, "=")
			if idx := t.Schema.FieldIndices(name); len(idx) > 0 && needed[idx[0]] {
				cells = append(cells, c)
			}
		}
		out[i] = strings.Join(cells, " ")
	}
	sort.Strings(out)
	return out
}

// streamModel writes random batches into a primary-key table (see
// TestStreamedMatchesMerge).
type streamModel struct {
	t     *testing.T
	rng   *rand.Rand
	table *catalog.Table
	keys  int // leading key columns
	parts map[string]*catalog.PartitionFiles
	descs []string
	// fresh is the first key number no write has used.
	fresh int
}

func newStreamModel(t *testing.T, seed uint64, keyTypes []arrow.DataType, cdc bool, buckets int, ranged bool) *streamModel {
	m := &streamModel{t: t, rng: rand.New(rand.NewPCG(seed, 5)), keys: len(keyTypes), parts: map[string]*catalog.PartitionFiles{}}
	var fields []arrow.Field
	var pk []string
	for i, dt := range keyTypes {
		name := fmt.Sprintf("k%d", i)
		fields = append(fields, arrow.Field{Name: name, Type: dt})
		pk = append(pk, name)
	}
	props := map[string]string{}
	for _, c := range streamCols {
		fields = append(fields, c.f)
		props[reader.MergeOpPrefix+c.f.Name] = c.op
	}
	if cdc {
		fields = append(fields, arrow.Field{Name: "op", Type: arrow.BinaryTypes.String, Nullable: true})
		props[catalog.CDCColumnProperty] = "op"
	}
	var rangeCols []string
	if ranged {
		fields = append(fields, arrow.Field{Name: "p", Type: arrow.BinaryTypes.String})
		rangeCols = []string{"p"}
	}
	m.table = &catalog.Table{ID: "table_stream", Namespace: "s", Name: "t",
		Path:   objstore.LocalURI(filepath.Join(t.TempDir(), "t")),
		Schema: arrow.NewSchema(fields, nil), RangeCols: rangeCols, PKCols: pk, HashBucketNum: buckets, Properties: props}
	return m
}

func (m *streamModel) partitions() []catalog.PartitionFiles {
	var out []catalog.PartitionFiles
	for _, d := range m.descs {
		out = append(out, *m.parts[d])
	}
	return out
}

// keyCell is key column c of key number k: a composite key's leading
// column is k/3 (three keys share it), the second k%3.
func (m *streamModel) keyCell(b array.Builder, c, k int) {
	v := k
	if m.keys > 1 {
		if c == 0 {
			v = k / 3
		} else {
			v = k % 3
		}
	}
	switch bb := b.(type) {
	case *array.Int64Builder:
		bb.Append(int64(v) - 500) // negatives too
	case *array.Int32Builder:
		bb.Append(int32(v) - 500)
	case *array.StringBuilder:
		bb.Append(fmt.Sprintf("k%05d", v))
	}
}

// write writes one batch: fresh unique keys, fresh keys with repeats, or
// keys over everything written so far; sometimes without some columns.
func (m *streamModel) write() {
	n := 1 + m.rng.IntN(60)
	var keys []int
	switch kind := m.rng.IntN(3); {
	case kind == 0 || m.fresh == 0:
		for i := range n {
			keys = append(keys, m.fresh+i)
		}
		m.rng.Shuffle(n, func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		m.fresh += n
	case kind == 1:
		for range n {
			keys = append(keys, m.fresh+m.rng.IntN(n/2+1))
		}
		m.fresh += n/2 + 1
	default:
		for range n {
			keys = append(keys, m.rng.IntN(m.fresh+5))
		}
		m.fresh += 5
	}
	var fields []arrow.Field
	for _, f := range m.table.Schema.Fields() {
		key := slices.Contains(m.table.PKCols, f.Name)
		if key || f.Name == "p" || m.rng.IntN(4) > 0 {
			fields = append(fields, f)
		}
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	for _, k := range keys {
		for i, f := range fields {
			fb := b.Field(i)
			if ki := slices.Index(m.table.PKCols, f.Name); ki >= 0 {
				m.keyCell(fb, ki, k)
				continue
			}
			if f.Name == "p" {
				fb.(*array.StringBuilder).Append([]string{"x", "y"}[k%2])
				continue
			}
			if m.rng.IntN(5) == 0 {
				fb.AppendNull()
				continue
			}
			switch bb := fb.(type) {
			case *array.Int64Builder:
				bb.Append(int64(m.rng.IntN(1000)))
			case *array.Float64Builder:
				bb.Append(float64(m.rng.IntN(1000)) / 4)
			case *array.StringBuilder:
				if f.Name == "op" {
					bb.Append([]string{"insert", "update", "delete"}[m.rng.IntN(3)])
				} else {
					bb.Append(fmt.Sprintf("v%d", m.rng.IntN(1000)))
				}
			}
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	w := &writer.Writer{Store: objstore.Local{}, Table: m.table, Intent: layout.RandomNames{}, RowGroupRows: 16, PageBytes: 256}
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
			pf.Files = append(pf.Files, catalog.DataFile{Path: op.Path, Size: op.Size, ExistCols: op.ExistCols})
		}
	}
}

// TestDamagedKeyStatisticsAreErrors: a file whose footer statistics
// understate its leading key's range (the maximum rewritten below a key it
// holds) would make it look apart from a newer file holding the same key,
// and the key would come back twice. The read fails instead, 58030 naming
// the file, in every read mode and with or without the metadata cache.
func TestDamagedKeyStatisticsAreErrors(t *testing.T) {
	const big = 0x0102030405060708 // a key whose bytes occur nowhere else
	f := newFixture(t, []arrow.Field{idF, nameF}, nil, []string{"id"}, 1)
	f.write([]string{"id", "name"}, []any{1, "a"}, []any{2, "b"}, []any{big, "old"})
	f.write([]string{"id", "name"}, []any{1000, "c"}, []any{big, "new"})
	f.expect("id=1 name=a", "id=2 name=b", "id=1000 name=c", "id=72623859790382856 name=new")
	damaged := f.parts["-5"].Files[0].Path
	path := mustLocal(t, damaged)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	footerLen := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	footer := data[len(data)-8-footerLen : len(data)-8]
	var from, to [8]byte
	binary.LittleEndian.PutUint64(from[:], big)
	binary.LittleEndian.PutUint64(to[:], 10)
	if n := bytes.Count(footer, from[:]); n == 0 {
		t.Fatal("the key's maximum is not in the footer")
	}
	copy(footer, bytes.ReplaceAll(footer, from[:], to[:]))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, meta := range []*reader.MetaCache{nil, reader.NewMetaCache(1 << 20)} {
		for mode := range 3 {
			scan := &reader.Scan{Store: objstore.Local{}, Table: f.table, Partitions: []catalog.PartitionFiles{*f.parts["-5"]},
				Unordered: mode > 0, Meta: meta}
			rows, err := scanRows(t, scan, mode)
			if sqlerr.Code(err) != sqlerr.IOError || !strings.Contains(err.Error(), filepath.Base(path)) {
				t.Fatalf("mode %d: read with damaged statistics: %v (%v), rows %q", mode, err, sqlerr.Code(err), rows)
			}
		}
	}
}
