package objstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// S3 IO defaults, after LakeSoul's native IO (reference §8.7, §9): requests
// split at 8 MiB and issued concurrently, multipart parts of 8 MiB.
const (
	DefaultS3PartSize          = 8 << 20
	DefaultS3UploadConcurrency = 4
	DefaultS3MaxRequestSize    = 8 << 20
	DefaultS3ReadConcurrency   = 16
	DefaultS3TailSize          = 64 << 10
	DefaultS3Prefetch          = 4 << 20
	DefaultS3RequestTimeout    = 2 * time.Minute
	DefaultS3MaxRetries        = 4
	DefaultS3RetryBase         = 100 * time.Millisecond
	minS3PartSize              = 5 << 20
)

// S3Options configure the S3 backend. Zero values take the defaults.
type S3Options struct {
	// Endpoint is an S3-compatible endpoint URL (e.g. http://127.0.0.1:8333);
	// when set, requests use path-style addressing. Empty: AWS, or
	// AWS_ENDPOINT_URL through the SDK's configuration.
	Endpoint string
	// Region; empty takes AWS_REGION / the shared config, else us-east-1.
	Region string
	// AccessKeyID and SecretAccessKey, when set, replace the standard AWS
	// credential chain (environment, shared files, SSO, IMDS …).
	AccessKeyID, SecretAccessKey string

	// CacheDir and CacheSize configure the disk cache of reads; no cache
	// when CacheDir is empty or CacheSize <= 0. CacheBlockSize is the
	// cache's block size (default 1 MiB). Cache, when set, is used instead.
	CacheDir       string
	CacheSize      int64
	CacheBlockSize int64
	Cache          *Cache

	// PartSize is the multipart part size (min 5 MiB); objects smaller
	// than one part are written with a single PUT.
	PartSize int64
	// UploadConcurrency bounds the parts of one object in flight; four
	// times as many may be in flight in the whole store.
	UploadConcurrency int
	// MaxRequestSize splits ranged reads into requests of at most this size.
	MaxRequestSize int64
	// ReadConcurrency bounds the ranged GETs in flight in the whole store.
	ReadConcurrency int
	// TailSize is how much of an object's end Open fetches in its one
	// request (the Parquet footer).
	TailSize int64
	// Prefetch is how far ahead of each sequential stream of reads (a
	// Parquet column chunk read page by page) blocks are fetched into the
	// cache (negative: off). Only with a cache.
	Prefetch int64
	// RequestTimeout bounds one attempt of one request, body included.
	RequestTimeout time.Duration
	// MaxRetries is how often a transiently failed request is retried
	// (negative: never), with exponential backoff from RetryBase.
	MaxRetries int
	RetryBase  time.Duration
	// HTTPClient replaces the SDK's HTTP client.
	HTTPClient *http.Client
}

func (o *S3Options) fill() {
	if o.PartSize <= 0 {
		o.PartSize = DefaultS3PartSize
	}
	o.PartSize = max(o.PartSize, minS3PartSize)
	if o.UploadConcurrency <= 0 {
		o.UploadConcurrency = DefaultS3UploadConcurrency
	}
	if o.MaxRequestSize <= 0 {
		o.MaxRequestSize = DefaultS3MaxRequestSize
	}
	if o.ReadConcurrency <= 0 {
		o.ReadConcurrency = DefaultS3ReadConcurrency
	}
	if o.TailSize <= 0 {
		o.TailSize = DefaultS3TailSize
	}
	if o.Prefetch == 0 {
		o.Prefetch = DefaultS3Prefetch
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultS3RequestTimeout
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = DefaultS3MaxRetries
	}
	if o.RetryBase <= 0 {
		o.RetryBase = DefaultS3RetryBase
	}
}

// S3 stores objects in S3 or an S3-compatible server. URIs are
// s3://bucket/key (s3a:// and s3n:// are accepted as LakeSoul's Hadoop
// clients write them); file:// URIs go to the local backend, so tables
// created under a local warehouse stay readable.
//
// Writes stream: an object of at most one part is one PUT; a larger one is
// a multipart upload whose parts go up concurrently while the writer fills
// the next; nothing is visible until Close completes it, and Abort (or any
// failure) aborts the upload. Reads: Open fetches the object's tail (the
// Parquet footer) and size in one request; ReadAt goes through the disk
// cache in aligned blocks, fetching missing runs with ranged GETs of at most
// MaxRequestSize issued concurrently, and prefetches ahead of sequential
// readers. Every request is retried with backoff on transient failures
// (network errors, timeouts, 5xx, throttling); permanent ones (404, 403,
// bad request) fail at once with an error naming the object.
type S3 struct {
	client *s3.Client
	opt    S3Options
	cache  *Cache
	local  Local
	getSem chan struct{}
	// partSem bounds the parts in flight across all writers (each writer
	// also keeps to UploadConcurrency), and so the part buffers in memory.
	partSem chan struct{}
	bufs    sync.Pool

	requests, retries, failures, bytesIn, bytesOut atomic.Int64
}

// S3Stats are the backend's request counters.
type S3Stats struct {
	// Failures counts operations that failed for good (after their
	// retries; a cancelled caller's are not counted).
	Requests, Retries, Failures, BytesIn, BytesOut int64
	// Cache holds the disk cache's counters (zero without a cache).
	Cache CacheStats
}

// NewS3 builds the S3 backend: the SDK's standard configuration chain
// (credentials, region, AWS_ENDPOINT_URL) with opt's overrides.
func NewS3(ctx context.Context, opt S3Options) (*S3, error) {
	opt.fill()
	var load []func(*config.LoadOptions) error
	if opt.Region != "" {
		load = append(load, config.WithRegion(opt.Region))
	}
	if opt.AccessKeyID != "" {
		load = append(load, config.WithCredentialsProvider(
			credentials.NewStaticCredentialsProvider(opt.AccessKeyID, opt.SecretAccessKey, "")))
	}
	cfg, err := config.LoadDefaultConfig(ctx, load...)
	if err != nil {
		return nil, fmt.Errorf("s3: load AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	endpoint := opt.Endpoint
	if endpoint == "" && cfg.BaseEndpoint != nil {
		endpoint = *cfg.BaseEndpoint
	}
	var httpClient *http.Client
	if opt.HTTPClient != nil {
		httpClient = opt.HTTPClient
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
			o.UsePathStyle = true
		}
		// Retries are ours (they cover reading response bodies too).
		o.Retryer = aws.NopRetryer{}
		// Checksums only where the API requires them: S3-compatible
		// servers differ in their support of the newer checksum headers.
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		if httpClient != nil {
			o.HTTPClient = httpClient
		} else {
			o.HTTPClient = awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
				t.MaxIdleConnsPerHost = opt.ReadConcurrency + 4*opt.UploadConcurrency
			})
		}
	})
	s := &S3{client: client, opt: opt, getSem: make(chan struct{}, opt.ReadConcurrency),
		partSem: make(chan struct{}, 4*opt.UploadConcurrency)}
	s.bufs.New = func() any { b := make([]byte, 0, opt.PartSize); return &b }
	switch {
	case opt.Cache != nil:
		s.cache = opt.Cache
	case opt.CacheDir != "" && opt.CacheSize > 0:
		if s.cache, err = OpenCache(opt.CacheDir, opt.CacheSize, opt.CacheBlockSize); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Client is the SDK client (for tests and tools).
func (s *S3) Client() *s3.Client { return s.client }

// Cache is the disk cache, or nil.
func (s *S3) Cache() *Cache { return s.cache }

// Stats returns the request counters and the cache's.
func (s *S3) Stats() S3Stats {
	st := S3Stats{Requests: s.requests.Load(), Retries: s.retries.Load(), Failures: s.failures.Load(), BytesIn: s.bytesIn.Load(), BytesOut: s.bytesOut.Load()}
	if s.cache != nil {
		st.Cache = s.cache.Stats()
	}
	return st
}

// CheckBucket verifies that the bucket of uri is reachable.
func (s *S3) CheckBucket(ctx context.Context, uri string) error {
	bucket, _, err := ParseS3URI(uri)
	if err != nil {
		return err
	}
	err = s.retry(ctx, func(ctx context.Context) error {
		_, err := s.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket)})
		return err
	})
	if err != nil {
		if isNotFound(err) {
			return fmt.Errorf("s3 bucket %q does not exist (warehouse %s)", bucket, uri)
		}
		return fmt.Errorf("s3 bucket %q (warehouse %s): %w", bucket, uri, err)
	}
	return nil
}

// IsS3URI reports whether uri names an S3 object or prefix.
func IsS3URI(uri string) bool {
	for _, p := range []string{"s3://", "s3a://", "s3n://"} {
		if strings.HasPrefix(uri, p) {
			return true
		}
	}
	return false
}

// ParseS3URI splits s3://bucket/key (or s3a://, s3n://) into bucket and key.
// Keys are taken verbatim: LakeSoul does not percent-encode paths.
func ParseS3URI(uri string) (bucket, key string, err error) {
	rest := ""
	for _, p := range []string{"s3://", "s3a://", "s3n://"} {
		if strings.HasPrefix(uri, p) {
			rest = uri[len(p):]
			break
		}
	}
	if rest == "" {
		return "", "", fmt.Errorf("objstore: %q is not an s3://bucket/key URI", uri)
	}
	bucket, key, _ = strings.Cut(rest, "/")
	if bucket == "" {
		return "", "", fmt.Errorf("objstore: %q names no bucket", uri)
	}
	return bucket, key, nil
}

// retry runs fn, each attempt bounded by RequestTimeout, retrying transient
// failures with exponential backoff and jitter.
func (s *S3) retry(ctx context.Context, fn func(ctx context.Context) error) error {
	for attempt := 0; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, s.opt.RequestTimeout)
		s.requests.Add(1)
		err := fn(actx)
		timedOut := actx.Err() != nil
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		if timedOut {
			op := ""
			var oe *smithy.OperationError
			if errors.As(err, &oe) {
				op = oe.OperationName + ": "
			}
			err = &tidyError{msg: fmt.Sprintf("%sno answer within %v", op, s.opt.RequestTimeout), err: err}
		}
		if !(timedOut || isTransient(err)) || attempt >= s.opt.MaxRetries {
			s.failures.Add(1)
			err = tidy(err)
			if attempt > 0 {
				return fmt.Errorf("%w (after %d attempts)", err, attempt+1)
			}
			return err
		}
		s.retries.Add(1)
		d := s.opt.RetryBase << min(attempt, 6)
		d = d/2 + rand.N(d/2+1)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (%v)", ctx.Err(), err)
		case <-time.After(d):
		}
	}
}

// isTransient tells failures worth retrying: network errors, timeouts,
// 5xx, 408, 429 and S3's throttling codes. Other API errors are permanent.
func isTransient(err error) bool {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "SlowDown", "InternalError", "ServiceUnavailable", "RequestTimeout", "Throttling",
			"ThrottlingException", "RequestThrottled", "TooManyRequests", "RequestTimeTooSkewed":
			return true
		}
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		// 0: no response at all (connection refused, reset, cut).
		code := re.HTTPStatusCode()
		return code == 0 || code >= 500 || code == 408 || code == 429
	}
	if ae != nil {
		return false
	}
	var ce *errCorrupt
	if errors.As(err, &ce) {
		return false
	}
	return !errors.Is(err, context.Canceled)
}

// isNotFound tells a missing object, bucket or upload.
func isNotFound(err error) bool {
	var nsk *types.NoSuchKey
	var nf *types.NotFound
	var nsb *types.NoSuchBucket
	var nsu *types.NoSuchUpload
	if errors.As(err, &nsk) || errors.As(err, &nf) || errors.As(err, &nsb) || errors.As(err, &nsu) {
		return true
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.HTTPStatusCode() == http.StatusNotFound {
		return true
	}
	var ae smithy.APIError
	return errors.As(err, &ae) && (ae.ErrorCode() == "NoSuchKey" || ae.ErrorCode() == "NotFound" ||
		ae.ErrorCode() == "NoSuchBucket" || ae.ErrorCode() == "NoSuchUpload")
}

// tidyError is an SDK error with a short message: the operation, and the
// service's code and message or the transport's failure, without the
// SDK's request-id boilerplate. It unwraps to the SDK error.
type tidyError struct {
	msg string
	err error
}

func (e *tidyError) Error() string { return e.msg }
func (e *tidyError) Unwrap() error { return e.err }

func tidy(err error) error {
	var te *tidyError
	var oe *smithy.OperationError
	if errors.As(err, &te) || !errors.As(err, &oe) {
		return err
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		status := ""
		var re *awshttp.ResponseError
		if errors.As(err, &re) {
			status = fmt.Sprintf(" (HTTP %d)", re.HTTPStatusCode())
		}
		msg := ae.ErrorCode() + status
		if m := ae.ErrorMessage(); m != "" {
			msg += ": " + m
		}
		return &tidyError{msg: oe.OperationName + ": " + msg, err: err}
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.HTTPStatusCode() != 0 {
		return &tidyError{msg: fmt.Sprintf("%s: HTTP %d", oe.OperationName, re.HTTPStatusCode()), err: err}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		u, _ := url.Parse(ue.URL)
		host := ue.URL
		if u != nil {
			host = u.Scheme + "://" + u.Host
		}
		return &tidyError{msg: fmt.Sprintf("%s: no answer from %s: %v", oe.OperationName, host, ue.Err), err: err}
	}
	return err
}

// errCorrupt is a response that contradicts itself or the object (short
// body, wrong range): permanent.
type errCorrupt struct{ msg string }

func (e *errCorrupt) Error() string { return e.msg }

// notExistError is a missing object: errors.Is(err, fs.ErrNotExist) holds.
type notExistError struct {
	msg string
	err error
}

func (e *notExistError) Error() string        { return e.msg }
func (e *notExistError) Unwrap() error        { return e.err }
func (e *notExistError) Is(target error) bool { return target == fs.ErrNotExist }

func notExist(op, uri string, err error) error {
	return &notExistError{msg: fmt.Sprintf("%s %s: object does not exist (%v)", op, uri, err), err: err}
}

// Create implements Store.
func (s *S3) Create(ctx context.Context, uri string) (Writer, error) {
	if strings.HasPrefix(uri, "file://") {
		return s.local.Create(ctx, uri)
	}
	bucket, key, err := ParseS3URI(uri)
	if err != nil {
		return nil, err
	}
	if key == "" || strings.HasSuffix(key, "/") {
		return nil, fmt.Errorf("create %s: not an object key", uri)
	}
	return newS3Writer(ctx, s, uri, bucket, key), nil
}

// Delete implements Store.
func (s *S3) Delete(ctx context.Context, uri string) error {
	if strings.HasPrefix(uri, "file://") {
		return s.local.Delete(ctx, uri)
	}
	bucket, key, err := ParseS3URI(uri)
	if err != nil {
		return err
	}
	err = s.retry(ctx, func(ctx context.Context) error {
		_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		return err
	})
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("delete %s: %w", uri, err)
	}
	if s.cache != nil {
		s.cache.remove(metaKey(uri))
	}
	return nil
}

// DeletePrefix implements Store: every object under prefix/ (and multipart
// uploads left there by failed writes).
func (s *S3) DeletePrefix(ctx context.Context, root, uri string) error {
	if strings.HasPrefix(uri, "file://") {
		return s.local.DeletePrefix(ctx, root, uri)
	}
	if err := checkPrefix(root, uri); err != nil {
		return err
	}
	bucket, key, err := ParseS3URI(uri)
	if err != nil {
		return err
	}
	key = strings.TrimSuffix(key, "/")
	if key == "" {
		return fmt.Errorf("delete %s: refusing to delete a whole bucket", uri)
	}
	prefix := key + "/"
	keys, err := s.List(ctx, bucket, prefix)
	if err != nil {
		return fmt.Errorf("delete %s: %w", uri, err)
	}
	if s.cache != nil {
		for _, k := range batchURIs(uri, key, keys) {
			s.cache.remove(metaKey(k))
		}
	}
	for len(keys) > 0 {
		batch := keys[:min(len(keys), 1000)]
		keys = keys[len(batch):]
		if err := s.deleteBatch(ctx, bucket, batch); err != nil {
			return fmt.Errorf("delete %s: %w", uri, err)
		}
	}
	s.abortUploads(ctx, bucket, prefix)
	return nil
}

func batchURIs(uri, key string, keys []string) []string {
	base := strings.TrimSuffix(uri, "/")
	base = base[:len(base)-len(key)]
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = base + k
	}
	return out
}

// List returns the keys under prefix in bucket.
func (s *S3) List(ctx context.Context, bucket, prefix string) ([]string, error) {
	var keys []string
	var token *string
	for {
		var out *s3.ListObjectsV2Output
		err := s.retry(ctx, func(ctx context.Context) error {
			var err error
			out, err = s.client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{
				Bucket: aws.String(bucket), Prefix: aws.String(prefix), ContinuationToken: token})
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("list s3://%s/%s: %w", bucket, prefix, err)
		}
		for _, o := range out.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
		if !aws.ToBool(out.IsTruncated) || out.NextContinuationToken == nil {
			return keys, nil
		}
		token = out.NextContinuationToken
	}
}

// deleteBatch removes up to 1000 keys with one DeleteObjects request,
// falling back to single deletes where the server lacks it.
func (s *S3) deleteBatch(ctx context.Context, bucket string, keys []string) error {
	ids := make([]types.ObjectIdentifier, len(keys))
	for i, k := range keys {
		ids[i] = types.ObjectIdentifier{Key: aws.String(k)}
	}
	var out *s3.DeleteObjectsOutput
	err := s.retry(ctx, func(ctx context.Context) error {
		var err error
		out, err = s.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(bucket),
			Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)}})
		return err
	})
	if err != nil {
		var ae smithy.APIError
		if !errors.As(err, &ae) {
			return err
		}
		// Not implemented or refused as sent: delete one by one.
		for _, k := range keys {
			if err := s.Delete(ctx, "s3://"+bucket+"/"+k); err != nil {
				return err
			}
		}
		return nil
	}
	var errs []error
	for _, e := range out.Errors {
		if aws.ToString(e.Code) == "NoSuchKey" {
			continue
		}
		errs = append(errs, fmt.Errorf("s3://%s/%s: %s %s", bucket, aws.ToString(e.Key), aws.ToString(e.Code), aws.ToString(e.Message)))
	}
	return errors.Join(errs...)
}

// abortUploads aborts multipart uploads under prefix (left by writers that
// died before aborting). Best effort: servers without the listing API are
// skipped.
func (s *S3) abortUploads(ctx context.Context, bucket, prefix string) {
	var out *s3.ListMultipartUploadsOutput
	err := s.retry(ctx, func(ctx context.Context) error {
		var err error
		out, err = s.client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
		return err
	})
	if err != nil {
		return
	}
	for _, u := range out.Uploads {
		_ = s.retry(ctx, func(ctx context.Context) error {
			_, err := s.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String(bucket), Key: u.Key, UploadId: u.UploadId})
			return err
		})
	}
}

// PendingUploads lists the keys of unfinished multipart uploads under
// prefix (orphans of writers that died; tests check aborts with it).
func (s *S3) PendingUploads(ctx context.Context, bucket, prefix string) ([]string, error) {
	var out *s3.ListMultipartUploadsOutput
	err := s.retry(ctx, func(ctx context.Context) error {
		var err error
		out, err = s.client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
		return err
	})
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, u := range out.Uploads {
		keys = append(keys, aws.ToString(u.Key))
	}
	return keys, nil
}

func (s *S3) getBuf() []byte { return (*s.bufs.Get().(*[]byte))[:0] }

func (s *S3) putBuf(b []byte) {
	if int64(cap(b)) == s.opt.PartSize {
		b = b[:0]
		s.bufs.Put(&b)
	}
}
