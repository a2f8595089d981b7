package vector

import (
	"fmt"
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

// TestIVFRecall: on clustered data, candidates from a few probes, re-ranked
// exactly, find the exact top 10 (recall@10 ≥ 0.95) for every metric; the
// index survives Encode/Decode unchanged; one probe of one list finds less
// (the test would pass trivially if probing did nothing).
func TestIVFRecall(t *testing.T) {
	const n, dims, k = 20000, 32, 10
	base := clustered(n, dims, 50, 7)
	queries := clustered(50, dims, 50, 8)
	for _, m := range []Metric{L2, Cosine, IP} {
		vecs := slices.Clone(base)
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprint(i)
		}
		ix, err := Build(keys, vecs, dims, m, BuildOptions{Lists: 100, Seed: 1})
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
				top := NewTopK(10 * k)
				back.Search(q, probes, top)
				// Re-rank the candidates by exact distance.
				exact := NewTopK(k)
				for _, c := range top.Result() {
					var i int
					fmt.Sscan(c.Key, &i)
					exact.Offer(c.Key, m.Distance(q, vecs[i*dims:(i+1)*dims]))
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
