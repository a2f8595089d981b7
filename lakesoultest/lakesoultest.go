// Package lakesoultest starts a LakeSoul-Go server inside a Go test, for
// users without Docker: the server runs in the test's process on a
// throwaway PostgreSQL cluster of its own (the embedded default of
// `lakesoul serve`, in a temporary directory), and is stopped and removed
// when the test ends.
//
//	func TestMyApp(t *testing.T) {
//		dsn := lakesoultest.Start(t)
//		conn, err := pgx.Connect(ctx, dsn) // the admin role, database lakesoul
//		…
//	}
//
// It needs PostgreSQL's server binaries (Debian: apt-get install
// postgresql; found on PATH, in /usr/lib/postgresql/*/bin or in
// LAKESOUL_PG_BIN). Without them the test is skipped, or fails when
// LAKESOUL_REQUIRE_PG=1. When the test process runs as root, PostgreSQL
// runs as the postgres account, as `lakesoul serve` does.
package lakesoultest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lakesoul-go/lakesoul/pgcluster"
	"github.com/lakesoul-go/lakesoul/server"
)

// Admin is the administrator role a connection string of Start logs in as.
const Admin = server.AdminRole

// Option changes the server's configuration before it starts.
type Option func(*server.Config)

// WithAdminPassword sets the admin role's password (default: random).
func WithAdminPassword(pw string) Option { return func(c *server.Config) { c.AdminPassword = pw } }

// WithWarehouse stores the tables' files under uri (file:///… or
// s3://bucket/prefix; for S3 see WithS3Endpoint) instead of the data
// directory.
func WithWarehouse(uri string) Option { return func(c *server.Config) { c.Warehouse = uri } }

// WithS3Endpoint addresses an S3-compatible server (path-style); the
// credentials come from the standard AWS environment.
func WithS3Endpoint(endpoint string) Option {
	return func(c *server.Config) { c.S3Endpoint = endpoint }
}

// WithCatalogURL uses an existing PostgreSQL (a superuser's URL) as the
// catalog instead of a private cluster; it is migrated on start.
func WithCatalogURL(url string) Option { return func(c *server.Config) { c.CatalogURL = url } }

// WithConfig changes any other setting of the server.
func WithConfig(f func(*server.Config)) Option { return Option(f) }

// Server is a server started by StartServer.
type Server struct {
	*server.Server
	password string
}

// ConnString is a postgres:// URL for role with password to the server's
// database.
func (s *Server) ConnString(role, password string) string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword(role, password), Host: s.Addr().String(),
		Path: "/lakesoul", RawQuery: "sslmode=disable"}
	return u.String()
}

// AdminConnString is the admin's connection string.
func (s *Server) AdminConnString() string { return s.ConnString(Admin, s.password) }

// Start starts a server for the test and returns the admin's connection
// string (postgres://lakesoul:…@127.0.0.1:port/lakesoul).
func Start(t testing.TB, opts ...Option) string {
	t.Helper()
	return StartServer(t, opts...).AdminConnString()
}

// StartServer is Start returning the server itself (its catalog URL,
// object store, addresses).
func StartServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	if _, err := pgcluster.FindBinDir(os.Getenv("LAKESOUL_PG_BIN")); err != nil {
		if os.Getenv("LAKESOUL_REQUIRE_PG") == "1" {
			t.Fatalf("lakesoultest: PostgreSQL server binaries are required (LAKESOUL_REQUIRE_PG=1): %v", err)
		}
		t.Skipf("lakesoultest: no PostgreSQL server binaries (install them, or set LAKESOUL_PG_BIN): %v", err)
	}
	// Not t.TempDir: its parent is private to us, and PostgreSQL may run as
	// another account (root runs it as postgres).
	dir, err := os.MkdirTemp("", "lakesoultest-*")
	if err != nil {
		t.Fatalf("lakesoultest: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatalf("lakesoultest: %v", err)
	}
	logw := &testWriter{t: t}
	var pw [12]byte
	_, _ = rand.Read(pw[:])
	cfg := server.Config{
		DataDir:           filepath.Join(dir, "data"),
		Listen:            "127.0.0.1:0",
		AdminPassword:     hex.EncodeToString(pw[:]),
		PGBinDir:          os.Getenv("LAKESOUL_PG_BIN"),
		PGSettings:        map[string]string{"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"},
		CompactionWorkers: 1,
		SyncWorkers:       1,
		MemoryLimit:       1 << 30,
		Announce:          io.Discard,
		Logger:            slog.New(slog.NewTextHandler(logw, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	for _, o := range opts {
		o(&cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := server.Start(ctx, cfg)
	if err != nil {
		if errors.Is(err, pgcluster.ErrNoBinaries) && os.Getenv("LAKESOUL_REQUIRE_PG") != "1" {
			t.Skipf("lakesoultest: %v", err)
		}
		t.Fatalf("lakesoultest: start server: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		err := srv.Close(ctx)
		logw.done.Store(true)
		if err != nil {
			t.Errorf("lakesoultest: stop server: %v", err)
		}
	})
	return &Server{Server: srv, password: cfg.AdminPassword}
}

// testWriter sends the server's warnings to the test's log until the
// server is stopped.
type testWriter struct {
	t    testing.TB
	done atomic.Bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	if !w.done.Load() {
		w.t.Logf("lakesoul: %s", p)
	}
	return len(p), nil
}
