package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/lakesoul-go/lakesoul/internal/safego"
)

// s3Writer streams an object: bytes fill a part buffer; a full buffer goes
// up as a multipart part in the background (at most UploadConcurrency at
// once, Write blocks beyond that) while the next one fills. Close puts a
// small object with one PUT, or uploads the last part and completes the
// upload; until then nothing is visible at the key.
type s3Writer struct {
	s                *S3
	ctx              context.Context
	uri, bucket, key string

	buf      []byte
	uploadID string
	nextPart int32
	sem      chan struct{}
	wg       sync.WaitGroup

	mu    sync.Mutex
	parts []types.CompletedPart
	err   error // first failure of a background part upload

	state int // writerOpen, writerClosed, writerAborted
}

const (
	writerOpen = iota
	writerClosed
	writerAborted
)

func newS3Writer(ctx context.Context, s *S3, uri, bucket, key string) *s3Writer {
	return &s3Writer{s: s, ctx: ctx, uri: uri, bucket: bucket, key: key,
		buf: s.getBuf(), sem: make(chan struct{}, s.opt.UploadConcurrency)}
}

func (w *s3Writer) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *s3Writer) fail(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.mu.Unlock()
}

// Write implements io.Writer.
func (w *s3Writer) Write(p []byte) (int, error) {
	if w.state != writerOpen {
		return 0, fmt.Errorf("write %s: writer is closed", w.uri)
	}
	if err := w.failed(); err != nil {
		return 0, err
	}
	n := 0
	for len(p) > 0 {
		free := cap(w.buf) - len(w.buf)
		k := min(free, len(p))
		w.buf = append(w.buf, p[:k]...)
		p, n = p[k:], n+k
		if len(w.buf) == cap(w.buf) {
			if err := w.flushPart(); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// flushPart hands the full buffer to a background upload.
func (w *s3Writer) flushPart() error {
	if w.uploadID == "" {
		var out *s3.CreateMultipartUploadOutput
		err := w.s.retry(w.ctx, func(ctx context.Context) error {
			var err error
			out, err = w.s.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{
				Bucket: aws.String(w.bucket), Key: aws.String(w.key)})
			return err
		})
		if err != nil {
			err = fmt.Errorf("write %s: start multipart upload: %w", w.uri, err)
			w.fail(err)
			return err
		}
		w.uploadID = aws.ToString(out.UploadId)
	}
	for _, sem := range []chan struct{}{w.sem, w.s.partSem} {
		select {
		case sem <- struct{}{}:
		case <-w.ctx.Done():
			if sem == w.s.partSem {
				<-w.sem
			}
			err := fmt.Errorf("write %s: %w", w.uri, w.ctx.Err())
			w.fail(err)
			return err
		}
	}
	w.nextPart++
	num, data := w.nextPart, w.buf
	w.buf = w.s.getBuf()
	w.wg.Add(1)
	safego.Go(func() {
		defer w.wg.Done()
		defer func() { <-w.s.partSem; <-w.sem }()
		defer w.s.putBuf(data)
		if w.failed() != nil {
			return
		}
		var out *s3.UploadPartOutput
		// A panic fails the part like an error, so the object is never
		// completed without it.
		err := safego.Call(func() error {
			return w.s.retry(w.ctx, func(ctx context.Context) error {
				var err error
				out, err = w.s.client.UploadPart(ctx, &s3.UploadPartInput{
					Bucket: aws.String(w.bucket), Key: aws.String(w.key), UploadId: aws.String(w.uploadID),
					PartNumber: aws.Int32(num), Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data)))})
				return err
			})
		})
		if err != nil {
			w.fail(fmt.Errorf("write %s: upload part %d: %w", w.uri, num, err))
			return
		}
		w.s.bytesOut.Add(int64(len(data)))
		w.mu.Lock()
		w.parts = append(w.parts, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(num)})
		w.mu.Unlock()
	})
	return w.failed()
}

// Close completes the object.
func (w *s3Writer) Close() error {
	switch w.state {
	case writerClosed:
		return nil
	case writerAborted:
		return fmt.Errorf("close %s: writer was aborted", w.uri)
	}
	if w.uploadID == "" {
		if err := w.failed(); err != nil {
			w.state = writerAborted
			return err
		}
		data := w.buf
		err := w.s.retry(w.ctx, func(ctx context.Context) error {
			_, err := w.s.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(w.bucket), Key: aws.String(w.key),
				Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data)))})
			return err
		})
		w.s.putBuf(data)
		w.buf = nil
		if err != nil {
			w.state = writerAborted
			return fmt.Errorf("write %s: %w", w.uri, err)
		}
		w.s.bytesOut.Add(int64(len(data)))
		w.state = writerClosed
		return nil
	}
	if len(w.buf) > 0 && w.failed() == nil {
		_ = w.flushPart()
	}
	w.wg.Wait()
	if err := w.failed(); err != nil {
		return errors.Join(err, w.Abort())
	}
	sort.Slice(w.parts, func(i, j int) bool { return *w.parts[i].PartNumber < *w.parts[j].PartNumber })
	err := w.s.retry(w.ctx, func(ctx context.Context) error {
		_, err := w.s.client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{
			Bucket: aws.String(w.bucket), Key: aws.String(w.key), UploadId: aws.String(w.uploadID),
			MultipartUpload: &types.CompletedMultipartUpload{Parts: w.parts}})
		return err
	})
	if err != nil {
		return errors.Join(fmt.Errorf("write %s: complete multipart upload: %w", w.uri, err), w.Abort())
	}
	w.s.putBuf(w.buf)
	w.buf = nil
	w.state = writerClosed
	return nil
}

// Abort discards the object: an unfinished upload is aborted (its parts
// freed), a completed one deleted.
func (w *s3Writer) Abort() error {
	prev := w.state
	w.state = writerAborted
	w.fail(fmt.Errorf("write %s: aborted", w.uri))
	w.wg.Wait()
	if w.buf != nil {
		w.s.putBuf(w.buf)
		w.buf = nil
	}
	ctx := context.WithoutCancel(w.ctx)
	switch {
	case prev == writerClosed:
		return w.s.Delete(ctx, w.uri)
	case w.uploadID != "":
		id := w.uploadID
		w.uploadID = ""
		err := w.s.retry(ctx, func(ctx context.Context) error {
			_, err := w.s.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
				Bucket: aws.String(w.bucket), Key: aws.String(w.key), UploadId: aws.String(id)})
			return err
		})
		if err != nil && !isNotFound(err) {
			return fmt.Errorf("abort upload of %s (an orphan upload remains until the bucket's lifecycle or DROP removes it): %w", w.uri, err)
		}
	}
	return nil
}
