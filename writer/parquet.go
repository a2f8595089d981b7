package writer

import (
	"hash/crc32"
	"io"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/arrowutil"
)

// Parquet's zstd pages go through libzstd (see the package doc).
import _ "github.com/lakesoul-go/lakesoul/internal/zstdcodec"

// RowGroupRows bounds a row group; readers stream one row group per file at
// a time, and the writer gathers one row group's column at a time.
const RowGroupRows = 128 * 1024

// DataPageBytes bounds a data page. A keyed read decompresses and decodes
// one page of each column it returns (the page index finds it), so pages
// are kept small: 32 KiB instead of Parquet's usual 1 MiB cut a ccf point
// lookup several-fold (zstd decoding dominated it) and cost merges little
// (BenchmarkMergeCCF: within noise for 10 files, a few percent for 100).
const DataPageBytes = 32 << 10

// bloomFPP is the false-positive rate of the bloom filters: a lookup of an
// absent key in a bucket of n files reads about n/100 of them.
const bloomFPP = 0.01

// fileFormat is the shape of a data file: row group length and data page
// size, and a bloom filter per primary-key or indexed column
// (Table.IndexedCols) sized for the file's rows per row group (statistics
// and the page index cover every column).
type fileFormat struct {
	rowGroupRows, pageBytes int
	// bloomCols are the file schema's indices of the columns with a filter.
	bloomCols []int
	// ndv is each filter's expected number of distinct values.
	ndv int64
	// keyCols are the file schema's indices of the primary-key columns, in
	// key order (nil: a table without a primary key); the file's rows are
	// sorted by them, and its footer says whether a key repeats
	// (uniquekeys.go).
	keyCols []int
}

// bloomColumns are the columns of t whose files get bloom filters: the
// primary key and the indexed columns.
func bloomColumns(t *catalog.Table) []string {
	return append(slices.Clone(t.PKCols), t.IndexedCols...)
}

// newFileFormat decides the format of a file of schema, sorted by the
// primary key pk (nil: none), with bloom filters on columns bloom and the
// given row count (rowGroupRows and pageBytes of 0 take the defaults). Only
// flat schemas get filters (a field's index is then its leaf column's), of
// types the reader can probe.
func newFileFormat(schema *arrow.Schema, pk, bloom []string, rows, rowGroupRows, pageBytes int) fileFormat {
	ff := fileFormat{rowGroupRows: RowGroupRows, pageBytes: DataPageBytes}
	for _, k := range pk {
		idx := schema.FieldIndices(k)
		if len(idx) == 0 {
			ff.keyCols = nil // not a keyed file: nothing to say about its keys
			break
		}
		ff.keyCols = append(ff.keyCols, idx[0])
	}
	if rowGroupRows > 0 {
		ff.rowGroupRows = rowGroupRows
	}
	if pageBytes > 0 {
		ff.pageBytes = pageBytes
	}
	ff.ndv = int64(max(1, min(rows, ff.rowGroupRows)))
	for i, f := range schema.Fields() {
		if _, nested := f.Type.(arrow.NestedType); nested {
			ff.bloomCols = nil
			return ff
		}
		if slices.Contains(bloom, f.Name) && arrowutil.BloomKindOf(f.Type) != arrowutil.NoBloom {
			ff.bloomCols = append(ff.bloomCols, i)
		}
	}
	return ff
}

// DataCodec compresses data files' pages: LZ4_RAW. Chosen by measurement
// against zstd level 1 (the default before), Snappy and no compression,
// all in one run each (`bench clients --codecs`, `bench tpch` with
// lakesoul-keyed:LZ4_RAW beside lakesoul-keyed, `bench ccf --codec`, and
// reader's BenchmarkFileLayout): decompression was over 40 % of a scan's
// CPU with zstd, and LZ4_RAW cut the server CPU of a Flight SQL read of
// the CCF table by ~25 % (parallel endpoints ~33 %), the reader's CPU per
// row of a lineitem-like file by ~35 %, a point lookup's CPU by ~20 %,
// and TPC-H's geometric mean by ~20 % at scale 1 (2–40 % at 0.1), for
// the same ingest CPU and files 1.55–1.7× as large; Snappy gained a few
// percent at the same size, no compression little over LZ4_RAW at 3×. Every Parquet reader LakeSoul's engines use reads LZ4_RAW (arrow-rs
// in LakeSoul's native IO, parquet-mr from 1.13 as in Spark 3.4+, DuckDB).
// Files written with other codecs stay readable (the codec is per column
// chunk), and compaction rewrites them into this one.
var DataCodec = compress.Codecs.Lz4Raw

// newParquetWriter starts a Parquet file of the given schema on w:
// DataCodec (level 1 where the codec has levels, as zstd), no dictionary
// (measured faster for this workload, and the reader's PLAIN path needs
// none), DECIMAL as integers where they fit, the Arrow schema
// stored so types round-trip, statistics and the page index on every
// column, bloom filters on the columns ff names. Row groups are
// unbuffered: each column chunk goes to w as soon as it is written, so a
// file in progress holds one column chunk in memory, not a row group.
func newParquetWriter(w io.Writer, schema *arrow.Schema, mem memory.Allocator, ff fileFormat) (*pqarrow.FileWriter, error) {
	opts := []parquet.WriterProperty{
		parquet.WithCompression(DataCodec),
		parquet.WithCompressionLevel(1),
		parquet.WithDictionaryDefault(false),
		// DECIMAL of up to 9 / 18 digits as INT32 / INT64 (Parquet's
		// integer-backed decimals, which every Parquet reader reads):
		// BenchmarkFileLayout reads a lineitem-like file with four
		// DECIMAL(15,2) columns in ~20 % less CPU this way even through
		// pqarrow, and the reader's PLAIN path decodes them directly
		// (reader/plainpages.go), where the 16-byte big-endian
		// FIXED_LEN_BYTE_ARRAY form sent the whole file through pqarrow.
		parquet.WithStoreDecimalAsInteger(true),
		parquet.WithMaxRowGroupLength(int64(ff.rowGroupRows)),
		parquet.WithDataPageSize(int64(ff.pageBytes)),
		// Page sizes are checked after each batch of values written.
		parquet.WithBatchSize(int64(min(1024, max(16, ff.pageBytes/64)))),
		parquet.WithPageIndexEnabled(true),
		parquet.WithAllocator(mem),
		parquet.WithCreatedBy("lakesoul-go"),
	}
	for _, c := range ff.bloomCols {
		name := schema.Field(c).Name
		opts = append(opts, parquet.WithBloomFilterEnabledFor(name, true),
			parquet.WithBloomFilterNDVFor(name, ff.ndv), parquet.WithBloomFilterFPPFor(name, bloomFPP))
	}
	return pqarrow.NewFileWriter(schema, w, parquet.NewWriterProperties(opts...),
		pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema(), pqarrow.WithAllocator(mem)))
}

// bloomChecksum is the CRC-32C of the bitset of the bloom filter the
// Parquet writer builds for col, one row group's values of a column:
// the same filter (size from ff.ndv, same hashes) built here. Readers
// check it (layout.BloomChecksumsKey), since a damaged bitset would
// silently hide rows.
func (ff fileFormat) bloomChecksum(col arrow.Array, mem memory.Allocator) uint32 {
	bf := metadata.NewBloomFilterFromNDVAndFPP(uint32(ff.ndv), bloomFPP, parquet.DefaultMaxBloomFilterBytes, mem)
	defer bf.Release()
	for i := range col.Len() {
		if col.IsValid(i) {
			bf.InsertHash(arrowutil.BloomHashRow(col, i))
		}
	}
	h := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	if _, err := bf.WriteTo(h, nil); err != nil {
		panic(err) // hash.Hash never fails
	}
	return h.Sum32()
}
