package tests

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lakesoul-go/lakesoul/pgcluster"
)

// envRequirePG, when "1", turns skips for a missing PostgreSQL (server
// binaries or psql) into failures.
const envRequirePG = "LAKESOUL_REQUIRE_PG"

// sharedPassword is the admin password of the shared server.
const sharedPassword = "e2e-shared-Secret!"

var (
	// lakesoulBin is the binary under test, built once by TestMain.
	lakesoulBin string
	// noPGReason is set when the PostgreSQL server binaries are missing.
	noPGReason string
)

// shared is the server most tests use, started on first use and stopped
// by TestMain. Tests on it use distinct schema names.
var shared struct {
	mu  sync.Mutex
	srv *server
	err error
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if _, err := pgcluster.FindBinDir(""); err != nil {
		noPGReason = err.Error()
	}
	binDir, err := os.MkdirTemp("", "lakesoul-e2e-bin-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, "tests:", err)
		return 1
	}
	defer os.RemoveAll(binDir)
	if noPGReason == "" || os.Getenv(envRequirePG) == "1" {
		lakesoulBin = filepath.Join(binDir, "lakesoul")
		if err := buildBinary(lakesoulBin, ""); err != nil {
			fmt.Fprintln(os.Stderr, "tests:", err)
			return 1
		}
	}

	code := m.Run()
	stopFlightServer()

	shared.mu.Lock()
	defer shared.mu.Unlock()
	if s := shared.srv; s != nil {
		if err := s.stop(); err != nil {
			fmt.Fprintf(os.Stderr, "tests: stopping the shared server: %v\n", err)
			code = 1
		}
		if code != 0 {
			fmt.Fprintf(os.Stderr, "tests: shared server log:\n%s\n", s.logTail(8000))
		}
		if err := os.RemoveAll(s.base); err != nil {
			fmt.Fprintf(os.Stderr, "tests: %v\n", err)
		}
	}
	return code
}

// buildBinary builds ./cmd/lakesoul of the module containing this package,
// with build tags tags (comma-separated; "" for none).
func buildBinary(out, tags string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	gomod, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return fmt.Errorf("go env GOMOD: %w", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	if strings.TrimSpace(string(gomod)) == "" || strings.TrimSpace(string(gomod)) == os.DevNull {
		return errors.New("not inside a Go module")
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-tags", tags, "-o", out, "./cmd/lakesoul")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build ./cmd/lakesoul in %s: %v\n%s", root, err, stderr.String())
	}
	return nil
}

// requirePG skips the test when the PostgreSQL server binaries are
// missing, or fails it when LAKESOUL_REQUIRE_PG=1.
func requirePG(t *testing.T) {
	t.Helper()
	if noPGReason == "" {
		return
	}
	if os.Getenv(envRequirePG) == "1" {
		t.Fatalf("PostgreSQL server binaries are required (%s=1): %s", envRequirePG, noPGReason)
	}
	t.Skipf("no PostgreSQL server binaries (%s=1 makes this a failure): %s", envRequirePG, noPGReason)
}

// sharedServer returns the shared server, starting it on first use.
func sharedServer(t *testing.T) *server {
	t.Helper()
	requirePG(t)
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.srv == nil && shared.err == nil {
		base, err := newBaseDir()
		if err != nil {
			shared.err = err
		} else {
			shared.srv, shared.err = startServer(filepath.Join(base, "data"), sharedPassword)
			if shared.err != nil {
				os.RemoveAll(base)
			} else {
				shared.srv.base = base
			}
		}
	}
	if shared.err != nil {
		t.Fatalf("start shared server: %v", shared.err)
	}
	return shared.srv
}
