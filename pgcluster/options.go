package pgcluster

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
)

// DefaultSuperUser is the superuser initdb creates when Options.SuperUser
// is empty.
const DefaultSuperUser = "lakesoul"

// Options configure Open.
type Options struct {
	// DataDir is the cluster's data directory; it is created (mode 0700)
	// and initialised when it holds no PG_VERSION. Required.
	DataDir string
	// BinDir holds initdb and postgres; empty means FindBinDir("").
	BinDir string
	// SuperUser is the superuser role created by initdb. Empty means the
	// one recorded in the data dir, or DefaultSuperUser for a new one.
	SuperUser string
	// Port names the unix socket file (.s.PGSQL.<port>) and, with
	// ListenTCP, the TCP port. 0 means the port recorded in the data dir,
	// or a free one for a new data dir.
	Port int
	// ListenTCP makes the server listen on 127.0.0.1:Port as well.
	ListenTCP bool
	// Settings are extra server settings, passed as -c name=value (for
	// example fsync=off). The settings pgcluster manages itself (port,
	// listen_addresses, unix_socket_directories, unix_socket_permissions)
	// are rejected.
	Settings map[string]string
	// BackendDataLimit, when positive, bounds the private memory (heap and
	// private mappings: the data segment, RLIMIT_DATA) of every server
	// process in bytes. A backend that needs more fails the allocation
	// with PostgreSQL's ERROR 53200 "out of memory" and lives on, where the
	// kernel's OOM killer would end it with SIGKILL and the postmaster
	// would restart every session of the cluster. Shared memory is not
	// counted. Unix only.
	BackendDataLimit int64
	// Logger receives lifecycle events; nil means slog.Default().
	Logger *slog.Logger
}

// managedSettings are set by pgcluster and may not be overridden through
// Options.Settings.
var managedSettings = map[string]string{
	"port":                    "Options.Port",
	"listen_addresses":        "Options.ListenTCP",
	"unix_socket_directories": "the socket directory choice",
	"unix_socket_permissions": "the fixed 0700",
	"data_directory":          "Options.DataDir",
}

// normalize validates o and returns a copy with DataDir absolute, BinDir
// resolved and Logger set. SuperUser and Port are resolved later against
// the state recorded in the data dir.
func (o Options) normalize() (Options, error) {
	if o.DataDir == "" {
		return o, fmt.Errorf("pgcluster: Options.DataDir is required")
	}
	abs, err := filepath.Abs(o.DataDir)
	if err != nil {
		return o, fmt.Errorf("pgcluster: data dir %q: %w", o.DataDir, err)
	}
	o.DataDir = abs
	if o.BackendDataLimit < 0 {
		return o, fmt.Errorf("pgcluster: negative BackendDataLimit %d", o.BackendDataLimit)
	}
	if o.Port < 0 || o.Port > 65535 {
		return o, fmt.Errorf("pgcluster: port %d out of range", o.Port)
	}
	for name := range o.Settings {
		if what, ok := managedSettings[strings.ToLower(name)]; ok {
			return o, fmt.Errorf("pgcluster: setting %q is managed by pgcluster; use %s", name, what)
		}
	}
	if o.BinDir, err = FindBinDir(o.BinDir); err != nil {
		return o, err
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o, nil
}
