package reader

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/lakesoul-go/lakesoul/internal/arrowutil"
	"github.com/lakesoul-go/lakesoul/layout"
	lsschema "github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Pruning inside the merge. A scan with a key filter asks, for each file of
// a unit, which row groups and pages can hold a matching key:
//
//   - row-group statistics (min/max of each key column) drop row groups
//     whose range misses every allowed key;
//   - for point lookups (= / IN), the bloom filter of each remaining row
//     group drops those that hold none of the keys;
//   - the page index (column index + offset index) of the key columns keeps
//     only the row ranges of the pages whose range can match.
//
// A file left with nothing is not opened at all (its metadata comes from
// the MetaCache). Every row that can carry a matching key is read, so all
// versions of such a key are merged; rows read for other keys are dropped
// after the merge (filterIterator). Files without statistics, page index or
// bloom filters are read whole, as before.

// fileSelection is what of one file a scan reads: row groups (ascending)
// and, per selected row group, the row ranges within it (nil: all rows).
// probe is set for point lookups, which read the key column first wherever
// the file allows seeking (rangeReader).
type fileSelection struct {
	rowGroups []int
	ranges    [][]rowRange
	probe     bool
}

// restrict is sel's row groups among groups (ascending), nil when none.
func (sel *fileSelection) restrict(groups []int) *fileSelection {
	out := &fileSelection{probe: sel.probe}
	for i, g := range sel.rowGroups {
		if _, ok := slices.BinarySearch(groups, g); ok {
			out.rowGroups = append(out.rowGroups, g)
			out.ranges = append(out.ranges, sel.ranges[i])
		}
	}
	if len(out.rowGroups) == 0 {
		return nil
	}
	return out
}

// rowRange is the rows [start, end).
type rowRange struct{ start, end int64 }

// colStats is a row group's range of one key column; ok is false when the
// file has no usable statistics for it.
type colStats struct {
	ok     bool
	lo, hi keyValue
}

// pageBounds is the page index of one key column chunk: each page's first
// row (within the row group) and its value range.
type pageBounds struct {
	first  []int64
	lo, hi []keyValue
	null   []bool // the page holds only NULLs
	// bounded is false when the chunk has an offset index but no column
	// index: pages can be located but not pruned.
	bounded bool
}

// sourceFunc opens the file for reading index structures on demand.
type sourceFunc func() (parquet.ReaderAtSeeker, error)

// errCorrupt is the error for a data file whose footer or index structures
// are damaged: 58030, naming the file.
func errCorrupt(name, what string, cause error) error {
	e := &sqlerr.Error{Code: sqlerr.IOError, Message: fmt.Sprintf("could not read file %q: %s is corrupt", name, what)}
	if cause != nil {
		e.Detail, e.Err = cause.Error(), cause
	}
	return e
}

// newFileMeta wraps a footer parsed from an object of objSize bytes.
func newFileMeta(k fileKey, md *metadata.FileMetaData, objSize int64) *fileMeta {
	fm := &fileMeta{key: k, md: md, name: k.path, objSize: objSize,
		ours:   strings.HasPrefix(md.GetCreatedBy(), "lakesoul-go"),
		stats:  map[int][]colStats{},
		pages:  map[[2]int]*pageBounds{},
		blooms: map[[2]int]metadata.BloomFilter{}}
	// The parsed footer holds several objects per column chunk.
	fm.bytes.Store(int64(4*md.Size()) + 1024)
	return fm
}

// leafOf is the leaf column of top-level column name, or -1.
func (fm *fileMeta) leafOf(name string) int {
	s := fm.md.Schema
	for i := range s.NumColumns() {
		if p := s.Column(i).ColumnPath(); len(p) == 1 && p[0] == name {
			return i
		}
	}
	return -1
}

// fileLeaf is the leaf of table column name in the file fm describes: by
// its name, else by its newest former name the file has (files keep the
// names columns had when they were written); -1 when it has neither.
func (s *Scan) fileLeaf(fm *fileMeta, name string) int {
	if leaf := fm.leafOf(name); leaf >= 0 {
		return leaf
	}
	idx := s.Table.Schema.FieldIndices(name)
	if len(idx) == 0 {
		return -1
	}
	for _, n := range lsschema.FormerNames(s.Table.Schema.Field(idx[0])) {
		if leaf := fm.leafOf(n); leaf >= 0 {
			return leaf
		}
	}
	return -1
}

// kindOfLeaf is how values of a leaf compare, if they are usable as keys
// or conditions: signed integers, byte arrays in bytewise order, or
// DECIMALs of up to 18 digits (one kind per scale, decimalKind) stored as
// integers or — in files of this server's earlier layout — as big-endian
// two's complement FIXED_LEN_BYTE_ARRAYs, whose statistics our writer
// (arrow-go) orders as signed numbers. Other writers' fixed-length
// decimals prove nothing: some ordered their statistics bytewise.
func (fm *fileMeta) kindOfLeaf(leaf int) keyKind {
	c := fm.md.Schema.Column(leaf)
	if dec, ok := c.LogicalType().(schema.DecimalLogicalType); ok {
		// Unscaled integers compare as the values only at one scale.
		signed := c.SortOrder() == schema.SortSIGNED && dec.Precision() <= maxDecimalDigits && dec.Scale() >= 0
		switch c.PhysicalType() {
		case parquet.Types.Int32, parquet.Types.Int64:
			if signed {
				return decimalKind(dec.Scale())
			}
		case parquet.Types.FixedLenByteArray:
			if signed && fm.ours {
				return decimalKind(dec.Scale())
			}
		}
		return 0
	}
	switch c.PhysicalType() {
	case parquet.Types.Int32, parquet.Types.Int64:
		if c.SortOrder() == schema.SortSIGNED {
			return kindInt
		}
	case parquet.Types.ByteArray:
		if c.SortOrder() == schema.SortUNSIGNED {
			return kindStr
		}
	}
	return 0
}

// bloomKindOfLeaf is the hashing of leaf's bloom filters, by its physical
// type: a column widened since the file was written (int → bigint) keeps
// the hashes of its file type.
func (fm *fileMeta) bloomKindOfLeaf(leaf int) arrowutil.BloomKind {
	switch fm.md.Schema.Column(leaf).PhysicalType() {
	case parquet.Types.Int32:
		return arrowutil.BloomInt32
	case parquet.Types.Int64:
		return arrowutil.BloomInt64
	case parquet.Types.ByteArray:
		return arrowutil.BloomBytes
	}
	return arrowutil.NoBloom
}

// keyStats returns each row group's statistics of leaf, for predicates of
// kind (all !ok when the leaf's values do not compare that way).
func (fm *fileMeta) keyStats(leaf int, kind keyKind) ([]colStats, error) {
	fm.mu.Lock()
	defer fm.mu.Unlock()
	if st, ok := fm.stats[leaf]; ok {
		return st, nil
	}
	st := make([]colStats, fm.md.NumRowGroups())
	if fm.kindOfLeaf(leaf) == kind {
		for rg := range st {
			cc, err := fm.md.RowGroup(rg).ColumnChunk(leaf)
			if err != nil {
				return nil, errCorrupt(fm.name, "the footer", err)
			}
			ts, err := cc.Statistics()
			if err != nil || ts == nil || !ts.HasMinMax() {
				continue
			}
			switch s := ts.(type) {
			case *metadata.Int32Statistics:
				st[rg] = colStats{ok: true, lo: keyValue{i: int64(s.Min())}, hi: keyValue{i: int64(s.Max())}}
			case *metadata.Int64Statistics:
				st[rg] = colStats{ok: true, lo: keyValue{i: s.Min()}, hi: keyValue{i: s.Max()}}
			case *metadata.ByteArrayStatistics:
				st[rg] = colStats{ok: true, lo: keyValue{s: string(s.Min())}, hi: keyValue{s: string(s.Max())}}
			case *metadata.FixedLenByteArrayStatistics:
				// A DECIMAL (kindOfLeaf): an unscaled value beyond int64 is
				// beyond the column's 18 digits, a damaged footer.
				lo, ok1 := bigEndianInt64(s.Min())
				hi, ok2 := bigEndianInt64(s.Max())
				if !ok1 || !ok2 {
					return nil, errCorrupt(fm.name, "the footer", fmt.Errorf("statistics of row group %d column %d: a DECIMAL bound out of range", rg, leaf))
				}
				st[rg] = colStats{ok: true, lo: keyValue{i: lo}, hi: keyValue{i: hi}}
			}
			// Statistics whose minimum exceeds their maximum are damaged:
			// pruning by them could skip matching rows.
			if st[rg].ok && kind.compare(st[rg].lo, st[rg].hi) > 0 {
				return nil, errCorrupt(fm.name, "the footer", fmt.Errorf("statistics of row group %d column %d: minimum above maximum", rg, leaf))
			}
		}
	}
	fm.stats[leaf] = st
	fm.account(int64(len(st)) * 64)
	return st, nil
}

// decodeBound decodes a plain-encoded page bound of a leaf of kind.
func decodeBound(kind keyKind, phys parquet.Type, b []byte) (keyValue, bool) {
	switch {
	case kind == kindStr:
		return keyValue{s: string(b)}, true
	case phys == parquet.Types.Int32 && len(b) == 4:
		return keyValue{i: int64(int32(binary.LittleEndian.Uint32(b)))}, true
	case phys == parquet.Types.Int64 && len(b) == 8:
		return keyValue{i: int64(binary.LittleEndian.Uint64(b))}, true
	case phys == parquet.Types.FixedLenByteArray && kind >= kindDecimal:
		v, ok := bigEndianInt64(b)
		return keyValue{i: v}, ok
	}
	return keyValue{}, false
}

// bigEndianInt64 is the big-endian two's complement integer b (a
// fixed-length DECIMAL's unscaled value) when it fits an int64.
func bigEndianInt64(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 16 {
		return 0, false
	}
	var v int64
	if b[0]&0x80 != 0 {
		v = -1 // the sign, extended
	}
	for i, c := range b {
		if i < len(b)-8 {
			// A byte above the low eight must be the sign's extension.
			if (v == -1 && c != 0xff) || (v == 0 && c != 0) {
				return 0, false
			}
			continue
		}
		v = v<<8 | int64(c)
	}
	if len(b) > 8 && (v < 0) != (b[0]&0x80 != 0) {
		return 0, false // the low eight bytes' sign differs from the value's
	}
	return v, true
}

// pageBoundsOf returns the page index of (rg, leaf), nil when the file has
// none. It is checked for consistency with the column chunk (offsets,
// first rows) and, in our own files, with the row group's statistics and
// the key order (first is set for the leading key column, by which our
// files are sorted); a damaged index is an error, never a wrong answer.
func (fm *fileMeta) pageBoundsOf(rg, leaf int, kind keyKind, first bool, st colStats, src sourceFunc) (*pageBounds, error) {
	k := [2]int{rg, leaf}
	fm.mu.Lock()
	defer fm.mu.Unlock()
	if pb, ok := fm.pages[k]; ok {
		return pb, nil
	}
	rgMeta := fm.md.RowGroup(rg)
	cc, err := rgMeta.ColumnChunk(leaf)
	if err != nil {
		return nil, errCorrupt(fm.name, "the footer", err)
	}
	if cc.GetOffsetIndexLocation() == nil || cc.HasDictionaryPage() {
		fm.pages[k] = nil
		return nil, nil
	}
	in, err := src()
	if err != nil {
		return nil, err
	}
	pir := &metadata.PageIndexReader{Input: in, Props: parquet.NewReaderProperties(nil), FileMetadata: fm.md}
	rgr, err := pir.RowGroup(rg)
	if err != nil {
		return nil, errCorrupt(fm.name, "the page index", err)
	}
	oi, err := rgr.GetOffsetIndex(leaf)
	if err != nil || oi == nil {
		return nil, errCorrupt(fm.name, "the page index", err)
	}
	locs := oi.GetPageLocations()
	rows := rgMeta.NumRows()
	start := cc.DataPageOffset()
	end := start + cc.TotalCompressedSize()
	pb := &pageBounds{first: make([]int64, len(locs))}
	if len(locs) == 0 {
		return nil, errCorrupt(fm.name, "the page index", errors.New("no pages"))
	}
	for i, l := range locs {
		bad := l.Offset < start || int64(l.CompressedPageSize) <= 0 || l.Offset+int64(l.CompressedPageSize) > end ||
			l.FirstRowIndex < 0 || l.FirstRowIndex >= rows
		if i == 0 {
			bad = bad || l.FirstRowIndex != 0
		} else {
			prev := locs[i-1]
			bad = bad || l.FirstRowIndex <= prev.FirstRowIndex || l.Offset < prev.Offset+int64(prev.CompressedPageSize)
		}
		if bad {
			return nil, errCorrupt(fm.name, "the page index", fmt.Errorf("offset index of row group %d column %d, page %d", rg, leaf, i))
		}
		pb.first[i] = l.FirstRowIndex
	}
	if cc.GetColumnIndexLocation() != nil && fm.kindOfLeaf(leaf) == kind {
		ci, err := rgr.GetColumnIndex(leaf)
		if err != nil || ci == nil {
			return nil, errCorrupt(fm.name, "the page index", err)
		}
		mins, maxs, nulls := ci.GetMinValues(), ci.GetMaxValues(), ci.GetNullPages()
		if len(mins) != len(locs) || len(maxs) != len(locs) || len(nulls) != len(locs) {
			return nil, errCorrupt(fm.name, "the page index", fmt.Errorf("column index of row group %d column %d: %d pages, offset index %d", rg, leaf, len(mins), len(locs)))
		}
		phys := fm.md.Schema.Column(leaf).PhysicalType()
		pb.lo, pb.hi, pb.null, pb.bounded = make([]keyValue, len(locs)), make([]keyValue, len(locs)), nulls, true
		for i := range locs {
			if nulls[i] {
				continue
			}
			lo, ok1 := decodeBound(kind, phys, mins[i])
			hi, ok2 := decodeBound(kind, phys, maxs[i])
			bad := !ok1 || !ok2 || kind.compare(lo, hi) > 0
			if fm.ours && !bad {
				// Our writer records exact bounds: they lie within the
				// row group's, and the leading key ascends page by page.
				if st.ok {
					bad = kind.compare(lo, st.lo) < 0 || kind.compare(hi, st.hi) > 0
				}
				if first && i > 0 && !nulls[i-1] {
					bad = bad || kind.compare(pb.hi[i-1], lo) > 0
				}
			}
			if bad {
				return nil, errCorrupt(fm.name, "the page index", fmt.Errorf("column index of row group %d column %d, page %d", rg, leaf, i))
			}
			pb.lo[i], pb.hi[i] = lo, hi
		}
	}
	fm.pages[k] = pb
	fm.account(int64(len(locs)) * 64)
	return pb, nil
}

// bloomOf returns the bloom filter of (rg, leaf), nil when there is none.
// The filters of our own files are checked against the checksums in the
// footer.
func (fm *fileMeta) bloomOf(rg, leaf int, src sourceFunc) (metadata.BloomFilter, error) {
	k := [2]int{rg, leaf}
	fm.mu.Lock()
	defer fm.mu.Unlock()
	if bf, ok := fm.blooms[k]; ok {
		return bf, nil
	}
	cc, err := fm.md.RowGroup(rg).ColumnChunk(leaf)
	if err != nil {
		return nil, errCorrupt(fm.name, "the footer", err)
	}
	off, n := cc.BloomFilterOffset(), int64(cc.BloomFilterLength())
	if off <= 0 {
		fm.blooms[k] = nil
		return nil, nil
	}
	if n <= 0 || off+n > fm.objSize {
		return nil, errCorrupt(fm.name, "a bloom filter", fmt.Errorf("row group %d column %d: %d bytes at %d", rg, leaf, n, off))
	}
	in, err := src()
	if err != nil {
		return nil, err
	}
	region := make([]byte, n)
	if _, err := in.ReadAt(region, off); err != nil && err != io.EOF {
		return nil, fmt.Errorf("read bloom filter of %s: %w", fm.key.path, err)
	}
	r := &metadata.BloomFilterReader{Input: regionReader{region: region, off: off, size: fm.objSize}, FileMetadata: fm.md,
		Props: parquet.NewReaderProperties(nil), BufferPool: &bloomBuffers}
	rgr, err := r.RowGroup(rg)
	if err != nil {
		return nil, errCorrupt(fm.name, "a bloom filter", err)
	}
	bf, err := rgr.GetColumnBloomFilter(leaf)
	if err != nil || bf == nil || bf.Size() > n {
		return nil, errCorrupt(fm.name, "a bloom filter", err)
	}
	if fm.ours {
		if err := fm.checkBloom(rg, leaf, region[n-bf.Size():]); err != nil {
			return nil, err
		}
	}
	fm.blooms[k] = bf
	fm.account(bf.Size() + 128)
	return bf, nil
}

// checkBloom compares a bitset of our own file with its recorded checksum.
func (fm *fileMeta) checkBloom(rg, leaf int, bitset []byte) error {
	if fm.crcs == nil && fm.crcErr == nil {
		v := fm.md.KeyValueMetadata().FindValue(layout.BloomChecksumsKey)
		if v == nil {
			fm.crcErr = errors.New("no bloom filter checksums")
		} else {
			fm.crcs, fm.crcErr = layout.ParseBloomChecksums(*v)
		}
	}
	if fm.crcErr != nil {
		return errCorrupt(fm.name, "a bloom filter", fm.crcErr)
	}
	want, ok := fm.crcs[[2]int{rg, leaf}]
	if !ok || crc32.Checksum(bitset, crc32.MakeTable(crc32.Castagnoli)) != want {
		return errCorrupt(fm.name, "a bloom filter", fmt.Errorf("row group %d column %d: checksum mismatch", rg, leaf))
	}
	return nil
}

// regionReader serves reads of one byte range of a file, as the bloom
// filter reader asks for it.
type regionReader struct {
	region []byte
	off    int64
	size   int64
}

func (r regionReader) ReadAt(p []byte, off int64) (int, error) {
	if off < r.off || off > r.off+int64(len(r.region)) {
		return 0, io.ErrUnexpectedEOF
	}
	n := copy(p, r.region[off-r.off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (r regionReader) Read([]byte) (int, error) { return 0, io.EOF }

func (r regionReader) Seek(offset int64, whence int) (int64, error) {
	if whence == io.SeekEnd {
		return r.size + offset, nil
	}
	return offset, nil
}

// bloomBuffers back the bloom filters the cache holds (arrow-go's reader
// takes them from a pool and returns them when a filter is collected).
var bloomBuffers = sync.Pool{New: func() any { return memory.NewResizableBuffer(memory.DefaultAllocator) }}

// planFile decides what of the file fm describes a scan filtered by m
// reads, counting in st; nil when nothing of it can match. With pages
// unset the page index is not consulted (whole row groups are read).
func (s *Scan) planFile(fm *fileMeta, m *keyMatcher, src sourceFunc, st *ScanStats, pages bool) (*fileSelection, error) {
	nrg := fm.md.NumRowGroups()
	st.RowGroups.Add(int64(nrg))
	type predLeaf struct {
		p     *keyPred
		leaf  int
		stats []colStats
		first bool // the table's leading key column
	}
	var preds []predLeaf
	for i := range m.preds {
		p := &m.preds[i]
		leaf := s.fileLeaf(fm, p.name)
		if leaf < 0 {
			continue // the merge reports a file without its key
		}
		cs, err := fm.keyStats(leaf, p.kind)
		if err != nil {
			return nil, err
		}
		preds = append(preds, predLeaf{p: p, leaf: leaf, stats: cs, first: s.Table.HasPK() && p.name == s.Table.PKCols[0]})
	}
	cand := make([]int, 0, nrg)
	for rg := range nrg {
		keep := true
		for _, pl := range preds {
			if c := pl.stats[rg]; c.ok && !pl.p.overlaps(c.lo, c.hi) {
				keep = false
				break
			}
		}
		if keep {
			cand = append(cand, rg)
		}
	}
	st.RowGroupsSkippedStats.Add(int64(nrg - len(cand)))
	if len(cand) == 0 {
		st.FilesSkippedStats.Add(1)
		return nil, nil
	}
	bloomed := cand[:0:0]
	for _, rg := range cand {
		keep := true
		for _, pl := range preds {
			hashes := pl.p.bloomHashes(fm.bloomKindOfLeaf(pl.leaf))
			if hashes == nil {
				continue
			}
			bf, err := fm.bloomOf(rg, pl.leaf, src)
			if err != nil {
				return nil, err
			}
			if bf != nil && !slices.ContainsFunc(hashes, bf.CheckHash) {
				keep = false
				break
			}
		}
		if keep {
			bloomed = append(bloomed, rg)
		}
	}
	st.RowGroupsSkippedBloom.Add(int64(len(cand) - len(bloomed)))
	if len(bloomed) == 0 {
		st.FilesSkippedBloom.Add(1)
		return nil, nil
	}
	sel := &fileSelection{probe: s.probeFor(nil) != nil}
	if !pages {
		sel.rowGroups = bloomed
		sel.ranges = make([][]rowRange, len(bloomed))
		return sel, nil
	}
	for _, rg := range bloomed {
		rows := fm.md.RowGroup(rg).NumRows()
		ranges := []rowRange{{0, rows}}
		paged := false
		for _, pl := range preds {
			pb, err := fm.pageBoundsOf(rg, pl.leaf, pl.p.kind, pl.first, pl.stats[rg], src)
			if err != nil {
				return nil, err
			}
			if pb == nil || !pb.bounded {
				continue
			}
			var keep []rowRange
			for i := range pb.first {
				if pb.null[i] || !pl.p.overlaps(pb.lo[i], pb.hi[i]) {
					continue
				}
				end := rows
				if i+1 < len(pb.first) {
					end = pb.first[i+1]
				}
				if n := len(keep); n > 0 && keep[n-1].end == pb.first[i] {
					keep[n-1].end = end
				} else {
					keep = append(keep, rowRange{pb.first[i], end})
				}
			}
			st.Pages.Add(int64(len(pb.first)))
			st.PagesSkipped.Add(int64(len(pb.first)) - pagesIn(pb, keep))
			ranges, paged = intersectRanges(ranges, keep), true
		}
		if len(ranges) == 0 {
			st.RowGroupsSkippedPages.Add(1)
			continue
		}
		sel.rowGroups = append(sel.rowGroups, rg)
		if paged && !(len(ranges) == 1 && ranges[0] == rowRange{0, rows}) {
			sel.ranges = append(sel.ranges, ranges)
		} else {
			sel.ranges = append(sel.ranges, nil)
		}
	}
	if len(sel.rowGroups) == 0 {
		st.FilesSkippedStats.Add(1)
		return nil, nil
	}
	return sel, nil
}

// pagesIn counts the pages of pb that start inside ranges.
func pagesIn(pb *pageBounds, ranges []rowRange) int64 {
	var n int64
	for _, f := range pb.first {
		for _, r := range ranges {
			if f >= r.start && f < r.end {
				n++
				break
			}
		}
	}
	return n
}

// intersectRanges intersects two ascending lists of disjoint ranges.
func intersectRanges(a, b []rowRange) []rowRange {
	var out []rowRange
	for i, j := 0, 0; i < len(a) && j < len(b); {
		lo, hi := max(a[i].start, b[j].start), min(a[i].end, b[j].end)
		if lo < hi {
			out = append(out, rowRange{lo, hi})
		}
		if a[i].end < b[j].end {
			i++
		} else {
			j++
		}
	}
	return out
}
