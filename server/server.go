// Package server assembles a running LakeSoul-Go server: the catalog (a
// private PostgreSQL or an existing one), migrations, the admin role, the SQL
// engine and the pgwire listener. cmd/lakesoul is a thin flag layer over it.
package server

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"math"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/cdc"
	"github.com/lakesoul-go/lakesoul/compaction"
	"github.com/lakesoul-go/lakesoul/engine"
	"github.com/lakesoul-go/lakesoul/flightsql"
	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/metrics"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/pgcluster"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/s3proxy"
	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/vector"
)

// AdminRole is the administrator's PostgreSQL role.
const AdminRole = "lakesoul"

// Config is what `lakesoul serve` is configured with.
type Config struct {
	// DataDir holds the private catalog cluster (<DataDir>/pg), the default
	// warehouse (<DataDir>/warehouse) and the generated admin password.
	DataDir string
	// Listen is the pgwire address, e.g. 127.0.0.1:5433.
	Listen string
	// CatalogURL selects an existing PostgreSQL instead of the private one.
	CatalogURL string
	// NoMigrate skips applying migrations to CatalogURL.
	NoMigrate bool
	// Warehouse is the data root URI (file:///path or s3://bucket/prefix);
	// default file://<DataDir>/warehouse.
	Warehouse string
	// S3Endpoint is an S3-compatible endpoint URL (path-style addressing);
	// S3Region the region. Credentials come from the standard AWS chain.
	S3Endpoint, S3Region string
	// CacheDir holds the disk cache of object-store reads (default
	// <DataDir>/cache); CacheSize bounds it in bytes (0 = 1 GiB, negative =
	// no cache).
	CacheDir  string
	CacheSize int64
	// AdminPassword sets the admin role's password; empty = keep the saved one
	// or generate one at first start.
	AdminPassword string
	// PGBinDir is where initdb/postgres live (empty = search).
	PGBinDir string
	// TLSCertFile and TLSKeyFile, when both set, enable TLS for clients that
	// ask for it (SSLRequest); without them SSLRequest is answered 'N'.
	TLSCertFile, TLSKeyFile string
	// PasswordAuth is how TLS clients prove their password (default SCRAM);
	// pgwire.PasswordAuthCleartextTLS needs TLS configured.
	PasswordAuth pgwire.PasswordAuth
	// PGSettings are extra settings for the private cluster (tests use fsync=off).
	PGSettings map[string]string
	// S3ProxyListen, when set, also serves the S3 proxy (package s3proxy)
	// on this address, in front of the s3:// warehouse.
	S3ProxyListen string
	// FlightListen, when set, also serves Arrow Flight SQL (package
	// flightsql) on this address, with the same roles, engine and TLS.
	FlightListen string
	// MetricsListen, when set, serves Prometheus metrics (/metrics) and
	// health checks (/healthz, /readyz) on this address (package metrics);
	// without a host (":9187") on loopback only.
	MetricsListen string
	// MetricsTableLabels serves per-table metrics, labelled with every
	// workspace's table names; off, the metrics name no table.
	MetricsTableLabels bool
	// CompactionWorkers is the number of compaction workers to run (0: none;
	// `lakesoul serve` defaults to 1).
	CompactionWorkers int

	// Client limits (package pgwire; zero = its defaults): sessions at once
	// and the slots of them kept for administrators; time to authenticate;
	// the delay before a failed authentication is answered; the largest
	// client message and the largest row in or out.
	MaxConnections      int
	ReservedConnections int
	// CatalogConnsPerUser bounds the catalog connections one role's sessions
	// hold for the SQL they write (Catalog.SetUserPoolSize; 0 = its default).
	CatalogConnsPerUser int
	AuthTimeout         time.Duration
	AuthFailureDelay    time.Duration
	MaxMessageSize      int
	MaxRowSize          int
	// SessionsPerRole bounds the sessions (pgwire and Flight SQL together)
	// of a role without a CONNECTION LIMIT (0 = none); superusers and the
	// admin have none (engine.Config.SessionsPerRole).
	SessionsPerRole int
	// IdleInTransactionTimeout is idle_in_transaction_session_timeout's
	// default (0 = none).
	IdleInTransactionTimeout time.Duration
	// FlightIdleTimeout closes a Flight SQL client unused that long (0 =
	// flightsql.DefaultIdleTimeout).
	FlightIdleTimeout time.Duration
	// MemoryLimit is the server's memory budget in bytes: half of it is
	// DuckDB's memory_limit, shared by all sessions' queries (an operator
	// beyond it spills, a query beyond spilling fails with 53200), half the
	// Go runtime's soft limit (runtime/debug.SetMemoryLimit). 0 means half
	// the physical memory (or of the cgroup's limit); negative, no limit.
	MemoryLimit int64
	// TempLimit bounds DuckDB's spill files under <DataDir>/tmp in bytes.
	// 0 means a quarter of the free space there at start; negative, DuckDB's
	// default (90% of it).
	TempLimit int64
	// CatalogBackendMemory bounds the private memory of each process of the
	// private catalog cluster (pgcluster.Options.BackendDataLimit): an
	// allocation beyond fails that statement with 53200 instead of an
	// out-of-memory kill that restarts the catalog for every session. 0
	// means DefaultCatalogBackendMemory; negative, no limit. An external
	// catalog (--catalog-url) is its DBA's to bound.
	CatalogBackendMemory int64
	// CatalogStatementTimeout caps statement_timeout for user-written SQL
	// on the catalog (engine.Config.CatalogStatementTimeout). 0 means
	// DefaultCatalogStatementTimeout; negative, no cap.
	CatalogStatementTimeout time.Duration
	// SyncWorkers is how many subscriptions (package cdc) this server
	// applies at once (0: none).
	SyncWorkers int
	Logger      *slog.Logger
	// Announce receives the one-time message with a generated password.
	Announce io.Writer
}

// Server is a running server.
type Server struct {
	cfg        Config
	catalogURL string
	log        *slog.Logger
	cluster    *pgcluster.Cluster
	cat        *catalog.Catalog
	eng        *engine.Engine
	wire       *pgwire.Server
	store      objstore.Store
	compactor  *compaction.Service
	sync       *cdc.Service
	s3proxy    *s3proxy.Server
	flight     *flightsql.Server
	flightLn   net.Listener
	metrics    *metrics.Server
	ln         net.Listener
	serveErr   chan error
}

// Start brings everything up and starts accepting connections.
func Start(ctx context.Context, cfg Config) (_ *Server, err error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Announce == nil {
		cfg.Announce = os.Stderr
	}
	if cfg.PasswordAuth == pgwire.PasswordAuthCleartextTLS && (cfg.TLSCertFile == "" || cfg.TLSKeyFile == "") {
		return nil, errors.New("--password-auth cleartext-tls needs TLS (--tls-cert and --tls-key)")
	}
	if cfg.DataDir == "" {
		cfg.DataDir = "lakesoul-data"
	}
	if cfg.DataDir, err = filepath.Abs(cfg.DataDir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	s := &Server{cfg: cfg, log: cfg.Logger, serveErr: make(chan error, 1)}
	defer func() {
		if err != nil {
			s.Close(context.WithoutCancel(ctx))
		}
	}()

	catalogURL := cfg.CatalogURL
	if catalogURL == "" {
		dataLimit := cfg.CatalogBackendMemory
		if dataLimit == 0 {
			dataLimit = DefaultCatalogBackendMemory
		}
		s.cluster, err = pgcluster.Open(ctx, pgcluster.Options{
			DataDir:          filepath.Join(cfg.DataDir, "pg"),
			BinDir:           cfg.PGBinDir,
			SuperUser:        AdminRole,
			Settings:         privateClusterSettings(cfg, cfg.PGSettings),
			BackendDataLimit: max(dataLimit, 0),
			Logger:           cfg.Logger,
		})
		if err != nil {
			return nil, fmt.Errorf("start private catalog: %w", err)
		}
		if err := s.cluster.CreateDatabase(ctx, engine.DatabaseName); err != nil {
			return nil, err
		}
		catalogURL = s.cluster.ConnString(engine.DatabaseName)
	}
	if catalogURL == cfg.CatalogURL && cfg.NoMigrate {
		s.log.Info("skipping migrations (--no-migrate)")
	} else if err := catalog.MigrateUp(ctx, catalogURL); err != nil {
		return nil, err
	}
	s.catalogURL = catalogURL
	if err := s.ensureAdmin(ctx, catalogURL); err != nil {
		return nil, err
	}
	if s.cat, err = catalog.Open(ctx, catalogURL); err != nil {
		return nil, err
	}
	if cfg.CatalogConnsPerUser > 0 {
		s.cat.SetUserPoolSize(cfg.CatalogConnsPerUser)
	}
	// A catalog row a user's SQL produced is never larger than a row the
	// client may receive: beyond, the statement fails before the server
	// holds the row.
	maxRow := cfg.MaxRowSize
	if maxRow <= 0 {
		maxRow = pgwire.DefaultMaxRowSize
	}
	s.cat.SetUserMessageLimit(maxRow)

	warehouse := cfg.Warehouse
	if warehouse == "" {
		dir := filepath.Join(cfg.DataDir, "warehouse")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("warehouse: %w", err)
		}
		warehouse = objstore.LocalURI(dir)
	}
	store, err := s.openStore(ctx, warehouse)
	if err != nil {
		return nil, err
	}
	s.store = store
	engCfg, err := s.engineLimits()
	if err != nil {
		return nil, err
	}
	engCfg.Catalog, engCfg.Warehouse, engCfg.Store, engCfg.Logger = s.cat, warehouse, store, cfg.Logger
	engCfg.SessionsPerRole, engCfg.IdleInTransactionTimeout = cfg.SessionsPerRole, cfg.IdleInTransactionTimeout
	switch engCfg.CatalogStatementTimeout = cfg.CatalogStatementTimeout; {
	case engCfg.CatalogStatementTimeout == 0:
		engCfg.CatalogStatementTimeout = DefaultCatalogStatementTimeout
	case engCfg.CatalogStatementTimeout < 0:
		engCfg.CatalogStatementTimeout = 0
	}
	s.eng, err = engine.New(ctx, engCfg)
	if err != nil {
		return nil, err
	}
	if cfg.CompactionWorkers > 0 {
		s.compactor, err = compaction.Start(ctx, compaction.Config{Catalog: s.cat, Store: store,
			Workers: cfg.CompactionWorkers, Options: compaction.Options{Logger: cfg.Logger, Warehouse: warehouse},
			AfterCompaction: s.eng.RebuildVectorIndexes})
		if err != nil {
			return nil, err
		}
	}
	s.sync = cdc.Start(ctx, &cdc.Env{Catalog: s.cat, Store: store, Warehouse: warehouse, Logger: cfg.Logger,
		VerifyChecks: s.eng.VerifyChecks}, cfg.SyncWorkers)
	var tlsConfig *tls.Config
	switch {
	case cfg.TLSCertFile != "" && cfg.TLSKeyFile != "":
		cert, err := tls.LoadX509KeyPair(cfg.TLSCertFile, cfg.TLSKeyFile)
		if err != nil {
			return nil, fmt.Errorf("TLS certificate: %w", err)
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	case cfg.TLSCertFile != "" || cfg.TLSKeyFile != "":
		return nil, errors.New("TLS needs both --tls-cert and --tls-key")
	}
	if cfg.S3ProxyListen != "" {
		if s.s3proxy, err = s.startS3Proxy(ctx, warehouse); err != nil {
			return nil, err
		}
	}
	s.wire = pgwire.NewServer(pgwire.Config{Auth: s.eng, Sessions: s.eng, Logger: cfg.Logger, TLSConfig: tlsConfig,
		PasswordAuth: cfg.PasswordAuth, MaxConnections: cfg.MaxConnections, ReservedConnections: cfg.ReservedConnections,
		AuthTimeout: cfg.AuthTimeout, AuthFailureDelay: cfg.AuthFailureDelay, MaxMessageSize: cfg.MaxMessageSize,
		MaxRowSize: cfg.MaxRowSize, Types: wireTypes()})
	s.eng.SetSessions(s.wire)
	if cfg.MetricsListen != "" {
		if s.metrics, err = metrics.Listen(cfg.MetricsListen, s.metricsSources(), cfg.Logger); err != nil {
			return nil, err
		}
		s.log.Info("metrics serving", "listen", s.metrics.Addr().String())
	}
	// Flight SQL listens before pgwire accepts: a client (or a test, or a
	// health check) that reached pgwire finds every door open.
	if cfg.FlightListen != "" {
		if err := s.startFlight(ctx, tlsConfig); err != nil {
			return nil, err
		}
	}
	if s.ln, err = net.Listen("tcp", cfg.Listen); err != nil {
		return nil, fmt.Errorf("listen %s: %w", cfg.Listen, err)
	}
	safego.Go(func() { s.serveErr <- safego.Call(func() error { return s.wire.Serve(s.ln) }) })
	s.log.Info("lakesoul serving", "listen", s.ln.Addr().String(), "warehouse", warehouse, "data_dir", cfg.DataDir)
	return s, nil
}

// Defaults of the catalog's limits (Config).
const (
	DefaultCatalogBackendMemory    = 1 << 30
	DefaultCatalogStatementTimeout = 5 * time.Minute
	// catalogTempFileLimit is the private catalog's temp_file_limit: what
	// one process may spill (a user's sort or hash beyond work_mem), so no
	// statement fills the disk the catalog's WAL is on.
	catalogTempFileLimit = "1GB"
)

// privateClusterSettings are the private catalog cluster's settings: extra
// ones over ours. A backend checks every second that the server's connection
// to it is still there (client_connection_check_interval), so a statement
// whose connection the server dropped — a cancelled or timed-out call, or
// the server gone — stops within a second instead of running to its end.
// max_connections leaves room for every session's user login (at most one
// catalog connection per session, catalog.AcquireAs) next to the owner's
// pool and the workers. temp_file_limit bounds each process's spill files.
func privateClusterSettings(cfg Config, extra map[string]string) map[string]string {
	sessions := cfg.MaxConnections
	if sessions <= 0 {
		sessions = 100
	}
	out := map[string]string{
		"client_connection_check_interval": "1s",
		"max_connections":                  strconv.Itoa(sessions + 64),
		"temp_file_limit":                  catalogTempFileLimit,
	}
	maps.Copy(out, extra)
	return out
}

// engineLimits resolves the memory and temp space limits into the engine's
// configuration, sets the Go runtime's share of the memory budget and
// prepares DuckDB's spill directory <DataDir>/tmp, emptied of what a
// previous run left.
func (s *Server) engineLimits() (engine.Config, error) {
	var c engine.Config
	budget := s.cfg.MemoryLimit
	if budget == 0 {
		budget = physicalMemory() / 2
	}
	if budget > 0 {
		c.MemoryLimit = budget / 2
		debug.SetMemoryLimit(budget - c.MemoryLimit)
		// Undelivered NOTIFYs live on the Go heap: a sixteenth of the
		// budget for all sessions' queues (listen.Limits).
		c.NotifyQueueLimit = max(budget/16, 8<<20)
	} else {
		c.NotifyQueueLimit = 1 << 30
	}
	c.TempDir = filepath.Join(s.cfg.DataDir, "tmp")
	if err := os.RemoveAll(c.TempDir); err != nil {
		return c, fmt.Errorf("temp dir: %w", err)
	}
	if err := os.MkdirAll(c.TempDir, 0o700); err != nil {
		return c, fmt.Errorf("temp dir: %w", err)
	}
	c.TempLimit = s.cfg.TempLimit
	if c.TempLimit == 0 {
		c.TempLimit = freeSpace(c.TempDir) / 4
	}
	c.TempLimit = max(c.TempLimit, 0)
	s.log.Info("engine limits", "duckdb_memory_limit", c.MemoryLimit, "go_memory_limit", budget-c.MemoryLimit,
		"temp_dir", c.TempDir, "temp_limit", c.TempLimit, "notify_queue_limit", c.NotifyQueueLimit)
	return c, nil
}

// openStore builds the warehouse's object store; for S3 with the disk cache
// and a check that the bucket is reachable.
func (s *Server) openStore(ctx context.Context, warehouse string) (objstore.Store, error) {
	opt := objstore.Options{CheckBucket: true, S3: objstore.S3Options{
		Endpoint: s.cfg.S3Endpoint, Region: s.cfg.S3Region, CacheDir: s.cfg.CacheDir, CacheSize: s.cfg.CacheSize}}
	if objstore.IsS3URI(warehouse) {
		if opt.S3.CacheSize == 0 {
			opt.S3.CacheSize = objstore.DefaultCacheSize
		}
		if opt.S3.CacheDir == "" {
			opt.S3.CacheDir = filepath.Join(s.cfg.DataDir, "cache")
		}
		if opt.S3.CacheSize < 0 {
			opt.S3.CacheDir = ""
		}
	}
	store, err := objstore.ForURIWith(ctx, warehouse, opt)
	if err != nil {
		return nil, fmt.Errorf("warehouse %s: %w", warehouse, err)
	}
	if objstore.IsS3URI(warehouse) {
		s.log.Info("object store", "warehouse", warehouse, "endpoint", opt.S3.Endpoint,
			"cache_dir", opt.S3.CacheDir, "cache_size", max(opt.S3.CacheSize, 0))
	}
	return store, nil
}

// startS3Proxy serves the S3 proxy in front of the warehouse's bucket, with
// the warehouse's endpoint and credentials.
func (s *Server) startS3Proxy(ctx context.Context, warehouse string) (*s3proxy.Server, error) {
	if !objstore.IsS3URI(warehouse) {
		return nil, fmt.Errorf("--s3proxy-listen needs an s3:// warehouse, not %s", warehouse)
	}
	backend, err := s3proxy.NewBackend(ctx, s.cfg.S3Endpoint, s.cfg.S3Region)
	if err != nil {
		return nil, err
	}
	p, err := s3proxy.New(s3proxy.Config{Catalog: s.cat, Backend: backend, Warehouses: []string{warehouse}, Logger: s.log})
	if err != nil {
		return nil, err
	}
	srv, err := s3proxy.Listen(s.cfg.S3ProxyListen, p)
	if err != nil {
		return nil, err
	}
	s.log.Info("s3 proxy serving", "listen", srv.Addr().String(), "backend", backend.Endpoint)
	return srv, nil
}

// startFlight serves Flight SQL on cfg.FlightListen over the engine.
func (s *Server) startFlight(ctx context.Context, tlsConfig *tls.Config) error {
	key, err := s.cat.FlightTicketKey(ctx)
	if err != nil {
		return err
	}
	// Results kept for a later DoGet live on the Go heap: an eighth of its
	// share of the memory budget (engineLimits) for all of them, the rest
	// spilled.
	var kept int64
	if goLimit := debug.SetMemoryLimit(-1); goLimit < math.MaxInt64 {
		kept = max(goLimit/8, 4<<20)
	}
	fs, err := flightsql.New(flightsql.Config{Engine: s.eng, TLSConfig: tlsConfig, TicketKey: key, AuthFailureDelay: s.cfg.AuthFailureDelay,
		MaxClients: s.cfg.MaxConnections, ReservedClients: s.cfg.ReservedConnections, IdleTimeout: s.cfg.FlightIdleTimeout,
		MaxMessageSize: s.cfg.MaxMessageSize, KeptResultMemory: kept, Logger: s.log})
	if err != nil {
		return err
	}
	if s.flightLn, err = net.Listen("tcp", s.cfg.FlightListen); err != nil {
		return fmt.Errorf("listen %s: %w", s.cfg.FlightListen, err)
	}
	s.flight = fs
	safego.Go(func() {
		if err := safego.Call(func() error { return fs.Serve(s.flightLn) }); err != nil {
			s.log.Error("flight sql server stopped", "err", err)
		}
	})
	s.log.Info("flight sql serving", "listen", s.flightLn.Addr().String(), "tls", tlsConfig != nil)
	return nil
}

// FlightAddr is the Flight SQL listen address (nil when not serving it).
func (s *Server) FlightAddr() net.Addr {
	if s.flightLn == nil {
		return nil
	}
	return s.flightLn.Addr()
}

// Store is the warehouse's object store (an *objstore.S3 for s3://
// warehouses, whose Stats give request and cache counters).
func (s *Server) Store() objstore.Store { return s.store }

// CatalogURL is the catalog PostgreSQL's connection string (the private
// cluster's unix socket, or --catalog-url).
func (s *Server) CatalogURL() string { return s.catalogURL }

// MetricsAddr is the metrics listener's address (nil without one).
func (s *Server) MetricsAddr() net.Addr {
	if s.metrics == nil {
		return nil
	}
	return s.metrics.Addr()
}

// Addr is the pgwire listen address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Wait blocks until the pgwire server stops by itself (listener failure).
func (s *Server) Wait() error { return <-s.serveErr }

// Close stops accepting, ends sessions, and stops the private catalog cleanly.
func (s *Server) Close(ctx context.Context) error {
	var errs []error
	if s.wire != nil {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		errs = append(errs, s.wire.Shutdown(sctx))
		cancel()
	}
	if s.flight != nil {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		errs = append(errs, s.flight.Shutdown(sctx))
		cancel()
	}
	if s.s3proxy != nil {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		errs = append(errs, s.s3proxy.Shutdown(sctx))
		cancel()
	}
	if s.metrics != nil {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		errs = append(errs, s.metrics.Shutdown(sctx))
		cancel()
	}
	if s.compactor != nil {
		s.compactor.Close()
	}
	s.sync.Close()
	if s.eng != nil {
		errs = append(errs, s.eng.Close())
	}
	if s.cat != nil {
		s.cat.Close()
	}
	if s.cluster != nil {
		errs = append(errs, s.cluster.Stop(ctx))
	}
	return errors.Join(errs...)
}

// ensureAdmin makes sure the admin role exists and has the configured (or a
// generated, saved) password, stored by PostgreSQL as a SCRAM-SHA-256 verifier.
func (s *Server) ensureAdmin(ctx context.Context, catalogURL string) error {
	pwFile := filepath.Join(s.cfg.DataDir, "admin-password")
	password := s.cfg.AdminPassword
	generated := false
	if password == "" {
		b, err := os.ReadFile(pwFile)
		switch {
		case err == nil:
			password = strings.TrimSpace(string(b))
		case errors.Is(err, fs.ErrNotExist):
			var raw [18]byte
			if _, err := rand.Read(raw[:]); err != nil {
				return err
			}
			password = base64.RawURLEncoding.EncodeToString(raw[:])
			generated = true
		default:
			return fmt.Errorf("read %s: %w", pwFile, err)
		}
	}
	conn, err := pgx.Connect(ctx, catalogURL)
	if err != nil {
		return fmt.Errorf("connect catalog: %w", err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)", AdminRole).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		if _, err := conn.Exec(ctx, "CREATE ROLE "+pgx.Identifier{AdminRole}.Sanitize()+" LOGIN SUPERUSER"); err != nil {
			return fmt.Errorf("create admin role: %w", err)
		}
	}
	if _, err := conn.Exec(ctx, "SET password_encryption = 'scram-sha-256'"); err != nil {
		return err
	}
	var lit string
	if err := conn.QueryRow(ctx, "SELECT quote_literal($1)", password).Scan(&lit); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "ALTER ROLE "+pgx.Identifier{AdminRole}.Sanitize()+" LOGIN PASSWORD "+lit); err != nil {
		return fmt.Errorf("set admin password: %w", err)
	}
	if generated {
		if err := os.WriteFile(pwFile, []byte(password+"\n"), 0o600); err != nil {
			return fmt.Errorf("save admin password: %w", err)
		}
		fmt.Fprintf(s.cfg.Announce, "\nLakeSoul admin role %q, generated password: %s\n(saved in %s; shown only once)\n\n", AdminRole, password, pwFile)
	}
	return nil
}

// wireTypes are the catalog-defined types pgwire encodes: pgvector's vector,
// under the catalog's OID for it.
func wireTypes() []*pgtype.Type {
	if oid := schema.VectorOID(); oid != 0 {
		return []*pgtype.Type{{Name: "vector", OID: oid, Codec: vector.Codec{}}}
	}
	return nil
}
