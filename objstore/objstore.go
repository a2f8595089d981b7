// Package objstore is the one interface over the places table data lives:
// local disk now, S3 next. Paths are full URIs as LakeSoul stores them in the
// catalog ("file:///abs/path", "s3://bucket/key").
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
	// DeletePrefix removes every object under prefix (a directory-like URI).
	DeletePrefix(ctx context.Context, prefix string) error
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

// ForURI returns the store for a warehouse URI's scheme.
func ForURI(uri string) (Store, error) {
	switch {
	case strings.HasPrefix(uri, "file://"):
		return Local{}, nil
	}
	return nil, fmt.Errorf("objstore: unsupported warehouse URI %q (supported: file:///path)", uri)
}
