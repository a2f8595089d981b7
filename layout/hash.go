package layout

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// Bucket hashing.
//
// Source: LakeSoul rust/lakesoul-io/src/utils/hash (spark_murmur3.rs and
// mod.rs) plus the bucket rule of physical_plan/repartition
// (`hash % hash_bucket_num as u32`). The hash is Murmur3 x86_32 in the
// variant Spark uses for hashUnsafeBytes: full 4-byte little-endian words are
// mixed as usual, but every trailing byte (len % 4 of them) is mixed on its
// own as a full block instead of being packed into one tail word. The length
// folded into the finalizer is the byte length.
//
// Per-type input (what the Rust HashValue impls feed the hasher):
//   - bool, int8, int16, int32, uint8, uint16, uint32, date32, time32: the
//     value converted to uint32 (sign-extended for signed types, bool → 0/1),
//     hashed as one 4-byte word;
//   - int64, uint64, date64, time64, timestamp (any unit, the stored integer),
//     duration: the 8 little-endian bytes;
//   - decimal128: the 16 little-endian bytes of the unscaled i128;
//   - float32 / float64: the IEEE bit pattern as uint32 / uint64, with ±0.0
//     both mapped to 0 (NaN payloads are hashed as-is);
//   - string / binary: the raw bytes.
//
// Invariants: every function here is pure and deterministic across platforms
// (all byte orders are fixed little-endian, matching LakeSoul on x86/arm).
// Narrow integers hash like their int32/uint32 widening, so e.g.
// HashInt32(int32(int8(-1)), s) is the int8 hash and
// HashUint32(uint32(uint8(x)), s) the uint8 hash.

// HashSeed is the seed of the first primary-key column (LakeSoul HASH_SEED).
const HashSeed uint32 = 42

const (
	murC1 uint32 = 0xcc9e2d51
	murC2 uint32 = 0x1b873593
)

// mixBlock mixes one 4-byte block k into the running state h.
func mixBlock(h, k uint32) uint32 {
	k *= murC1
	k = bits.RotateLeft32(k, 15)
	k *= murC2
	h ^= k
	h = bits.RotateLeft32(h, 13)
	return h*5 + 0xe6546b64
}

// fmix is the Murmur3 finalizer; n is the number of input bytes.
func fmix(h, n uint32) uint32 {
	h ^= n
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

func hashWord(w, seed uint32) uint32 {
	return fmix(mixBlock(seed, w), 4)
}

func hashDword(v uint64, seed uint32) uint32 {
	h := mixBlock(seed, uint32(v))
	h = mixBlock(h, uint32(v>>32))
	return fmix(h, 8)
}

func hashQword(lo, hi uint64, seed uint32) uint32 {
	h := mixBlock(seed, uint32(lo))
	h = mixBlock(h, uint32(lo>>32))
	h = mixBlock(h, uint32(hi))
	h = mixBlock(h, uint32(hi>>32))
	return fmix(h, 16)
}

// HashBytes hashes raw bytes (string/binary columns).
func HashBytes(b []byte, seed uint32) uint32 {
	h := seed
	n := len(b)
	i := 0
	for ; i+4 <= n; i += 4 {
		h = mixBlock(h, binary.LittleEndian.Uint32(b[i:]))
	}
	for ; i < n; i++ {
		h = mixBlock(h, uint32(b[i]))
	}
	return fmix(h, uint32(n))
}

// HashString is HashBytes over the UTF-8 bytes of s, without copying.
func HashString(s string, seed uint32) uint32 {
	h := seed
	n := len(s)
	i := 0
	for ; i+4 <= n; i += 4 {
		h = mixBlock(h, uint32(s[i])|uint32(s[i+1])<<8|uint32(s[i+2])<<16|uint32(s[i+3])<<24)
	}
	for ; i < n; i++ {
		h = mixBlock(h, uint32(s[i]))
	}
	return fmix(h, uint32(n))
}

// HashBool hashes a boolean as the 32-bit word 0 or 1.
func HashBool(v bool, seed uint32) uint32 {
	var w uint32
	if v {
		w = 1
	}
	return hashWord(w, seed)
}

// HashInt32 hashes an int32 (also int8, int16, date32 after widening) as one
// sign-extended 32-bit word.
func HashInt32(v int32, seed uint32) uint32 { return hashWord(uint32(v), seed) }

// HashUint32 hashes a uint32 (also uint8, uint16 after widening) as one word.
func HashUint32(v uint32, seed uint32) uint32 { return hashWord(v, seed) }

// HashInt64 hashes the 8 little-endian bytes of v (int64, timestamps, date64).
func HashInt64(v int64, seed uint32) uint32 { return hashDword(uint64(v), seed) }

// HashUint64 hashes the 8 little-endian bytes of v.
func HashUint64(v uint64, seed uint32) uint32 { return hashDword(v, seed) }

// HashFloat32 hashes the bit pattern of v, with -0.0 normalised to +0.0.
func HashFloat32(v float32, seed uint32) uint32 {
	var w uint32
	if v != 0 { // both zeros hash as bits 0
		w = math.Float32bits(v)
	}
	return hashWord(w, seed)
}

// HashFloat64 hashes the bit pattern of v, with -0.0 normalised to +0.0.
func HashFloat64(v float64, seed uint32) uint32 {
	var w uint64
	if v != 0 {
		w = math.Float64bits(v)
	}
	return hashDword(w, seed)
}

// HashDecimal128 hashes the 16 little-endian bytes of the unscaled value.
func HashDecimal128(v decimal128.Num, seed uint32) uint32 {
	return hashQword(v.LowBits(), uint64(v.HighBits()), seed)
}

// BucketOf maps a row hash to its bucket: hash % buckets, computed on the
// unsigned hash (as the Rust writer does; Spark's pmod on the signed hash
// agrees only for power-of-two bucket counts). buckets <= 0 (LakeSoul stores
// -1 for tables without hash partitioning) is treated as 1. The result is in
// [0, max(buckets,1)).
func BucketOf(hash uint32, buckets int) int {
	if buckets <= 0 {
		return 0
	}
	return int(uint64(hash) % uint64(buckets))
}

// HashRows computes the composite primary-key hash of every row of cols
// (PK columns in declaration order) into out, which must have the length of
// every column.
//
// Per row: the first column is hashed with HashSeed, or the row hash is 0 if
// that value is null; each further non-null value is hashed with the running
// hash as its seed, and a null leaves the running hash unchanged. With no
// columns every hash is 0 (what the Rust writer's zeroed buffer yields).
//
// Supported column types: bool, int8..int64, uint8..uint64, float32, float64,
// string, large_string, binary, large_binary, fixed_size_binary, date32,
// date64, time32, time64, timestamp, duration, decimal128. Any other type (or
// a length mismatch) returns an error before out is written. HashRows does
// not allocate per row.
func HashRows(cols []arrow.Array, out []uint32) error {
	for i, c := range cols {
		if c.Len() != len(out) {
			return fmt.Errorf("layout: hash column %d has %d rows, want %d", i, c.Len(), len(out))
		}
		if !hashableType(c.DataType()) {
			return fmt.Errorf("layout: hash column %d: unsupported type %s", i, c.DataType())
		}
	}
	if len(cols) == 0 {
		clear(out)
		return nil
	}
	// Seed every row for the first column; rows where it is null start (and,
	// for that column, stay) at 0.
	nb, off := validity(cols[0])
	if nb == nil {
		for i := range out {
			out[i] = HashSeed
		}
	} else {
		for i := range out {
			if bitSet(nb, off+i) {
				out[i] = HashSeed
			} else {
				out[i] = 0
			}
		}
	}
	for _, c := range cols {
		rehashColumn(c, out)
	}
	return nil
}

func hashableType(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.BOOL,
		arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT32, arrow.FLOAT64,
		arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY, arrow.FIXED_SIZE_BINARY,
		arrow.DATE32, arrow.DATE64, arrow.TIME32, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION,
		arrow.DECIMAL128:
		return true
	}
	return false
}

// validity returns the validity bitmap and bit offset of a, or nil when a has
// no nulls (so callers can take the branch-free loop).
func validity(a arrow.Array) ([]byte, int) {
	if a.NullN() == 0 {
		return nil, 0
	}
	b := a.NullBitmapBytes()
	if len(b) == 0 {
		return nil, 0
	}
	return b, a.Data().Offset()
}

func bitSet(b []byte, i int) bool { return b[i>>3]&(1<<(uint(i)&7)) != 0 }

// rehashColumn sets out[i] = H(value_i, out[i]) for every non-null row. The
// type switch is per column; each case runs a monomorphic loop.
func rehashColumn(c arrow.Array, out []uint32) {
	nb, off := validity(c)
	switch a := c.(type) {
	case *array.Boolean:
		for i := range out {
			if nb == nil || bitSet(nb, off+i) {
				var w uint32
				if a.Value(i) {
					w = 1
				}
				out[i] = hashWord(w, out[i])
			}
		}
	case *array.Int8:
		rehash32(a.Values(), nb, off, out)
	case *array.Int16:
		rehash32(a.Values(), nb, off, out)
	case *array.Int32:
		rehash32(a.Values(), nb, off, out)
	case *array.Uint8:
		rehash32(a.Values(), nb, off, out)
	case *array.Uint16:
		rehash32(a.Values(), nb, off, out)
	case *array.Uint32:
		rehash32(a.Values(), nb, off, out)
	case *array.Date32:
		rehash32(a.Values(), nb, off, out)
	case *array.Time32:
		rehash32(a.Values(), nb, off, out)
	case *array.Int64:
		rehash64(a.Values(), nb, off, out)
	case *array.Uint64:
		rehash64(a.Values(), nb, off, out)
	case *array.Date64:
		rehash64(a.Values(), nb, off, out)
	case *array.Time64:
		rehash64(a.Values(), nb, off, out)
	case *array.Timestamp:
		rehash64(a.Values(), nb, off, out)
	case *array.Duration:
		rehash64(a.Values(), nb, off, out)
	case *array.Float32:
		vals := a.Values()[:len(out)]
		for i, v := range vals {
			if nb == nil || bitSet(nb, off+i) {
				out[i] = HashFloat32(v, out[i])
			}
		}
	case *array.Float64:
		vals := a.Values()[:len(out)]
		for i, v := range vals {
			if nb == nil || bitSet(nb, off+i) {
				out[i] = HashFloat64(v, out[i])
			}
		}
	case *array.String:
		rehashVarlen(a.ValueOffsets(), a.ValueBytes(), nb, off, out)
	case *array.LargeString:
		rehashVarlen(a.ValueOffsets(), a.ValueBytes(), nb, off, out)
	case *array.Binary:
		rehashVarlen(a.ValueOffsets(), a.ValueBytes(), nb, off, out)
	case *array.LargeBinary:
		rehashVarlen(a.ValueOffsets(), a.ValueBytes(), nb, off, out)
	case *array.FixedSizeBinary:
		for i := range out {
			if nb == nil || bitSet(nb, off+i) {
				out[i] = HashBytes(a.Value(i), out[i])
			}
		}
	case *array.Decimal128:
		vals := a.Values()[:len(out)]
		for i, v := range vals {
			if nb == nil || bitSet(nb, off+i) {
				out[i] = hashQword(v.LowBits(), uint64(v.HighBits()), out[i])
			}
		}
	default:
		// hashableType and this switch must list the same types.
		panic(fmt.Sprintf("layout: hashable type %s has no hasher", c.DataType()))
	}
}

func rehash32[T ~int8 | ~int16 | ~int32 | ~uint8 | ~uint16 | ~uint32](vals []T, nb []byte, off int, out []uint32) {
	vals = vals[:len(out)]
	if nb == nil {
		for i, v := range vals {
			out[i] = hashWord(uint32(v), out[i])
		}
		return
	}
	for i, v := range vals {
		if bitSet(nb, off+i) {
			out[i] = hashWord(uint32(v), out[i])
		}
	}
}

func rehash64[T ~int64 | ~uint64](vals []T, nb []byte, off int, out []uint32) {
	vals = vals[:len(out)]
	if nb == nil {
		for i, v := range vals {
			out[i] = hashDword(uint64(v), out[i])
		}
		return
	}
	for i, v := range vals {
		if bitSet(nb, off+i) {
			out[i] = hashDword(uint64(v), out[i])
		}
	}
}

// rehashVarlen hashes variable-length values; offs are the array's (already
// sliced) offsets and data starts at offs[0].
func rehashVarlen[O int32 | int64](offs []O, data []byte, nb []byte, off int, out []uint32) {
	if len(out) == 0 {
		return
	}
	base := offs[0]
	offs = offs[:len(out)+1]
	for i := range out {
		if nb == nil || bitSet(nb, off+i) {
			out[i] = HashBytes(data[offs[i]-base:offs[i+1]-base], out[i])
		}
	}
}
