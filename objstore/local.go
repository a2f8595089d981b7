package objstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/lakesoul-go/lakesoul/metrics"
)

// Local stores objects as files; URIs are file:///absolute/path.
type Local struct{}

// LocalPath converts a file:// URI (file:///abs/path or
// file://localhost/abs/path) into an OS path. The URI is taken literally,
// as LakeSoul writes paths (never percent-encoded): '%', '#' and '?' are
// characters of a name, never escapes, a fragment or a query, so a name
// layout escaped (t%23frag for "t#frag") cannot become another path here.
func LocalPath(uri string) (string, error) {
	rest, ok := strings.CutPrefix(uri, "file://")
	if !ok {
		return "", fmt.Errorf("objstore: %q is not a file:// URI", uri)
	}
	host, p, found := strings.Cut(rest, "/")
	if !found {
		return "", fmt.Errorf("objstore: %q names no absolute path", uri)
	}
	if host != "" && host != "localhost" {
		return "", fmt.Errorf("objstore: %q names a remote host", uri)
	}
	return filepath.Clean("/" + p), nil
}

// LocalURI converts an absolute OS path into a file:// URI.
func LocalURI(path string) string { return "file://" + filepath.ToSlash(path) }

// A local file is durable when its writer's Close returns: its data are
// fsynced, and so are the directory entries that name it (its directory,
// and the parents of the directories Create made for it), as a commit
// that names the file may follow at once — without, a power loss after
// an acknowledged commit could leave the catalog naming an empty or
// missing file.
type localWriter struct {
	f    *os.File
	path string
	// made are the directories Create made for the file, outermost
	// first: their parents' entries must reach the disk too.
	made []string
}

func (w *localWriter) Write(p []byte) (int, error) { return w.f.Write(p) }

func (w *localWriter) Close() error {
	err := syncFile(w.f)
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		dirs := []string{filepath.Dir(w.path)}
		for _, d := range w.made {
			dirs = append(dirs, filepath.Dir(d))
		}
		for _, d := range dirs {
			if err = syncDir(d); err != nil {
				break
			}
		}
	}
	if err != nil {
		os.Remove(w.path)
		return fmt.Errorf("close %s: %w", w.path, err)
	}
	return nil
}

// syncFile and syncDir make a file's data and a directory's entries
// durable (variables for TestLocalWriterSyncs).
var (
	syncFile = (*os.File).Sync
	syncDir  = func(dir string) error {
		d, err := os.Open(dir)
		if err != nil {
			return err
		}
		defer d.Close()
		return syncFile(d)
	}
)

func (w *localWriter) Abort() error {
	w.f.Close()
	if err := os.Remove(w.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Create implements Store.
func (Local) Create(_ context.Context, uri string) (Writer, error) {
	p, err := LocalPath(uri)
	if err != nil {
		return nil, err
	}
	var made []string
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || filepath.Dir(d) == d {
			break
		}
		made = append([]string{d}, made...)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", uri, err)
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", uri, err)
	}
	return &localWriter{f: f, path: p, made: made}, nil
}

type localReader struct {
	*os.File
	size int64
}

func (r *localReader) Size() int64 { return r.size }

func (r *localReader) Read(p []byte) (int, error) {
	n, err := r.File.Read(p)
	metrics.DataRead(metrics.StoreFile, n)
	return n, err
}

func (r *localReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := r.File.ReadAt(p, off)
	metrics.DataRead(metrics.StoreFile, n)
	return n, err
}

// Open implements Store.
func (Local) Open(_ context.Context, uri string) (Reader, error) {
	p, err := LocalPath(uri)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", uri, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("stat %s: %w", uri, err)
	}
	return &localReader{File: f, size: st.Size()}, nil
}

// Delete implements Store.
func (Local) Delete(_ context.Context, uri string) error {
	p, err := LocalPath(uri)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete %s: %w", uri, err)
	}
	return nil
}

// DeletePrefix implements Store.
func (Local) DeletePrefix(_ context.Context, root, uri string) error {
	if err := checkPrefix(root, uri); err != nil {
		return err
	}
	p, err := LocalPath(uri)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(p); err != nil {
		return fmt.Errorf("delete %s: %w", uri, err)
	}
	return nil
}
