package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/layout"
	"github.com/lakesoul-go/lakesoul/pgcluster"
	"github.com/lakesoul-go/lakesoul/server"
)

func init() { Register("oltp", runOLTP) }

// `bench oltp` measures small statements from many clients: pgbench 15 runs
// its own builtin scripts (select-only: one point SELECT by key;
// simple-update: an UPDATE of one account, a point SELECT and an INSERT
// into the history table) and a single-row upsert script (INSERT … ON
// CONFLICT (aid) DO UPDATE of a random account) against lakesoul serve and
// against PostgreSQL (heap tables on the same machine, the same server that
// holds the private catalog, in the same run), with each protocol (-M
// prepared, simple) and each client count. Both systems get pgbench's
// tables for one pgbench scale (100,000 accounts × --pgbench-scale) made by
// the same SQL, the lake's with the keys and buckets of README's pgbench
// section. Configurations run in turn, PostgreSQL then lakesoul, so a noisy
// stretch of the machine falls on both.
//
// One row per configuration and system: phase = script, transactions (rows),
// tps (rows_per_s) over the whole run, tps and p50/p99 latency per window of
// the run (window_tps, window_p50_ms, window_p99_ms: the run split into
// --windows equal stretches by each transaction's end, so a rate that falls
// as history grows shows), failed transactions, and for lakesoul the ratio
// to PostgreSQL's tps, the peak RSS of the server process (the server runs
// in this process; its catalog's processes are catalog_peak_pss_mb) and the
// live files of pgbench_accounts at the end of the run (files, and the most
// files of one bucket, files_per_bucket_max — what a point read merges,
// bounded only when compaction keeps up). A postgres row's peak_rss_mb is
// the peak proportional set size of the postmaster and all its processes.
//
// Flags: --clients 1,8,32, --modes prepared,simple, --scripts
// select-only,simple-update,upsert, --systems postgres,lakesoul,
// --duration S (per configuration and system; default 20 × scale, at least
// 2), --windows N (default 4), --pgbench-scale N (default 1),
// --compaction-workers N (the server's, default 1 as serve's),
// --run-cpuprofile FILE (lakesoul's runs alone, the server being in this
// process), --pgbench PATH.

// oltpScripts are the workloads: pgbench's builtin scripts by name, and the
// upsert script written to a file.
var oltpScripts = []string{"select-only", "simple-update", "upsert"}

// oltpUpsertScript upserts one random account (pgbench's script language).
const oltpUpsertScript = `\set aid random(1, 100000 * :scale)
\set bid (:aid - 1) / 100000 + 1
\set delta random(-5000, 5000)
INSERT INTO pgbench_accounts (aid, bid, abalance, filler) VALUES (:aid, :bid, :delta, '') ON CONFLICT (aid) DO UPDATE SET abalance = excluded.abalance;
`

// oltpSystem is one side of the comparison: where pgbench connects, and how
// its tables are made.
type oltpSystem struct {
	name                   string
	host, port, user, pass string
	db                     string
	// tables creates and fills pgbench's tables for scale s.
	tables func(s int) []string
}

func runOLTP(ctx context.Context, o Options) error {
	fs := flag.NewFlagSet("oltp", flag.ContinueOnError)
	clientsFlag := fs.String("clients", "1,8,32", "comma-separated client counts")
	modesFlag := fs.String("modes", "prepared,simple", "comma-separated pgbench protocols (-M): prepared, simple, extended")
	scriptsFlag := fs.String("scripts", strings.Join(oltpScripts, ","), "comma-separated scripts: select-only, simple-update (pgbench's builtins), upsert")
	systemsFlag := fs.String("systems", "postgres,lakesoul", "comma-separated systems: postgres, lakesoul")
	duration := fs.Float64("duration", 0, "seconds per configuration and system (default 20 × scale, at least 2)")
	windows := fs.Int("windows", 4, "windows each run is split into")
	pgbenchScale := fs.Int("pgbench-scale", 1, "pgbench's scale: 100,000 accounts each")
	compactionWorkers := fs.Int("compaction-workers", 1, "the server's compaction workers (serve's default is 1)")
	profile := fs.String("run-cpuprofile", "", "write a CPU profile of each lakesoul run alone to FILE.<script>-<mode>-<clients>")
	pgbenchPath := fs.String("pgbench", "", "pgbench binary (default: next to PostgreSQL's server binaries, then PATH)")
	if err := fs.Parse(o.Args); err != nil {
		return err
	}
	var clients []int
	for _, c := range splitList(*clientsFlag) {
		n, err := strconv.Atoi(c)
		if err != nil || n < 1 {
			return fmt.Errorf("oltp: bad --clients %q", *clientsFlag)
		}
		clients = append(clients, n)
	}
	modes := splitList(*modesFlag)
	for _, m := range modes {
		if m != "prepared" && m != "simple" && m != "extended" {
			return fmt.Errorf("oltp: unknown mode %q", m)
		}
	}
	scripts := splitList(*scriptsFlag)
	for _, s := range scripts {
		if !slices.Contains(oltpScripts, s) {
			return fmt.Errorf("oltp: unknown script %q (known: %v)", s, oltpScripts)
		}
	}
	want := map[string]bool{}
	for _, s := range splitList(*systemsFlag) {
		if s != "postgres" && s != "lakesoul" {
			return fmt.Errorf("oltp: unknown system %q", s)
		}
		want[s] = true
	}
	if *windows < 1 || *pgbenchScale < 1 {
		return errors.New("oltp: --windows and --pgbench-scale must be at least 1")
	}
	secs := *duration
	if secs <= 0 {
		secs = max(2, 20*o.Scale)
	}
	pgbench := *pgbenchPath
	if pgbench == "" {
		var err error
		if pgbench, err = FindPgbench(); err != nil {
			return fmt.Errorf("oltp: %w; or --pgbench PATH", err)
		}
	}
	upsertFile := filepath.Join(o.Dir, "oltp-upsert.sql")
	if err := os.WriteFile(upsertFile, []byte(oltpUpsertScript), 0o644); err != nil {
		return err
	}

	srv, err := server.Start(ctx, server.Config{
		DataDir: filepath.Join(o.Dir, "lakesoul-oltp"), Listen: "127.0.0.1:0", AdminPassword: "bench",
		CatalogURL: o.CatalogURL, Announce: io.Discard, CompactionWorkers: *compactionWorkers,
		Logger: slog.New(slog.NewTextHandler(o.Log, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return err
	}
	defer srv.Close(context.WithoutCancel(ctx))
	cat, err := catalog.Open(ctx, srv.CatalogURL())
	if err != nil {
		return err
	}
	defer cat.Close()
	pgURL, err := benchPostgresDB(ctx, srv.CatalogURL(), "bench_oltp_pg")
	if err != nil {
		return err
	}
	host, port, err := net.SplitHostPort(srv.Addr().String())
	if err != nil {
		return err
	}
	pgCfg, err := pgx.ParseConfig(pgURL)
	if err != nil {
		return err
	}
	var systems []oltpSystem
	if want["postgres"] {
		systems = append(systems, oltpSystem{name: "postgres", host: pgCfg.Host, port: strconv.Itoa(int(pgCfg.Port)),
			user: pgCfg.User, pass: pgCfg.Password, db: pgCfg.Database, tables: func(s int) []string {
				return append(PgbenchTableSQL(s, false), "VACUUM ANALYZE")
			}})
	}
	if want["lakesoul"] {
		systems = append(systems, oltpSystem{name: "lakesoul", host: host, port: port, user: "lakesoul", pass: "bench",
			db: "lakesoul", tables: func(s int) []string { return PgbenchTableSQL(s, true) }})
	}
	for _, sys := range systems {
		fmt.Fprintf(o.Log, "oltp: %s: pgbench's tables, scale %d\n", sys.name, *pgbenchScale)
		if err := sys.exec(ctx, sys.tables(*pgbenchScale)); err != nil {
			return fmt.Errorf("oltp %s: %w", sys.name, err)
		}
	}
	postmaster := postmasterPID(ctx, pgURL)

	for _, script := range scripts {
		for _, mode := range modes {
			for _, c := range clients {
				var pgTPS float64
				for _, sys := range systems {
					fmt.Fprintf(o.Log, "oltp: %s, %s, -M %s, %d clients, %.0f s\n", sys.name, script, mode, c, secs)
					args := []string{"-n", "-c", strconv.Itoa(c), "-j", strconv.Itoa(min(c, runtime.NumCPU())),
						"-T", strconv.Itoa(int(secs + 0.5)), "-M", mode}
					if script == "upsert" {
						args = append(args, "-f", upsertFile)
					} else {
						args = append(args, "-b", script)
					}
					resetPeakRSS()
					sampler := startPSSSampler(postmaster)
					stopProfile := func() {}
					if *profile != "" && sys.name == "lakesoul" {
						if stopProfile, err = startCPUProfile(fmt.Sprintf("%s.%s-%s-%d", *profile, script, mode, c)); err != nil {
							return err
						}
					}
					run, err := runPgbench(ctx, pgbench, sys, filepath.Join(o.Dir, "oltp-log"), args)
					stopProfile()
					pss := sampler.stop()
					if err != nil {
						return fmt.Errorf("oltp %s %s -M %s, %d clients: %w", sys.name, script, mode, c, err)
					}
					st := run.windows(*windows)
					extra := map[string]any{"clients": c, "mode": mode, "failed": run.failed,
						"tps": round(st.tps), "p50_ms": round(st.p50), "p99_ms": round(st.p99),
						"window_tps": st.windowTPS, "window_p50_ms": st.windowP50, "window_p99_ms": st.windowP99}
					row := Row{Bench: "oltp", Phase: script, System: sys.name, Rows: int64(len(run.tx)),
						Seconds: st.seconds, RowsPerS: st.tps, Extra: extra}
					switch sys.name {
					case "postgres":
						pgTPS = st.tps
						row.PeakRSSMB = round(pss)
					case "lakesoul":
						row.PeakRSSMB = round(peakRSSSinceReset())
						extra["catalog_peak_pss_mb"] = round(pss)
						if pgTPS > 0 {
							extra["ratio_to_postgres"] = round(st.tps / pgTPS)
						}
						files, perBucket, err := bucketFiles(ctx, cat, catalog.DefaultNamespace, "pgbench_accounts")
						if err != nil {
							return err
						}
						extra["files"], extra["files_per_bucket_max"] = files, perBucket
					}
					o.Out.Emit(row)
				}
			}
		}
	}
	return nil
}

// PgbenchTableSQL creates pgbench's four tables and fills them for scale s
// as `pgbench -i -s s` would; keyed makes them lake tables with the keys
// and buckets of README's pgbench section (the same keys as pgbench -i's
// primary keys on heap tables).
func PgbenchTableSQL(s int, keyed bool) []string {
	with := func(b int) string {
		if keyed && b > 1 {
			return fmt.Sprintf(" WITH (hash_bucket_num = %d)", b)
		}
		return ""
	}
	return []string{
		"CREATE TABLE pgbench_branches (bid int PRIMARY KEY, bbalance int, filler char(88))" + with(1),
		"CREATE TABLE pgbench_tellers (tid int PRIMARY KEY, bid int, tbalance int, filler char(84))" + with(2),
		"CREATE TABLE pgbench_accounts (aid int PRIMARY KEY, bid int, abalance int, filler char(84))" + with(4*s),
		"CREATE TABLE pgbench_history (tid int, bid int, aid int, delta int, mtime timestamp, filler char(22))",
		fmt.Sprintf("INSERT INTO pgbench_branches SELECT g, 0, '' FROM generate_series(1, %d) g", s),
		fmt.Sprintf("INSERT INTO pgbench_tellers SELECT g, (g - 1) / 10 + 1, 0, '' FROM generate_series(1, %d) g", 10*s),
		fmt.Sprintf("INSERT INTO pgbench_accounts SELECT g, (g - 1) / 100000 + 1, 0, '' FROM generate_series(1, %d) g", 100000*s),
	}
}

func (s oltpSystem) exec(ctx context.Context, stmts []string) error {
	c, err := pgx.Connect(ctx, s.connString())
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	for _, q := range stmts {
		if _, err := c.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

func (s oltpSystem) connString() string {
	return fmt.Sprintf("host='%s' port=%s user='%s' password='%s' dbname='%s' sslmode=disable", s.host, s.port, s.user, s.pass, s.db)
}

// benchPostgresDB creates (again) a database for a PostgreSQL peer on the
// catalog's server and returns its URL.
func benchPostgresDB(ctx context.Context, catalogURL, name string) (string, error) {
	admin, err := pgx.Connect(ctx, catalogURL)
	if err != nil {
		return "", err
	}
	defer admin.Close(ctx)
	ident := pgx.Identifier{name}.Sanitize()
	_, _ = admin.Exec(ctx, "DROP DATABASE IF EXISTS "+ident)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+ident); err != nil {
		return "", err
	}
	cfg, err := pgx.ParseConfig(catalogURL)
	if err != nil {
		return "", err
	}
	cfg.Database = name
	return cfg.ConnString(), nil
}

// FindPgbench finds PostgreSQL's pgbench next to the server binaries, in
// Debian's versioned directories, or on PATH.
func FindPgbench() (string, error) {
	var dirs []string
	if bin, err := pgcluster.FindBinDir(""); err == nil {
		dirs = append(dirs, bin)
	}
	versioned, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	dirs = append(dirs, versioned...)
	for _, d := range dirs {
		if p := filepath.Join(d, "pgbench"); fileExists(p) {
			return p, nil
		}
	}
	if p, err := exec.LookPath("pgbench"); err == nil {
		return p, nil
	}
	return "", errors.New("pgbench not found (it comes with PostgreSQL's server package)")
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// bucketFiles counts a table's live files, in all and in its fullest bucket.
func bucketFiles(ctx context.Context, cat *catalog.Catalog, namespace, name string) (int, int, error) {
	t, err := cat.TableByName(ctx, namespace, name)
	if err != nil {
		return 0, 0, err
	}
	parts, err := cat.LiveFiles(ctx, t.ID, nil)
	if err != nil {
		return 0, 0, err
	}
	files, most := 0, 0
	per := map[string]int{}
	for _, p := range parts {
		for _, f := range p.Files {
			files++
			b, _ := layout.BucketOfFile(f.Path)
			k := p.Desc + "\x00" + strconv.Itoa(b)
			per[k]++
			most = max(most, per[k])
		}
	}
	return files, most, nil
}
