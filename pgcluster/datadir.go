package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// versionFile marks an initialised data dir.
const versionFile = "PG_VERSION"

// prepareDataDir makes sure dataDir exists, is reachable by the account
// and, unless it already holds a cluster, is an empty-or-new directory of
// mode 0700 owned by the account. It reports whether initdb must run.
func prepareDataDir(dataDir string, owner *account) (fresh bool, err error) {
	parent := filepath.Dir(dataDir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return false, fmt.Errorf("pgcluster: create parent of data dir: %w", err)
	}
	if err := owner.checkTraversable(parent, dataDir); err != nil {
		return false, err
	}
	fi, err := os.Stat(dataDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.Mkdir(dataDir, 0o700); err != nil {
			return false, fmt.Errorf("pgcluster: create data dir: %w", err)
		}
	case err != nil:
		return false, fmt.Errorf("pgcluster: data dir: %w", err)
	case !fi.IsDir():
		return false, fmt.Errorf("pgcluster: data dir %s is not a directory", dataDir)
	}
	if _, err := os.Stat(filepath.Join(dataDir, versionFile)); err == nil {
		fi, err := os.Stat(dataDir)
		if err != nil {
			return false, fmt.Errorf("pgcluster: data dir: %w", err)
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != owner.uid {
			return false, fmt.Errorf("pgcluster: data dir %s is owned by uid %d but PostgreSQL runs as %s; chown -R it or open it as that user",
				dataDir, st.Uid, owner)
		}
		return false, nil
	}
	if err := os.Chmod(dataDir, 0o700); err != nil {
		return false, fmt.Errorf("pgcluster: chmod data dir: %w", err)
	}
	return true, owner.chown(dataDir)
}

// initdb creates a cluster in the (empty) data dir with superuser as its
// superuser, trust authentication, UTF8 and the C locale.
func initdb(ctx context.Context, o Options, owner *account) error {
	cmd := exec.CommandContext(ctx, filepath.Join(o.BinDir, "initdb"),
		"-D", o.DataDir,
		"-U", o.SuperUser,
		"-A", "trust",
		"--encoding=UTF8",
		"--locale=C",
		"--no-sync",
	)
	cmd.Dir = "/"
	cmd.Env = childEnv()
	cmd.SysProcAttr = sysProcAttr(owner.cred, false)
	// On cancellation interrupt rather than kill initdb: it then removes
	// what it created, so the next Open starts from an empty dir again.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = time.Minute
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgcluster: initdb %s: %w\n%s", o.DataDir, err, out)
	}
	return nil
}
