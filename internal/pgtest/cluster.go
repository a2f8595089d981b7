package pgtest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lakesoul-go/lakesoul/pgcluster"
)

// fastSettings trade durability for speed: a test cluster is thrown away.
var fastSettings = map[string]string{
	"fsync":              "off",
	"synchronous_commit": "off",
	"full_page_writes":   "off",
}

// shared is the throwaway cluster of this test binary, started on first use.
var shared struct {
	mu      sync.Mutex
	started bool
	cluster *pgcluster.Cluster
	base    string // temp dir holding the data dir
	err     error
}

// sharedCluster returns the binary's shared cluster, starting it on the
// first call; a start failure is remembered and reported to every caller.
func sharedCluster(t testing.TB) *pgcluster.Cluster {
	t.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if !shared.started {
		shared.started = true
		shared.cluster, shared.base, shared.err = startCluster(context.Background())
	}
	if shared.err != nil {
		failStart(t, shared.err)
	}
	return shared.cluster
}

// stopShared stops the shared cluster, if it was started, and removes its
// directory.
func stopShared() error {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.cluster == nil {
		return nil
	}
	err := shared.cluster.Stop(context.Background())
	if err == nil {
		err = os.RemoveAll(shared.base)
	}
	shared.cluster = nil
	return err
}

// startCluster starts a throwaway cluster in a new temp dir named after
// this process, after removing those that dead test binaries left.
func startCluster(ctx context.Context) (*pgcluster.Cluster, string, error) {
	return startClusterWith(ctx, fastSettings, false)
}

// startClusterWith is startCluster with these settings, listening on
// 127.0.0.1 too when tcp is set.
func startClusterWith(ctx context.Context, settings map[string]string, tcp bool) (*pgcluster.Cluster, string, error) {
	sweepAbandoned()
	base, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", dirPrefix, os.Getpid()))
	if err != nil {
		return nil, "", fmt.Errorf("pgtest: create cluster dir: %w", err)
	}
	// MkdirTemp makes it 0700; when tests run as root, PostgreSQL runs as
	// the postgres account, which must reach the data dir inside.
	if err := os.Chmod(base, 0o755); err != nil {
		os.RemoveAll(base)
		return nil, "", fmt.Errorf("pgtest: %w", err)
	}
	c, err := pgcluster.Open(ctx, pgcluster.Options{
		DataDir:   filepath.Join(base, "data"),
		Settings:  settings,
		ListenTCP: tcp,
		Logger:    slog.New(slog.DiscardHandler),
	})
	if err != nil {
		os.RemoveAll(base)
		return nil, "", err
	}
	return c, base, nil
}

// Cluster starts a private throwaway cluster for tests that need to stop,
// crash or restart the server, and stops it and removes its directory when
// the test ends. It ignores EnvCatalogURL. To restart it:
//
//	c.Stop(ctx)
//	c2, err := pgcluster.Open(ctx, c.Options())
//	t.Cleanup(func() { c2.Stop(context.Background()) })
//
// A cluster reopened this way must be stopped by the test (as above) before
// this cleanup removes the directory. ConnString connects as superuser.
func Cluster(t testing.TB) *pgcluster.Cluster {
	t.Helper()
	return clusterWith(t, fastSettings, false)
}

// LogicalCluster is Cluster with wal_level = logical (a publisher for
// logical replication: slots and walsenders for a few subscriptions), also
// listening on 127.0.0.1:Port (trust authentication, replication
// connections too).
func LogicalCluster(t testing.TB) *pgcluster.Cluster {
	t.Helper()
	settings := map[string]string{"wal_level": "logical", "max_replication_slots": "16", "max_wal_senders": "16"}
	for k, v := range fastSettings {
		settings[k] = v
	}
	return clusterWith(t, settings, true)
}

// TCPCluster is Cluster also listening on 127.0.0.1:Port with trust
// authentication, for clients that reach the catalog by host and port
// (LakeSoul's own engines take a JDBC-style URL).
func TCPCluster(t testing.TB) *pgcluster.Cluster {
	t.Helper()
	return clusterWith(t, fastSettings, true)
}

func clusterWith(t testing.TB, settings map[string]string, tcp bool) *pgcluster.Cluster {
	t.Helper()
	c, base, err := startClusterWith(context.Background(), settings, tcp)
	if err != nil {
		failStart(t, err)
	}
	t.Cleanup(func() {
		if err := c.Stop(context.Background()); err != nil {
			t.Errorf("pgtest: %v", err)
		}
		os.RemoveAll(base)
	})
	return c
}

// Main runs the tests of a package, then stops the shared cluster and
// removes its directory; it exits with the tests' exit code. Use it as the
// package's TestMain:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
func Main(m *testing.M) {
	code := m.Run()
	if err := stopShared(); err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: stopping the shared PostgreSQL cluster: %v\n", err)
	}
	os.Exit(code)
}

// SCRAMCluster is Cluster with password authentication: the superuser still
// connects over the unix socket without one (ConnString works as before),
// every other role must log in with scram-sha-256. It is what a catalog
// PostgreSQL the server does not own looks like.
func SCRAMCluster(t testing.TB) *pgcluster.Cluster {
	t.Helper()
	ctx := context.Background()
	c := Cluster(t)
	hba := fmt.Sprintf("local all %s trust\nlocal all all scram-sha-256\n", c.SuperUser())
	if err := os.WriteFile(filepath.Join(c.DataDir(), "pg_hba.conf"), []byte(hba), 0o600); err != nil {
		t.Fatalf("pgtest: write pg_hba.conf: %v", err)
	}
	conn, err := pgx.Connect(ctx, c.ConnString("postgres"))
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "SELECT pg_reload_conf()"); err != nil {
		t.Fatalf("pgtest: reload pg_hba.conf: %v", err)
	}
	// The postmaster reloads asynchronously: wait until a login of an
	// unknown role is asked for its password (28P01) instead of being let
	// in by trust and refused for not existing (28000).
	probe, err := pgx.ParseConfig(c.ConnString("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	probe.User = "pgtest_scram_probe"
	for i := 0; ; i++ {
		pc, err := pgx.ConnectConfig(ctx, probe)
		if err == nil {
			pc.Close(ctx)
		}
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "28P01" {
			return c
		}
		if i > 500 {
			t.Fatalf("pgtest: pg_hba.conf not in force: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
