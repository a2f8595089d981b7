package layout

import (
	"math/rand/v2"
	"regexp"
	"strconv"
	"testing"
)

func TestDataFileName(t *testing.T) {
	re := regexp.MustCompile(`^part-[A-Za-z0-9]{16}_(\d{4,})\.parquet$`)
	tests := []struct {
		bucket int
		suffix string
	}{
		{0, "_0000.parquet"},
		{3, "_0003.parquet"},
		{42, "_0042.parquet"},
		{9999, "_9999.parquet"},
		{12345, "_12345.parquet"},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		for range 50 {
			name := DataFileName(tt.bucket)
			if !re.MatchString(name) || name[len(name)-len(tt.suffix):] != tt.suffix {
				t.Fatalf("DataFileName(%d) = %q", tt.bucket, name)
			}
			if seen[name] {
				t.Fatalf("duplicate name %q", name)
			}
			seen[name] = true
			if b, ok := BucketOfFile("s3://bucket/table/date=2024-01-01/" + name); !ok || b != tt.bucket {
				t.Fatalf("BucketOfFile(%q) = %d, %v", name, b, ok)
			}
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("negative bucket: want panic")
		}
	}()
	DataFileName(-1)
}

func TestBucketOfFile(t *testing.T) {
	tests := []struct {
		path string
		want int
		ok   bool
	}{
		{"/some/prefix/part-AbCdEfGhIjKlMnOp_0042.parquet", 42, true},
		{"part-AbCdEfGhIjKlMnOp_0000.parquet", 0, true},
		{"part-x_7", 7, true},
		{"part-x_7.", 7, true},
		{"part-x_007.snappy.parquet", 7, true},
		{"a_b_12.parquet", 12, true},
		{"x_12.y_z", 12, true},               // later '_' not followed by digits
		{"dir_5/part-abc.parquet", 0, false}, // only the base name counts
		{"part-abc.parquet", 0, false},
		{"part-abc_.parquet", 0, false},
		{"part-abc_12x.parquet", 0, false},
		{"part-abc_1_b.parquet", 0, false},
		{"", 0, false},
		{"part-x_99999999999999999999999.parquet", 0, false}, // overflows int
	}
	for _, tt := range tests {
		got, ok := BucketOfFile(tt.path)
		if got != tt.want || ok != tt.ok {
			t.Errorf("BucketOfFile(%q) = %d, %v; want %d, %v", tt.path, got, ok, tt.want, tt.ok)
		}
	}
}

func TestIntentFileName(t *testing.T) {
	re := regexp.MustCompile(`^part-[A-Za-z0-9]{16}_(\d{4,})\.parquet$`)
	seen := map[string]bool{}
	for seq := range uint64(300) {
		for _, b := range []int{0, 7, 12345} {
			name := IntentFileName("AbCd0123", seq*1_000_003, b)
			if !re.MatchString(name) {
				t.Fatalf("IntentFileName = %q: not LakeSoul's shape", name)
			}
			if seen[name] {
				t.Fatalf("duplicate name %q", name)
			}
			seen[name] = true
			if id, ok := IntentOfFile("file:///w/ns/t/d=1/" + name); !ok || id != "AbCd0123" {
				t.Fatalf("IntentOfFile(%q) = %q, %v", name, id, ok)
			}
			if got, ok := BucketOfFile(name); !ok || got != b {
				t.Fatalf("BucketOfFile(%q) = %d, %v", name, got, ok)
			}
		}
	}
	for _, p := range []string{"part-short_0000.parquet", "x/y.parquet", "file:///w/part-AbCd0123xx-yyyyy_0000.parquet"} {
		if id, ok := IntentOfFile(p); ok {
			t.Errorf("IntentOfFile(%q) = %q", p, id)
		}
	}
}

// BucketOfFile agrees with the pattern it documents on names made of the
// characters that matter to it.
func TestBucketOfFileMatchesPattern(t *testing.T) {
	re := regexp.MustCompile(`^.*_(\d+)(?:\..*)?$`)
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := "_123.a\n"
	for range 200000 {
		b := make([]byte, rng.IntN(9))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		name := string(b)
		want, wantOK := 0, false
		if m := re.FindStringSubmatch(name); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil {
				want, wantOK = n, true
			}
		}
		if got, ok := BucketOfFile("dir/" + name); got != want || ok != wantOK {
			t.Fatalf("BucketOfFile(%q) = %d, %v; the pattern says %d, %v", name, got, ok, want, wantOK)
		}
	}
}
