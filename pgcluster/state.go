package pgcluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// stateFile, in the data dir, records the choices that must survive a
// restart so that ConnString stays the same.
const stateFile = "lakesoul-cluster.json"

// state is the content of stateFile.
type state struct {
	// SuperUser is the role initdb created.
	SuperUser string `json:"superuser"`
	// Port names the socket file and, with ListenTCP, the TCP port.
	Port int `json:"port"`
	// SocketDir is the private socket directory under os.TempDir(); empty
	// means the data dir itself.
	SocketDir string `json:"socket_dir,omitempty"`
}

// readState returns the recorded state, or a zero state when the data dir
// has none (a data dir initialised by other means).
func readState(dataDir string) (state, error) {
	var s state
	b, err := os.ReadFile(filepath.Join(dataDir, stateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("pgcluster: read cluster state: %w", err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("pgcluster: parse %s: %w", filepath.Join(dataDir, stateFile), err)
	}
	return s, nil
}

// writeState atomically replaces the recorded state.
func writeState(dataDir string, s state, owner *account) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("pgcluster: encode cluster state: %w", err)
	}
	path := filepath.Join(dataDir, stateFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("pgcluster: write cluster state: %w", err)
	}
	if err := owner.chown(tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("pgcluster: write cluster state: %w", err)
	}
	return nil
}
