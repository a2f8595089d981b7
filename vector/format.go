package vector

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// Segment file format, little-endian:
//
//	"LSIVF002", u32 dims, u8 metric, u32 lists, u32 rows, u32 D,
//	u64 length of the in-memory part, then the in-memory part:
//	centroids (lists × dims f32), rotation (D × D f32), rotated centroids
//	(lists × D f32), offsets (lists+1 u32), codes (rows × D/8 bytes),
//	norms, factors (rows f32 each), key offsets (rows+1 u32), key bytes;
//	then the full vectors (rows × dims f32, list order), which Decode does
//	not read: searches read the ones they re-rank.
//
// The in-memory part is what a loaded segment costs (MemoryBytes); at
// 128 dimensions and ~1000 rows a list it is about 1/12 of the vectors.
var magic = []byte("LSIVF002")

const headerLen = 8 + 4 + 1 + 4 + 4 + 4 + 8

var errCorrupt = errors.New("ivf index file is damaged")

// WriteTo writes the segment file of an index Build made.
func (ix *IVF) WriteTo(w io.Writer) (int64, error) {
	if ix.vecs == nil {
		return 0, errors.New("ivf segment: only a built index can be written")
	}
	le := binary.LittleEndian
	bw := bufio.NewWriterSize(w, 1<<16)
	var n int64
	put := func(b []byte) {
		m, _ := bw.Write(b)
		n += int64(m)
	}
	var scratch [8]byte
	u32 := func(v uint32) { put(le.AppendUint32(scratch[:0], v)) }
	f32s := func(fs []float32) {
		for _, f := range fs {
			u32(math.Float32bits(f))
		}
	}
	put(magic)
	u32(uint32(ix.Dims))
	put([]byte{byte(ix.Metric)})
	u32(uint32(ix.Lists()))
	u32(uint32(ix.Rows()))
	u32(uint32(ix.codes.dim))
	put(le.AppendUint64(scratch[:0], uint64(ix.MemoryBytes())))
	f32s(ix.Centroids)
	f32s(ix.codes.rot)
	f32s(ix.codes.rcent)
	for _, o := range ix.Offsets {
		u32(o)
	}
	put(ix.codes.bits)
	f32s(ix.codes.norm)
	f32s(ix.codes.fac)
	for _, o := range ix.keyOff {
		u32(o)
	}
	put(ix.keyBlob)
	f32s(ix.vecs)
	return n, bw.Flush()
}

// Encode is the segment file as bytes.
func (ix *IVF) Encode() []byte {
	var b bytes.Buffer
	if _, err := ix.WriteTo(&b); err != nil {
		panic(err) // writes to a bytes.Buffer fail only for an unbuilt index
	}
	return b.Bytes()
}

// Decode reads a segment file held in memory.
func Decode(b []byte) (*IVF, error) { return Open(bytes.NewReader(b), int64(len(b))) }

// MemoryBytesOf is the size of the in-memory part of the segment file r.
func MemoryBytesOf(r io.ReaderAt) (int64, error) {
	h := make([]byte, headerLen)
	if _, err := r.ReadAt(h, 0); err != nil || string(h[:len(magic)]) != string(magic) {
		return 0, errCorrupt
	}
	return int64(binary.LittleEndian.Uint64(h[headerLen-8:])), nil
}

// Open decodes the in-memory part of the segment file r (of size bytes);
// the index reads full vectors from r as it searches, so r must stay open
// while the index is used.
func Open(r io.ReaderAt, size int64) (*IVF, error) {
	le := binary.LittleEndian
	h := make([]byte, headerLen)
	if _, err := r.ReadAt(h, 0); err != nil || string(h[:len(magic)]) != string(magic) {
		return nil, errCorrupt
	}
	p := h[len(magic):]
	dims, metric, lists, rows, D := int(le.Uint32(p)), Metric(p[4]), int(le.Uint32(p[5:])), int(le.Uint32(p[9:])), int(le.Uint32(p[13:]))
	memLen := int64(le.Uint64(p[17:]))
	fixed := 4*int64(lists*dims+D*D+lists*D) + 4*int64(lists+1) + int64(rows)*int64(D/8+8) + 4*int64(rows+1)
	if dims <= 0 || lists <= 0 || D != (dims+7)&^7 || metric < L2 || metric > IP || memLen < fixed ||
		size != headerLen+memLen+int64(rows)*int64(dims)*4 {
		return nil, errCorrupt
	}
	m := make([]byte, memLen)
	if _, err := r.ReadAt(m, headerLen); err != nil {
		return nil, fmt.Errorf("ivf segment: %w", err)
	}
	floats := func(n int) []float32 {
		out := make([]float32, n)
		for i := range out {
			out[i] = math.Float32frombits(le.Uint32(m[4*i:]))
		}
		m = m[4*n:]
		return out
	}
	u32s := func(n int) []uint32 {
		out := make([]uint32, n)
		for i := range out {
			out[i] = le.Uint32(m[4*i:])
		}
		m = m[4*n:]
		return out
	}
	ix := &IVF{Dims: dims, Metric: metric, src: r, vecAt: headerLen + memLen}
	ix.Centroids = floats(lists * dims)
	ix.codes.dim = D
	ix.codes.rot = floats(D * D)
	ix.codes.rcent = floats(lists * D)
	ix.Offsets = u32s(lists + 1)
	ix.codes.bits = m[: rows*D/8 : rows*D/8]
	m = m[rows*D/8:]
	ix.codes.norm = floats(rows)
	ix.codes.fac = floats(rows)
	ix.keyOff = u32s(rows + 1)
	ix.keyBlob = m
	if int(ix.Offsets[lists]) != rows || int(ix.keyOff[rows]) != len(ix.keyBlob) {
		return nil, errCorrupt
	}
	for i := range lists {
		if ix.Offsets[i] > ix.Offsets[i+1] {
			return nil, errCorrupt
		}
	}
	for i := range rows {
		if ix.keyOff[i] > ix.keyOff[i+1] {
			return nil, errCorrupt
		}
	}
	return ix, nil
}
