package pgcluster

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// serviceAccount is the OS account PostgreSQL runs as when the caller is
// root.
const serviceAccount = "postgres"

// account is the identity PostgreSQL processes run under and that owns the
// data directory.
type account struct {
	name   string
	uid    uint32
	gid    uint32
	groups []uint32
	// cred is non-nil when the caller is root and must switch to the
	// account to run PostgreSQL binaries.
	cred *syscall.Credential
}

// runAccount returns the account PostgreSQL will run as: the caller itself,
// or the `postgres` account when the caller is root.
func runAccount() (*account, error) {
	if os.Geteuid() != 0 {
		a := &account{uid: uint32(os.Geteuid()), gid: uint32(os.Getegid())}
		if u, err := user.Current(); err == nil {
			a.name = u.Username
		}
		gids, _ := os.Getgroups()
		for _, g := range gids {
			a.groups = append(a.groups, uint32(g))
		}
		return a, nil
	}
	u, err := user.Lookup(serviceAccount)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: running as root, PostgreSQL must run as the %q account, which is missing (%v); create it (installing the postgresql package does) or run as a non-root user", serviceAccount, err)
	}
	a := &account{name: u.Username}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("pgcluster: account %q has non-numeric uid/gid %q/%q", u.Username, u.Uid, u.Gid)
	}
	a.uid, a.gid = uint32(uid), uint32(gid)
	gids, _ := u.GroupIds()
	for _, g := range gids {
		if n, err := strconv.ParseUint(g, 10, 32); err == nil {
			a.groups = append(a.groups, uint32(n))
		}
	}
	a.cred = &syscall.Credential{Uid: a.uid, Gid: a.gid, Groups: a.groups}
	return a, nil
}

func (a *account) String() string {
	return fmt.Sprintf("%q (uid %d)", a.name, a.uid)
}

// inGroup reports whether gid is the account's primary or a supplementary
// group.
func (a *account) inGroup(gid uint32) bool {
	if gid == a.gid {
		return true
	}
	for _, g := range a.groups {
		if g == gid {
			return true
		}
	}
	return false
}

// chown gives path to the account; a no-op unless the caller is root.
func (a *account) chown(path string) error {
	if a.cred == nil {
		return nil
	}
	if err := os.Lchown(path, int(a.uid), int(a.gid)); err != nil {
		return fmt.Errorf("pgcluster: chown %s to %s: %w", path, a, err)
	}
	return nil
}

// checkTraversable verifies from the permission bits that the account can
// search every directory from / down to dir, which must exist; target (dir
// or something inside it) names what the account needs to reach. ACLs and
// capabilities are not considered. It matters only when the caller is
// root: a caller running PostgreSQL as itself evidently reached dir.
func (a *account) checkTraversable(dir, target string) error {
	if a.cred == nil {
		return nil
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return fmt.Errorf("pgcluster: resolve %s: %w", dir, err)
	}
	for p := real; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("pgcluster: stat %s: %w", p, err)
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return nil
		}
		perm := fi.Mode().Perm()
		var can bool
		switch {
		case st.Uid == a.uid:
			can = perm&0o100 != 0
		case a.inGroup(st.Gid):
			can = perm&0o010 != 0
		default:
			can = perm&0o001 != 0
		}
		if !can {
			return fmt.Errorf("%w: %s cannot search %s (mode %v, owner uid %d) on the way to %s; PostgreSQL refuses to run as root, so it runs as that account: choose a directory it can reach (not under /root) or grant it search permission (chmod o+x)",
				ErrNotTraversable, a, p, perm, st.Uid, target)
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}
