package s3proxy

import (
	"bufio"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"hash"
	"hash/crc32"
	"hash/crc64"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// Request bodies stream from the client to the backend. What the client's
// signature says about the body is checked on the way: a hex
// x-amz-content-sha256 is the body's SHA-256, aws-chunked bodies carry a
// signature per chunk and maybe a checksum trailer. The last bytes of a body
// are handed on only after the check passed, so the backend never receives
// a complete body that failed it (the forwarded request breaks off instead).

// maxSignedChunk bounds one chunk of a signed aws-chunked body, which is
// held in memory until its signature is checked (clients use 64 KiB–1 MiB).
const maxSignedChunk = 16 << 20

// bodyState records why a request body was refused, for the answer.
type bodyState struct {
	err *s3Error
	// body is the aws-chunked decoder of the request, if any.
	body *chunkedBody
}

func (s *bodyState) chunked() (*chunkedBody, bool) { return s.body, s.body != nil }

func (s *bodyState) fail(e *s3Error) error {
	if s.err == nil {
		s.err = e
	}
	return s.err
}

// sha256Body checks that the body's SHA-256 is want.
type sha256Body struct {
	r      io.Reader
	h      hash.Hash
	want   string
	length int64 // Content-Length
	read   int64
	state  *bodyState
}

func newSHA256Body(r io.Reader, length int64, want string, state *bodyState) *sha256Body {
	return &sha256Body{r: r, h: sha256.New(), want: strings.ToLower(want), length: length, state: state}
}

func (b *sha256Body) Read(p []byte) (int, error) {
	if b.state.err != nil {
		return 0, b.state.err
	}
	if b.read == b.length {
		return 0, io.EOF
	}
	if rest := b.length - b.read; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := b.r.Read(p)
	b.h.Write(p[:n])
	b.read += int64(n)
	if b.read == b.length {
		if hex.EncodeToString(b.h.Sum(nil)) != b.want {
			return 0, b.state.fail(badRequest("XAmzContentSHA256Mismatch",
				"The provided 'x-amz-content-sha256' header does not match what was computed."))
		}
		return n, nil
	}
	if err == io.EOF || (err == nil && n == 0) {
		return n, b.state.fail(badRequest("IncompleteBody", "You did not provide the number of bytes specified by the Content-Length HTTP header."))
	}
	if err != nil {
		return n, b.state.fail(badRequest("IncompleteBody", "reading the request body: %v", err))
	}
	return n, nil
}

// newChecksum is the hash of an x-amz-checksum-<alg> trailer.
func newChecksum(name string) hash.Hash {
	switch name {
	case "x-amz-checksum-crc32":
		return crc32.NewIEEE()
	case "x-amz-checksum-crc32c":
		return crc32.New(crc32.MakeTable(crc32.Castagnoli))
	case "x-amz-checksum-crc64nvme":
		return crc64.New(crc64nvme)
	case "x-amz-checksum-sha1":
		return sha1.New()
	case "x-amz-checksum-sha256":
		return sha256.New()
	}
	return nil
}

// crc64nvme is CRC-64/NVME (reflected polynomial 0x9a6c9329ac4bc9b5).
var crc64nvme = crc64.MakeTable(0x9a6c9329ac4bc9b5)

// chunkedBody decodes an aws-chunked body: chunks of
// "<hex size>[;chunk-signature=<sig>]\r\n<data>\r\n", a final empty chunk,
// then the trailers (for the -TRAILER variants) and an empty line.
type chunkedBody struct {
	br      *bufio.Reader
	a       *authn // non-nil: chunks are signed
	prevSig string
	// trailer is the checksum trailer the client announced (x-amz-trailer),
	// sum its running checksum.
	trailer    string
	sum        hash.Hash
	decodedLen int64
	delivered  int64
	buf        []byte // signed: checked data not yet handed on
	left       int64  // unsigned: data left in the current chunk
	done       bool
	state      *bodyState
	// trailerValues are the checksum trailers received (name: value).
	trailerValues map[string]string
}

// newChunkedBody decodes r for the payload mode of a. It answers an error
// for a body it cannot check (an unknown trailer algorithm).
func newChunkedBody(r io.Reader, a *authn, h http.Header, state *bodyState) (*chunkedBody, *s3Error) {
	decoded, err := strconv.ParseInt(h.Get("X-Amz-Decoded-Content-Length"), 10, 64)
	if err != nil || decoded < 0 {
		return nil, errf(http.StatusLengthRequired, "MissingContentLength", "aws-chunked bodies need x-amz-decoded-content-length")
	}
	c := &chunkedBody{br: bufio.NewReaderSize(r, 64<<10), decodedLen: decoded, state: state}
	if a.payload == streamingSigned || a.payload == streamingSignedTr {
		c.a, c.prevSig = a, a.signature
	}
	if a.payload == streamingSignedTr || a.payload == streamingUnsigned {
		c.trailer = strings.ToLower(strings.TrimSpace(h.Get("X-Amz-Trailer")))
		if c.trailer != "" {
			if c.sum = newChecksum(c.trailer); c.sum == nil {
				return nil, badRequest("InvalidRequest", "unsupported trailer %q", c.trailer)
			}
		}
	}
	return c, nil
}

func (c *chunkedBody) bad(format string, args ...any) error {
	return c.state.fail(badRequest("IncompleteBody", "aws-chunked body: "+format, args...))
}

// line reads one CRLF-terminated line (without it).
func (c *chunkedBody) line() (string, error) {
	s, err := c.br.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return "", c.bad("line too long")
		}
		return "", c.bad("%v", err)
	}
	if len(s) < 2 || s[len(s)-2] != '\r' {
		return "", c.bad("line not ended by CRLF")
	}
	return string(s[:len(s)-2]), nil
}

// header reads a chunk header: the size and the chunk signature.
func (c *chunkedBody) header() (int64, string, error) {
	l, err := c.line()
	if err != nil {
		return 0, "", err
	}
	sizeStr, ext, _ := strings.Cut(l, ";")
	size, err := strconv.ParseInt(sizeStr, 16, 64)
	if err != nil || size < 0 {
		return 0, "", c.bad("bad chunk size %q", sizeStr)
	}
	sig, hasSig := strings.CutPrefix(ext, "chunk-signature=")
	if c.a != nil && !hasSig {
		return 0, "", c.state.fail(signatureMismatch())
	}
	return size, sig, nil
}

func (c *chunkedBody) crlf() error {
	var b [2]byte
	if _, err := io.ReadFull(c.br, b[:]); err != nil || b != [2]byte{'\r', '\n'} {
		return c.bad("chunk data not followed by CRLF")
	}
	return nil
}

// checkChunk checks a signed chunk's signature.
func (c *chunkedBody) checkChunk(sig string, data []byte) error {
	toSign := "AWS4-HMAC-SHA256-PAYLOAD\n" + c.a.amzDate + "\n" + c.a.scope + "\n" + c.prevSig + "\n" +
		emptySHA256 + "\n" + sha256Hex(data)
	want := hex.EncodeToString(hmacSHA256(c.a.signingKey, toSign))
	if !hmac.Equal([]byte(want), []byte(strings.ToLower(sig))) {
		return c.state.fail(signatureMismatch())
	}
	c.prevSig = want
	return nil
}

// end reads the final chunk (when final is nil) and the trailers, and checks
// them; the data is complete only when this passes.
func (c *chunkedBody) end(finalRead bool) error {
	if !finalRead {
		size, sig, err := c.header()
		if err != nil {
			return err
		}
		if size != 0 {
			return c.bad("more data than x-amz-decoded-content-length")
		}
		if c.a != nil {
			if err := c.checkChunk(sig, nil); err != nil {
				return err
			}
		}
	}
	var trailers []string
	for {
		l, err := c.line()
		if err != nil {
			return err
		}
		if l == "" {
			break
		}
		trailers = append(trailers, l)
	}
	if c.delivered != c.decodedLen {
		return c.bad("%d bytes, x-amz-decoded-content-length says %d", c.delivered, c.decodedLen)
	}
	var trailerSig string
	var canon strings.Builder
	values := map[string]string{}
	for _, t := range trailers {
		k, v, ok := strings.Cut(t, ":")
		if !ok {
			return c.bad("bad trailer %q", t)
		}
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		if k == "x-amz-trailer-signature" {
			trailerSig = v
			continue
		}
		values[k] = v
		canon.WriteString(k + ":" + v + "\n")
	}
	if c.a != nil && c.a.payload == streamingSignedTr {
		toSign := "AWS4-HMAC-SHA256-TRAILER\n" + c.a.amzDate + "\n" + c.a.scope + "\n" + c.prevSig + "\n" +
			sha256Hex([]byte(canon.String()))
		want := hex.EncodeToString(hmacSHA256(c.a.signingKey, toSign))
		if !hmac.Equal([]byte(want), []byte(strings.ToLower(trailerSig))) {
			return c.state.fail(signatureMismatch())
		}
	}
	if c.sum != nil {
		got, ok := values[c.trailer]
		if !ok {
			return c.bad("the announced trailer %s is missing", c.trailer)
		}
		if want := base64.StdEncoding.EncodeToString(c.sum.Sum(nil)); got != want {
			return c.state.fail(badRequest("BadDigest", "The %s you specified did not match the calculated checksum.", c.trailer))
		}
	}
	if c.trailer != "" {
		c.trailerValues = map[string]string{c.trailer: values[c.trailer]}
	}
	c.done = true
	return nil
}

func (c *chunkedBody) Read(p []byte) (int, error) {
	if c.state.err != nil {
		return 0, c.state.err
	}
	if c.a != nil {
		return c.readSigned(p)
	}
	return c.readUnsigned(p)
}

func (c *chunkedBody) readSigned(p []byte) (int, error) {
	if len(c.buf) == 0 {
		if c.done {
			return 0, io.EOF
		}
		size, sig, err := c.header()
		if err != nil {
			return 0, err
		}
		if size > maxSignedChunk {
			return 0, c.bad("chunk of %d bytes is larger than %d", size, maxSignedChunk)
		}
		if c.delivered+size > c.decodedLen {
			return 0, c.bad("more data than x-amz-decoded-content-length")
		}
		data := make([]byte, size)
		if _, err := io.ReadFull(c.br, data); err != nil {
			return 0, c.bad("%v", err)
		}
		if err := c.crlf(); err != nil {
			return 0, err
		}
		if err := c.checkChunk(sig, data); err != nil {
			return 0, err
		}
		if c.sum != nil {
			c.sum.Write(data)
		}
		c.delivered += size
		switch {
		case size == 0:
			if err := c.end(true); err != nil {
				return 0, err
			}
			return 0, io.EOF
		case c.delivered == c.decodedLen:
			if err := c.end(false); err != nil {
				return 0, err
			}
		}
		c.buf = data
	}
	n := copy(p, c.buf)
	c.buf = c.buf[n:]
	return n, nil
}

func (c *chunkedBody) readUnsigned(p []byte) (int, error) {
	if c.done {
		return 0, io.EOF
	}
	if c.left == 0 {
		size, _, err := c.header()
		if err != nil {
			return 0, err
		}
		if size == 0 {
			if err := c.end(true); err != nil {
				return 0, err
			}
			return 0, io.EOF
		}
		if c.delivered+size > c.decodedLen {
			return 0, c.bad("more data than x-amz-decoded-content-length")
		}
		c.left = size
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.br.Read(p)
	if n == 0 && err != nil {
		return 0, c.bad("%v", err)
	}
	if c.sum != nil {
		c.sum.Write(p[:n])
	}
	c.left -= int64(n)
	c.delivered += int64(n)
	if c.left == 0 {
		if err := c.crlf(); err != nil {
			return 0, err
		}
		if c.delivered == c.decodedLen {
			if err := c.end(false); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

// isAWSChunked tells the payload modes whose body is aws-chunked.
func isAWSChunked(payload string) bool {
	return payload == streamingSigned || payload == streamingSignedTr || payload == streamingUnsigned
}

// validPayload tells the x-amz-content-sha256 values the proxy can check.
func validPayload(p string) bool {
	if p == unsignedPayload || isAWSChunked(p) {
		return true
	}
	if len(p) != 64 {
		return false
	}
	_, err := hex.DecodeString(p)
	return err == nil
}
