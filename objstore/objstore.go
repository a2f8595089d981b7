// Package objstore is the one interface over the places table data lives:
// local disk (local.go) and S3 (s3*.go, reads through a disk cache,
// cache.go). Paths are full URIs as LakeSoul stores them in the catalog
// ("file:///abs/path", "s3://bucket/key"), taken literally: never
// percent-decoded, no fragment or query ('#', '?' and '%' are characters of
// names, which layout escapes into them).
//
// Invariant: a file becomes part of a table only through a catalog commit, so
// writers put objects at their final path directly (no staging rename); an
// object written by a failed write is an orphan that cleanup may delete.
package objstore

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/lakesoul-go/lakesoul/layout"
)

// Store reads and writes objects.
type Store interface {
	// Create starts writing a new object at path. The object is complete once
	// Close returns nil; Abort discards it.
	Create(ctx context.Context, path string) (Writer, error)
	// Open opens an object for random access.
	Open(ctx context.Context, path string) (Reader, error)
	// Delete removes one object; a missing object is not an error.
	Delete(ctx context.Context, path string) error
	// DeletePrefix removes every object under prefix (a directory-like
	// URI). The prefix must lie strictly inside root (layout.Within: both
	// canonical, no empty, "." or ".." segment), else nothing is deleted:
	// dropping a table passes its namespace's directory, so no table path
	// from the catalog can make it remove the warehouse, a namespace or
	// anything outside them.
	DeletePrefix(ctx context.Context, root, prefix string) error
}

// Writer is an object being written.
type Writer interface {
	io.Writer
	// Close completes the object.
	Close() error
	// Abort discards the partial object. Safe after a failed Write.
	Abort() error
}

// Reader is an open object: random access plus its size (what Parquet needs).
type Reader interface {
	io.ReaderAt
	io.ReadSeeker
	io.Closer
	Size() int64
}

// checkPrefix refuses a DeletePrefix outside its root.
func checkPrefix(root, prefix string) error {
	if !layout.Within(root, prefix) {
		return fmt.Errorf("delete %s: refusing to delete a prefix that is not inside %s", prefix, root)
	}
	return nil
}

// Join appends slash-separated elements to a URI.
func Join(base string, elems ...string) string {
	out := strings.TrimSuffix(base, "/")
	for _, e := range elems {
		e = strings.Trim(e, "/")
		if e != "" {
			out += "/" + e
		}
	}
	return out
}

// Options configure the backends ForURIWith builds.
type Options struct {
	// S3 configures the S3 backend (endpoint, region, credentials, disk
	// cache, IO tuning).
	S3 S3Options
	// CheckBucket makes ForURIWith verify that an s3:// warehouse's bucket
	// is reachable, so that a wrong endpoint or bucket fails at start.
	CheckBucket bool
}

// ForURI returns the store for a warehouse URI's scheme, with default
// options (S3: the standard AWS configuration chain, no disk cache).
func ForURI(uri string) (Store, error) {
	return ForURIWith(context.Background(), uri, Options{})
}

// ForURIWith returns the store for a warehouse URI's scheme: file:///path
// or s3://bucket/prefix (s3a://, s3n:// too).
func ForURIWith(ctx context.Context, uri string, opt Options) (Store, error) {
	switch {
	case strings.HasPrefix(uri, "file://"):
		return Local{}, nil
	case IsS3URI(uri):
		if _, _, err := ParseS3URI(uri); err != nil {
			return nil, err
		}
		s, err := NewS3(ctx, opt.S3)
		if err != nil {
			return nil, err
		}
		if opt.CheckBucket {
			if err := s.CheckBucket(ctx, uri); err != nil {
				return nil, err
			}
		}
		return s, nil
	}
	return nil, fmt.Errorf("objstore: unsupported warehouse URI %q (supported: file:///path, s3://bucket/prefix)", uri)
}
