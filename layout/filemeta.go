package layout

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// BloomChecksumsKey is the key of a data file's Parquet key-value metadata
// that holds the CRC-32C of each bloom filter bitset the file carries, so a
// reader can tell a damaged filter (which would hide rows) from a sound one.
// Its value is FormatBloomChecksums's.
const BloomChecksumsKey = "lakesoul.bloom_crc32c"

// UniqueKeysKey is the key of a primary-key data file's Parquet key-value
// metadata that says, with value "true", that no primary key appears twice
// in the file. The writer sets it after checking every adjacent pair of the
// file's sorted rows (writer/parquet.go); files without it may repeat a key
// (rows of one write that share a key are all kept, the last one winning).
// Readers stream such a file without merging its rows when no other file of
// its bucket overlaps its key range (reader/unitplan.go).
const UniqueKeysKey = "lakesoul.unique_keys"

// BloomChecksum identifies one bloom filter of a file: row group and leaf
// column (Parquet schema order), and the CRC-32C (Castagnoli) of its bitset.
type BloomChecksum struct {
	RowGroup, Column int
	CRC              uint32
}

// FormatBloomChecksums renders checksums as "rg.col=crc;…" (crc in hex),
// sorted by row group and column.
func FormatBloomChecksums(sums []BloomChecksum) string {
	sums = append([]BloomChecksum(nil), sums...)
	sort.Slice(sums, func(i, j int) bool {
		if sums[i].RowGroup != sums[j].RowGroup {
			return sums[i].RowGroup < sums[j].RowGroup
		}
		return sums[i].Column < sums[j].Column
	})
	var b strings.Builder
	for i, s := range sums {
		if i > 0 {
			b.WriteByte(';')
		}
		fmt.Fprintf(&b, "%d.%d=%08x", s.RowGroup, s.Column, s.CRC)
	}
	return b.String()
}

// ParseBloomChecksums reads FormatBloomChecksums's output, keyed by
// [row group, column].
func ParseBloomChecksums(s string) (map[[2]int]uint32, error) {
	out := map[[2]int]uint32{}
	if s == "" {
		return out, nil
	}
	for _, e := range strings.Split(s, ";") {
		loc, sum, ok := strings.Cut(e, "=")
		rg, col, ok2 := strings.Cut(loc, ".")
		if !ok || !ok2 {
			return nil, fmt.Errorf("bloom checksum entry %q", e)
		}
		r, err1 := strconv.Atoi(rg)
		c, err2 := strconv.Atoi(col)
		v, err3 := strconv.ParseUint(sum, 16, 32)
		if err1 != nil || err2 != nil || err3 != nil || r < 0 || c < 0 {
			return nil, fmt.Errorf("bloom checksum entry %q", e)
		}
		out[[2]int{r, c}] = uint32(v)
	}
	return out, nil
}
