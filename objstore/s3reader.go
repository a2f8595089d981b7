package objstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/metrics"
)

// objectMeta is what Open learns in its one request: size, version (ETag)
// and the object's tail. It is cached (key metaKey(uri)) so that a warm
// Open needs only a HEAD to validate it.
type objectMeta struct {
	URI     string `json:"uri"`
	Size    int64  `json:"size"`
	ETag    string `json:"etag"`
	TailOff int64  `json:"tail_off"`
	tail    []byte
}

func metaKey(uri string) string { return "meta\x00" + uri }

func (m *objectMeta) encode() []byte {
	var b bytes.Buffer
	json.NewEncoder(&b).Encode(m) // ends with '\n'
	b.Write(m.tail)
	return b.Bytes()
}

func decodeMeta(b []byte) (*objectMeta, bool) {
	line, tail, ok := bytes.Cut(b, []byte{'\n'})
	if !ok {
		return nil, false
	}
	var m objectMeta
	if json.Unmarshal(line, &m) != nil || m.Size-m.TailOff != int64(len(tail)) {
		return nil, false
	}
	m.tail = tail
	return &m, true
}

// Open implements Store: one request (a suffix-range GET of the tail, or a
// HEAD validating the cached tail), then ReadAt works through ranges.
func (s *S3) Open(ctx context.Context, uri string) (Reader, error) {
	if strings.HasPrefix(uri, "file://") {
		return s.local.Open(ctx, uri)
	}
	bucket, key, err := ParseS3URI(uri)
	if err != nil {
		return nil, err
	}
	var meta *objectMeta
	if s.cache != nil {
		if b := s.cache.get(metaKey(uri)); b != nil {
			if m, ok := decodeMeta(b); ok && m.URI == uri {
				size, etag, err := s.head(ctx, uri, bucket, key)
				if err != nil {
					return nil, err
				}
				if size == m.Size && etag == m.ETag {
					meta = m
				}
			}
		}
	}
	if meta == nil {
		if meta, err = s.fetchTail(ctx, uri, bucket, key); err != nil {
			return nil, err
		}
		if s.cache != nil && meta.ETag != "" {
			s.cache.put(metaKey(uri), meta.encode())
		}
	}
	r := &s3Reader{s: s, uri: uri, bucket: bucket, key: key, etag: meta.ETag, size: meta.Size,
		tailOff: meta.TailOff, tail: meta.tail}
	r.ctx, r.cancel = context.WithCancel(ctx)
	r.blockPrefix = "block\x00" + uri + "\x00" + meta.ETag + "\x00" + strconv.FormatInt(meta.Size, 10) + "\x00"
	return r, nil
}

// head returns an object's size and ETag.
func (s *S3) head(ctx context.Context, uri, bucket, key string) (int64, string, error) {
	var out *s3.HeadObjectOutput
	err := s.retry(ctx, func(ctx context.Context) error {
		var err error
		out, err = s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		return err
	})
	if err != nil {
		if isNotFound(err) {
			return 0, "", notExist("open", uri, err)
		}
		return 0, "", fmt.Errorf("open %s: %w", uri, err)
	}
	return aws.ToInt64(out.ContentLength), aws.ToString(out.ETag), nil
}

// fetchTail gets the last TailSize bytes, the size and the ETag with one
// suffix-range GET.
func (s *S3) fetchTail(ctx context.Context, uri, bucket, key string) (*objectMeta, error) {
	var m *objectMeta
	rangeRefused := false
	err := s.retry(ctx, func(ctx context.Context) error {
		out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key),
			Range: aws.String(fmt.Sprintf("bytes=-%d", s.opt.TailSize))})
		if err != nil {
			var re *awshttp.ResponseError
			if errors.As(err, &re) && re.HTTPStatusCode() == http.StatusRequestedRangeNotSatisfiable {
				rangeRefused = true
				return nil
			}
			return err
		}
		defer out.Body.Close()
		body, err := io.ReadAll(out.Body)
		if err != nil {
			return fmt.Errorf("read body: %w", err)
		}
		if cl := out.ContentLength; cl != nil && *cl != int64(len(body)) {
			return fmt.Errorf("read body: got %d of %d bytes: %w", len(body), *cl, io.ErrUnexpectedEOF)
		}
		s.bytesIn.Add(int64(len(body)))
		size := int64(len(body))
		if cr := aws.ToString(out.ContentRange); cr != "" {
			start, total, ok := parseContentRange(cr)
			if !ok || start+int64(len(body)) != total {
				return &errCorrupt{fmt.Sprintf("unexpected Content-Range %q for a %d-byte tail", cr, len(body))}
			}
			size = total
		}
		if int64(len(body)) > s.opt.TailSize { // the server ignored the range
			body = body[int64(len(body))-s.opt.TailSize:]
		}
		m = &objectMeta{URI: uri, Size: size, ETag: aws.ToString(out.ETag), TailOff: size - int64(len(body)), tail: body}
		return nil
	})
	if err == nil && rangeRefused {
		// Empty objects (and servers that refuse suffixes longer than the
		// object) answer 416: learn the size first.
		size, etag, err := s.head(ctx, uri, bucket, key)
		if err != nil {
			return nil, err
		}
		m = &objectMeta{URI: uri, Size: size, ETag: etag, TailOff: size}
		if size > 0 {
			off := max(0, size-s.opt.TailSize)
			m.TailOff, m.tail = off, make([]byte, size-off)
			if err := s.getRange(ctx, uri, bucket, key, etag, off, m.tail); err != nil {
				return nil, err
			}
		}
		return m, nil
	}
	if err != nil {
		if isNotFound(err) {
			return nil, notExist("open", uri, err)
		}
		return nil, fmt.Errorf("open %s: %w", uri, err)
	}
	return m, nil
}

// parseContentRange parses "bytes start-end/total".
func parseContentRange(s string) (start, total int64, ok bool) {
	s, found := strings.CutPrefix(s, "bytes ")
	if !found {
		return 0, 0, false
	}
	rng, tot, found := strings.Cut(s, "/")
	if !found {
		return 0, 0, false
	}
	a, _, found := strings.Cut(rng, "-")
	if !found {
		return 0, 0, false
	}
	start, err1 := strconv.ParseInt(a, 10, 64)
	total, err2 := strconv.ParseInt(tot, 10, 64)
	return start, total, err1 == nil && err2 == nil
}

// getRange fills p with the object's bytes at off: one ranged GET,
// retried as a whole (body included) on transient failures.
func (s *S3) getRange(ctx context.Context, uri, bucket, key, etag string, off int64, p []byte) error {
	rng := fmt.Sprintf("bytes=%d-%d", off, off+int64(len(p))-1)
	err := s.retry(ctx, func(ctx context.Context) error {
		select {
		case s.getSem <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		defer func() { <-s.getSem }()
		in := &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Range: aws.String(rng)}
		if etag != "" {
			in.IfMatch = aws.String(etag)
		}
		out, err := s.client.GetObject(ctx, in)
		if err != nil {
			return err
		}
		defer out.Body.Close()
		if cl := out.ContentLength; cl != nil && *cl != int64(len(p)) {
			return &errCorrupt{fmt.Sprintf("asked for %s, the server sent %d bytes (object shorter than its size?)", rng, *cl)}
		}
		if cr := aws.ToString(out.ContentRange); cr != "" {
			if start, _, ok := parseContentRange(cr); !ok || start != off {
				return &errCorrupt{fmt.Sprintf("asked for %s, the server sent Content-Range %q", rng, cr)}
			}
		}
		n, err := io.ReadFull(out.Body, p)
		s.bytesIn.Add(int64(n))
		if err != nil {
			return fmt.Errorf("read body: %w", err)
		}
		return nil
	})
	if err != nil {
		if isNotFound(err) {
			return notExist("read", uri, err)
		}
		var ae smithy.APIError
		if errors.As(err, &ae) && ae.ErrorCode() == "PreconditionFailed" {
			return fmt.Errorf("read %s %s: the object changed since it was opened: %w", uri, rng, err)
		}
		return fmt.Errorf("read %s %s: %w", uri, rng, err)
	}
	return nil
}

// s3Reader is an open S3 object. ReadAt is safe for concurrent use.
type s3Reader struct {
	s                *S3
	ctx              context.Context
	cancel           context.CancelFunc
	uri, bucket, key string
	etag             string
	size, tailOff    int64
	tail             []byte
	blockPrefix      string
	pos              int64

	mu         sync.Mutex
	streams    []readStream
	tick       uint64
	prefetches int
	closed     bool
	wg         sync.WaitGroup
}

func (r *s3Reader) Size() int64 { return r.size }

func (r *s3Reader) Read(p []byte) (int, error) {
	n, err := r.ReadAt(p, r.pos)
	r.pos += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

func (r *s3Reader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += r.pos
	case io.SeekEnd:
		offset += r.size
	default:
		return 0, fmt.Errorf("seek %s: bad whence %d", r.uri, whence)
	}
	if offset < 0 {
		return 0, fmt.Errorf("seek %s: negative position", r.uri)
	}
	r.pos = offset
	return offset, nil
}

func (r *s3Reader) Close() error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.cancel()
	r.wg.Wait()
	return nil
}

// ReadAt implements io.ReaderAt: the tail from memory, the rest through
// the cache (or straight from S3 without one).
func (r *s3Reader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("read %s: negative offset", r.uri)
	}
	if off >= r.size {
		return 0, io.EOF
	}
	n := len(p)
	var eof error
	if int64(n) > r.size-off {
		n, eof = int(r.size-off), io.EOF
	}
	q := p[:n]
	if end := off + int64(n); end > r.tailOff {
		from := max(off, r.tailOff)
		copy(q[from-off:], r.tail[from-r.tailOff:end-r.tailOff])
		q = q[:from-off]
	}
	if len(q) > 0 {
		var err error
		if r.s.cache != nil {
			err = r.readCached(q, off)
		} else {
			err = r.readDirect(q, off)
		}
		if err != nil {
			return 0, err
		}
	}
	metrics.DataRead(metrics.StoreS3, n)
	return n, eof
}

// readDirect fetches q (at off) in requests of at most MaxRequestSize,
// concurrently.
func (r *s3Reader) readDirect(q []byte, off int64) error {
	max := r.s.opt.MaxRequestSize
	if int64(len(q)) <= max {
		return r.s.getRange(r.ctx, r.uri, r.bucket, r.key, r.etag, off, q)
	}
	var g safego.Group
	errs := make([]error, (int64(len(q))+max-1)/max)
	for i := range errs {
		lo := int64(i) * max
		hi := min(lo+max, int64(len(q)))
		g.Start(func() {
			errs[i] = safego.Call(func() error {
				return r.s.getRange(r.ctx, r.uri, r.bucket, r.key, r.etag, off+lo, q[lo:hi])
			})
		})
	}
	g.Wait()
	return firstError(errs)
}

func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (r *s3Reader) blockName(idx int64) string {
	return entryName(r.blockPrefix + strconv.FormatInt(idx, 10))
}

// blockLen is the length of block idx (the last one is short).
func (r *s3Reader) blockLen(idx int64) int64 {
	bs := r.s.cache.blockSize
	return min(bs, r.size-idx*bs)
}

// ownedBlock is a block whose fetch the reader has claimed.
type ownedBlock struct {
	idx  int64
	name string
	fl   *flight
}

// readCached fills q (at off) block by block: hits from disk, misses
// claimed and fetched in coalesced runs, blocks other readers are fetching
// awaited.
func (r *s3Reader) readCached(q []byte, off int64) error {
	c := r.s.cache
	bs := c.blockSize
	end := off + int64(len(q))
	// part returns the slice of q inside block idx and its offset in the block.
	part := func(idx int64) ([]byte, int64) {
		bStart := idx * bs
		lo, hi := max(off, bStart), min(end, bStart+r.blockLen(idx))
		return q[lo-off : hi-off], lo - bStart
	}
	var owned []ownedBlock
	type wait struct {
		idx int64
		fl  *flight
	}
	var waits []wait
	for idx := off / bs; idx <= (end-1)/bs; idx++ {
		name := r.blockName(idx)
		for {
			e, fl, owner := c.lookup(name, r.blockLen(idx), false)
			if e != nil {
				dst, in := part(idx)
				if c.readEntry(e, dst, in) {
					break
				}
				continue // evicted under us: look again
			}
			if owner {
				owned = append(owned, ownedBlock{idx: idx, name: name, fl: fl})
			} else {
				waits = append(waits, wait{idx, fl})
			}
			break
		}
	}
	err := r.fetchBlocks(owned, false, func(idx int64, data []byte) {
		dst, in := part(idx)
		copy(dst, data[in:])
	})
	for _, w := range waits {
		select {
		case <-w.fl.done:
		case <-r.ctx.Done():
			return fmt.Errorf("read %s: %w", r.uri, r.ctx.Err())
		}
		dst, in := part(w.idx)
		if w.fl.err == nil {
			copy(dst, w.fl.data[in:])
			continue
		}
		// The other reader's fetch failed (or was cancelled): fetch ours.
		if e := r.s.getRange(r.ctx, r.uri, r.bucket, r.key, r.etag, w.idx*bs+in, dst); e != nil && err == nil {
			err = e
		}
	}
	if err != nil {
		return err
	}
	r.maybePrefetch(off, end)
	return nil
}

// fetchBlocks fetches claimed blocks (sorted by index) in runs of
// consecutive blocks of at most MaxRequestSize, concurrently, finishing
// every claim and handing each block to deliver.
func (r *s3Reader) fetchBlocks(owned []ownedBlock, prefetch bool, deliver func(idx int64, data []byte)) error {
	if len(owned) == 0 {
		return nil
	}
	c := r.s.cache
	bs := c.blockSize
	perRun := max(1, int(r.s.opt.MaxRequestSize/bs))
	var runs [][]ownedBlock
	start := 0
	for i := 1; i <= len(owned); i++ {
		if i == len(owned) || owned[i].idx != owned[i-1].idx+1 || i-start == perRun {
			runs = append(runs, owned[start:i])
			start = i
		}
	}
	fetch := func(run []ownedBlock) error {
		first, last := run[0].idx, run[len(run)-1].idx
		lo := first * bs
		buf := make([]byte, last*bs+r.blockLen(last)-lo)
		// A panic of the request fails it like an error, so every claim
		// of the run is still finished: readers waiting for a block are
		// never left waiting.
		err := safego.Call(func() error { return r.s.getRange(r.ctx, r.uri, r.bucket, r.key, r.etag, lo, buf) })
		for _, b := range run {
			var data []byte
			if err == nil {
				data = buf[b.idx*bs-lo : b.idx*bs-lo+r.blockLen(b.idx)]
			}
			c.finish(b.name, b.fl, data, err, prefetch)
			if err == nil && deliver != nil {
				deliver(b.idx, data)
			}
		}
		return err
	}
	if len(runs) == 1 {
		return fetch(runs[0])
	}
	errs := make([]error, len(runs))
	var g safego.Group
	for i, run := range runs {
		g.Start(func() { errs[i] = fetch(run) })
	}
	g.Wait()
	return firstError(errs)
}

// readStream is one sequential reader of the object (Parquet reads each
// column chunk as its own stream of buffered reads, interleaved).
type readStream struct {
	next, prefetched int64
	used             uint64
}

// maxStreams bounds the streams a reader tracks; maxPrefetches the
// prefetches it runs at once.
const (
	maxStreams    = 32
	maxPrefetches = 4
)

// maybePrefetch fetches blocks ahead of sequential streams into the cache
// in the background: a read that continues where an earlier one ended gets
// the next Prefetch bytes fetched, so that a column chunk's next pages are
// local or in flight when its reader gets there.
func (r *s3Reader) maybePrefetch(off, end int64) {
	window := r.s.opt.Prefetch
	if window <= 0 {
		return
	}
	r.mu.Lock()
	r.tick++
	var st *readStream
	for i := range r.streams {
		if r.streams[i].next == off {
			st = &r.streams[i]
			break
		}
	}
	if st == nil {
		// A new stream: remember it, replacing the least recently used.
		ns := readStream{next: end, prefetched: end, used: r.tick}
		if len(r.streams) < maxStreams {
			r.streams = append(r.streams, ns)
		} else {
			lru := 0
			for i := range r.streams {
				if r.streams[i].used < r.streams[lru].used {
					lru = i
				}
			}
			r.streams[lru] = ns
		}
		r.mu.Unlock()
		return
	}
	st.next, st.used = end, r.tick
	from, to := max(end, st.prefetched), min(end+window, r.tailOff)
	if r.closed || r.prefetches >= maxPrefetches || st.prefetched >= end+window/2 || from >= to {
		r.mu.Unlock()
		return
	}
	st.prefetched = to
	r.prefetches++
	r.wg.Add(1)
	r.mu.Unlock()
	safego.Go(func() {
		defer r.wg.Done()
		defer func() {
			r.mu.Lock()
			r.prefetches--
			r.mu.Unlock()
		}()
		c := r.s.cache
		var owned []ownedBlock
		for idx := from / c.blockSize; idx <= (to-1)/c.blockSize; idx++ {
			name := r.blockName(idx)
			if _, fl, owner := c.lookup(name, r.blockLen(idx), true); owner {
				owned = append(owned, ownedBlock{idx: idx, name: name, fl: fl})
			}
		}
		_ = r.fetchBlocks(owned, true, nil) // readers fetch for themselves on failure
	})
}
