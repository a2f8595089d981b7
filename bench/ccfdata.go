package bench

import (
	"fmt"
	"io"
	"strconv"

	"github.com/cespare/xxhash/v2"
)

// The CCF workload (LakeSoul's published benchmark): a base of N rows, then U
// upsert batches of M rows, each half updates of existing keys and half new
// keys, all generated deterministically from the key and the batch number.

// ccfColumns is the table schema, uuid first (the primary key).
var ccfColumns = []string{"uuid", "ip", "hostname", "requests", "name", "city", "job", "phonenum"}

const ccfCreateColumns = `uuid text, ip text, hostname text, requests bigint, name text, city text, job text, phonenum text`

type ccfWorkload struct {
	base, batch, upserts int
}

// newCCFWorkload sizes the workload: the upsert volume is 20 M rows × scale
// whatever the number of batches, so `--upserts 100` writes the same rows and
// keys as the default 10 batches, in ten times as many commits.
func newCCFWorkload(scale float64, upserts int) ccfWorkload {
	if upserts < 1 {
		upserts = 1
	}
	return ccfWorkload{base: int(10_000_000 * scale), batch: int(20_000_000*scale) / upserts, upserts: upserts}
}

// keysBefore is the number of distinct keys before upsert batch b (1-based).
func (w ccfWorkload) keysBefore(b int) int { return w.base + (b-1)*(w.batch-w.batch/2) }

// totalRows is every row written, base and upserts.
func (w ccfWorkload) totalRows() int64 { return int64(w.base) + int64(w.upserts)*int64(w.batch) }

// finalKeys is the number of distinct keys at the end.
func (w ccfWorkload) finalKeys() int { return w.keysBefore(w.upserts + 1) }

// batchKeys calls fn for every key of batch b (0 = base) in write order.
// Updates pick distinct existing keys with a stride coprime to the key count.
func (w ccfWorkload) batchKeys(b int, fn func(key int)) {
	if b == 0 {
		for k := 0; k < w.base; k++ {
			fn(k)
		}
		return
	}
	before := w.keysBefore(b)
	updates := w.batch / 2
	stride := 7919
	for before%stride == 0 {
		stride += 2
	}
	for i := 0; i < updates; i++ {
		fn(int((int64(i)*int64(stride) + int64(b)*104729) % int64(before)))
	}
	for i := 0; i < w.batch-updates; i++ {
		fn(before + i)
	}
}

// ccfRow is one generated row; all fields are ASCII without tabs, newlines or
// backslashes, so COPY text and CSV need no escaping.
type ccfRow struct {
	uuid, ip, hostname string
	requests           int64
	name, city, job    string
	phonenum           string
}

var (
	firstNames = []string{"Ada", "Bo", "Cy", "Di", "Ed", "Flo", "Gus", "Hal", "Ivy", "Jo", "Kai", "Lu"}
	cities     = []string{"Hangzhou", "Berlin", "Lima", "Oslo", "Pune", "Quito", "Rome", "Seoul", "Tunis", "Utah"}
	jobs       = []string{"engineer", "analyst", "nurse", "pilot", "chef", "teacher", "driver", "artist"}
)

func mix(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

func ccfMakeRow(key, batch int) ccfRow {
	h := mix(uint64(key)*0x9e3779b97f4a7c15 ^ uint64(batch+1)*0xbf58476d1ce4e5b9)
	k := mix(uint64(key) + 0x1234567)
	return ccfRow{
		uuid:     fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", uint32(k>>32), uint16(k>>16), uint16(k), uint16(key>>16), uint64(key)&0xffffffffffff),
		ip:       fmt.Sprintf("%d.%d.%d.%d", h&255, (h>>8)&255, (h>>16)&255, (h>>24)&255),
		hostname: "host-" + strconv.FormatUint(h>>40, 36),
		requests: int64(h % 100000),
		name:     firstNames[(h>>8)%uint64(len(firstNames))] + strconv.Itoa(int(h>>50)),
		city:     cities[(h>>16)%uint64(len(cities))],
		job:      jobs[(h>>24)%uint64(len(jobs))],
		phonenum: fmt.Sprintf("+86-%011d", h%100000000000),
	}
}

// writeText writes a row as one COPY text line.
func (r ccfRow) writeText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", r.uuid, r.ip, r.hostname, r.requests, r.name, r.city, r.job, r.phonenum)
	return err
}

// rowChecksum hashes a row's fields; summing over rows gives an
// order-independent checksum of a table's contents.
func rowChecksum(fields ...string) uint64 {
	var h xxhash.Digest
	h.Reset()
	for _, f := range fields {
		h.WriteString(f)
		h.Write(fieldSep)
	}
	return h.Sum64()
}

// rowHasher computes rowChecksum of fields given as bytes: the fields and
// their separators are gathered into one buffer and hashed in one call,
// which costs a reader of millions of rows far less than a streaming
// digest's write per field.
type rowHasher struct{ buf []byte }

func (h *rowHasher) sum(fields [][]byte) uint64 {
	h.buf = h.buf[:0]
	for _, f := range fields {
		h.buf = append(h.buf, f...)
		h.buf = append(h.buf, fieldSep...)
	}
	return xxhash.Sum64(h.buf)
}

// fieldSep ends each field of a row checksum's input.
var fieldSep = []byte{0x1f}

func (r ccfRow) checksum() uint64 {
	return rowChecksum(r.uuid, r.ip, r.hostname, strconv.FormatInt(r.requests, 10), r.name, r.city, r.job, r.phonenum)
}

// expectedChecksum is the checksum of the table after all batches: each key's
// row from the last batch that wrote it.
func (w ccfWorkload) expectedChecksum() (uint64, int) {
	last := make([]int32, w.finalKeys())
	for b := 0; b <= w.upserts; b++ {
		w.batchKeys(b, func(k int) { last[k] = int32(b) })
	}
	var sum uint64
	for k, b := range last {
		sum += ccfMakeRow(k, int(b)).checksum()
	}
	return sum, len(last)
}
