package layout

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Table and partition paths, and the confinement rule.
//
// A table's files live in <warehouse>/<namespace>/<table>/, its partitions
// in <col>=<value>/… below that. Namespace and table names are identifiers a
// user chooses (a quoted identifier may be "../../x", "a/b" or "t#frag") and
// partition values are row data ('/../../x'), so each becomes exactly one
// path segment through EscapeSegment; the catalog keeps names and partition
// descs as they are (LakeSoul's `k=v`, unescaped), so LakeSoul's readers,
// which take file paths from the catalog, keep working.
//
// The escaping is the one LakeSoul's Spark writer applies to partition
// directories (Spark's ExternalCatalogUtils.escapePathName): the characters
// "#%'*/:=?\{[]^, DEL and the control characters become %XX (upper-case
// hex), everything else stays. It is injective ('%' itself is escaped), so
// distinct names never share a directory, and a normal identifier (letters,
// digits, '_', '-', ' ', '.', '$') is unchanged, so tables created before
// the rule keep their paths. Spark leaves two segments unsafe that we must
// not: "." and ".." (the current and the parent directory) become %2E and
// %2E%2E, and the empty name, which no escaping can turn into a segment, is
// refused (PostgreSQL identifiers are never empty; the catalog's functions
// could still be handed one). Segments longer than MaxSegmentBytes are
// refused, since local file systems cannot create them (NAME_MAX).
//
// Within is the check every delete, listing and write goes through (local
// disk and S3 alike): a path is inside a root only if, in canonical form (one
// spelling per scheme: file:/x, file:///x and file://localhost/x are the same;
// s3a:// and s3n:// are s3://), it has no empty, "." or ".." segment and
// starts with the root and a '/'. Refusing such segments instead of cleaning
// them is what makes the check hold for S3, whose keys are literal strings:
// "t/../u/x" is below "t/" as a string but below "u/" once a backend or a
// local file system resolves it.

// MaxSegmentBytes bounds one escaped path segment (NAME_MAX of Linux file
// systems).
const MaxSegmentBytes = 255

var (
	// ErrEmptyName: a namespace or table name is empty and cannot name a
	// directory.
	ErrEmptyName = errors.New("layout: an empty name cannot be a path segment")
	// ErrSegmentTooLong: an escaped name or partition directory is longer
	// than MaxSegmentBytes.
	ErrSegmentTooLong = errors.New("layout: path segment too long")
	// ErrOutsideTable: a path is not inside the table directory it must be
	// in (wrapped with the path and the directory).
	ErrOutsideTable = errors.New("layout: path outside its table's directory")
)

// escapeByte reports whether Spark's escapePathName escapes b.
func escapeByte(b byte) bool {
	return b < 0x20 || b == 0x7f || strings.IndexByte("\"#%'*/:=?\\{[]^", b) >= 0
}

const upperHex = "0123456789ABCDEF"

// escapePathName is Spark's escapePathName over the UTF-8 bytes of s (every
// escaped character is ASCII, so multi-byte characters pass unchanged, as in
// Spark's per-char loop).
func escapePathName(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if escapeByte(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if escapeByte(c) {
			b.WriteByte('%')
			b.WriteByte(upperHex[c>>4])
			b.WriteByte(upperHex[c&0xf])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// EscapeSegment turns a namespace or table name into one path segment:
// Spark's escapePathName, plus "." → "%2E" and ".." → "%2E%2E".
// It fails for "" (ErrEmptyName) and results over MaxSegmentBytes
// (ErrSegmentTooLong).
//
// Invariants: the result is non-empty, not "." or "..", has no '/', and is
// unique to s (decoding every %XX gives s back).
func EscapeSegment(s string) (string, error) {
	switch s {
	case "":
		return "", ErrEmptyName
	case ".":
		return "%2E", nil
	case "..":
		return "%2E%2E", nil
	}
	e := escapePathName(s)
	if len(e) > MaxSegmentBytes {
		return "", fmt.Errorf("%w: %q escapes to %d bytes (at most %d)", ErrSegmentTooLong, s, len(e), MaxSegmentBytes)
	}
	return e, nil
}

// UnescapeSegment is the inverse of EscapeSegment: the name whose segment
// seg is, or false when no name is written as seg (an escape in lower case,
// a character left unescaped that EscapeSegment escapes, …), so every
// segment maps back to at most one name.
func UnescapeSegment(seg string) (string, bool) {
	name, err := url.PathUnescape(seg)
	if err != nil {
		return "", false
	}
	if e, err := EscapeSegment(name); err != nil || e != seg {
		return "", false
	}
	return name, true
}

// NamespaceDir is <warehouse>/<namespace> with the name escaped.
func NamespaceDir(warehouse, namespace string) (string, error) {
	ns, err := EscapeSegment(namespace)
	if err != nil {
		return "", fmt.Errorf("namespace %q: %w", namespace, err)
	}
	return strings.TrimSuffix(warehouse, "/") + "/" + ns, nil
}

// TableDir is the directory of table namespace.name in warehouse:
// <warehouse>/<namespace>/<table>, both names escaped. For names that need
// no escaping it is the path LakeSoul-Go always gave tables.
func TableDir(warehouse, namespace, name string) (string, error) {
	ns, err := NamespaceDir(warehouse, namespace)
	if err != nil {
		return "", err
	}
	t, err := EscapeSegment(name)
	if err != nil {
		return "", fmt.Errorf("table %q: %w", name, err)
	}
	return ns + "/" + t, nil
}

// PartitionDir returns the directory of a partition below the table path:
// one `<col>=<value>` segment per pair of the desc, column and value each
// escaped with Spark's escapePathName, as LakeSoul's Spark writer names
// partition directories ("" for NonPartitioned). Values are taken as the
// desc encodes them (sentinels included). A desc that does not parse is an
// error, so a desc from the catalog can never name a path outside the
// table.
//
// Invariant: every segment contains '=' after a non-empty column, so it is
// never empty, "." or "..", and holds no '/'; distinct descs give distinct
// directories.
func PartitionDir(desc string) (string, error) {
	if desc == NonPartitioned {
		return "", nil
	}
	kvs, err := ParseDesc(desc)
	if err != nil {
		return "", err
	}
	segs := make([]string, len(kvs))
	for i, kv := range kvs {
		seg := escapePathName(kv.Key) + "=" + escapePathName(kv.Value)
		if len(seg) > MaxSegmentBytes {
			return "", fmt.Errorf("%w: the directory of partition value %s=%q would have %d bytes (at most %d)",
				ErrSegmentTooLong, kv.Key, kv.Value, len(seg), MaxSegmentBytes)
		}
		segs[i] = seg
	}
	return strings.Join(segs, "/"), nil
}

// PartitionPath is the directory of partition desc of the table at
// tablePath (tablePath itself for NonPartitioned).
func PartitionPath(tablePath, desc string) (string, error) {
	dir, err := PartitionDir(desc)
	if err != nil {
		return "", err
	}
	if dir == "" {
		return strings.TrimSuffix(tablePath, "/"), nil
	}
	return strings.TrimSuffix(tablePath, "/") + "/" + dir, nil
}

// canonical returns the one spelling of a file:// or s3:// URI (without a
// trailing '/'), or false if the URI has another scheme, names a remote
// host or no bucket, or has an empty, "." or ".." segment.
func canonical(uri string) (string, bool) {
	var prefix, rest string
	switch {
	case strings.HasPrefix(uri, "file:"):
		rest = strings.TrimPrefix(uri, "file:")
		if r, ok := strings.CutPrefix(rest, "//"); ok {
			host, p, found := strings.Cut(r, "/")
			if !found || (host != "" && host != "localhost") {
				return "", false
			}
			rest = "/" + p
		}
		if !strings.HasPrefix(rest, "/") {
			return "", false
		}
		if rest == "/" {
			return "file:///", true
		}
		prefix, rest = "file:///", rest[1:]
	case strings.HasPrefix(uri, "s3://"), strings.HasPrefix(uri, "s3a://"), strings.HasPrefix(uri, "s3n://"):
		_, rest, _ = strings.Cut(uri, "://")
		prefix = "s3://"
	default:
		return "", false
	}
	rest = strings.TrimSuffix(rest, "/")
	for _, seg := range strings.Split(rest, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", false
		}
	}
	return prefix + rest, true
}

// Within reports whether p is strictly inside the directory root: both in
// canonical form, p free of empty, "." and ".." segments, and p starting
// with root followed by '/'. It is false for p == root.
func Within(root, p string) bool {
	r, ok := canonical(root)
	if !ok {
		return false
	}
	q, ok := canonical(p)
	if !ok {
		return false
	}
	if !strings.HasSuffix(r, "/") {
		r += "/"
	}
	return len(q) > len(r) && strings.HasPrefix(q, r)
}

// ChildOf reports whether p is exactly one segment below dir (Within, and
// no '/' after dir's).
func ChildOf(dir, p string) bool {
	if !Within(dir, p) {
		return false
	}
	r, _ := canonical(dir)
	q, _ := canonical(p)
	return !strings.Contains(strings.TrimPrefix(q, strings.TrimSuffix(r, "/")+"/"), "/")
}

// SameDir reports whether a and b are spellings of the same canonical
// directory (false if either is not canonical-able).
func SameDir(a, b string) bool {
	x, ok := canonical(a)
	if !ok {
		return false
	}
	y, ok := canonical(b)
	return ok && x == y
}

// CheckWithin returns nil if p is inside the table directory dir, else an
// error wrapping ErrOutsideTable.
func CheckWithin(dir, p string) error {
	if Within(dir, p) {
		return nil
	}
	return fmt.Errorf("%w: %s is not inside %s", ErrOutsideTable, p, dir)
}

// CheckTableDir returns nil if path is the directory of table
// namespace.name: TableDir(warehouse, namespace, name) when warehouse is
// known, else any root followed by the two escaped names. Otherwise the
// error wraps ErrOutsideTable.
func CheckTableDir(path, warehouse, namespace, name string) error {
	if warehouse != "" {
		want, err := TableDir(warehouse, namespace, name)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrOutsideTable, err)
		}
		if !SameDir(path, want) {
			return fmt.Errorf("%w: table %s.%s is stored at %s, not in its directory %s", ErrOutsideTable, namespace, name, path, want)
		}
		return nil
	}
	suffix, err := TableDir("", namespace, name)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrOutsideTable, err)
	}
	c, ok := canonical(path)
	if !ok || !strings.HasSuffix(c, suffix) || !Within(strings.TrimSuffix(c, suffix), c) {
		return fmt.Errorf("%w: table %s.%s is stored at %s, not in a directory <warehouse>%s", ErrOutsideTable, namespace, name, path, suffix)
	}
	return nil
}

// CheckRecordedDir is CheckTableDir for a table whose directory the catalog
// records (recorded, "" when there is none): a renamed table keeps the
// directory of its former name, and a table created while its name's
// directory was taken has a sibling directory of another name. With a
// record, path must be that directory, and the directory must be a table
// directory of namespace — the directory CheckTableDir accepts for some
// table name of namespace — so a record, like a path, can never place a
// table outside its namespace's directory. Without one, CheckTableDir
// applies to name.
func CheckRecordedDir(path, warehouse, namespace, name, recorded string) error {
	if recorded == "" {
		return CheckTableDir(path, warehouse, namespace, name)
	}
	if !SameDir(path, recorded) {
		return fmt.Errorf("%w: table %s.%s is stored at %s, not in its recorded directory %s", ErrOutsideTable, namespace, name, path, recorded)
	}
	c, ok := canonical(recorded)
	if !ok {
		return fmt.Errorf("%w: recorded directory %s of table %s.%s is not a directory URI", ErrOutsideTable, recorded, namespace, name)
	}
	seg := c[strings.LastIndexByte(c, '/')+1:]
	dirName, ok := UnescapeSegment(seg)
	if !ok {
		return fmt.Errorf("%w: recorded directory %s of table %s.%s is not a table directory", ErrOutsideTable, recorded, namespace, name)
	}
	return CheckTableDir(recorded, warehouse, namespace, dirName)
}
