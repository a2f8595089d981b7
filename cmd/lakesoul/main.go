// Command lakesoul is LakeSoul-Go's single binary: `lakesoul serve` runs the
// server; `lakesoul migrate` manages the catalog schema.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lakesoul-go/lakesoul/bench"
	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/server"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

const usage = `usage: lakesoul <command> [flags]

commands:
  serve     run the server (embedded PostgreSQL catalog by default)
  compactor run compaction workers alone against a catalog (--catalog-url, --workers N)
  s3proxy   S3 endpoint for access keys of lakesoul.create_access_key() (--listen, --catalog-url, --s3-endpoint)
  migrate   up | down N | version   manage the catalog schema (--catalog-url)
  import    SCHEMA.TABLE LOCATION [--format, --header, --register]   have a server import files (--url)
  healthcheck [--live]   exit 0 when the server's /readyz (or /healthz) answers 200 (--metrics-listen)
  bench     <name> [--scale F] [flags]   run a benchmark with its peers (JSON lines)
  version   print the version
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(os.Args[2:])
	case "migrate":
		err = migrateCmd(os.Args[2:])
	case "compactor":
		err = compactorCmd(os.Args[2:])
	case "s3proxy":
		err = s3proxyCmd(os.Args[2:])
	case "bench":
		err = benchCmd(os.Args[2:])
	case "import":
		err = importCmd(os.Args[2:])
	case "healthcheck":
		err = healthcheckCmd(os.Args[2:])
	case "version", "--version", "-v":
		fmt.Println("lakesoul", version)
	case "help", "-h", "--help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "lakesoul: unknown command %q\n\n%s", os.Args[1], usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "lakesoul:", err)
		os.Exit(1)
	}
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func newLogger(level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l}))
}

func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	var cfg server.Config
	fs.StringVar(&cfg.DataDir, "data-dir", env("LAKESOUL_DATA_DIR", "lakesoul-data"), "data directory (private catalog, warehouse, admin password) [LAKESOUL_DATA_DIR]")
	fs.StringVar(&cfg.Listen, "listen", env("LAKESOUL_LISTEN", "127.0.0.1:5433"), "pgwire listen address [LAKESOUL_LISTEN]")
	fs.StringVar(&cfg.CatalogURL, "catalog-url", env("LAKESOUL_CATALOG_URL", ""), "use this PostgreSQL as the catalog instead of the private one [LAKESOUL_CATALOG_URL]")
	fs.BoolVar(&cfg.NoMigrate, "no-migrate", false, "do not apply migrations to --catalog-url")
	fs.StringVar(&cfg.Warehouse, "warehouse", env("LAKESOUL_WAREHOUSE", ""), "data root: file:///path or s3://bucket/prefix (default <data-dir>/warehouse) [LAKESOUL_WAREHOUSE]")
	fs.StringVar(&cfg.S3Endpoint, "s3-endpoint", env("AWS_ENDPOINT_URL", ""), "S3-compatible endpoint URL, addressed path-style; credentials from the standard AWS chain [AWS_ENDPOINT_URL]")
	fs.StringVar(&cfg.S3Region, "s3-region", env("AWS_REGION", ""), "S3 region [AWS_REGION]")
	fs.StringVar(&cfg.CacheDir, "cache-dir", env("LAKESOUL_CACHE_DIR", ""), "disk cache of S3 reads (default <data-dir>/cache) [LAKESOUL_CACHE_DIR]")
	cacheSize := fs.String("cache-size", env("LAKESOUL_CACHE_SIZE", "1GiB"), "disk cache capacity, e.g. 512MiB, 4GiB; 0 disables the cache [LAKESOUL_CACHE_SIZE]")
	fs.StringVar(&cfg.AdminPassword, "admin-password", env("LAKESOUL_ADMIN_PASSWORD", ""), "password of the admin role lakesoul [LAKESOUL_ADMIN_PASSWORD]")
	fs.StringVar(&cfg.PGBinDir, "pg-bin", env("LAKESOUL_PG_BIN", ""), "directory with initdb and postgres [LAKESOUL_PG_BIN]")
	fs.StringVar(&cfg.TLSCertFile, "tls-cert", env("LAKESOUL_TLS_CERT", ""), "PEM certificate (chain) for TLS; with --tls-key enables TLS [LAKESOUL_TLS_CERT]")
	fs.StringVar(&cfg.TLSKeyFile, "tls-key", env("LAKESOUL_TLS_KEY", ""), "PEM private key for TLS [LAKESOUL_TLS_KEY]")
	fs.StringVar(&cfg.FlightListen, "flight-listen", env("LAKESOUL_FLIGHT_LISTEN", ""), "also serve Arrow Flight SQL on this address (host:port; off by default; TLS as for pgwire) [LAKESOUL_FLIGHT_LISTEN]")
	fs.StringVar(&cfg.MetricsListen, "metrics-listen", env("LAKESOUL_METRICS_LISTEN", ""), "serve Prometheus metrics (/metrics) and health checks (/healthz, /readyz), unauthenticated, on this address (host:port; a port alone, :9187, listens on loopback only; name a host such as 0.0.0.0 to serve other machines) [LAKESOUL_METRICS_LISTEN]")
	tableLabels, err := strconv.ParseBool(env("LAKESOUL_METRICS_TABLE_LABELS", "false"))
	if err != nil {
		return fmt.Errorf("LAKESOUL_METRICS_TABLE_LABELS: %q is not true or false", os.Getenv("LAKESOUL_METRICS_TABLE_LABELS"))
	}
	fs.BoolVar(&cfg.MetricsTableLabels, "metrics-table-labels", tableLabels, "also serve per-table metrics, labelled with the names of every workspace's tables (off: the metrics name no table) [LAKESOUL_METRICS_TABLE_LABELS]")
	fs.StringVar(&cfg.S3ProxyListen, "s3proxy-listen", env("LAKESOUL_S3PROXY_LISTEN", ""), "also serve the S3 proxy on this address (host:port; needs an s3:// warehouse) [LAKESOUL_S3PROXY_LISTEN]")
	passwordAuth := fs.String("password-auth", env("LAKESOUL_PASSWORD_AUTH", "scram"), "scram, or cleartext-tls: ask TLS connections for the password in cleartext (others still use SCRAM) [LAKESOUL_PASSWORD_AUTH]")
	logLevel := fs.String("log-level", env("LAKESOUL_LOG_LEVEL", "info"), "debug, info, warn or error")
	compactionWorkers := fs.String("compaction-workers", env("LAKESOUL_COMPACTION_WORKERS", "1"), "compaction workers to run; 0 turns automatic compaction off [LAKESOUL_COMPACTION_WORKERS]")
	maxConns := fs.String("max-connections", env("LAKESOUL_MAX_CONNECTIONS", "100"), "sessions served at once; the next client gets 53300 [LAKESOUL_MAX_CONNECTIONS]")
	userConns := fs.String("catalog-conns-per-user", env("LAKESOUL_CATALOG_CONNS_PER_USER", "4"), "catalog connections one role's sessions may hold at once for the catalog queries they send [LAKESOUL_CATALOG_CONNS_PER_USER]")
	reservedConns := fs.String("reserved-connections", env("LAKESOUL_RESERVED_CONNECTIONS", "3"), "of --max-connections, slots only superusers and the admin may take [LAKESOUL_RESERVED_CONNECTIONS]")
	perRole := fs.String("max-connections-per-role", env("LAKESOUL_MAX_CONNECTIONS_PER_ROLE", ""), "sessions one role may have at once, over pgwire and Flight SQL together, unless the role has a CONNECTION LIMIT; superusers and the admin have no limit (default a quarter of --max-connections; 0 = no limit) [LAKESOUL_MAX_CONNECTIONS_PER_ROLE]")
	idleInTx := fs.String("idle-in-transaction-session-timeout", env("LAKESOUL_IDLE_IN_TRANSACTION_SESSION_TIMEOUT", "0"), "default of idle_in_transaction_session_timeout: a session idle that long inside a transaction block is ended (FATAL 25P03) and its block rolled back; 0 = never [LAKESOUL_IDLE_IN_TRANSACTION_SESSION_TIMEOUT]")
	flightIdle := fs.String("flight-idle-timeout", env("LAKESOUL_FLIGHT_IDLE_TIMEOUT", "10m"), "a Flight SQL client (its session, bearer token and statement handles) unused that long is closed [LAKESOUL_FLIGHT_IDLE_TIMEOUT]")
	authTimeout := fs.String("authentication-timeout", env("LAKESOUL_AUTHENTICATION_TIMEOUT", "1m"), "time a client has to authenticate [LAKESOUL_AUTHENTICATION_TIMEOUT]")
	authDelay := fs.String("auth-failure-delay", env("LAKESOUL_AUTH_FAILURE_DELAY", "1s"), "wait before answering a failed authentication; 0 answers at once [LAKESOUL_AUTH_FAILURE_DELAY]")
	maxMessage := fs.String("max-message-size", env("LAKESOUL_MAX_MESSAGE_SIZE", "64MiB"), "largest client message (a query text, a Bind, a CopyData); larger ones get 54000 [LAKESOUL_MAX_MESSAGE_SIZE]")
	maxRow := fs.String("max-row-size", env("LAKESOUL_MAX_ROW_SIZE", "64MiB"), "largest row of COPY FROM or of a result; larger ones get 54000 [LAKESOUL_MAX_ROW_SIZE]")
	memoryLimit := fs.String("memory-limit", env("LAKESOUL_MEMORY_LIMIT", ""), "memory budget: half DuckDB's memory_limit, half the Go heap's soft limit (default half the RAM; 0 = no limit) [LAKESOUL_MEMORY_LIMIT]")
	tempLimit := fs.String("temp-space-limit", env("LAKESOUL_TEMP_SPACE_LIMIT", ""), "bound on DuckDB's spill files in <data-dir>/tmp (default a quarter of the free space; 0 = DuckDB's default) [LAKESOUL_TEMP_SPACE_LIMIT]")
	catalogMemory := fs.String("catalog-backend-memory", env("LAKESOUL_CATALOG_BACKEND_MEMORY", "1GiB"), "memory one process of the private catalog may allocate; beyond, its statement fails with 53200 (0 = no limit) [LAKESOUL_CATALOG_BACKEND_MEMORY]")
	catalogTimeout := fs.String("catalog-statement-timeout", env("LAKESOUL_CATALOG_STATEMENT_TIMEOUT", "5m"), "longest a query users write may run on the catalog (pg_catalog, lakesoul.* relations), whatever their statement_timeout (0 = no cap) [LAKESOUL_CATALOG_STATEMENT_TIMEOUT]")
	retryWindow := fs.String("commit-retry-window", env("LAKESOUL_COMMIT_RETRY_WINDOW", "60s"), "how long a commit whose catalog connection broke is re-sent before the client gets 08007 (outcome unknown) [LAKESOUL_COMMIT_RETRY_WINDOW]")
	syncWorkers := fs.String("sync-workers", env("LAKESOUL_SYNC_WORKERS", "4"), "subscriptions (CDC syncs) this server applies at once; 0 turns them off here [LAKESOUL_SYNC_WORKERS]")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := parseLimits(&cfg, *maxConns, *reservedConns, *authTimeout, *authDelay, *maxMessage, *maxRow, *memoryLimit, *tempLimit); err != nil {
		return err
	}
	if err := parseSessionLimits(&cfg, *perRole, *idleInTx, *flightIdle); err != nil {
		return err
	}
	if n, err := objstore.ParseSize(*catalogMemory); err != nil {
		return fmt.Errorf("--catalog-backend-memory: %w", err)
	} else if cfg.CatalogBackendMemory = n; n == 0 {
		cfg.CatalogBackendMemory = -1 // no limit
	} else if n < 64<<20 {
		return fmt.Errorf("--catalog-backend-memory: %q is below 64MiB, too little for a PostgreSQL backend", *catalogMemory)
	}
	if d, err := time.ParseDuration(*catalogTimeout); err != nil || d < 0 {
		return fmt.Errorf("--catalog-statement-timeout: %q is not a duration >= 0", *catalogTimeout)
	} else if cfg.CatalogStatementTimeout = d; d == 0 {
		cfg.CatalogStatementTimeout = -1 // no cap
	}
	window, err := time.ParseDuration(*retryWindow)
	if err != nil || window <= 0 {
		return fmt.Errorf("--commit-retry-window: %q is not a duration > 0", *retryWindow)
	}
	catalog.CommitRetryWindow = window
	perUser, err := strconv.Atoi(*userConns)
	if err != nil || perUser < 1 {
		return fmt.Errorf("--catalog-conns-per-user: %q is not a number >= 1", *userConns)
	}
	cfg.CatalogConnsPerUser = perUser
	sync, err := strconv.Atoi(*syncWorkers)
	if err != nil || sync < 0 {
		return fmt.Errorf("--sync-workers: %q is not a number >= 0", *syncWorkers)
	}
	cfg.SyncWorkers = sync
	workers, err := strconv.Atoi(*compactionWorkers)
	if err != nil || workers < 0 {
		return fmt.Errorf("--compaction-workers: %q is not a number >= 0", *compactionWorkers)
	}
	cfg.CompactionWorkers = workers
	if cfg.PasswordAuth, err = pgwire.ParsePasswordAuth(*passwordAuth); err != nil {
		return fmt.Errorf("--password-auth: %w", err)
	}
	n, err := objstore.ParseSize(*cacheSize)
	if err != nil {
		return fmt.Errorf("--cache-size: %w", err)
	}
	if cfg.CacheSize = n; n == 0 {
		cfg.CacheSize = -1 // no cache
	}
	cfg.Logger = newLogger(*logLevel)
	slog.SetDefault(cfg.Logger)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := server.Start(ctx, cfg)
	if err != nil {
		return err
	}
	waitErr := make(chan error, 1)
	safego.Go(func() { waitErr <- safego.Call(srv.Wait) })
	select {
	case <-ctx.Done():
		cfg.Logger.Info("shutting down")
	case err = <-waitErr:
	}
	closeCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return errors.Join(err, srv.Close(closeCtx))
}

// parseLimits parses the client and resource limit flags of serve into cfg.
func parseLimits(cfg *server.Config, maxConns, reserved, authTimeout, authDelay, maxMessage, maxRow, memory, temp string) error {
	var err error
	if cfg.MaxConnections, err = strconv.Atoi(maxConns); err != nil || cfg.MaxConnections < 1 {
		return fmt.Errorf("--max-connections: %q is not a number >= 1", maxConns)
	}
	if cfg.ReservedConnections, err = strconv.Atoi(reserved); err != nil || cfg.ReservedConnections < 0 {
		return fmt.Errorf("--reserved-connections: %q is not a number >= 0", reserved)
	}
	if cfg.ReservedConnections >= cfg.MaxConnections {
		return fmt.Errorf("--reserved-connections (%d) must be less than --max-connections (%d)", cfg.ReservedConnections, cfg.MaxConnections)
	}
	if cfg.AuthTimeout, err = time.ParseDuration(authTimeout); err != nil || cfg.AuthTimeout <= 0 {
		return fmt.Errorf("--authentication-timeout: %q is not a positive duration", authTimeout)
	}
	if cfg.AuthFailureDelay, err = time.ParseDuration(authDelay); err != nil || cfg.AuthFailureDelay < 0 {
		return fmt.Errorf("--auth-failure-delay: %q is not a duration >= 0", authDelay)
	}
	for _, f := range []struct {
		name, v string
		dst     *int
	}{{"--max-message-size", maxMessage, &cfg.MaxMessageSize}, {"--max-row-size", maxRow, &cfg.MaxRowSize}} {
		n, err := objstore.ParseSize(f.v)
		if err != nil || n < 1024 || n > 1<<30 {
			return fmt.Errorf("%s: %q is not a size from 1KiB to 1GiB", f.name, f.v)
		}
		*f.dst = int(n)
	}
	for _, f := range []struct {
		name, v string
		dst     *int64
	}{{"--memory-limit", memory, &cfg.MemoryLimit}, {"--temp-space-limit", temp, &cfg.TempLimit}} {
		if f.v == "" {
			continue // the server's default
		}
		n, err := objstore.ParseSize(f.v)
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		if *f.dst = n; n == 0 {
			*f.dst = -1 // no limit of ours
		}
	}
	return nil
}

// parseSessionLimits parses serve's per-role session bound and its idle
// timeouts into cfg (after parseLimits: the per-role default is a quarter
// of --max-connections).
func parseSessionLimits(cfg *server.Config, perRole, idleInTx, flightIdle string) error {
	if perRole == "" {
		cfg.SessionsPerRole = max(1, cfg.MaxConnections/4)
	} else if n, err := strconv.Atoi(perRole); err != nil || n < 0 {
		return fmt.Errorf("--max-connections-per-role: %q is not a number >= 0", perRole)
	} else {
		cfg.SessionsPerRole = n
	}
	var err error
	if cfg.IdleInTransactionTimeout, err = time.ParseDuration(idleInTx); err != nil || cfg.IdleInTransactionTimeout < 0 {
		return fmt.Errorf("--idle-in-transaction-session-timeout: %q is not a duration >= 0", idleInTx)
	}
	if cfg.FlightIdleTimeout, err = time.ParseDuration(flightIdle); err != nil || cfg.FlightIdleTimeout <= 0 {
		return fmt.Errorf("--flight-idle-timeout: %q is not a positive duration", flightIdle)
	}
	return nil
}

func migrateCmd(args []string) error {
	fs := flag.NewFlagSet("migrate", flag.ExitOnError)
	url := fs.String("catalog-url", env("LAKESOUL_CATALOG_URL", ""), "catalog PostgreSQL URL [LAKESOUL_CATALOG_URL]")
	// Accept the action before or after the flags: `migrate up --catalog-url …`.
	var rest []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		rest = append(rest, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if *url == "" {
		return errors.New("migrate: --catalog-url is required")
	}
	if len(rest) == 0 {
		return errors.New("migrate: want up, down N or version")
	}
	ctx := context.Background()
	switch rest[0] {
	case "up":
		return catalog.MigrateUp(ctx, *url)
	case "down":
		if len(rest) != 2 {
			return errors.New("migrate down: want the number of migrations to roll back")
		}
		n, err := strconv.Atoi(rest[1])
		if err != nil || n < 1 {
			return fmt.Errorf("migrate down: %q is not a positive number", rest[1])
		}
		return catalog.MigrateDown(*url, n)
	case "version":
		v, dirty, err := catalog.MigrateVersion(*url)
		if err != nil {
			return err
		}
		fmt.Printf("%d", v)
		if dirty {
			fmt.Print(" (dirty: a migration failed; fix it and force the version)")
		}
		fmt.Println()
		return nil
	}
	return fmt.Errorf("migrate: unknown action %q (want up, down N, version)", rest[0])
}

func benchCmd(args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return fmt.Errorf("bench: want a benchmark name, one of %v", bench.Names())
	}
	name := args[0]
	fs := flag.NewFlagSet("bench "+name, flag.ContinueOnError)
	scale := fs.Float64("scale", 1, "multiply the workload's row counts")
	url := fs.String("catalog-url", env("LAKESOUL_CATALOG_URL", ""), "use this catalog PostgreSQL instead of a private one")
	dir := fs.String("dir", "", "scratch directory (default: a new temp dir, removed afterwards)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	// Benchmark-specific flags pass through untouched.
	var own, rest []string
	for i := 1; i < len(args); i++ {
		a := args[i]
		key := strings.TrimLeft(strings.SplitN(a, "=", 2)[0], "-")
		if key == "scale" || key == "catalog-url" || key == "dir" || key == "cpuprofile" {
			own = append(own, a)
			if !strings.Contains(a, "=") && i+1 < len(args) {
				own = append(own, args[i+1])
				i++
			}
			continue
		}
		rest = append(rest, a)
	}
	if err := fs.Parse(own); err != nil {
		return err
	}
	scratch := *dir
	if scratch == "" {
		d, err := os.MkdirTemp("", "lakesoul-bench-*")
		if err != nil {
			return err
		}
		// The private PostgreSQL runs as the postgres account when we are root.
		if err := os.Chmod(d, 0o755); err != nil {
			return err
		}
		defer os.RemoveAll(d)
		scratch = d
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// On a terminal, a status line shows how far the run is.
	status := newStatusLine("bench " + name)
	defer status.close()
	status.set("starting")
	slog.SetDefault(slog.New(slog.NewTextHandler(status.Writer(), &slog.HandlerOptions{Level: slog.LevelWarn})))
	out := bench.NewEmitter(status.wrap(os.Stdout))
	measured := 0
	out.Observe(func(r bench.Row) {
		measured++
		status.set("%d measurements; last: %s %s, %d rows in %.1fs (%.0f rows/s), peak RSS %.0f MiB",
			measured, r.Phase, r.System, r.Rows, r.Seconds, r.RowsPerS, r.PeakRSSMB)
	})
	return bench.Run(ctx, name, bench.Options{Scale: *scale, CatalogURL: *url, Dir: scratch, Args: rest,
		Out: out, Log: status.Writer()})
}
