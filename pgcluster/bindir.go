package pgcluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// serverBinaries are the programs a bin dir must hold: initdb creates a
// cluster, postgres runs it. pg_ctl is not needed (see doc.go).
var serverBinaries = []string{"initdb", "postgres"}

// distroGlob is where Debian and Ubuntu install the server binaries, one
// directory per major version.
const distroGlob = "/usr/lib/postgresql/*/bin"

// FindBinDir returns the directory holding the PostgreSQL server binaries
// (initdb and postgres). A non-empty hint is used as is and must hold them.
// Otherwise it tries the directory of initdb found on PATH (or, when PATH
// holds a symlink, the directory it points into), then the highest version
// under /usr/lib/postgresql/*/bin. The error wraps ErrNoBinaries and names
// every place tried.
func FindBinDir(hint string) (string, error) {
	if hint != "" {
		if missing := missingBinaries(hint); len(missing) > 0 {
			return "", fmt.Errorf("%w: bin dir %q lacks %s", ErrNoBinaries, hint, strings.Join(missing, ", "))
		}
		return hint, nil
	}
	var tried []string
	if p, err := exec.LookPath("initdb"); err == nil {
		candidates := []string{filepath.Dir(p)}
		if real, err := filepath.EvalSymlinks(p); err == nil && filepath.Dir(real) != candidates[0] {
			candidates = append(candidates, filepath.Dir(real))
		}
		for _, dir := range candidates {
			if len(missingBinaries(dir)) == 0 {
				return dir, nil
			}
			tried = append(tried, dir+" (from PATH)")
		}
	} else {
		tried = append(tried, "initdb on PATH")
	}
	dirs, _ := filepath.Glob(distroGlob)
	sort.Slice(dirs, func(i, j int) bool { return distroVersion(dirs[i]) > distroVersion(dirs[j]) })
	for _, dir := range dirs {
		if len(missingBinaries(dir)) == 0 {
			return dir, nil
		}
		tried = append(tried, dir)
	}
	if len(dirs) == 0 {
		tried = append(tried, distroGlob)
	}
	return "", fmt.Errorf("%w: tried %s; install the server (e.g. `apt-get install postgresql`) or pass its bin dir",
		ErrNoBinaries, strings.Join(tried, ", "))
}

// missingBinaries lists the server binaries that dir lacks as executables.
func missingBinaries(dir string) []string {
	var missing []string
	for _, name := range serverBinaries {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			missing = append(missing, name)
		}
	}
	return missing
}

// distroVersion extracts the numeric major version from
// /usr/lib/postgresql/<version>/bin; non-numeric versions sort first.
func distroVersion(binDir string) float64 {
	v, err := strconv.ParseFloat(filepath.Base(filepath.Dir(binDir)), 64)
	if err != nil {
		return -1
	}
	return v
}
