package vector

import (
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
)

// IVF is an inverted-file index of one partition × bucket: k-means
// centroids (trained on a sample), and per list the keys of its rows with
// their vectors as 8-bit scalar-quantized codes (a quarter of the raw
// float32s). Search ranks the rows of the probed lists by their decoded
// codes; callers re-rank the candidates by exact distance on the current
// rows, so quantization only decides which rows are candidates.
//
// Keys are opaque strings (the engine stores each row's primary key as a
// SQL literal). For Cosine, vectors and centroids are normalized first.
type IVF struct {
	Dims   int
	Metric Metric
	// Centroids holds Lists × Dims float32s.
	Centroids []float32
	// Offsets[l]..Offsets[l+1] are list l's rows.
	Offsets []uint32
	// Min and Scale dequantize codes: x = Min[d] + Scale[d]·code.
	Min, Scale []float32
	// Codes holds Rows × Dims bytes, in list order.
	Codes []byte
	Keys  []string
}

// Lists is the number of lists.
func (ix *IVF) Lists() int { return len(ix.Offsets) - 1 }

// Rows is the number of indexed rows.
func (ix *IVF) Rows() int { return len(ix.Keys) }

// MemoryBytes is the index's size in memory (codes, keys, centroids).
func (ix *IVF) MemoryBytes() int {
	n := len(ix.Codes) + 4*len(ix.Centroids) + 4*len(ix.Offsets) + 8*len(ix.Min)
	for _, k := range ix.Keys {
		n += len(k) + 16
	}
	return n
}

// BuildOptions tune Build.
type BuildOptions struct {
	Lists int
	// SamplePerList bounds the k-means sample to SamplePerList × Lists rows
	// (0: 64).
	SamplePerList int
	// Iterations of Lloyd's algorithm (0: 10).
	Iterations int
	Seed       uint64
}

// Build indexes rows: keys[i] has vector vecs[i·dims : (i+1)·dims]. vecs
// is modified for Cosine (normalized).
func Build(keys []string, vecs []float32, dims int, metric Metric, opt BuildOptions) (*IVF, error) {
	n := len(keys)
	if dims <= 0 || len(vecs) != n*dims {
		return nil, fmt.Errorf("ivf build: %d keys, %d floats of %d dimensions", n, len(vecs), dims)
	}
	if metric == Cosine {
		for i := range n {
			Normalize(vecs[i*dims : (i+1)*dims])
		}
	}
	lists := max(1, min(opt.Lists, n))
	if n == 0 {
		lists = 1
	}
	sampleN := opt.SamplePerList
	if sampleN <= 0 {
		sampleN = 64
	}
	iters := opt.Iterations
	if iters <= 0 {
		iters = 10
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x6c616b65736f756c))
	sample := rng.Perm(n)
	if len(sample) > sampleN*lists {
		sample = sample[:sampleN*lists]
	}
	cent := kmeans(vecs, dims, sample, lists, iters, metric, rng)
	assign := make([]int32, n)
	parallel(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			assign[i] = int32(nearest(cent, dims, vecs[i*dims:(i+1)*dims], metric))
		}
	})
	ix := &IVF{Dims: dims, Metric: metric, Centroids: cent, Offsets: make([]uint32, lists+1),
		Min: make([]float32, dims), Scale: make([]float32, dims), Codes: make([]byte, n*dims), Keys: make([]string, n)}
	for _, a := range assign {
		ix.Offsets[a+1]++
	}
	for l := range lists {
		ix.Offsets[l+1] += ix.Offsets[l]
	}
	ix.trainQuantizer(vecs, n)
	next := slices.Clone(ix.Offsets[:lists])
	for i, a := range assign {
		at := next[a]
		next[a]++
		ix.Keys[at] = keys[i]
		ix.encode(vecs[i*dims:(i+1)*dims], ix.Codes[int(at)*dims:int(at+1)*dims])
	}
	return ix, nil
}

func (ix *IVF) trainQuantizer(vecs []float32, n int) {
	d := ix.Dims
	mx := make([]float32, d)
	for j := range d {
		ix.Min[j], mx[j] = float32(math.Inf(1)), float32(math.Inf(-1))
	}
	for i := range n {
		for j, x := range vecs[i*d : (i+1)*d] {
			ix.Min[j] = min(ix.Min[j], x)
			mx[j] = max(mx[j], x)
		}
	}
	for j := range d {
		if n == 0 {
			ix.Min[j] = 0
		}
		ix.Scale[j] = max(mx[j]-ix.Min[j], 0) / 255
	}
}

func (ix *IVF) encode(v []float32, code []byte) {
	for j, x := range v {
		if ix.Scale[j] == 0 {
			code[j] = 0
			continue
		}
		c := math.Round(float64((x - ix.Min[j]) / ix.Scale[j]))
		code[j] = byte(max(0, min(255, c)))
	}
}

// kmeans trains k centroids on the sampled rows (Lloyd's algorithm,
// initialized with distinct sample rows; an empty cluster takes a random
// sample row).
func kmeans(vecs []float32, dims int, sample []int, k, iters int, metric Metric, rng *rand.Rand) []float32 {
	cent := make([]float32, k*dims)
	for c := range k {
		src := 0
		if len(sample) > 0 {
			src = sample[c%len(sample)]
			copy(cent[c*dims:(c+1)*dims], vecs[src*dims:(src+1)*dims])
		}
	}
	if len(sample) == 0 {
		return cent
	}
	assign := make([]int32, len(sample))
	for range iters {
		parallel(len(sample), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				s := sample[i]
				assign[i] = int32(nearest(cent, dims, vecs[s*dims:(s+1)*dims], metric))
			}
		})
		sums := make([]float64, k*dims)
		counts := make([]int, k)
		for i, a := range assign {
			s := sample[i]
			counts[a]++
			for j, x := range vecs[s*dims : (s+1)*dims] {
				sums[int(a)*dims+j] += float64(x)
			}
		}
		for c := range k {
			dst := cent[c*dims : (c+1)*dims]
			if counts[c] == 0 {
				s := sample[rng.IntN(len(sample))]
				copy(dst, vecs[s*dims:(s+1)*dims])
				continue
			}
			for j := range dst {
				dst[j] = float32(sums[c*dims+j] / float64(counts[c]))
			}
			if metric == Cosine {
				Normalize(dst)
			}
		}
	}
	return cent
}

// nearest is the centroid nearest to v.
func nearest(cent []float32, dims int, v []float32, metric Metric) int {
	best, bestD := 0, float32(math.Inf(1))
	for c := 0; c*dims < len(cent); c++ {
		if d := metric.Distance(v, cent[c*dims:(c+1)*dims]); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// parallel runs f over [0, n) in GOMAXPROCS chunks.
func parallel(n int, f func(lo, hi int)) {
	w := runtime.GOMAXPROCS(0)
	if n < 1024 || w == 1 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	step := (n + w - 1) / w
	for lo := 0; lo < n; lo += step {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			f(lo, hi)
		}(lo, min(n, lo+step))
	}
	wg.Wait()
}

// Candidate is a row a search found, with its approximate distance.
type Candidate struct {
	Key  string
	Dist float32
}

// candHeap is a max-heap by distance (the worst candidate on top).
type candHeap []Candidate

func (h candHeap) Len() int           { return len(h) }
func (h candHeap) Less(i, j int) bool { return h[i].Dist > h[j].Dist }
func (h candHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *candHeap) Push(x any)        { *h = append(*h, x.(Candidate)) }
func (h *candHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// TopK keeps the k nearest candidates offered to it.
type TopK struct {
	k int
	h candHeap
}

// NewTopK keeps k candidates.
func NewTopK(k int) *TopK { return &TopK{k: k} }

// Offer considers a candidate.
func (t *TopK) Offer(key string, d float32) {
	if len(t.h) < t.k {
		heap.Push(&t.h, Candidate{key, d})
	} else if t.k > 0 && d < t.h[0].Dist {
		t.h[0] = Candidate{key, d}
		heap.Fix(&t.h, 0)
	}
}

// Result returns the kept candidates, nearest first.
func (t *TopK) Result() []Candidate {
	out := slices.Clone(t.h)
	slices.SortFunc(out, func(a, b Candidate) int { return cmpFloat(a.Dist, b.Dist) })
	return out
}

func cmpFloat(a, b float32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Search offers the rows of the probes lists nearest to q to top. q must
// be normalized for Cosine.
func (ix *IVF) Search(q []float32, probes int, top *TopK) {
	d := ix.Dims
	lists := ix.Lists()
	probes = max(1, min(probes, lists))
	type listDist struct {
		l int
		d float32
	}
	ls := make([]listDist, lists)
	for l := range lists {
		ls[l] = listDist{l, ix.Metric.Distance(q, ix.Centroids[l*d:(l+1)*d])}
	}
	slices.SortFunc(ls, func(a, b listDist) int { return cmpFloat(a.d, b.d) })
	buf := make([]float32, d)
	for _, pl := range ls[:probes] {
		l := pl.l
		for r := ix.Offsets[l]; r < ix.Offsets[l+1]; r++ {
			code := ix.Codes[int(r)*d : int(r+1)*d]
			for j, b := range code {
				buf[j] = ix.Min[j] + ix.Scale[j]*float32(b)
			}
			top.Offer(ix.Keys[r], ix.Metric.Distance(q, buf))
		}
	}
}

// File format: "LSIVF001", then little-endian u32 dims, u8 metric, u32
// lists, u32 rows, centroids, min, scale (float32s), offsets (u32s), codes,
// then each key as u32 length + bytes.
var magic = []byte("LSIVF001")

// Encode serializes the index.
func (ix *IVF) Encode() []byte {
	le := binary.LittleEndian
	buf := append([]byte(nil), magic...)
	buf = le.AppendUint32(buf, uint32(ix.Dims))
	buf = append(buf, byte(ix.Metric))
	buf = le.AppendUint32(buf, uint32(ix.Lists()))
	buf = le.AppendUint32(buf, uint32(ix.Rows()))
	for _, fs := range [][]float32{ix.Centroids, ix.Min, ix.Scale} {
		for _, f := range fs {
			buf = le.AppendUint32(buf, math.Float32bits(f))
		}
	}
	for _, o := range ix.Offsets {
		buf = le.AppendUint32(buf, o)
	}
	buf = append(buf, ix.Codes...)
	for _, k := range ix.Keys {
		buf = le.AppendUint32(buf, uint32(len(k)))
		buf = append(buf, k...)
	}
	return buf
}

var errCorrupt = errors.New("ivf index file is damaged")

// Decode reads an index Encode wrote.
func Decode(b []byte) (*IVF, error) {
	le := binary.LittleEndian
	if len(b) < len(magic)+17 || string(b[:len(magic)]) != string(magic) {
		return nil, errCorrupt
	}
	p := b[len(magic):]
	dims, metric, lists, rows := int(le.Uint32(p)), Metric(p[4]), int(le.Uint32(p[5:])), int(le.Uint32(p[9:]))
	p = p[13:]
	need := 4*(lists*dims+2*dims) + 4*(lists+1) + rows*dims
	if dims <= 0 || lists <= 0 || len(p) < need || metric < L2 || metric > IP {
		return nil, errCorrupt
	}
	floats := func(n int) []float32 {
		out := make([]float32, n)
		for i := range out {
			out[i] = math.Float32frombits(le.Uint32(p[4*i:]))
		}
		p = p[4*n:]
		return out
	}
	ix := &IVF{Dims: dims, Metric: metric, Centroids: floats(lists * dims), Min: floats(dims), Scale: floats(dims)}
	ix.Offsets = make([]uint32, lists+1)
	for i := range ix.Offsets {
		ix.Offsets[i] = le.Uint32(p[4*i:])
	}
	p = p[4*(lists+1):]
	if int(ix.Offsets[lists]) != rows {
		return nil, errCorrupt
	}
	ix.Codes = slices.Clone(p[:rows*dims])
	p = p[rows*dims:]
	ix.Keys = make([]string, rows)
	for i := range ix.Keys {
		if len(p) < 4 || len(p)-4 < int(le.Uint32(p)) {
			return nil, errCorrupt
		}
		n := int(le.Uint32(p))
		ix.Keys[i] = string(p[4 : 4+n])
		p = p[4+n:]
	}
	return ix, nil
}
