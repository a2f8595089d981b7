package vector

import (
	"fmt"
	"math"
)

// Metric is a distance an index orders by, as pgvector's operator classes:
// L2 (vector_l2_ops, <->), Cosine (vector_cosine_ops, <=>) and IP
// (vector_ip_ops, <#>, the negative inner product).
type Metric uint8

// Metrics.
const (
	L2 Metric = iota + 1
	Cosine
	IP
)

// MetricOfOpclass maps a pgvector operator class to its metric.
func MetricOfOpclass(opclass string) (Metric, bool) {
	switch opclass {
	case "vector_l2_ops":
		return L2, true
	case "vector_cosine_ops":
		return Cosine, true
	case "vector_ip_ops":
		return IP, true
	}
	return 0, false
}

// ParseMetric reads a metric's catalog name.
func ParseMetric(s string) (Metric, error) {
	switch s {
	case "l2":
		return L2, nil
	case "cosine":
		return Cosine, nil
	case "ip":
		return IP, nil
	}
	return 0, fmt.Errorf("unknown vector metric %q", s)
}

// String is the metric's catalog name.
func (m Metric) String() string {
	switch m {
	case L2:
		return "l2"
	case Cosine:
		return "cosine"
	case IP:
		return "ip"
	}
	return "?"
}

// Operator is the SQL operator ordering by m.
func (m Metric) Operator() string {
	switch m {
	case L2:
		return "<->"
	case Cosine:
		return "<=>"
	}
	return "<#>"
}

// L2Squared is the squared Euclidean distance of equal-length a and b.
func L2Squared(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		d0, d1, d2, d3 := a[i]-b[i], a[i+1]-b[i+1], a[i+2]-b[i+2], a[i+3]-b[i+3]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for ; i < len(a); i++ {
		d := a[i] - b[i]
		s0 += d * d
	}
	return s0 + s1 + s2 + s3
}

// L2SquaredBounded is L2Squared(a, b) when that is at most bound; otherwise
// it may stop early and return a partial sum above bound (sums of squares
// only grow), which ranks the row out just as the full distance would.
func L2SquaredBounded(a, b []float32, bound float32) float32 {
	b = b[:len(a)]
	var s float32
	for lo := 0; lo < len(a); lo += 32 {
		s += L2Squared(a[lo:min(lo+32, len(a))], b[lo:min(lo+32, len(a))])
		if s > bound {
			return s
		}
	}
	return s
}

// Dot is the inner product of equal-length a and b.
func Dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// Normalize scales v to unit length in place (a zero vector stays zero).
func Normalize(v []float32) {
	n := float32(math.Sqrt(float64(Dot(v, v))))
	if n == 0 {
		return
	}
	for i := range v {
		v[i] /= n
	}
}

// Distance is m's distance of a and b, ordered as the SQL operator orders:
// smaller is nearer. For Cosine, a and b must be normalized; the value is
// then 1 - cos. For L2 it is the squared distance (same order).
func (m Metric) Distance(a, b []float32) float32 {
	switch m {
	case L2:
		return L2Squared(a, b)
	case Cosine:
		return 1 - Dot(a, b)
	}
	return -Dot(a, b)
}
