package s3proxy

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/layout"
)

// Authorization: the table owning a path is the table whose table_path is
// the longest prefix of s3://bucket/key (at a '/' boundary), found among
// all tables (the proxy's catalog connection is the catalog owner, which
// row-level security does not filter); whether the key's role may use it is
// then asked as that role, so the catalog's row-level security decides,
// exactly as for SQL. Both are one catalog call (catalog.ObjectAccessOf: one
// batch, one implicit transaction, set_config('role', …, true) lasting until
// its end).
//
//   - read (GET/HEAD an object, a copy's source): only objects of a table
//     the role sees. Paths of no table are refused too (LakeSoul's rule).
//   - write (PUT, DELETE, multipart uploads): objects of a table the role
//     sees; a path of no table only under <warehouse>/<namespace>/ of a
//     namespace the role sees (a new table's files before its CREATE
//     commits). Without configured warehouses such writes are refused.
//   - list: every table whose objects the listing could return must be
//     visible (a prefix such as "wh/ns/t" also matches "wh/ns/t2/…"); then
//     a prefix inside a table, or under <warehouse>/<namespace>/ of a
//     visible namespace, may be listed; any other prefix is refused.

// tablePath is a table_path_id row as the proxy compares it.
type tablePath struct {
	raw       string // as stored
	norm      string // s3://bucket/prefix, no trailing '/'
	namespace string
}

// normPath maps s3a:// and s3n:// to s3:// and drops a trailing '/'.
func normPath(p string) string {
	for _, s := range []string{"s3a://", "s3n://"} {
		if strings.HasPrefix(p, s) {
			p = "s3://" + p[len(s):]
		}
	}
	return strings.TrimRight(p, "/")
}

// candidates are the table paths that could own path: every prefix ending
// before a '/' and the path itself, in the spellings a table_path may have.
func candidates(path string, out map[string]bool) {
	rest := strings.TrimPrefix(path, "s3://")
	add := func(p string) {
		for _, scheme := range []string{"s3://", "s3a://", "s3n://"} {
			out[scheme+p] = true
			out[scheme+p+"/"] = true
		}
	}
	for i := 0; i < len(rest); i++ {
		if rest[i] == '/' && i > 0 {
			add(rest[:i])
		}
	}
	if !strings.HasSuffix(rest, "/") {
		add(rest)
	}
}

// decision is the outcome of authorize: denied is the refused access, if
// any, and why.
type decision struct {
	denied *check
	reason string
	table  string // the table of the refused path, when there is one
}

// authorize decides checks for role.
func (p *Proxy) authorize(ctx context.Context, role string, checks []check) (decision, error) {
	if len(checks) == 0 {
		return decision{}, nil
	}
	cands := map[string]bool{}
	var prefixes []string
	namespaces := map[string]bool{}
	for _, c := range checks {
		candidates(c.path(), cands)
		if c.kind == accessList {
			prefixes = append(prefixes, c.path())
		}
		if c.kind != accessRead {
			if ns := p.namespaceDir(c.path()); ns != "" {
				namespaces[ns] = true
			}
		}
	}
	acc, err := p.cfg.Catalog.ObjectAccessOf(ctx, role, keys(cands), prefixes, keys(namespaces))
	if err != nil {
		return decision{}, err
	}
	all, visible := tablePaths(acc.All), tablePaths(acc.Visible)
	visibleNS := acc.VisibleNamespaces
	seen := map[string]bool{}
	for _, t := range visible {
		seen[t.raw] = true
	}
	for i := range checks {
		c := &checks[i]
		if reason, table := p.decide(c, all, seen, visibleNS); reason != "" {
			return decision{denied: c, reason: reason, table: table}, nil
		}
	}
	return decision{}, nil
}

// decide returns why c is refused ("" when allowed).
func (p *Proxy) decide(c *check, all []tablePath, visible, visibleNS map[string]bool) (reason, table string) {
	path := c.path()
	var owner *tablePath
	for i := range all {
		t := &all[i]
		if (path == t.norm || strings.HasPrefix(path, t.norm+"/")) && (c.kind != accessList || path != t.norm) {
			if owner == nil || len(t.norm) > len(owner.norm) {
				owner = t
			}
		}
	}
	if c.kind == accessList {
		for i := range all {
			t := &all[i]
			if strings.HasPrefix(t.norm+"/", path) && !visible[t.raw] {
				return "the listing would show objects of a table the role cannot see", t.raw
			}
		}
	}
	if owner != nil {
		if !visible[owner.raw] {
			return "the path belongs to a table the role cannot see", owner.raw
		}
		return "", ""
	}
	if c.kind == accessRead {
		return "the path belongs to no table", ""
	}
	ns := p.namespaceDir(path)
	switch {
	case ns == "":
		return "the path belongs to no table and is not under a namespace directory of the warehouse", ""
	case !visibleNS[ns]:
		return fmt.Sprintf("the path is under namespace %q, which the role cannot see", ns), ""
	}
	return "", ""
}

// namespaceDir is the namespace of path when path lies under
// <warehouse>/<namespace>/, else "". The directory segment is the
// namespace's name escaped (layout.NamespaceDir); a segment that is the
// escape of no name belongs to no namespace.
func (p *Proxy) namespaceDir(path string) string {
	for _, w := range p.warehouses {
		rest, ok := strings.CutPrefix(path, w+"/")
		if !ok {
			continue
		}
		if seg, _, ok := strings.Cut(rest, "/"); ok && seg != "" {
			ns, _ := layout.UnescapeSegment(seg)
			return ns
		}
	}
	return ""
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// lookupKey finds an active access key.
func (p *Proxy) lookupKey(ctx context.Context, id string) (keyInfo, error) {
	secret, role, err := p.cfg.Catalog.AccessKey(ctx, id)
	if errors.Is(err, catalog.ErrUnknownAccessKey) {
		return keyInfo{ID: id}, errUnknownKey
	}
	return keyInfo{ID: id, Secret: secret, Role: role}, err
}

// tablePaths are the catalog's table paths with their normalised forms.
func tablePaths(ts []catalog.TablePath) []tablePath {
	out := make([]tablePath, len(ts))
	for i, t := range ts {
		out[i] = tablePath{raw: t.Path, namespace: t.Namespace, norm: normPath(t.Path)}
	}
	return out
}
