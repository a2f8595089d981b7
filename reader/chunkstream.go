package reader

import (
	"fmt"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// arrowSchema is the file's Arrow schema, derived from its footer once
// (what pqarrow.FileReader.Schema derives on every open).
func (fm *fileMeta) arrowSchema() (*arrow.Schema, error) {
	fm.schemaOnce.Do(func() {
		fm.schema, fm.schemaErr = pqarrow.FromParquet(fm.md.Schema, &pqarrow.ArrowReadProperties{}, fm.md.KeyValueMetadata())
		if fm.schemaErr != nil {
			fm.schemaErr = fmt.Errorf("read %s schema: %w", fm.name, fm.schemaErr)
		}
	})
	return fm.schema, fm.schemaErr
}

// openCachedStream opens a stream over the rows sel selects from the
// scan's chunk cache: ok is false (and nothing is held) when some chunk the
// stream needs is too large for the cache or not admitted yet — the caller
// then reads the file's pages. Chunks that are admitted but missing are
// decoded whole from the file and added.
func openCachedStream(fo *fileOpen, order int, scan *Scan, batchRows int, fm *fileMeta, sel *fileSelection, need func(c int) bool) (*fileStream, bool, error) {
	fsch, err := fm.arrowSchema()
	if err != nil {
		return nil, false, err
	}
	if fm.md.Schema.NumColumns() != fsch.NumFields() {
		return nil, false, nil // nested columns: field and leaf indexes differ
	}
	colMap, want, widenTo, err := mapColumns(fsch, scan, fo.f.Path, need)
	if err != nil {
		return nil, false, err
	}
	for _, rg := range sel.rowGroups {
		rgm := fm.md.RowGroup(rg)
		for _, leaf := range want {
			cc, err := rgm.ColumnChunk(leaf)
			if err != nil || cc.TotalUncompressedSize() > MaxChunkBytes {
				return nil, false, nil
			}
		}
	}
	cache := scan.Chunks
	groups := make([][]arrow.Array, len(sel.rowGroups))
	release := func() {
		for _, g := range groups {
			releaseAll(g)
		}
	}
	var missing []chunkKey
	for i, rg := range sel.rowGroups {
		groups[i] = make([]arrow.Array, len(want))
		for j, leaf := range want {
			k := chunkKey{file: fm.key, rowGroup: rg, leaf: leaf}
			if groups[i][j] = cache.get(k); groups[i][j] == nil {
				missing = append(missing, k)
			}
		}
	}
	admitted := true
	for _, k := range missing {
		// Every missing chunk is remembered, so that the next read of
		// this file finds all of them admitted.
		if !cache.admit(k) {
			admitted = false
		}
	}
	if !admitted {
		release()
		return nil, false, nil
	}
	if len(missing) > 0 {
		if err := loadChunks(fo, fm, cache, missing); err != nil {
			release()
			return nil, false, err
		}
		for i, rg := range sel.rowGroups {
			for j, leaf := range want {
				if groups[i][j] == nil {
					if groups[i][j] = cache.get(chunkKey{file: fm.key, rowGroup: rg, leaf: leaf}); groups[i][j] == nil {
						// Evicted at once: the budget is smaller than
						// one file's chunks. Read pages instead.
						release()
						return nil, false, nil
					}
				}
			}
		}
	}
	fields := make([]arrow.Field, len(want))
	for j, leaf := range want {
		fields[j] = fsch.Field(leaf)
	}
	cr := &chunkReader{sc: arrow.NewSchema(fields, nil), groups: groups, batch: int64(batchRows)}
	probe := scan.probeFor(colMap)
	for i, rg := range sel.rowGroups {
		if sel.ranges[i] == nil {
			cr.add(i, rowRange{0, fm.md.RowGroup(rg).NumRows()}, probe)
			continue
		}
		for _, rr := range sel.ranges[i] {
			cr.add(i, rr, probe)
		}
	}
	fs := &fileStream{order: order, path: fo.f.Path, rr: cr, colMap: colMap, widenTo: widenTo,
		mem: scan.Mem, stats: scan.Stats}
	return fs, true, nil
}

// loadChunks decodes the chunks keys of one file whole and adds them to
// the cache, in the Go heap (cache.add).
func loadChunks(fo *fileOpen, fm *fileMeta, cache *ChunkCache, keys []chunkKey) error {
	obj, err := fo.open()
	if err != nil {
		return err
	}
	defer fo.close()
	if obj.Size() != fm.objSize {
		return errCorrupt(fo.f.Path, fmt.Sprintf("the data file (%d bytes, %d when first read)", obj.Size(), fm.objSize), nil)
	}
	mem := memory.DefaultAllocator
	pf, err := file.NewParquetReader(obj, file.WithReadProps(parquet.NewReaderProperties(mem)), file.WithMetadata(fm.md))
	if err != nil {
		return footerError(fo.f.Path, obj, obj.Size(), err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: DefaultBatchRows}, mem)
	if err != nil {
		return fmt.Errorf("read %s: %w", fo.f.Path, err)
	}
	for _, k := range keys {
		arr, err := decodeChunk(fo, fr, k)
		if err != nil {
			return err
		}
		got := cache.add(k, arr)
		arr.Release()
		got.Release()
	}
	return nil
}

// decodeChunk reads column chunk k whole into one array.
func decodeChunk(fo *fileOpen, fr *pqarrow.FileReader, k chunkKey) (arrow.Array, error) {
	fields, err := fr.Manifest.GetFieldIndices([]int{k.leaf})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", fo.f.Path, err)
	}
	col, err := fr.GetFieldReader(fo.ctx, fields[0], map[int]bool{k.leaf: true}, []int{k.rowGroup})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", fo.f.Path, err)
	}
	defer col.Release()
	rows := fr.ParquetReader().MetaData().RowGroup(k.rowGroup).NumRows()
	ch, err := col.NextBatch(rows)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", fo.f.Path, err)
	}
	defer ch.Release()
	if int64(ch.Len()) != rows {
		return nil, errCorrupt(fo.f.Path, fmt.Sprintf("row group %d (%d of %d rows in column %d)", k.rowGroup, ch.Len(), rows, k.leaf), nil)
	}
	if len(ch.Chunks()) == 1 {
		arr := ch.Chunk(0)
		arr.Retain()
		return arr, nil
	}
	arr, err := array.Concatenate(ch.Chunks(), memory.DefaultAllocator)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", fo.f.Path, err)
	}
	return arr, nil
}

// chunkReader yields selected row ranges of cached row groups as batches
// of slices of the cached arrays (no copy).
type chunkReader struct {
	sc     *arrow.Schema
	groups [][]arrow.Array // per selected row group, per batch column
	ranges []groupRange
	batch  int64
	cur    int
	done   int64 // rows of ranges[cur] returned
	rec    arrow.RecordBatch
}

// groupRange is a range of rows of the g-th selected row group.
type groupRange struct {
	g int
	rowRange
}

// add appends the rows rr of group g, narrowed by probe to the runs of
// rows whose key matches it. Files are sorted by key (the package's
// invariant), so the runs of each probed key are found by binary search.
func (r *chunkReader) add(g int, rr rowRange, probe *rangeProbe) {
	if rr.end <= rr.start {
		return
	}
	if probe == nil {
		r.ranges = append(r.ranges, groupRange{g, rr})
		return
	}
	keys, p := r.groups[g][probe.col], probe.pred
	cmp := p.kind.compare
	n := int(rr.end - rr.start)
	at := func(j int) keyValue { return valueAt(keys, int(rr.start)+j) }
	from := 0 // points ascend: each one's run starts after the last one's
	for _, v := range p.points {
		lo := from + sort.Search(n-from, func(j int) bool { return cmp(at(from+j), v) >= 0 })
		hi := lo + sort.Search(n-lo, func(j int) bool { return cmp(at(lo+j), v) > 0 })
		for j := lo; j < hi; j++ {
			if keys.IsNull(int(rr.start)+j) || !p.match(at(j)) {
				continue
			}
			row := rr.start + int64(j)
			if k := len(r.ranges); k > 0 && r.ranges[k-1].g == g && r.ranges[k-1].end == row {
				r.ranges[k-1].end++
			} else {
				r.ranges = append(r.ranges, groupRange{g, rowRange{row, row + 1}})
			}
		}
		from = hi
	}
}

func (r *chunkReader) Next() bool {
	if r.rec != nil {
		r.rec.Release()
		r.rec = nil
	}
	for r.cur < len(r.ranges) {
		gr := r.ranges[r.cur]
		from := gr.start + r.done
		n := min(r.batch, gr.end-from)
		if n <= 0 {
			r.cur, r.done = r.cur+1, 0
			continue
		}
		cols := make([]arrow.Array, len(r.groups[gr.g]))
		for i, a := range r.groups[gr.g] {
			cols[i] = array.NewSlice(a, from, from+n)
		}
		r.rec = array.NewRecordBatch(r.sc, cols, n)
		releaseAll(cols)
		r.done += n
		return true
	}
	return false
}

func (r *chunkReader) RecordBatch() arrow.RecordBatch { return r.rec }

func (r *chunkReader) Err() error { return nil }

func (r *chunkReader) Release() {
	if r.rec != nil {
		r.rec.Release()
		r.rec = nil
	}
	for _, g := range r.groups {
		releaseAll(g)
	}
	r.groups = nil
}
