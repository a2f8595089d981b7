package layout

import (
	"math/rand/v2"
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
	return "part-" + string(b[:]) + "_" + bucketSuffix(bucket) + ".parquet"
}

// RandomNames names data files as LakeSoul's writers do (DataFileName): for
// files no write intent protects from orphan collection (tests, tools whose
// files nobody collects).
type RandomNames struct{}

// FileName returns DataFileName(bucket).
func (RandomNames) FileName(bucket int) string { return DataFileName(bucket) }

// IntentIDLen is the length of a write intent id, the first characters of
// the random part of the names of the files written under it.
const IntentIDLen = 8

// IntentFileName returns the name of data file number seq of write intent
// id (IntentIDLen alphanumerics, see catalog.WriteIntent) for bucket:
// "part-<id><seq as 8 base-62 digits>_<bucket:04>.parquet", LakeSoul's
// shape with the intent id in its 16 random characters. Names are unique as
// long as intent ids are (a catalog sequence) and seq is below 62^8.
// Invariant: IntentOfFile(IntentFileName(id, n, b)) == (id, true) and
// BucketOfFile(IntentFileName(id, n, b)) == (b, true).
func IntentFileName(id string, seq uint64, bucket int) string {
	if len(id) != IntentIDLen || bucket < 0 {
		panic("layout: IntentFileName: bad intent id " + strconv.Quote(id) + " or bucket " + strconv.Itoa(bucket))
	}
	var b [8]byte
	for i := len(b) - 1; i >= 0; i-- {
		b[i] = fileNameAlphabet[seq%uint64(len(fileNameAlphabet))]
		seq /= uint64(len(fileNameAlphabet))
	}
	return "part-" + id + string(b[:]) + "_" + bucketSuffix(bucket) + ".parquet"
}

// IntentOfFile returns the write intent id a data file's name carries: the
// first IntentIDLen characters after "part-" of its base name, when it has
// LakeSoul's shape (part-<16 alphanumerics>_<bucket>…). Names of other
// writers (LakeSoul's own: 16 random characters) yield an id no intent has,
// in practice.
func IntentOfFile(path string) (string, bool) {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		path = path[i+1:]
	}
	rest, ok := strings.CutPrefix(path, "part-")
	if !ok || len(rest) < 16 {
		return "", false
	}
	for i := range 16 {
		if !strings.ContainsRune(fileNameAlphabet, rune(rest[i])) {
			return "", false
		}
	}
	return rest[:IntentIDLen], true
}

func bucketSuffix(bucket int) string {
	id := strconv.Itoa(bucket)
	if len(id) < 4 {
		id = strings.Repeat("0", 4-len(id)) + id
	}
	return id
}

// BucketOfFile returns the bucket id encoded in the base name of path (the
// part after the last '/'), matching `^.*_(\d+)(?:\..*)?$`: the digits after
// the last '_' that is followed only by digits and, optionally, a '.'
// suffix. It returns false if there is no such number or it overflows int.
// (LakeSoul's reader uses the stricter `part-.*_(\d+)(?:\..+)?$`; any prefix
// is accepted so names from other writers that follow the `_<bucket>`
// convention also resolve.) Scans call it for every file of a snapshot, so
// it is written out rather than a regular expression.
func BucketOfFile(path string) (int, bool) {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		path = path[i+1:]
	}
	if strings.IndexByte(path, '\n') >= 0 {
		return 0, false // '.' matches no newline: the pattern cannot match
	}
	digits := ""
	for i := strings.LastIndexByte(path, '_'); i >= 0; i = strings.LastIndexByte(path[:i], '_') {
		rest := path[i+1:]
		d := 0
		for d < len(rest) && rest[d] >= '0' && rest[d] <= '9' {
			d++
		}
		if d > 0 && (d == len(rest) || rest[d] == '.') {
			digits = rest[:d]
			break
		}
	}
	if digits == "" {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil {
		return 0, false
	}
	return n, true
}

// RunFileExt ends the name of an intermediate sorted run of an ingest (the
// writer's spill-sort): an Arrow IPC stream, never a data file of a commit.
// A run is named as the data file it stands for with this extension instead
// of ".parquet", so it carries the same write intent and bucket.
const RunFileExt = ".arrows"

// RunFileName returns the run name for data file name: its ".parquet"
// extension replaced by RunFileExt.
// Invariant: IsRunFile(RunFileName(n)) and BucketOfFile, IntentOfFile of
// both names agree.
func RunFileName(name string) string {
	return strings.TrimSuffix(name, ".parquet") + RunFileExt
}

// IsRunFile tells whether path names an ingest's sorted run (RunFileName).
func IsRunFile(path string) bool { return strings.HasSuffix(path, RunFileExt) }
