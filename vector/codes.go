package vector

import (
	"container/heap"
	"context"
	"iter"
	"math"
	"math/bits"
	"math/rand/v2"
)

// codes are the in-memory part of an IVF's rows: one bit per (padded)
// dimension and two float32s per row, 24 bytes a row at 128 dimensions
// against 512 of the raw vector.
//
// The scheme is RaBitQ's 1-bit form. Row x of list l has the residual
// r = x − c_l; P is a random orthogonal D × D matrix (D = dims rounded up
// to 8, vectors zero-padded), y = P·r, and the row stores the signs of y,
// ‖r‖ and f = ⟨ō, o⟩ = Σ|y_i| / (√D·‖r‖), where o = y/‖r‖ and ō is the
// sign vector scaled to unit length. For a query q, with q' = P·(q − c_l)
// (P·q for inner product), ⟨o, q'⟩ is estimated by ⟨ō, q'⟩ / f, which is
// unbiased over the random rotation, so
//
//	L2:  ‖x − q‖² ≈ ‖r‖² + ‖q − c_l‖² − 2‖r‖·⟨ō, q'⟩/f
//	IP:  ⟨x, q⟩  ≈ ⟨c_l, q⟩ + ‖r‖·⟨ō, q'⟩/f
//
// (Cosine runs as L2 on normalized vectors). ⟨ō, q'⟩ is (2·Σ_{bit i set} q'_i − Σ q'_i)/√D,
// the first sum read from a per-list table of the 256 byte values of each
// group of 8 dimensions. The estimate only picks which rows are re-ranked
// on their full vectors.
type codes struct {
	dim   int       // D
	rot   []float32 // D × D, row-major: y = rot·x
	rcent []float32 // Lists × D: rot·c_l
	bits  []byte    // Rows × D/8; bit t of byte j is dimension 8j+t
	norm  []float32 // ‖r‖
	fac   []float32 // ⟨ō, o⟩
}

func (c *codes) memoryBytes() int {
	return 4*len(c.rot) + 4*len(c.rcent) + len(c.bits) + 4*len(c.norm) + 4*len(c.fac)
}

// randomRotation is a seeded random orthogonal D × D matrix (Gram–Schmidt
// on a Gaussian matrix).
func randomRotation(ctx context.Context, D int, rng *rand.Rand) ([]float32, error) {
	m := make([]float64, D*D)
	for i := range m {
		m[i] = rng.NormFloat64()
	}
	for i := range D {
		if err := ctx.Err(); err != nil {
			return nil, err // a row costs O(i·D): at most 4 M steps
		}
		row := m[i*D : (i+1)*D]
		for j := range i {
			prev := m[j*D : (j+1)*D]
			var dot float64
			for k := range D {
				dot += row[k] * prev[k]
			}
			for k := range D {
				row[k] -= dot * prev[k]
			}
		}
		var nn float64
		for _, x := range row {
			nn += x * x
		}
		nn = math.Sqrt(nn)
		for k := range row {
			row[k] /= nn
		}
	}
	out := make([]float32, D*D)
	for i, x := range m {
		out[i] = float32(x)
	}
	return out, nil
}

// rotate writes rot·x (x zero-padded to D) into y.
func rotate(rot []float32, D int, x, y []float32) {
	for i := range D {
		row := rot[i*D : i*D+len(x)]
		var s float32
		for k, v := range x {
			s += row[k] * v
		}
		y[i] = s
	}
}

// encodeCodes codes vecs (rows × dims, in list order) against their lists'
// centroids.
func encodeCodes(ctx context.Context, vecs []float32, dims int, cent []float32, offsets []uint32, metric Metric, rng *rand.Rand) (codes, error) {
	D := (dims + 7) &^ 7
	lists := len(offsets) - 1
	n := int(offsets[lists])
	rot, err := randomRotation(ctx, D, rng)
	if err != nil {
		return codes{}, err
	}
	c := codes{dim: D, rot: rot, rcent: make([]float32, lists*D),
		bits: make([]byte, n*D/8), norm: make([]float32, n), fac: make([]float32, n)}
	for l := range lists {
		rotate(c.rot, D, cent[l*dims:(l+1)*dims], c.rcent[l*D:(l+1)*D])
	}
	listOf := make([]int32, n)
	for l := range lists {
		for r := offsets[l]; r < offsets[l+1]; r++ {
			listOf[r] = int32(l)
		}
	}
	sqrtD := float32(math.Sqrt(float64(D)))
	err = parallel(ctx, n, func(lo, hi int) {
		res, y := make([]float32, dims), make([]float32, D)
		for r := lo; r < hi; r++ {
			l := int(listOf[r])
			var nn float32
			for j := range dims {
				res[j] = vecs[r*dims+j] - cent[l*dims+j]
				nn += res[j] * res[j]
			}
			rotate(c.rot, D, res, y)
			code := c.bits[r*D/8 : (r+1)*D/8]
			var abs float32
			for i, v := range y {
				if v > 0 {
					code[i/8] |= 1 << (i % 8)
				}
				abs += float32(math.Abs(float64(v)))
			}
			c.norm[r] = float32(math.Sqrt(float64(nn)))
			c.fac[r] = 1
			if c.norm[r] > 0 && abs > 0 {
				c.fac[r] = abs / (sqrtD * c.norm[r])
			}
		}
	})
	return c, err
}

// estimate offers every row of the lists to h with its estimated distance
// to q (smaller is nearer, as Metric.Distance orders).
// estimate offers to h each row of lists with its estimated distance to
// q; rows skip reports are left out (skip is asked only of rows h would
// keep; nil skips none).
func (c *codes) estimate(q []float32, metric Metric, cent []float32, dims int, lists iter.Seq[int], offsets []uint32, h *rowHeap, skip func(r int) bool) {
	D := c.dim
	nb := D / 8
	qr, qc := make([]float32, D), make([]float32, D)
	rotate(c.rot, D, q, qr)
	lut := make([]float32, nb*256)
	invSqrtD := float32(1 / math.Sqrt(float64(D)))
	for l := range lists {
		var qn2, sum, cq float32
		if metric == IP {
			copy(qc, qr)
			cq = Dot(cent[l*dims:(l+1)*dims], q)
		} else {
			rc := c.rcent[l*D : (l+1)*D]
			for i := range qc {
				qc[i] = qr[i] - rc[i]
				qn2 += qc[i] * qc[i]
			}
		}
		for j := range nb {
			t := lut[j*256 : (j+1)*256]
			g := qc[j*8 : (j+1)*8]
			t[0] = 0
			for b := 1; b < 256; b++ {
				t[b] = t[b&(b-1)] + g[bits.TrailingZeros8(uint8(b))]
			}
			sum += t[255]
		}
		for r := int(offsets[l]); r < int(offsets[l+1]); r++ {
			code := c.bits[r*nb : (r+1)*nb]
			var s float32
			for j, b := range code {
				s += lut[j*256+int(b)]
			}
			ip := (2*s - sum) * invSqrtD / c.fac[r]
			nr := c.norm[r]
			var dist float32
			if metric == IP {
				dist = -(cq + nr*ip)
			} else {
				dist = nr*nr + qn2 - 2*nr*ip
			}
			if skip != nil && (len(h.rs) < h.n || dist < h.ds[0]) && skip(r) {
				continue
			}
			h.offer(int32(r), dist)
		}
	}
}

// rowHeap keeps the n rows of least estimate (a max-heap: worst on top).
type rowHeap struct {
	n    int
	rs   []int32
	ds   []float32
	full bool
}

func newRowHeap(n int) *rowHeap { return &rowHeap{n: n} }

func (h *rowHeap) Len() int           { return len(h.rs) }
func (h *rowHeap) Less(i, j int) bool { return h.ds[i] > h.ds[j] }
func (h *rowHeap) Swap(i, j int) {
	h.rs[i], h.rs[j] = h.rs[j], h.rs[i]
	h.ds[i], h.ds[j] = h.ds[j], h.ds[i]
}
func (h *rowHeap) Push(any) {}
func (h *rowHeap) Pop() any { return nil }

func (h *rowHeap) offer(r int32, d float32) {
	if len(h.rs) < h.n {
		h.rs = append(h.rs, r)
		h.ds = append(h.ds, d)
		if len(h.rs) == h.n {
			heap.Init(h)
		}
		return
	}
	if h.n > 0 && d < h.ds[0] {
		h.rs[0], h.ds[0] = r, d
		heap.Fix(h, 0)
	}
}

// rows are the kept rows, in no order.
func (h *rowHeap) rows() []int {
	out := make([]int, len(h.rs))
	for i, r := range h.rs {
		out[i] = int(r)
	}
	return out
}
