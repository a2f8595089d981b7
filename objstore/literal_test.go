package objstore_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/objstore/s3test"
)

// Names that a URI parser reads as something else: a fragment, a query, a
// percent-escape of a dot or a slash. Layout escapes names into such
// spellings (t#frag → t%23frag), so the store must take them literally.
var literalNames = []string{"t#frag", "t%23frag", "%2e%2e", "a%2Fb", "q?x=1", "%25"}

func TestLocalPathIsLiteral(t *testing.T) {
	for _, tt := range []struct{ uri, want string }{
		{"file:///wh/s/t#frag/x", "/wh/s/t#frag/x"},
		{"file:///wh/s/t%23frag/x", "/wh/s/t%23frag/x"},
		{"file:///wh/s/%2e%2e/x", "/wh/s/%2e%2e/x"},
		{"file:///wh/s/a%2Fb", "/wh/s/a%2Fb"},
		{"file:///wh/s/q?x=1", "/wh/s/q?x=1"},
		{"file://localhost/wh/x", "/wh/x"},
	} {
		got, err := objstore.LocalPath(tt.uri)
		if err != nil || got != tt.want {
			t.Errorf("LocalPath(%q) = %q, %v; want %q", tt.uri, got, err, tt.want)
		}
	}
	for _, bad := range []string{"file://host/wh/x", "file://wh", "s3://b/k", "/wh/x"} {
		if got, err := objstore.LocalPath(bad); err == nil {
			t.Errorf("LocalPath(%q) = %q, want an error", bad, got)
		}
	}
}

// TestLiteralNames writes an object under each literal name, on local disk
// and S3, and checks that it is found under exactly that name and that no
// two names share an object.
func TestLiteralNames(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	stores := map[string]struct {
		st   objstore.Store
		base string
	}{"local": {objstore.Local{}, objstore.LocalURI(dir)}}
	for _, srv := range s3test.Servers(t) {
		stores["s3-"+srv.Name] = struct {
			st   objstore.Store
			base string
		}{srv.Store(t, objstore.S3Options{}), srv.URI("literal")}
	}
	for name, s := range stores {
		t.Run(name, func(t *testing.T) {
			for _, n := range literalNames {
				put(t, s.st, s.base+"/"+n+"/f.parquet", []byte(n), 100)
			}
			for _, n := range literalNames {
				if got := readAll(t, s.st, s.base+"/"+n+"/f.parquet"); !bytes.Equal(got, []byte(n)) {
					t.Errorf("object under %q holds %q", n, got)
				}
			}
			if name == "local" {
				for _, n := range literalNames {
					if _, err := os.Stat(filepath.Join(dir, n, "f.parquet")); err != nil {
						t.Errorf("no file in the directory named %q: %v", n, err)
					}
				}
			}
			for _, n := range literalNames {
				if err := s.st.DeletePrefix(ctx, s.base, s.base+"/"+n); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
