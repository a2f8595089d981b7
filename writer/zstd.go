package writer

import (
	"sync"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// zstdCodec is arrow-go's zstd codec with one change: pages are compressed
// without zstd's optional content checksum. arrow-go's encoder writes one
// (its zstd library's default); the reference zstd library, and with it
// Parquet's C++ and Java writers, does not. Parquet pages carry their own
// optional CRC, and a checksum costs an xxhash pass over every page when
// writing and again on every read — measurable when a merge decodes a
// hundred small files. Decoding is arrow-go's, which verifies checksums in
// files that have them; streaming (unused by Parquet pages) is arrow-go's.
type zstdCodec struct {
	arrowCodec
	encoders sync.Map // zstd.EncoderLevel → *sync.Pool of *zstd.Encoder
}

// arrowCodec is what arrow-go's zstd codec implements.
type arrowCodec interface {
	compress.ErrorCodec
	compress.StreamingCodec
}

func init() {
	orig, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		panic(err)
	}
	compress.RegisterCodec(compress.Codecs.Zstd, &zstdCodec{arrowCodec: orig.(arrowCodec)})
}

func (c *zstdCodec) Encode(dst, src []byte) []byte {
	return c.EncodeLevel(dst, src, compress.DefaultCompressionLevel)
}

func (c *zstdCodec) EncodeLevel(dst, src []byte, level int) []byte {
	l := zstd.SpeedDefault
	if level != compress.DefaultCompressionLevel {
		l = zstd.EncoderLevelFromZstd(level)
	}
	p, ok := c.encoders.Load(l)
	if !ok {
		p, _ = c.encoders.LoadOrStore(l, &sync.Pool{New: func() any {
			// The options of arrow-go's pooled encoders, minus the checksum.
			e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(l), zstd.WithZeroFrames(true),
				zstd.WithEncoderConcurrency(1), zstd.WithAllLitEntropyCompression(true), zstd.WithEncoderCRC(false))
			if err != nil {
				panic(err) // only for invalid options
			}
			return e
		}})
	}
	pool := p.(*sync.Pool)
	e := pool.Get().(*zstd.Encoder)
	defer pool.Put(e)
	return e.EncodeAll(src, dst[:0])
}
