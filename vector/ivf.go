package vector

import (
	"container/heap"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync/atomic"

	"github.com/lakesoul-go/lakesoul/internal/safego"
)

// IVF is an inverted-file index of one partition × bucket: k-means
// centroids (trained on a sample), and per list the keys of its rows with a
// 1-bit code of each row's residual (RaBitQ style, codes.go) held in
// memory, and the rows' full-precision vectors, which stay in the segment
// file and are read only to re-rank the best estimates exactly
// (segment.go's file format keeps them after the in-memory part).
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
	codes   codes
	// keyOff[r]..keyOff[r+1] is row r's key in keyBlob.
	keyOff  []uint32
	keyBlob []byte
	// vecs are the rows' vectors in list order (Rows × Dims) after Build;
	// nil after Decode, when src holds them at vecAt.
	vecs  []float32
	src   io.ReaderAt
	vecAt int64
}

// Lists is the number of lists.
func (ix *IVF) Lists() int { return len(ix.Offsets) - 1 }

// Rows is the number of indexed rows.
func (ix *IVF) Rows() int { return len(ix.keyOff) - 1 }

// Key is row r's key.
func (ix *IVF) Key(r int) string { return string(ix.keyBlob[ix.keyOff[r]:ix.keyOff[r+1]]) }

// MemoryBytes is what the index holds in memory once decoded: centroids,
// offsets, codes and keys (the full vectors stay in the file); it is the
// length of the in-memory part of its segment file.
func (ix *IVF) MemoryBytes() int {
	return 4*len(ix.Centroids) + 4*len(ix.Offsets) + ix.codes.memoryBytes() + 4*len(ix.keyOff) + len(ix.keyBlob)
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

// MaxIndexDims is the most dimensions an indexed vector column may have:
// pgvector's bound for ivfflat and hnsw indexes of vector columns. It also
// bounds a build's cost, whose rotation (codes.go) is D × D and built in
// O(D³).
const MaxIndexDims = 2000

// Build indexes rows: keys[i] has vector vecs[i·dims : (i+1)·dims]. vecs
// is modified for Cosine (normalized). It stops with ctx's error when ctx
// ends, checking between blocks of work of at most a few milliseconds.
func Build(ctx context.Context, keys []string, vecs []float32, dims int, metric Metric, opt BuildOptions) (*IVF, error) {
	n := len(keys)
	if dims <= 0 || len(vecs) != n*dims {
		return nil, fmt.Errorf("ivf build: %d keys, %d floats of %d dimensions", n, len(vecs), dims)
	}
	if dims > MaxIndexDims {
		return nil, fmt.Errorf("ivf build: %d dimensions, at most %d can be indexed", dims, MaxIndexDims)
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
	cent, err := kmeans(ctx, vecs, dims, sample, lists, iters, metric, rng)
	if err != nil {
		return nil, err
	}
	assign := make([]int32, n)
	err = parallel(ctx, n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			assign[i] = int32(nearest(cent, dims, vecs[i*dims:(i+1)*dims], metric))
		}
	})
	if err != nil {
		return nil, err
	}
	ix := &IVF{Dims: dims, Metric: metric, Centroids: cent, Offsets: make([]uint32, lists+1),
		keyOff: make([]uint32, n+1), vecs: make([]float32, n*dims)}
	for _, a := range assign {
		ix.Offsets[a+1]++
	}
	for l := range lists {
		ix.Offsets[l+1] += ix.Offsets[l]
	}
	next := slices.Clone(ix.Offsets[:lists])
	order := make([]int, n) // order[at] is the input row at list position at
	for i, a := range assign {
		order[next[a]] = i
		next[a]++
	}
	for at, i := range order {
		copy(ix.vecs[at*dims:(at+1)*dims], vecs[i*dims:(i+1)*dims])
		ix.keyBlob = append(ix.keyBlob, keys[i]...)
		ix.keyOff[at+1] = uint32(len(ix.keyBlob))
	}
	if ix.codes, err = encodeCodes(ctx, ix.vecs, dims, cent, ix.Offsets, metric, rng); err != nil {
		return nil, err
	}
	return ix, nil
}

// kmeans trains k centroids on the sampled rows (Lloyd's algorithm,
// initialized with distinct sample rows; an empty cluster takes a random
// sample row).
func kmeans(ctx context.Context, vecs []float32, dims int, sample []int, k, iters int, metric Metric, rng *rand.Rand) ([]float32, error) {
	cent := make([]float32, k*dims)
	for c := range k {
		src := 0
		if len(sample) > 0 {
			src = sample[c%len(sample)]
			copy(cent[c*dims:(c+1)*dims], vecs[src*dims:(src+1)*dims])
		}
	}
	if len(sample) == 0 {
		return cent, nil
	}
	assign := make([]int32, len(sample))
	for range iters {
		err := parallel(ctx, len(sample), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				s := sample[i]
				assign[i] = int32(nearest(cent, dims, vecs[s*dims:(s+1)*dims], metric))
			}
		})
		if err != nil {
			return nil, err
		}
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
	return cent, nil
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

// parallelBlock is the most rows parallel gives f at once: ctx is checked
// between blocks.
const parallelBlock = 256

// parallel runs f over [0, n) in blocks on GOMAXPROCS goroutines, and
// stops taking blocks once ctx ends (returning its error).
func parallel(ctx context.Context, n int, f func(lo, hi int)) error {
	var next atomic.Int64
	work := func() {
		for ctx.Err() == nil {
			lo := int(next.Add(parallelBlock)) - parallelBlock
			if lo >= n {
				return
			}
			f(lo, min(n, lo+parallelBlock))
		}
	}
	w := runtime.GOMAXPROCS(0)
	if n < 1024 || w == 1 {
		work()
		return ctx.Err()
	}
	// A panic of f is raised again here, on the caller's goroutine.
	var g safego.Group
	for range w {
		g.Start(work)
	}
	g.Wait()
	return ctx.Err()
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

// Admits reports whether a candidate at distance d would be kept now.
func (t *TopK) Admits(d float32) bool {
	return len(t.h) < t.k || (t.k > 0 && d < t.h[0].Dist)
}

// Bound is the distance a candidate must be below to be kept now (+Inf
// until k are kept).
func (t *TopK) Bound() float32 {
	if len(t.h) < t.k || t.k == 0 {
		return float32(math.Inf(1))
	}
	return t.h[0].Dist
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

// Search offers to top the rows nearest to q among the probes lists
// nearest to q, by exact distance: the lists' rows are ranked by their
// codes' estimate, and the best rerank of them (at least top's k) are
// re-ranked on their full vectors, read from the segment file. q must be
// normalized for Cosine.
func (ix *IVF) Search(q []float32, probes, rerank int, top *TopK) error {
	return ix.SearchExcluding(q, probes, rerank, top, nil)
}

// SearchExcluding is Search leaving out the rows whose key exclude holds
// (keys a newer file overwrote or deleted), before they take a place among
// the rows re-ranked.
func (ix *IVF) SearchExcluding(q []float32, probes, rerank int, top *TopK, exclude map[string]bool) error {
	var skip func(r int) bool
	if len(exclude) > 0 {
		skip = func(r int) bool { return exclude[string(ix.keyBlob[ix.keyOff[r]:ix.keyOff[r+1]])] }
	}
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
	est := newRowHeap(max(rerank, top.k))
	ix.codes.estimate(q, ix.Metric, ix.Centroids, d, func(yield func(l int) bool) {
		for _, pl := range ls[:probes] {
			if !yield(pl.l) {
				return
			}
		}
	}, ix.Offsets, est, skip)
	rows := est.rows()
	slices.Sort(rows)
	return ix.readVectors(rows, func(r int, v []float32) {
		top.Offer(ix.Key(r), ix.Metric.Distance(q, v))
	})
}

// readVectors calls fn with the full vector of each of rows (ascending),
// reading runs of adjacent rows at once.
func (ix *IVF) readVectors(rows []int, fn func(r int, v []float32)) error {
	d := ix.Dims
	if ix.vecs != nil {
		for _, r := range rows {
			fn(r, ix.vecs[r*d:(r+1)*d])
		}
		return nil
	}
	var buf []byte
	v := make([]float32, d)
	for i := 0; i < len(rows); {
		j := i + 1
		for j < len(rows) && rows[j] == rows[j-1]+1 && j-i < 64 {
			j++
		}
		n := (j - i) * d * 4
		buf = slices.Grow(buf[:0], n)[:n]
		if _, err := ix.src.ReadAt(buf, ix.vecAt+int64(rows[i])*int64(d)*4); err != nil {
			return fmt.Errorf("ivf segment: read vectors: %w", err)
		}
		for k := i; k < j; k++ {
			b := buf[(k-i)*d*4:]
			for x := range v {
				v[x] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*x:]))
			}
			fn(rows[k], v)
		}
		i = j
	}
	return nil
}
