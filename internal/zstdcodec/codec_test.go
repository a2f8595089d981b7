package zstdcodec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// page is about 32 KiB of PLAIN-encoded byte arrays shaped like a ccf
// column: a uuid-like key, or a short label from a few values.
func page(kind string, seed uint64) []byte {
	labels := []string{"Hangzhou", "Berlin", "Lima", "Oslo", "Pune", "Quito", "Rome", "Seoul"}
	var p []byte
	for i := uint64(0); len(p) < 32<<10; i++ {
		h := (seed + i) * 0x9e3779b97f4a7c15
		h ^= h >> 29
		h *= 0xbf58476d1ce4e5b9
		h ^= h >> 32
		s := labels[h%uint64(len(labels))]
		if kind == "uuid" {
			s = fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", uint32(h>>32), uint16(h>>16), uint16(h), uint16(i>>16), seed+i)
		}
		p = binary.LittleEndian.AppendUint32(p, uint32(len(s)))
		p = append(p, s...)
	}
	return p
}

func registered(t testing.TB) compress.ErrorCodec {
	c, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.(*codec); !ok {
		t.Fatalf("registered zstd codec is %T, not libzstd's", c)
	}
	return c.(compress.ErrorCodec)
}

func TestRoundTrip(t *testing.T) {
	c := registered(t)
	for _, kind := range []string{"uuid", "label"} {
		src := page(kind, 7)
		for _, level := range []int{1, 3, compress.DefaultCompressionLevel} {
			comp := c.EncodeLevel(make([]byte, c.CompressBound(int64(len(src)))), src, level)
			if len(comp) >= len(src) {
				t.Fatalf("%s level %d: %d bytes compressed to %d", kind, level, len(src), len(comp))
			}
			// Into a buffer of the page's length, as the page reader decodes.
			out, err := c.DecodeWithError(make([]byte, len(src)), comp)
			if err != nil || !bytes.Equal(out, src) {
				t.Fatalf("%s level %d: decoded %d bytes, err %v", kind, level, len(out), err)
			}
			// Without a buffer, or with one too small.
			for _, dst := range [][]byte{nil, make([]byte, 10)} {
				if out, err := c.DecodeWithError(dst, comp); err != nil || !bytes.Equal(out, src) {
					t.Fatalf("%s: decoded into %d bytes: %d bytes, err %v", kind, len(dst), len(out), err)
				}
			}
		}
	}
}

// TestOtherWritersFrames: frames of the Go codec, with its content
// checksum, decode; a damaged one is an error, not a panic or wrong bytes.
func TestOtherWritersFrames(t *testing.T) {
	c := registered(t)
	src := page("uuid", 11)
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderCRC(true))
	if err != nil {
		t.Fatal(err)
	}
	comp := enc.EncodeAll(src, nil)
	if out, err := c.DecodeWithError(make([]byte, len(src)), comp); err != nil || !bytes.Equal(out, src) {
		t.Fatalf("decoded %d bytes, err %v", len(out), err)
	}
	bad := bytes.Clone(comp)
	bad[len(bad)-2] ^= 0xff // in the checksum
	if _, err := c.DecodeWithError(make([]byte, len(src)), bad); err == nil {
		t.Fatal("a frame with a wrong checksum decoded")
	}
	if _, err := c.DecodeWithError(make([]byte, len(src)), comp[:len(comp)/2]); err == nil {
		t.Fatal("a truncated frame decoded")
	}
	if _, err := c.DecodeWithError(make([]byte, 16), nil); err == nil {
		t.Fatal("no input decoded")
	}
	if _, err := c.DecodeWithError(nil, []byte("not zstd at all")); err == nil {
		t.Fatal("garbage decoded")
	}
}

// The Go codec at the options arrow-go used (with the writer's level 1) and
// libzstd, on the same pages: BenchmarkEncode/BenchmarkDecode.
func benchPages() map[string][][]byte {
	out := map[string][][]byte{}
	for _, kind := range []string{"uuid", "label"} {
		for i := range 64 {
			out[kind] = append(out[kind], page(kind, uint64(i)<<20))
		}
	}
	return out
}

func BenchmarkEncode(b *testing.B) {
	c := registered(b)
	goEnc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithZeroFrames(true),
		zstd.WithEncoderConcurrency(1), zstd.WithAllLitEntropyCompression(true), zstd.WithEncoderCRC(false))
	for kind, pages := range benchPages() {
		n := 0
		for _, p := range pages {
			n += len(p)
		}
		dst := make([]byte, c.CompressBound(32<<11))
		for name, enc := range map[string]func(p []byte) []byte{
			"go":      func(p []byte) []byte { return goEnc.EncodeAll(p, dst[:0]) },
			"libzstd": func(p []byte) []byte { return c.EncodeLevel(dst, p, 1) },
		} {
			b.Run(kind+"/"+name, func(b *testing.B) {
				b.SetBytes(int64(n))
				for b.Loop() {
					for _, p := range pages {
						enc(p)
					}
				}
			})
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	c := registered(b)
	goDec, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	for kind, pages := range benchPages() {
		n := 0
		var comp [][]byte
		for _, p := range pages {
			n += len(p)
			comp = append(comp, c.EncodeLevel(nil, p, 1))
		}
		dst := make([]byte, 64<<10)
		for name, dec := range map[string]func(p []byte) ([]byte, error){
			"go":      func(p []byte) ([]byte, error) { return goDec.DecodeAll(p, dst[:0]) },
			"libzstd": func(p []byte) ([]byte, error) { return c.DecodeWithError(dst, p) },
		} {
			b.Run(kind+"/"+name, func(b *testing.B) {
				b.SetBytes(int64(n))
				for b.Loop() {
					for _, p := range comp {
						if _, err := dec(p); err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}

// TestConcurrent: pooled contexts are used by one goroutine at a time,
// across garbage collections that drop pooled contexts (their finalizers
// free libzstd's memory).
func TestConcurrent(t *testing.T) {
	c := registered(t)
	src := page("uuid", 3)
	want := c.EncodeLevel(nil, src, 1)
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			var err error
			for i := range 300 {
				comp := c.EncodeLevel(make([]byte, c.CompressBound(int64(len(src)))), src, 1)
				out, derr := c.DecodeWithError(make([]byte, len(src)), comp)
				if derr != nil || !bytes.Equal(out, src) || !bytes.Equal(comp, want) {
					err = fmt.Errorf("goroutine %d, round %d: %v", g, i, derr)
					break
				}
				if i%50 == g {
					runtime.GC()
				}
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
