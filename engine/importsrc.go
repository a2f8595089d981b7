package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lakesoul-go/lakesoul/layout"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Where CALL lakesoul.import may read from (the trust rule):
//
//   - superusers and members of pg_read_server_files — PostgreSQL's rule
//     for COPY FROM a server file — may import any file:// location of the
//     server's file system and any s3:// location the server's credentials
//     reach;
//   - every other role only locations inside the warehouse directory of a
//     namespace it sees, <warehouse>/<namespace>/… (where the S3 proxy lets
//     it write, so a workspace stages files there and imports them), never
//     an arbitrary server path: 42501.
//
// A location is a file, a directory (every object below it with the
// format's extension, names starting with '.' or '_' skipped: _SUCCESS,
// .crc files), or a directory and a glob in its last segment
// (s3://b/p/*.parquet: the matching objects directly in p). Locations with
// empty, "." or ".." segments are refused (22023) before any check, so the
// directory checked is the directory read.

// importFile is one object to import.
type importFile struct {
	path string
	size int64
}

// importSource resolves a location into the store to read it with and its
// files, after the access check.
func (s *Session) importSource(ctx context.Context, location, format string, readServerFiles bool, namespaces []string) (objstore.Store, []importFile, error) {
	var store objstore.Store
	switch {
	case strings.HasPrefix(location, "file:///"):
		store = objstore.Local{}
	case objstore.IsS3URI(location):
		st, ok := s.e.store.(*objstore.S3)
		if !ok {
			return nil, nil, sqlerr.Unsupported("lakesoul.import from s3:// with a local warehouse",
				"run the server with an s3:// warehouse (its endpoint and credentials read the location), or import file:// locations")
		}
		store = st
	default:
		return nil, nil, sqlerr.New(sqlerr.InvalidParameterValue, "lakesoul.import location %q is not a file:/// or s3:// URI", location)
	}
	dir, pattern := location, ""
	if i := strings.LastIndexByte(location, '/'); i >= 0 && strings.ContainsAny(location[i+1:], "*?[") {
		dir, pattern = location[:i], location[i+1:]
		if _, err := path.Match(pattern, ""); err != nil {
			return nil, nil, sqlerr.New(sqlerr.InvalidParameterValue, "lakesoul.import location %q: bad pattern %q", location, pattern)
		}
	}
	dir = strings.TrimSuffix(dir, "/")
	if !layout.Within(dir, dir+"/x") {
		return nil, nil, sqlerr.New(sqlerr.InvalidParameterValue,
			"lakesoul.import location %q has an empty, \".\" or \"..\" segment", location)
	}
	if !readServerFiles && !s.importAllowed(dir, namespaces) {
		return nil, nil, sqlerr.New(sqlerr.InsufficientPrivilege,
			"permission denied to import from %q: only superusers and members of pg_read_server_files may import from outside the warehouse directory of a namespace the role sees", location)
	}
	files, err := listImport(ctx, store, dir, pattern, format)
	if err != nil {
		return nil, nil, err
	}
	if len(files) == 0 {
		return nil, nil, sqlerr.New(sqlerr.UndefinedFile, "lakesoul.import: no %s files at %q", format, location)
	}
	return store, files, nil
}

// importAllowed reports whether dir (canonical) is inside the warehouse
// directory of one of namespaces.
func (s *Session) importAllowed(dir string, namespaces []string) bool {
	for _, ns := range namespaces {
		nsDir, err := layout.NamespaceDir(s.e.cfg.Warehouse, ns)
		if err == nil && (layout.Within(nsDir, dir) || layout.SameDir(nsDir, dir)) {
			return true
		}
	}
	return false
}

// listImport lists the files of a location: dir itself when it is an
// object, else what is below it (recursively, or matching pattern directly
// in it), sorted by path.
func listImport(ctx context.Context, store objstore.Store, dir, pattern, format string) ([]importFile, error) {
	keep := func(name string) bool {
		if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			return false
		}
		if pattern != "" {
			ok, _ := path.Match(pattern, name)
			return ok
		}
		return strings.HasSuffix(strings.ToLower(name), "."+format)
	}
	var out []importFile
	switch st := store.(type) {
	case objstore.Local:
		root, err := objstore.LocalPath(dir)
		if err != nil {
			return nil, sqlerr.Wrap(sqlerr.InvalidParameterValue, err, "lakesoul.import location")
		}
		fi, err := os.Stat(root)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, sqlerr.New(sqlerr.UndefinedFile, "lakesoul.import: %s does not exist", dir)
		case err != nil:
			return nil, fmt.Errorf("lakesoul.import: %w", err)
		case !fi.IsDir():
			if pattern != "" {
				return nil, sqlerr.New(sqlerr.InvalidParameterValue, "lakesoul.import: %s is not a directory", dir)
			}
			return []importFile{{path: dir, size: fi.Size()}}, nil
		}
		err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if p != root && (pattern != "" || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_")) {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() || !keep(d.Name()) {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			out = append(out, importFile{path: objstore.Join(dir, filepath.ToSlash(rel)), size: info.Size()})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("lakesoul.import: list %s: %w", dir, err)
		}
	case *objstore.S3:
		bucket, key, err := objstore.ParseS3URI(dir)
		if err != nil {
			return nil, sqlerr.Wrap(sqlerr.InvalidParameterValue, err, "lakesoul.import location")
		}
		keys, err := st.List(ctx, bucket, strings.TrimSuffix(key, "/")+"/")
		if err != nil {
			return nil, err
		}
		base := strings.TrimSuffix(dir, "/") + "/"
		for _, k := range keys {
			rel := strings.TrimPrefix(k, strings.TrimSuffix(key, "/")+"/")
			segs := strings.Split(rel, "/")
			if (pattern != "" && len(segs) > 1) || slices.ContainsFunc(segs[:len(segs)-1], func(s string) bool {
				return strings.HasPrefix(s, ".") || strings.HasPrefix(s, "_")
			}) || !keep(segs[len(segs)-1]) {
				continue
			}
			out = append(out, importFile{path: base + rel, size: -1})
		}
		if len(keys) == 0 && pattern == "" {
			out = append(out, importFile{path: dir, size: -1}) // a single object, or nothing (Open says)
		}
	}
	slices.SortFunc(out, func(a, b importFile) int { return strings.Compare(a.path, b.path) })
	return out, nil
}
