package vector

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// clustered returns n seeded vectors of dims dimensions around c centers.
func clustered(n, dims, c int, seed uint64) []float32 {
	rng := rand.New(rand.NewPCG(seed, 1))
	centers := make([]float32, c*dims)
	for i := range centers {
		centers[i] = float32(rng.NormFloat64() * 4)
	}
	out := make([]float32, n*dims)
	for i := range n {
		k := rng.IntN(c)
		for j := range dims {
			out[i*dims+j] = centers[k*dims+j] + float32(rng.NormFloat64())
		}
	}
	return out
}

func exactTop(vecs, q []float32, dims, k int, m Metric) []string {
	t := NewTopK(k)
	for i := 0; i*dims < len(vecs); i++ {
		t.Offer(fmt.Sprint(i), m.Distance(q, vecs[i*dims:(i+1)*dims]))
	}
	var out []string
	for _, c := range t.Result() {
		out = append(out, c.Key)
	}
	return out
}

// TestIVFRecall: on clustered data, the rows a few probes find by their
// codes, re-ranked exactly on the vectors read from the segment file, are
// the exact top 10 (recall@10 ≥ 0.95) for every metric; the
// index survives Encode/Decode unchanged; one probe of one list finds less
// (the test would pass trivially if probing did nothing).
func TestIVFRecall(t *testing.T) {
	const n, dims, k = 20000, 32, 10
	// Queries come from the data's distribution (the last 50 points).
	all := clustered(n+50, dims, 50, 7)
	base, queries := all[:n*dims], all[n*dims:]
	for _, m := range []Metric{L2, Cosine, IP} {
		vecs := slices.Clone(base)
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprint(i)
		}
		ix, err := Build(context.Background(), keys, vecs, dims, m, BuildOptions{Lists: 100, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		back, err := Decode(ix.Encode())
		if err != nil {
			t.Fatal(err)
		}
		recall := func(probes int) float64 {
			hit := 0
			for qi := 0; qi < 50; qi++ {
				q := slices.Clone(queries[qi*dims : (qi+1)*dims])
				if m == Cosine {
					Normalize(q)
				}
				want := exactTop(vecs, q, dims, k, m)
				exact := NewTopK(k)
				if err := back.Search(q, probes, 20*k, exact); err != nil {
					t.Fatal(err)
				}
				for _, c := range exact.Result() {
					if slices.Contains(want, c.Key) {
						hit++
					}
				}
			}
			return float64(hit) / float64(50*k)
		}
		if r := recall(10); r < 0.95 {
			t.Errorf("%v: recall@10 with 10 probes = %.3f, want ≥ 0.95", m, r)
		}
		if r := recall(1); r >= 0.999 {
			t.Errorf("%v: recall@10 with 1 probe = %.3f: probing seems not to restrict the search", m, r)
		}
		if ix.MemoryBytes() >= n*dims*4/2 {
			t.Errorf("%v: index uses %d bytes for %d raw", m, ix.MemoryBytes(), n*dims*4)
		}
	}
}

// TestVectorText: pgvector's text and binary forms and their errors.
func TestVectorText(t *testing.T) {
	v, err := Parse(" [1, 2.5 ,-3e-05] ")
	if err != nil || v.String() != "[1,2.5,-3e-05]" {
		t.Fatalf("parse: %v %v", v, err)
	}
	back, err := DecodeBinary(v.AppendBinary(nil))
	if err != nil || !slices.Equal(back, v) {
		t.Fatalf("binary round trip: %v %v", back, err)
	}
	for _, bad := range []string{"", "[", "[1,,2]", "[1 2]", "1,2", "[a]"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) succeeded", bad)
		}
	}
	for _, bad := range []string{"[]", "[NaN]", "[1,inf]"} {
		if _, err := Parse(bad); err == nil || err.(interface{ Error() string }).Error() == "" {
			t.Errorf("Parse(%q): %v", bad, err)
		}
	}
}

// TestSegmentMemory: at 128 dimensions a decoded segment holds at most 1/8
// of its raw vectors' bytes in memory (the in-memory part of the file, as
// the header records it, and as the decoded index counts it), the file
// carries the full vectors after it, and a search reading them from the
// file still finds the exact top 10.
func TestSegmentMemory(t *testing.T) {
	const n, dims, k = 20000, 128, 10
	all := clustered(n+20, dims, 40, 3)
	base, queries := all[:n*dims], all[n*dims:]
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprint(i)
	}
	ix, err := Build(context.Background(), keys, slices.Clone(base), dims, L2, BuildOptions{Lists: 64, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	file := ix.Encode()
	back, err := Decode(file)
	if err != nil {
		t.Fatal(err)
	}
	raw := n * dims * 4
	mem, err := MemoryBytesOf(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	if int(mem) != back.MemoryBytes() || mem*8 > int64(raw) {
		t.Errorf("in-memory part %d bytes (decoded index counts %d) for %d raw bytes: want ≤ 1/8", mem, back.MemoryBytes(), raw)
	}
	if len(file) < raw {
		t.Errorf("segment file of %d bytes cannot hold the %d bytes of full vectors", len(file), raw)
	}
	if back.vecs != nil {
		t.Errorf("a decoded segment holds the full vectors in memory")
	}
	hit := 0
	for qi := range 20 {
		q := queries[qi*dims : (qi+1)*dims]
		want := exactTop(base, q, dims, k, L2)
		top := NewTopK(k)
		if err := back.Search(q, 8, 20*k, top); err != nil {
			t.Fatal(err)
		}
		for _, c := range top.Result() {
			if slices.Contains(want, c.Key) {
				hit++
			}
		}
	}
	if r := float64(hit) / float64(20*k); r < 0.95 {
		t.Errorf("recall@10 reading vectors from the file = %.3f, want ≥ 0.95", r)
	}
	// A damaged file is refused, not misread.
	if _, err := Decode(file[:len(file)-4]); err == nil {
		t.Errorf("a truncated segment file decoded")
	}
}

// BenchmarkProbe is the probe kernel: 16 lists of a 100 000 × 128 segment
// estimated by their codes and the best 100 re-ranked from the file.
func BenchmarkProbe(b *testing.B) {
	const n, dims = 100000, 128
	base := clustered(n, dims, 100, 5)
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprint(i)
	}
	ix, err := Build(context.Background(), keys, base, dims, L2, BuildOptions{Lists: 100, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	seg, err := Decode(ix.Encode())
	if err != nil {
		b.Fatal(err)
	}
	q := clustered(1, dims, 100, 6)
	b.ResetTimer()
	for range b.N {
		if err := seg.Search(q, 16, 100, NewTopK(10)); err != nil {
			b.Fatal(err)
		}
	}
}

// TestL2SquaredBounded: below its bound the bounded distance is the full
// one; above, it is above the bound too (so it ranks the row out alike).
func TestL2SquaredBounded(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for range 1000 {
		d := 1 + rng.IntN(200)
		a, b := make([]float32, d), make([]float32, d)
		for i := range a {
			a[i], b[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
		}
		full := L2Squared(a, b)
		bound := float32(rng.Float64() * 4 * float64(d))
		got := L2SquaredBounded(a, b, bound)
		if full <= bound && math.Abs(float64(got-full)) > 1e-3*float64(full) {
			t.Fatalf("d=%d bound %v: %v, want %v", d, bound, got, full)
		}
		if full > bound && got <= bound {
			t.Fatalf("d=%d bound %v: %v at most the bound, full %v", d, bound, got, full)
		}
	}
}
