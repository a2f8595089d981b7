package layout

import (
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
)

// Data file names.
//
// Source: LakeSoul's native writer names every data file
// `part-<16 random alphanumerics>_<bucket id, zero-padded to 4>.parquet`
// (rand Alphanumeric, format `{:0>4}`), and readers recover the bucket from
// the name (helpers::extract_hash_bucket_id). Bucket ids of 10000 and more
// simply print more digits.

const fileNameAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// DataFileName returns a fresh data file name for bucket, e.g.
// "part-Xy3aB9...Q9_0003.parquet". It panics if bucket < 0 (BucketOf never
// returns one). The 16 random characters come from math/rand/v2's
// per-process ChaCha8 source (about 95 bits), so names are unique in
// practice; it is safe for concurrent use.
// Invariant: BucketOfFile(DataFileName(b)) == (b, true).
func DataFileName(bucket int) string {
	if bucket < 0 {
		panic("layout: DataFileName: negative bucket " + strconv.Itoa(bucket))
	}
	var b [16]byte
	for i := range b {
		b[i] = fileNameAlphabet[rand.IntN(len(fileNameAlphabet))]
	}
	id := strconv.Itoa(bucket)
	if len(id) < 4 {
		id = strings.Repeat("0", 4-len(id)) + id
	}
	return "part-" + string(b[:]) + "_" + id + ".parquet"
}

// bucketFileRe extracts the bucket from a base name. LakeSoul's reader uses
// the stricter `part-.*_(\d+)(?:\..+)?$`; we accept any prefix so names
// from other writers that follow the `_<bucket>` convention also resolve.
var bucketFileRe = regexp.MustCompile(`^.*_(\d+)(?:\..*)?$`)

// BucketOfFile returns the bucket id encoded in the base name of path (the
// part after the last '/'), matching `.*_(\d+)(?:\..*)?$`: the digits after
// the last '_' that is followed only by digits and, optionally, a '.'
// suffix. It returns false if there is no such number or it overflows int.
func BucketOfFile(path string) (int, bool) {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		path = path[i+1:]
	}
	m := bucketFileRe.FindStringSubmatch(path)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return 0, false
	}
	return n, true
}
