package layout

import (
	"errors"
	"net/url"
	"path"
	"strings"
	"testing"
)

func TestEscapeSegment(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		// Normal identifiers keep the paths tables always had.
		{"t", "t"},
		{"My_Table-1 x.y$", "My_Table-1 x.y$"},
		{"daten_ä_日本", "daten_ä_日本"},
		{"...", "..."},
		{".hidden", ".hidden"},
		// What Spark's escapePathName escapes.
		{"../../../x", "..%2F..%2F..%2Fx"},
		{"%2e%2e/y", "%252e%252e%2Fy"},
		{"t#frag", "t%23frag"},
		{"a/b", "a%2Fb"},
		{`q"'*:=?\{[]^`, "q%22%27%2A%3A%3D%3F%5C%7B%5B%5D%5E"},
		{"tab\tnl\n\x01\x7f", "tab%09nl%0A%01%7F"},
		// What it does not: dot segments.
		{".", "%2E"},
		{"..", "%2E%2E"},
	} {
		got, err := EscapeSegment(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("EscapeSegment(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	if _, err := EscapeSegment(""); !errors.Is(err, ErrEmptyName) {
		t.Errorf("EscapeSegment(\"\"): %v, want ErrEmptyName", err)
	}
	if _, err := EscapeSegment(strings.Repeat("/", 100)); !errors.Is(err, ErrSegmentTooLong) {
		t.Errorf("EscapeSegment of 100 slashes (300 bytes escaped): %v, want ErrSegmentTooLong", err)
	}
}

func TestUnescapeSegment(t *testing.T) {
	for seg, want := range map[string]string{"t": "t", "t%23frag": "t#frag", "%2E%2E": "..", "a%2Fb": "a/b", "%252e": "%2e"} {
		if got, ok := UnescapeSegment(seg); !ok || got != want {
			t.Errorf("UnescapeSegment(%q) = %q, %v; want %q", seg, got, ok, want)
		}
	}
	// Spellings EscapeSegment never writes: each name has one segment.
	for _, seg := range []string{"t%2frag", "t#frag", "..", ".", "", "%zz", "%2e%2e", "a%62"} {
		if got, ok := UnescapeSegment(seg); ok {
			t.Errorf("UnescapeSegment(%q) = %q, want no name", seg, got)
		}
	}
}

func TestTableDir(t *testing.T) {
	for _, tt := range []struct{ wh, ns, name, want string }{
		{"file:///data/wh", "s", "t", "file:///data/wh/s/t"},
		{"file:///data/wh/", "default", "Orders 2026", "file:///data/wh/default/Orders 2026"},
		{"s3://bucket/prefix/wh", "s", "t", "s3://bucket/prefix/wh/s/t"},
		{"s3://bucket", "s", "t", "s3://bucket/s/t"},
		{"file:///wh", "..", "../../../x", "file:///wh/%2E%2E/..%2F..%2F..%2Fx"},
		{"file:///wh", "s", ".", "file:///wh/s/%2E"},
	} {
		got, err := TableDir(tt.wh, tt.ns, tt.name)
		if err != nil || got != tt.want {
			t.Errorf("TableDir(%q, %q, %q) = %q, %v; want %q", tt.wh, tt.ns, tt.name, got, err, tt.want)
		}
		if err := CheckTableDir(got, tt.wh, tt.ns, tt.name); err != nil {
			t.Errorf("CheckTableDir(TableDir(%q, %q, %q)): %v", tt.wh, tt.ns, tt.name, err)
		}
		if err := CheckTableDir(got, "", tt.ns, tt.name); err != nil {
			t.Errorf("CheckTableDir(TableDir(%q, %q, %q)) without a warehouse: %v", tt.wh, tt.ns, tt.name, err)
		}
	}
	for _, tt := range []struct{ path, wh, ns, name string }{
		{"file:///wh/s/t/", "file:///wh", "s", "u"},        // another table's directory
		{"file:///wh/other/t", "file:///wh", "s", "t"},     // another namespace's
		{"file:///etc", "file:///wh", "s", "t"},            // outside the warehouse
		{"file:///wh/s/t/../../x", "file:///wh", "s", "t"}, // dot segments
		{"file:///wh/s/x/../t", "", "s", "t"},              // dot segments, no warehouse known
		{"file:///s/t2", "", "s", "t"},                     // other name
		{"file:///wh/s/t", "s3://b/wh", "s", "t"},          // other store
		{"file://host/wh/s/t", "file:///wh", "s", "t"},     // remote host
		{"s3://b/wh/s/t#frag", "s3://b/wh", "s", "t#frag"}, // unescaped name
	} {
		if err := CheckTableDir(tt.path, tt.wh, tt.ns, tt.name); !errors.Is(err, ErrOutsideTable) {
			t.Errorf("CheckTableDir(%q, %q, %q, %q) = %v, want ErrOutsideTable", tt.path, tt.wh, tt.ns, tt.name, err)
		}
	}
}

func TestWithin(t *testing.T) {
	for _, tt := range []struct {
		root, p string
		want    bool
	}{
		{"file:///wh/s/t", "file:///wh/s/t/d=1/part-x_0000.parquet", true},
		{"file:///wh/s/t/", "file:///wh/s/t/part-x_0000.parquet", true},
		{"file:///wh/s/t", "file:/wh/s/t/part.parquet", true}, // Hadoop's spelling
		{"file:///wh/s/t", "file://localhost/wh/s/t/part.parquet", true},
		{"s3://b/wh/s/t", "s3a://b/wh/s/t/part.parquet", true},
		{"s3://b/wh/s/t", "s3://b/wh/s/t/%2E%2E/x", true}, // a literal name, not a parent
		{"file:///", "file:///x", true},
		{"file:///wh/s/t", "file:///wh/s/t", false},
		{"file:///wh/s/t", "file:///wh/s/t/", false},
		{"file:///wh/s/t", "file:///wh/s/tt/part.parquet", false},
		{"file:///wh/s/t", "file:///wh/s/t/../u/part.parquet", false},
		{"file:///wh/s/t", "file:///wh/s/t/./part.parquet", false},
		{"file:///wh/s/t", "file:///wh/s/t//part.parquet", false},
		{"file:///wh/s/t", "file:///wh/s/t/d=1/..", false},
		{"file:///wh/s/t", "file://evil/wh/s/t/part.parquet", false},
		{"file:///wh/s/t", "s3://wh/s/t/part.parquet", false},
		{"file:///wh/s/t", "/wh/s/t/part.parquet", false},
		{"file:///wh/s/t", "hdfs:///wh/s/t/part.parquet", false},
		{"s3://b/wh/s/t", "s3://b/wh/s/t/../../s/u/x", false},
		{"s3://b/wh/s/t", "s3://c/wh/s/t/x", false},
		{"s3://b/wh/s/t", "s3:///wh/s/t/x", false},
		{"file:///wh/../s/t", "file:///s/t/x", false}, // a root that is not canonical contains nothing
	} {
		if got := Within(tt.root, tt.p); got != tt.want {
			t.Errorf("Within(%q, %q) = %v, want %v", tt.root, tt.p, got, tt.want)
		}
	}
}

func TestChildOf(t *testing.T) {
	for _, tt := range []struct {
		dir, p string
		want   bool
	}{
		{"file:///wh/s", "file:///wh/s/t", true},
		{"file:///wh/s/", "file:///wh/s/t/", true},
		{"s3://b/wh/s", "s3a://b/wh/s/t", true},
		{"file:///wh/s", "file:///wh/s", false},
		{"file:///wh/s", "file:///wh/s/t/u", false},
		{"file:///wh/s", "file:///wh/s/t/..", false},
		{"file:///wh/s", "file:///wh/other/t", false},
	} {
		if got := ChildOf(tt.dir, tt.p); got != tt.want {
			t.Errorf("ChildOf(%q, %q) = %v, want %v", tt.dir, tt.p, got, tt.want)
		}
	}
}

func TestPartitionDirRefuses(t *testing.T) {
	for _, desc := range []string{"", "a", "=x", "a=1,,b=2", "a=1,a=2", "../x"} {
		if dir, err := PartitionDir(desc); err == nil {
			t.Errorf("PartitionDir(%q) = %q, want an error", desc, dir)
		}
	}
	if _, err := PartitionDir("k=" + strings.Repeat("x", MaxSegmentBytes)); !errors.Is(err, ErrSegmentTooLong) {
		t.Errorf("PartitionDir of a %d-byte value: %v, want ErrSegmentTooLong", MaxSegmentBytes, err)
	}
	if p, err := PartitionPath("file:///wh/s/t/", NonPartitioned); err != nil || p != "file:///wh/s/t" {
		t.Errorf("PartitionPath of a non-partitioned table: %q, %v", p, err)
	}
}

// unescape decodes every %XX (Spark's unescapePathName).
func unescape(t *testing.T, seg string) string {
	s, err := url.PathUnescape(seg)
	if err != nil {
		t.Fatalf("segment %q does not decode: %v", seg, err)
	}
	return s
}

// checkDir asserts what every directory the layout hands out must satisfy:
// strictly inside root, n segments below it, each segment safe, and the
// cleaned path (as a local file system or a path-cleaning S3 backend sees
// it) still inside root. No segment holds '#', '?' or '\', which URI
// parsers and some backends read as something else than a name.
func checkDir(t *testing.T, root, dir string, n int) []string {
	t.Helper()
	if !Within(root, dir) {
		t.Fatalf("%q is not within %q", dir, root)
	}
	rel := strings.TrimPrefix(dir, root+"/")
	segs := strings.Split(rel, "/")
	if len(segs) != n {
		t.Fatalf("%q has %d segments below %q, want %d", dir, len(segs), root, n)
	}
	for _, s := range segs {
		if s == "" || s == "." || s == ".." || len(s) > MaxSegmentBytes || strings.ContainsAny(s, "#?\\") {
			t.Fatalf("%q has the unsafe segment %q", dir, s)
		}
	}
	rootPath := strings.TrimPrefix(root, "file://")
	if c := path.Clean(strings.TrimPrefix(dir, "file://")); !strings.HasPrefix(c, rootPath+"/") {
		t.Fatalf("%q cleans to %q, outside %q", dir, c, rootPath)
	}
	return segs
}

const fuzzWarehouse = "file:///wh"

// FuzzTableDir: every table directory is two safe segments inside the
// warehouse, decodes back to its names, and two different tables never
// share a directory or nest in one another.
func FuzzTableDir(f *testing.F) {
	for _, s := range [][4]string{
		{"s", "t", "s", "u"}, {"s", "../../../x", "x", ""}, {"s", "%2e%2e/y", "s", "../y"},
		{"s", "t#frag", "s", "t"}, {"s", "a/b", "s/a", "b"}, {"s", ".", "s", "%2E"}, {"..", "..", ".", "."},
		{"a", "b/c", "a/b", "c"}, {"s", "t?x=1", "s", "t%3Fx%3D1"}, {"s", "t\x00", "s", "t\x7f"},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, ns1, name1, ns2, name2 string) {
		dir := func(ns, name string) (string, bool) {
			d, err := TableDir(fuzzWarehouse, ns, name)
			if err != nil {
				if !errors.Is(err, ErrEmptyName) && !errors.Is(err, ErrSegmentTooLong) {
					t.Fatalf("TableDir(%q, %q): unexpected error %v", ns, name, err)
				}
				if ns != "" && name != "" && len(ns) <= MaxSegmentBytes/3 && len(name) <= MaxSegmentBytes/3 {
					t.Fatalf("TableDir(%q, %q) refused a short name: %v", ns, name, err)
				}
				return "", false
			}
			segs := checkDir(t, fuzzWarehouse, d, 2)
			if unescape(t, segs[0]) != ns || unescape(t, segs[1]) != name {
				t.Fatalf("TableDir(%q, %q) = %q does not decode back", ns, name, d)
			}
			if n, ok := UnescapeSegment(segs[0]); !ok || n != ns {
				t.Fatalf("UnescapeSegment(%q) = %q, %v; want %q", segs[0], n, ok, ns)
			}
			if err := CheckTableDir(d, fuzzWarehouse, ns, name); err != nil {
				t.Fatal(err)
			}
			file := d + "/part-x_0000.parquet"
			if !Within(d, file) {
				t.Fatalf("%q not within its table directory %q", file, d)
			}
			return d, true
		}
		d1, ok1 := dir(ns1, name1)
		d2, ok2 := dir(ns2, name2)
		if !ok1 || !ok2 || (ns1 == ns2 && name1 == name2) {
			return
		}
		if d1 == d2 || Within(d1, d2) || Within(d2, d1) || SameDir(d1, d2) {
			t.Fatalf("tables %q.%q and %q.%q alias: %q, %q", ns1, name1, ns2, name2, d1, d2)
		}
		if CheckTableDir(d1, fuzzWarehouse, ns2, name2) == nil {
			t.Fatalf("%q passes as the directory of %q.%q", d1, ns2, name2)
		}
	})
}

// FuzzPartitionDir: a partition directory is one safe segment per range
// column inside its table's directory, and different values (or columns)
// never share one.
func FuzzPartitionDir(f *testing.F) {
	for _, s := range [][4]string{
		{"d", "/../../x", "d", "x"}, {"d", "..", "d", "."}, {"d", "a/b", "d", "a%2Fb"},
		{"d", "%2e%2e", "d", ".."}, {"d", "", "d", "__L@KE$OUL_EMPTY_STRING__"}, {"d", "a=b", "d", "a,b"},
		{"d", "2026-01-01T10:00:00", "e", "x"}, {"..", "..", "/", "x"},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	const table = fuzzWarehouse + "/s/t"
	f.Fuzz(func(t *testing.T, col1, val1, col2, val2 string) {
		// Column names are identifiers: not empty; ',' and '=' would not
		// parse back out of a desc (CREATE TABLE refuses them as range
		// columns).
		for _, c := range []string{col1, col2} {
			if c == "" || strings.ContainsAny(c, ",=") {
				return
			}
		}
		dir := func(cols, vals []string) (string, string, bool) {
			enc := make([]string, len(vals))
			for i, v := range vals {
				enc[i] = formatString(v)
			}
			desc := FormatDesc(cols, enc)
			p, err := PartitionPath(table, desc)
			if err != nil {
				if !errors.Is(err, ErrSegmentTooLong) {
					t.Fatalf("PartitionPath(%q): unexpected error %v", desc, err)
				}
				return desc, "", false
			}
			checkDir(t, table, p, len(cols))
			return desc, p, true
		}
		desc1, p1, ok1 := dir([]string{col1}, []string{val1})
		desc2, p2, ok2 := dir([]string{col2}, []string{val2})
		if ok1 && ok2 && desc1 != desc2 && (p1 == p2 || Within(p1, p2) || Within(p2, p1)) {
			t.Fatalf("partitions %q and %q alias: %q, %q", desc1, desc2, p1, p2)
		}
		if col1 != col2 {
			descA, pA, okA := dir([]string{col1, col2}, []string{val1, val2})
			descB, pB, okB := dir([]string{col1, col2}, []string{val2, val1})
			if okA && okB && descA != descB && pA == pB {
				t.Fatalf("partitions %q and %q alias: %q", descA, descB, pA)
			}
		}
	})
}

// FuzzPartitionDesc: a partition desc read from the catalog (whatever a
// row says) gives a directory inside the table, one segment per pair, or
// an error.
func FuzzPartitionDesc(f *testing.F) {
	for _, s := range []string{"-5", "d=/../../x", "d=..", "a=1,b=2", "=x", "..", "d=x,,e=y", "d=a/b,e=../..", "d=\x00"} {
		f.Add(s)
	}
	const table = fuzzWarehouse + "/s/t"
	f.Fuzz(func(t *testing.T, desc string) {
		p, err := PartitionPath(table, desc)
		if err != nil {
			return
		}
		if desc == NonPartitioned {
			if p != table {
				t.Fatalf("PartitionPath(%q) = %q, want the table's directory", desc, p)
			}
			return
		}
		kvs, err := ParseDesc(desc)
		if err != nil {
			t.Fatalf("PartitionPath accepted %q, which does not parse: %v", desc, err)
		}
		checkDir(t, table, p, len(kvs))
	})
}

// FuzzWithin: whatever Within admits stays inside the root once cleaned, as
// a local file system (path.Clean) or an S3 backend that cleans keys would
// resolve it, and also as the raw key string S3 stores.
func FuzzWithin(f *testing.F) {
	for _, s := range []string{"x", "../x", "a/../../x", "./x", "a//b", "%2e%2e/x", "a/./b", "..", "a/..", "x/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rel string) {
		for _, root := range []string{"file:///wh/s/t", "s3://b/wh/s/t"} {
			p := root + "/" + rel
			if !Within(root, p) {
				continue
			}
			_, rootPath, _ := strings.Cut(root, "://")
			_, raw, _ := strings.Cut(p, "://")
			if !strings.HasPrefix(raw, rootPath+"/") {
				t.Fatalf("Within(%q, %q) but the raw path is outside", root, p)
			}
			if c := path.Clean(raw); !strings.HasPrefix(c, rootPath+"/") {
				t.Fatalf("Within(%q, %q) but it cleans to %q", root, p, c)
			}
		}
	})
}
