package bench

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	_ "github.com/duckdb/duckdb-go/v2" // the DuckDB peer
	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/server"
	"github.com/lakesoul-go/lakesoul/writer"
)

func init() { Register("ccf", runCCF) }

// runCCF is LakeSoul's published upsert workload, with PostgreSQL
// (INSERT … ON CONFLICT into a heap table), DuckDB (dedup over the same Parquet
// files) and raw Parquet (the writer library alone) in the same run. Every
// system's final contents are checked against the checksum the generator
// predicts. After ingest, --phases picks what runs: point (keyed lookups,
// ccf_point.go) and read (the full read, then the peers).
func runCCF(ctx context.Context, o Options) error {
	fs := flag.NewFlagSet("ccf", flag.ContinueOnError)
	upserts := fs.Int("upserts", 10, "number of upsert batches")
	skip := fs.String("skip", "", "comma-separated systems to skip (postgres, duckdb, parquet-raw, flightsql)")
	readProfile := fs.String("read-cpuprofile", "", "write a CPU profile of lakesoul's full reads alone to this file (not with --cpuprofile)")
	flightProfile := fs.String("flight-cpuprofile", "", "write a CPU profile of the single-stream Flight SQL reads alone to this file (not with --cpuprofile)")
	reads := fs.Int("reads", 3, "times each system's full read runs (the row reports the median, runs_s every run)")
	phases := fs.String("phases", "point,agg,filter,read,ingest", "comma-separated phases to run after ingest (point, agg, filter, read; ingest adds DuckDB's ingest peer)")
	lookups := fs.Int("point-lookups", 1000, "lakesoul lookups per kind (present, absent keys) in the point phase")
	duckLookups := fs.Int("point-duckdb-lookups", 30, "DuckDB lookups per kind in the point phase (each reads every live file)")
	pointProfile := fs.String("point-cpuprofile", "", "write a CPU profile of lakesoul's measured lookups alone to this file")
	ingestProfile := fs.String("ingest-cpuprofile", "", "write CPU profiles of lakesoul's timed COPYs alone to FILE.0, FILE.1, … (one per batch; go tool pprof merges them)")
	codec := fs.String("codec", "", "compress lakesoul's data files with this Parquet codec (ZSTD, LZ4_RAW, SNAPPY, UNCOMPRESSED) instead of the writer's default")
	if err := fs.Parse(o.Args); err != nil {
		return err
	}
	w := newCCFWorkload(o.Scale, *upserts)
	if w.batch < 2 {
		return fmt.Errorf("ccf: scale %v is too small", o.Scale)
	}
	if *reads < 1 {
		return fmt.Errorf("ccf: --reads must be at least 1")
	}
	if *codec != "" {
		c, err := parseCodecs(*codec)
		if err != nil || len(c) != 1 {
			return fmt.Errorf("ccf: --codec %q: want one codec (%v)", *codec, err)
		}
		defer func(c compress.Compression) { writer.DataCodec = c }(writer.DataCodec)
		writer.DataCodec = c[0]
	}
	skipped := map[string]bool{}
	for _, s := range strings.Split(*skip, ",") {
		skipped[strings.TrimSpace(s)] = true
	}
	run := map[string]bool{}
	for _, p := range strings.Split(*phases, ",") {
		run[strings.TrimSpace(p)] = true
	}
	name := "ccf"
	if *upserts != 10 {
		name = fmt.Sprintf("ccf-upserts-%d", *upserts)
	}
	want, keys := w.expectedChecksum()
	fmt.Fprintf(o.Log, "ccf: %d base rows + %d × %d upserts = %d rows, %d keys\n", w.base, w.upserts, w.batch, w.totalRows(), keys)

	srv, err := server.Start(ctx, server.Config{
		DataDir: filepath.Join(o.Dir, "lakesoul"), Listen: "127.0.0.1:0", FlightListen: "127.0.0.1:0", AdminPassword: "bench",
		CatalogURL: o.CatalogURL, Announce: io.Discard,
		Logger: slog.New(slog.NewTextHandler(o.Log, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return err
	}
	defer srv.Close(context.WithoutCancel(ctx))
	// LakeSoul: COPY over pgwire, upserts on a 4-bucket PK table.
	if err := ccfIngest(ctx, o, name, srv, "lakesoul", w, nil, *ingestProfile); err != nil {
		return err
	}
	lake, err := connectBench(ctx, srv)
	if err != nil {
		return err
	}
	defer lake.Close(ctx)
	files, err := ccfFiles(ctx, srv.CatalogURL())
	if err != nil {
		return err
	}
	// Every lakesoul phase runs before any peer, so a phase's peak RSS is
	// the server's (the peers run in this process too).
	var answers map[string]string
	if run["point"] {
		if answers, err = ccfPointLake(ctx, o, name, lake, w, pointOptions{lookups: *lookups, profile: *pointProfile}); err != nil {
			return fmt.Errorf("point: %w", err)
		}
	}
	scanAnswers := map[string]scanAnswer{}
	for _, p := range scanPhases {
		if run[p.name] {
			if scanAnswers[p.name], err = ccfScanLake(ctx, o, name, lake, p, *reads); err != nil {
				return err
			}
		}
	}
	if run["read"] {
		if err := ccfReadLake(ctx, o, name, lake, want, keys, *reads, *readProfile); err != nil {
			return err
		}
		if !skipped["flightsql"] {
			if err := ccfFlight(ctx, o, name, srv, want, keys, *reads, *flightProfile); err != nil {
				return fmt.Errorf("flight sql read: %w", err)
			}
		}
	}
	if !skipped["duckdb"] {
		if run["point"] {
			if err := ccfPointDuckDB(ctx, o, name, files, w, *duckLookups, answers); err != nil {
				return fmt.Errorf("point: duckdb peer: %w", err)
			}
		}
		for _, p := range scanPhases {
			if run[p.name] {
				if err := ccfScanDuckDB(ctx, o, name, files, p, *reads, scanAnswers[p.name]); err != nil {
					return fmt.Errorf("duckdb peer: %w", err)
				}
			}
		}
		if run["read"] {
			if err := ccfDuckDB(ctx, o, name, files, want, keys, *reads); err != nil {
				return fmt.Errorf("duckdb peer: %w", err)
			}
		}
		if run["ingest"] {
			if err := ccfDuckDBIngest(ctx, o, name, w); err != nil {
				return fmt.Errorf("duckdb ingest peer: %w", err)
			}
		}
	}
	if !run["read"] {
		return nil
	}
	if !skipped["postgres"] {
		if err := ccfPostgres(ctx, o, name, srv.CatalogURL(), w, want, keys, *reads); err != nil {
			return fmt.Errorf("postgres peer: %w", err)
		}
	}
	if !skipped["parquet-raw"] {
		if err := ccfParquetRaw(ctx, o, name, w, *reads); err != nil {
			return fmt.Errorf("parquet-raw peer: %w", err)
		}
	}
	return nil
}

// ccfReadLake is lakesoul's full read: the count, then every row to the
// client, --reads times.
func ccfReadLake(ctx context.Context, o Options, name string, lake *pgx.Conn, want uint64, keys, reads int, profile string) error {
	resetPeakRSS()
	start := time.Now()
	var n int64
	if err := lake.QueryRow(ctx, "SELECT count(*) FROM ccf.t").Scan(&n); err != nil {
		return err
	}
	o.Out.Emit(Row{Bench: name, Phase: "read_count", System: "lakesoul", Rows: n, Seconds: time.Since(start).Seconds(),
		PeakRSSMB: peakRSSSinceReset(), Extra: map[string]any{"count_ok": n == int64(keys)}})
	stopProfile, err := startCPUProfile(profile)
	if err != nil {
		return err
	}
	resetPeakRSS()
	rs, err := repeatRead(reads, func() (int64, uint64, error) {
		return checksumQuery(ctx, lake, "SELECT "+strings.Join(ccfColumns, ", ")+" FROM ccf.t")
	})
	stopProfile()
	if err != nil {
		return err
	}
	r := rs.row(name, "lakesoul", want, keys)
	r.PeakRSSMB = peakRSSSinceReset()
	o.Out.Emit(r)
	return nil
}

// startCPUProfile starts a CPU profile into path ("" = none) and returns
// its stop function.
func startCPUProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// copyText renders batch b as COPY text.
func (w ccfWorkload) copyText(b int) []byte {
	var buf bytes.Buffer
	w.batchKeys(b, func(k int) { ccfMakeRow(k, b).writeText(&buf) })
	return buf.Bytes()
}

// copyBatch sends data with COPY … FROM STDIN.
func copyBatch(ctx context.Context, c *pgx.Conn, copySQL string, data []byte) error {
	_, err := c.PgConn().CopyFrom(ctx, bytes.NewReader(data), copySQL)
	return err
}

// checksumQuery materialises every row of query and sums the row checksums.
func checksumQuery(ctx context.Context, c *pgx.Conn, query string) (int64, uint64, error) {
	rows, err := c.Query(ctx, query)
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	return checksumRows(rows)
}

// ccfRows is what checksumRows needs of a result: pgx's and database/sql's
// rows both have it.
type ccfRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// checksumRows materialises every ccf row of rows and sums the row checksums.
// A pgx result is read as raw values, as a client that passes rows on (to a
// file, a socket, a columnar builder) reads them: the read then measures the
// server, not Go string conversions in the client sharing its two cores.
func checksumRows(rows ccfRows) (int64, uint64, error) {
	if pr, ok := rows.(pgx.Rows); ok {
		return checksumRawRows(pr)
	}
	var n int64
	var sum uint64
	var f [8]string
	var req int64
	for rows.Next() {
		if err := rows.Scan(&f[0], &f[1], &f[2], &req, &f[4], &f[5], &f[6], &f[7]); err != nil {
			return 0, 0, err
		}
		sum += rowChecksum(f[0], f[1], f[2], strconv.FormatInt(req, 10), f[4], f[5], f[6], f[7])
		n++
	}
	return n, sum, rows.Err()
}

// checksumRawRows is checksumRows over a pgx result's raw values: text,
// except that requests (bigint) may come in binary.
func checksumRawRows(rows pgx.Rows) (int64, uint64, error) {
	var n int64
	var sum uint64
	var h rowHasher
	var num []byte
	var fields [][]byte
	binaryReq := false
	if fds := rows.FieldDescriptions(); len(fds) == len(ccfColumns) {
		binaryReq = fds[3].Format == pgx.BinaryFormatCode
	}
	for rows.Next() {
		fields = append(fields[:0], rows.RawValues()...)
		vals := fields
		if len(vals) != len(ccfColumns) {
			return 0, 0, fmt.Errorf("ccf row of %d columns", len(vals))
		}
		if binaryReq {
			if len(vals[3]) != 8 {
				return 0, 0, fmt.Errorf("ccf requests of %d bytes in binary", len(vals[3]))
			}
			num = strconv.AppendInt(num[:0], int64(binary.BigEndian.Uint64(vals[3])), 10)
			vals[3] = num
		}
		sum += h.sum(vals)
		n++
	}
	return n, sum, rows.Err()
}

// ccfFiles returns the ccf table's live files in snapshot order (OS paths).
func ccfFiles(ctx context.Context, catalogURL string) ([]string, error) {
	return ccfFilesOf(ctx, catalogURL, "ccf", "t")
}

// ccfTableBytes is the size of the live data files of namespace.name, as
// the catalog records them.
func ccfTableBytes(ctx context.Context, catalogURL, namespace, name string) (int64, error) {
	cat, err := catalog.Open(ctx, catalogURL)
	if err != nil {
		return 0, err
	}
	defer cat.Close()
	t, err := cat.TableByName(ctx, namespace, name)
	if err != nil {
		return 0, err
	}
	parts, err := cat.LiveFiles(ctx, t.ID, nil)
	if err != nil {
		return 0, err
	}
	var size int64
	for _, p := range parts {
		for _, f := range p.Files {
			size += f.Size
		}
	}
	return size, nil
}

// ccfFilesOf returns a table's live files in snapshot order (OS paths).
func ccfFilesOf(ctx context.Context, catalogURL, namespace, name string) ([]string, error) {
	cat, err := catalog.Open(ctx, catalogURL)
	if err != nil {
		return nil, err
	}
	defer cat.Close()
	t, err := cat.TableByName(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	parts, err := cat.LiveFiles(ctx, t.ID, nil)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range parts {
		for _, f := range p.Files {
			lp, err := objstore.LocalPath(f.Path)
			if err != nil {
				return nil, fmt.Errorf("the ccf peers read local files: %w", err)
			}
			out = append(out, lp)
		}
	}
	return out, nil
}

// ccfDuckDB deduplicates the same Parquet files in DuckDB (duckDedupSQL)
// and reads every row through database/sql.
func ccfDuckDB(ctx context.Context, o Options, name string, files []string, want uint64, keys, reads int) error {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return err
	}
	defer db.Close()
	query := duckDedupSQL(files, "")
	resetPeakRSS()
	rs, err := repeatRead(reads, func() (int64, uint64, error) {
		rows, err := db.QueryContext(ctx, query)
		if err != nil {
			return 0, 0, err
		}
		defer rows.Close()
		return checksumRows(rows)
	})
	if err != nil {
		return err
	}
	r := rs.row(name, "duckdb", want, keys)
	r.PeakRSSMB = peakRSSSinceReset()
	o.Out.Emit(r)
	return nil
}

func quoteEach(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strings.ReplaceAll(s, "'", "''")
	}
	return out
}

// ccfPostgres is the PostgreSQL peer: COPY into a staging table, then
// INSERT … ON CONFLICT DO UPDATE into a heap table with the primary key.
func ccfPostgres(ctx context.Context, o Options, name, catalogURL string, w ccfWorkload, want uint64, keys, reads int) error {
	admin, err := pgx.Connect(ctx, catalogURL)
	if err != nil {
		return err
	}
	admin.Exec(ctx, "DROP DATABASE IF EXISTS ccf_pg")
	if _, err := admin.Exec(ctx, "CREATE DATABASE ccf_pg"); err != nil {
		admin.Close(ctx)
		return err
	}
	admin.Close(ctx)
	cfg, err := pgx.ParseConfig(catalogURL)
	if err != nil {
		return err
	}
	cfg.Database = "ccf_pg"
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	for _, q := range []string{
		"CREATE TABLE t (" + ccfCreateColumns + ", PRIMARY KEY (uuid))",
		"CREATE TABLE staging (" + ccfCreateColumns + ")",
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			return err
		}
	}
	var set []string
	for _, col := range ccfColumns[1:] {
		set = append(set, col+" = EXCLUDED."+col)
	}
	upsert := "INSERT INTO t SELECT * FROM staging ON CONFLICT (uuid) DO UPDATE SET " + strings.Join(set, ", ")
	var took time.Duration
	for b := 0; b <= w.upserts; b++ {
		data := w.copyText(b)
		start := time.Now()
		if err := copyBatch(ctx, c, "COPY staging FROM STDIN", data); err != nil {
			return err
		}
		if _, err := c.Exec(ctx, upsert); err != nil {
			return err
		}
		if _, err := c.Exec(ctx, "TRUNCATE staging"); err != nil {
			return err
		}
		took += time.Since(start)
	}
	o.Out.Emit(Row{Bench: name, Phase: "ingest", System: "postgres", Rows: w.totalRows(), Seconds: took.Seconds()})
	rs, err := repeatRead(reads, func() (int64, uint64, error) {
		return checksumQuery(ctx, c, "SELECT "+strings.Join(ccfColumns, ", ")+" FROM t")
	})
	if err != nil {
		return err
	}
	o.Out.Emit(rs.row(name, "postgres", want, keys))
	return nil
}

// ccfParquetRaw writes every generated row with the Parquet library alone (no
// hashing, sorting or catalog) and reads them back: the limit for the writer
// and the reader.
func ccfParquetRaw(ctx context.Context, o Options, name string, w ccfWorkload, reads int) error {
	dir := filepath.Join(o.Dir, "parquet-raw")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	fields := []arrow.Field{{Name: "uuid", Type: arrow.BinaryTypes.String}}
	for _, c := range ccfColumns[1:] {
		t := arrow.DataType(arrow.BinaryTypes.String)
		if c == "requests" {
			t = arrow.PrimitiveTypes.Int64
		}
		fields = append(fields, arrow.Field{Name: c, Type: t, Nullable: true})
	}
	sch := arrow.NewSchema(fields, nil)
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithDictionaryDefault(false),
		parquet.WithMaxRowGroupLength(128*1024))
	var took time.Duration
	var paths []string
	for b := 0; b <= w.upserts; b++ {
		recs := ccfRecords(sch, w, b)
		p := filepath.Join(dir, fmt.Sprintf("batch-%03d.parquet", b))
		start := time.Now()
		err := writeParquetFile(p, sch, props, recs)
		took += time.Since(start)
		for _, r := range recs {
			r.Release()
		}
		if err != nil {
			return err
		}
		paths = append(paths, p)
	}
	o.Out.Emit(Row{Bench: name, Phase: "ingest", System: "parquet-raw", Rows: w.totalRows(), Seconds: took.Seconds()})

	rs, err := repeatRead(reads, func() (int64, uint64, error) {
		var n int64
		for _, p := range paths {
			f, err := os.Open(p)
			if err != nil {
				return 0, 0, err
			}
			pf, err := file.NewParquetReader(f)
			if err != nil {
				f.Close()
				return 0, 0, err
			}
			fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 8192}, memory.DefaultAllocator)
			if err != nil {
				pf.Close()
				return 0, 0, err
			}
			rr, err := fr.GetRecordReader(ctx, nil, nil)
			if err != nil {
				pf.Close()
				return 0, 0, err
			}
			for rr.Next() {
				n += rr.RecordBatch().NumRows()
			}
			rr.Release()
			pf.Close()
		}
		return n, 0, nil
	})
	if err != nil {
		return err
	}
	o.Out.Emit(Row{Bench: name, Phase: "read", System: "parquet-raw", Rows: rs.rows, Seconds: rs.median,
		Extra: map[string]any{"runs_s": rs.runs}})
	return nil
}

// ccfRecords builds batch b as Arrow record batches of 64 Ki rows.
func ccfRecords(sch *arrow.Schema, w ccfWorkload, b int) []arrow.RecordBatch {
	rb := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer rb.Release()
	var out []arrow.RecordBatch
	rows := 0
	w.batchKeys(b, func(k int) {
		r := ccfMakeRow(k, b)
		rb.Field(0).(*array.StringBuilder).Append(r.uuid)
		rb.Field(1).(*array.StringBuilder).Append(r.ip)
		rb.Field(2).(*array.StringBuilder).Append(r.hostname)
		rb.Field(3).(*array.Int64Builder).Append(r.requests)
		rb.Field(4).(*array.StringBuilder).Append(r.name)
		rb.Field(5).(*array.StringBuilder).Append(r.city)
		rb.Field(6).(*array.StringBuilder).Append(r.job)
		rb.Field(7).(*array.StringBuilder).Append(r.phonenum)
		if rows++; rows%65536 == 0 {
			out = append(out, rb.NewRecordBatch())
		}
	})
	if rows%65536 != 0 {
		out = append(out, rb.NewRecordBatch())
	}
	return out
}

func writeParquetFile(path string, sch *arrow.Schema, props *parquet.WriterProperties, recs []arrow.RecordBatch) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	fw, err := pqarrow.NewFileWriter(sch, f, props, pqarrow.DefaultWriterProps())
	if err != nil {
		f.Close()
		return err
	}
	for _, r := range recs {
		if err := fw.WriteBuffered(r); err != nil {
			fw.Close()
			return err
		}
	}
	return fw.Close()
}

// ccfIngest creates the table on srv and ingests the workload by COPY.
func ccfIngest(ctx context.Context, o Options, name string, srv *server.Server, system string, w ccfWorkload,
	extra map[string]any, profile string) error {
	return ccfIngestInto(ctx, o, name, srv, system, "ccf", w, extra, profile)
}

// ccfIngestInto is ccfIngest into schema.t instead of ccf.t.
func ccfIngestInto(ctx context.Context, o Options, name string, srv *server.Server, system, schema string, w ccfWorkload,
	extra map[string]any, profile string) error {
	lake, err := connectBench(ctx, srv)
	if err != nil {
		return err
	}
	defer lake.Close(ctx)
	for _, q := range []string{"DROP SCHEMA IF EXISTS " + schema + " CASCADE", "CREATE SCHEMA " + schema,
		"CREATE TABLE " + schema + ".t (" + ccfCreateColumns + ", PRIMARY KEY (uuid)) WITH (hash_bucket_num = 4)"} {
		if _, err := lake.Exec(ctx, q); err != nil {
			return fmt.Errorf("setup %q: %w", q, err)
		}
	}
	var took, cpu time.Duration
	for b := 0; b <= w.upserts; b++ {
		data := w.copyText(b)
		stop, err := startBatchProfile(profile, b)
		if err != nil {
			return err
		}
		start, startCPU := time.Now(), processCPU()
		err = copyBatch(ctx, lake, "COPY "+schema+".t FROM STDIN", data)
		took, cpu = took+time.Since(start), cpu+processCPU()-startCPU
		stop()
		if err != nil {
			return fmt.Errorf("ingest batch %d: %w", b, err)
		}
	}
	if extra == nil {
		extra = map[string]any{}
	}
	extra["cpu_s"] = cpu.Seconds()
	size, err := ccfTableBytes(ctx, srv.CatalogURL(), schema, "t")
	if err != nil {
		return err
	}
	extra["size_mb"] = float64(size) / (1 << 20)
	o.Out.Emit(Row{Bench: name, Phase: "ingest", System: system, Rows: w.totalRows(), Seconds: took.Seconds(), Extra: extra})
	return nil
}

// startBatchProfile starts a CPU profile of ingest batch b into path.b
// (none when path is empty); the returned function stops it.
func startBatchProfile(path string, b int) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(fmt.Sprintf("%s.%d", path, b))
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// processCPU is the CPU time (user and system) this process has used so
// far: during an ingest, the in-process server's work and the client's
// sending of the COPY data.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func connectBench(ctx context.Context, srv *server.Server) (*pgx.Conn, error) {
	return pgx.Connect(ctx, fmt.Sprintf("postgres://lakesoul:bench@%s/lakesoul?sslmode=disable", srv.Addr()))
}

// readRuns is what repeatRead measured: the median time of the runs, every
// run's time (the first is the cold one, right after ingest), and the rows
// and checksum, which every run must agree on.
type readRuns struct {
	median float64
	runs   []float64
	rows   int64
	sum    uint64
	agree  bool
}

// repeatRead runs read n times. Reporting the median of several runs, the
// first included in runs_s, keeps one disturbed run on a small shared
// machine from deciding a comparison; every system's read is measured alike.
func repeatRead(n int, read func() (rows int64, sum uint64, err error)) (readRuns, error) {
	r := readRuns{agree: true}
	for i := range n {
		start := time.Now()
		rows, sum, err := read()
		if err != nil {
			return r, err
		}
		r.runs = append(r.runs, time.Since(start).Seconds())
		if i == 0 {
			r.rows, r.sum = rows, sum
		} else if rows != r.rows || sum != r.sum {
			r.agree = false
		}
	}
	r.median = medianOf(r.runs)
	return r, nil
}

// medianOf is the median of runs (the upper one of an even count).
func medianOf(runs []float64) float64 {
	if len(runs) == 0 {
		return 0
	}
	sorted := slices.Clone(runs)
	slices.Sort(sorted)
	return sorted[len(sorted)/2]
}

// row is the read row of system: checksum_ok requires every run to match
// the expected checksum and key count.
func (r readRuns) row(bench, system string, want uint64, keys int) Row {
	return Row{Bench: bench, Phase: "read", System: system, Rows: r.rows, Seconds: r.median,
		Extra: map[string]any{"checksum": strconv.FormatUint(r.sum, 16), "runs_s": r.runs,
			"checksum_ok": r.agree && r.sum == want && r.rows == int64(keys)}}
}
