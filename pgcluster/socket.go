package pgcluster

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// maxSocketPath is the longest socket path a sockaddr_un holds: sun_path is
// 108 bytes on Linux, one of them the terminating NUL.
const maxSocketPath = 107

// socketFile is the name PostgreSQL gives its socket in the socket dir.
func socketFile(port int) string { return ".s.PGSQL." + strconv.Itoa(port) }

// socketFits reports whether the socket for port fits in sun_path when
// placed in dir.
func socketFits(dir string, port int) bool {
	return len(filepath.Join(dir, socketFile(port))) <= maxSocketPath
}

// chooseSocketDir returns the directory for the unix socket: the recorded
// private dir if there is one, else the data dir when the socket path fits,
// else a new private dir under os.TempDir(). The private dir is (re)created
// with mode 0700 owned by the account and checked not to be someone else's.
func chooseSocketDir(dataDir, recorded string, port int, owner *account) (string, error) {
	if recorded == "" && socketFits(dataDir, port) {
		return dataDir, nil
	}
	if recorded != "" {
		if !socketFits(recorded, port) {
			return "", fmt.Errorf("pgcluster: socket path in recorded socket dir %s too long for port %d", recorded, port)
		}
		err := os.Mkdir(recorded, 0o700)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("pgcluster: recreate socket dir: %w", err)
		}
		if err == nil {
			if err := owner.chown(recorded); err != nil {
				return "", err
			}
		}
		if err := checkPrivateDir(recorded, owner); err != nil {
			return "", err
		}
		return recorded, owner.checkTraversable(recorded, recorded)
	}
	dir, err := os.MkdirTemp("", "lakesoul-pg-")
	if err != nil {
		return "", fmt.Errorf("pgcluster: create socket dir: %w", err)
	}
	if !socketFits(dir, port) {
		os.Remove(dir)
		return "", fmt.Errorf("pgcluster: socket path too long in both the data dir %s and the temp dir %s (limit %d bytes); use a shorter TMPDIR or data dir", dataDir, os.TempDir(), maxSocketPath)
	}
	if err := owner.chown(dir); err != nil {
		os.Remove(dir)
		return "", err
	}
	if err := owner.checkTraversable(dir, dir); err != nil {
		os.Remove(dir)
		return "", err
	}
	return dir, nil
}

// checkPrivateDir refuses a socket dir that is a symlink, is not owned by
// the account, or is open to others: it lives in a shared temp directory.
func checkPrivateDir(dir string, owner *account) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("pgcluster: socket dir: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || (ok && st.Uid != owner.uid) || fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("pgcluster: socket dir %s must be a directory of mode 0700 owned by %s (found %v)", dir, owner, fi.Mode())
	}
	return nil
}
