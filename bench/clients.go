package bench

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/server"
	"github.com/lakesoul-go/lakesoul/writer"
)

func init() { Register("clients", runClients) }

// clientsReadPy is the client program (bench/clients/read.py), run once per
// client under the engines' Python.
//
//go:embed clients/read.py
var clientsReadPy []byte

// clientSystems are the clients of `bench clients`, in the order they run.
var clientSystems = []string{"psycopg-read_sql", "adbc-postgresql", "adbc-flightsql", "adbc-flightsql-parallel", "lakesoul-python"}

// clientResult is what read.py prints.
type clientResult struct {
	Rows      int64   `json:"rows"`
	Seconds   float64 `json:"seconds"`
	PeakRSSMB float64 `json:"peak_rss_mb"`
	// CPUSeconds is the client process's CPU time (every thread's) over
	// the load.
	CPUSeconds float64 `json:"cpu_s"`
	// Endpoints is how many endpoints (partitions) the client read.
	Endpoints int     `json:"endpoints"`
	Checksum  []int64 `json:"checksum"`
}

// runClients loads the CCF table (ingested as `bench ccf` does) into a
// client's memory — a pandas DataFrame or an Arrow table — by each of
// clientSystems, in --reads rounds of one load each: time, CPU time and
// peak RSS of the client process, the server's CPU time and largest RSS
// while it read (CPU times hold better than wall times on a shared
// machine), and a checksum every client must agree on. The clients are Python programs under the
// engines' venv (scripts/test makes it; --python names another).
func runClients(ctx context.Context, o Options) error {
	fs := flag.NewFlagSet("clients", flag.ContinueOnError)
	home, _ := os.UserHomeDir()
	defPython := os.Getenv("LAKESOUL_ENGINES_PYTHON")
	if defPython == "" {
		defPython = filepath.Join(home, ".cache", "lakesoul", "engines-venv", "bin", "python")
	}
	python := fs.String("python", defPython, "the Python with the clients' packages (scripts/engines-requirements.txt)")
	upserts := fs.Int("upserts", 10, "upsert batches of the CCF table")
	reads := fs.Int("reads", 3, "rounds, each loading once by every client (the row reports the median, runs_s every run)")
	systems := fs.String("systems", strings.Join(clientSystems, ","), "clients to run")
	threads := fs.Int("threads", 4, "readers of adbc-flightsql-parallel's endpoints")
	profiles := fs.String("cpuprofile-reads", "", "write a CPU profile of the server while each client reads to DIR/<client>-<round>.pprof")
	codecList := fs.String("codecs", "", "compress the table's data files with each of these Parquet codecs in turn (ZSTD, LZ4_RAW, SNAPPY, UNCOMPRESSED), one copy of the table per codec, the clients reading the copies in turn; empty: the writer's default only")
	if err := fs.Parse(o.Args); err != nil {
		return err
	}
	if _, err := os.Stat(*python); err != nil {
		return fmt.Errorf("clients: no Python at %s (scripts/test makes the engines' venv; or --python): %w", *python, err)
	}
	w := newCCFWorkload(o.Scale, *upserts)
	if w.batch < 2 {
		return fmt.Errorf("clients: scale %v is too small", o.Scale)
	}
	script := filepath.Join(o.Dir, "clients-read.py")
	if err := os.WriteFile(script, clientsReadPy, 0o644); err != nil {
		return err
	}
	srv, err := server.Start(ctx, server.Config{
		DataDir: filepath.Join(o.Dir, "lakesoul"), Listen: "127.0.0.1:0", FlightListen: "127.0.0.1:0", AdminPassword: "bench",
		CatalogURL: o.CatalogURL, Announce: io.Discard,
		Logger: slog.New(slog.NewTextHandler(o.Log, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return err
	}
	defer srv.Close(context.WithoutCancel(ctx))
	codecs, err := parseCodecs(*codecList)
	if err != nil {
		return err
	}
	// One copy of the table per codec, each in its own schema.
	schemas := []string{"ccf"}
	if codecs != nil {
		defer func(c compress.Compression) { writer.DataCodec = c }(writer.DataCodec)
		schemas = schemas[:0]
		for _, c := range codecs {
			writer.DataCodec = c
			schema := "ccf_" + strings.ToLower(c.String())
			if err := ccfIngestInto(ctx, o, "clients", srv, "lakesoul "+c.String(), schema, w, map[string]any{"codec": c.String()}, ""); err != nil {
				return err
			}
			schemas = append(schemas, schema)
		}
	} else if err := ccfIngest(ctx, o, "clients", srv, "lakesoul", w, nil, ""); err != nil {
		return err
	}
	cat, err := pgx.ParseConfig(srv.CatalogURL())
	if err != nil {
		return err
	}
	cfg := map[string]any{
		"int_col": "requests", "text_col": "uuid",
		"pg":     fmt.Sprintf("postgresql://lakesoul:bench@%s/lakesoul?sslmode=disable", srv.Addr()),
		"flight": "grpc://" + srv.FlightAddr().String(), "user": "lakesoul", "password": "bench", "threads": *threads,
		// LakeSoul's metadata client takes libpq's keyword form; the
		// catalog's superuser, as LakeSoul's engines log in with their own.
		"catalog": fmt.Sprintf("host=%s port=%d dbname=%s user=%s password=unused",
			cat.Host, cat.Port, cat.Database, cat.User),
		"table": "t",
	}
	// Rounds: every client once per round, so that a load on the shared
	// machine that comes and goes falls on all of them alike.
	var names, rowSystems []string
	var rowSchemas []string
	// A client reads every copy before the next client runs, so that the
	// codecs' rows of one client are measured side by side.
	for _, client := range splitList(*systems) {
		for _, schema := range schemas {
			system := client
			names = append(names, system)
			rowSchemas = append(rowSchemas, schema)
			if codecs != nil {
				system += " " + strings.ToUpper(strings.TrimPrefix(schema, "ccf_"))
			}
			rowSystems = append(rowSystems, system)
		}
	}
	type tally struct {
		runs, serverCPU, clientCPU []float64
		last                       clientResult
		serverPeak                 float64
	}
	tallies := make([]tally, len(names))
	var first []int64
	var firstSystem string
	for round := range *reads {
		for i, system := range names {
			cfg["client"], cfg["namespace"], cfg["query"] = system, rowSchemas[i], "SELECT * FROM "+rowSchemas[i]+".t"
			arg, _ := json.Marshal(cfg)
			stopProfile, err := startReadProfile(*profiles, fmt.Sprintf("%s-%d", strings.ReplaceAll(rowSystems[i], " ", "-"), round+1))
			if err != nil {
				return err
			}
			cpu := cpuSeconds()
			res, peak, err := runClient(ctx, *python, script, string(arg))
			serverCPU := cpuSeconds() - cpu
			stopProfile()
			if err != nil {
				return fmt.Errorf("clients: %s: %w", rowSystems[i], err)
			}
			if first == nil {
				first, firstSystem = res.Checksum, rowSystems[i]
			} else if fmt.Sprint(res.Checksum) != fmt.Sprint(first) {
				return fmt.Errorf("clients: %s's checksum %v differs from %s's %v", rowSystems[i], res.Checksum, firstSystem, first)
			}
			t := &tallies[i]
			t.runs = append(t.runs, res.Seconds)
			t.serverCPU = append(t.serverCPU, serverCPU)
			t.clientCPU = append(t.clientCPU, res.CPUSeconds)
			t.last, t.serverPeak = res, max(t.serverPeak, peak)
		}
	}
	for i, system := range rowSystems {
		t := tallies[i]
		o.Out.Emit(Row{Bench: "clients", Phase: "read", System: system, Rows: t.last.Rows, Seconds: medianOf(t.runs),
			PeakRSSMB: t.last.PeakRSSMB, Extra: map[string]any{"runs_s": t.runs, "server_peak_rss_mb": t.serverPeak,
				"server_cpu_s": medianOf(t.serverCPU), "client_cpu_s": medianOf(t.clientCPU),
				"endpoints": t.last.Endpoints, "checksum": fmt.Sprint(t.last.Checksum)}})
	}
	return nil
}

// startReadProfile starts a CPU profile of this process (the server) into
// dir/<name>.pprof, stopped by the function it returns; with dir empty it
// does nothing.
func startReadProfile(dir, name string) (func(), error) {
	if dir == "" {
		return func() {}, nil
	}
	return startCPUProfile(filepath.Join(dir, name+".pprof"))
}

// runClient runs read.py once and returns what it printed and the largest
// RSS of this process (the server) while it ran.
func runClient(ctx context.Context, python, script, arg string) (clientResult, float64, error) {
	var res clientResult
	cmd := exec.CommandContext(ctx, python, script, arg)
	cmd.Env = append(os.Environ(), "RUST_LOG=error")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		return res, 0, err
	}
	done := make(chan struct{})
	peak := make(chan float64, 1)
	safego.Go(func() {
		var p float64
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			p = max(p, currentRSSMB())
			select {
			case <-done:
				peak <- p
				return
			case <-t.C:
			}
		}
	})
	err := cmd.Wait()
	close(done)
	serverPeak := <-peak
	if err != nil {
		return res, 0, fmt.Errorf("%v\n%s", err, stderr.String())
	}
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &res); err != nil {
		return res, 0, fmt.Errorf("read.py printed %q: %w", stdout.String(), err)
	}
	if len(res.Checksum) == 0 {
		return res, 0, errors.New("read.py printed no checksum")
	}
	return res, serverPeak, nil
}

// currentRSSMB is this process's resident set size now, in MiB (0 where
// /proc is missing).
func currentRSSMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// parseCodecs parses --codecs, Parquet codec names separated by commas
// (nil when list is empty).
func parseCodecs(list string) ([]compress.Compression, error) {
	var codecs []compress.Compression
	for _, name := range splitList(list) {
		var c compress.Compression
		if err := c.UnmarshalText([]byte(strings.ToUpper(name))); err != nil {
			return nil, fmt.Errorf("--codecs: %q: %w", name, err)
		}
		if _, err := compress.GetCodec(c); err != nil {
			return nil, fmt.Errorf("--codecs: %w", err)
		}
		codecs = append(codecs, c)
	}
	return codecs, nil
}
