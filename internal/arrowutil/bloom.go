package arrowutil

import (
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// Key values in Parquet bloom filters. A split-block bloom filter holds the
// xxHash64 of each value's plain encoding: 4 little-endian bytes for columns
// stored as INT32 (int8, int16, int32, date32), 8 for INT64 (int64,
// timestamps), the bytes themselves for strings. The writer hashes key
// columns this way for the checksum of the filters it writes; the reader
// hashes lookup values the same way to probe them.

// bloomHasher is the hash function of every filter arrow-go writes and reads.
var bloomHasher = metadata.NewBloomFilter(32, 32, memory.DefaultAllocator).Hasher()

// BloomKind is how a column's values are hashed into bloom filters.
type BloomKind uint8

const (
	// NoBloom: the column type gets no bloom filter here.
	NoBloom BloomKind = iota
	// BloomInt32 hashes values as INT32.
	BloomInt32
	// BloomInt64 hashes values as INT64.
	BloomInt64
	// BloomBytes hashes values as byte arrays.
	BloomBytes
)

// BloomKindOf is the bloom kind of a column of type dt.
func BloomKindOf(dt arrow.DataType) BloomKind {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.DATE32:
		return BloomInt32
	case arrow.INT64, arrow.TIMESTAMP:
		return BloomInt64
	case arrow.STRING:
		return BloomBytes
	}
	return NoBloom
}

// BloomHashInt is the filter hash of integer v in a column of kind k
// (BloomInt32 or BloomInt64); v must fit the kind.
func BloomHashInt(k BloomKind, v int64) uint64 {
	if k == BloomInt32 {
		return metadata.GetHash(bloomHasher, int32(v))
	}
	return metadata.GetHash(bloomHasher, v)
}

// BloomHashBytes is the filter hash of a string value.
func BloomHashBytes(b []byte) uint64 {
	return metadata.GetHash(bloomHasher, parquet.ByteArray(b))
}

// BloomHashRow is the filter hash of the non-null value i of arr, a column
// whose type has a bloom kind.
func BloomHashRow(arr arrow.Array, i int) uint64 {
	switch a := arr.(type) {
	case *array.String:
		v := a.Value(i)
		return BloomHashBytes(unsafe.Slice(unsafe.StringData(v), len(v)))
	case *array.Int8:
		return BloomHashInt(BloomInt32, int64(a.Value(i)))
	case *array.Int16:
		return BloomHashInt(BloomInt32, int64(a.Value(i)))
	case *array.Int32:
		return BloomHashInt(BloomInt32, int64(a.Value(i)))
	case *array.Date32:
		return BloomHashInt(BloomInt32, int64(a.Value(i)))
	case *array.Int64:
		return BloomHashInt(BloomInt64, a.Value(i))
	case *array.Timestamp:
		return BloomHashInt(BloomInt64, int64(a.Value(i)))
	}
	panic("arrowutil: no bloom hash for " + arr.DataType().String())
}
