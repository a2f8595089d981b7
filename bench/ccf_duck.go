package bench

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// DuckDB as the ccf peer: it deduplicates the table's live files itself
// (per key the row of the newest file; keys are unique within a file) and
// answers each phase's query over that, timed by its own profiler, so the
// time is DuckDB's work and not database/sql's transfer of the rows.

// duckDedupSQL is DuckDB's merge-on-read of files (in snapshot order): a
// query over the deduplicated rows, with where (if any) applied before the
// dedup — only a key predicate may go there.
func duckDedupSQL(files []string, where string) string {
	var values []string
	for i, f := range files {
		values = append(values, fmt.Sprintf("('%s', %d)", strings.ReplaceAll(f, "'", "''"), i))
	}
	if where != "" {
		where = "WHERE " + where
	}
	return fmt.Sprintf(`WITH seq(filename, n) AS (VALUES %s)
		SELECT %s FROM read_parquet(['%s'], filename = true) p JOIN seq USING (filename) %s
		QUALIFY row_number() OVER (PARTITION BY uuid ORDER BY seq.n DESC) = 1`,
		strings.Join(values, ", "), "p."+strings.Join(ccfColumns, ", p."), strings.Join(quoteEach(files), "', '"), where)
}

// duckPeer is a DuckDB database whose one connection profiles every query.
type duckPeer struct {
	db      *sql.DB
	profile string
}

// openDuckPeer opens an in-memory DuckDB that writes the JSON profile of
// each query into dir, with the Parquet metadata cache on.
func openDuckPeer(ctx context.Context, dir, name string) (*duckPeer, error) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1) // the profiling settings are per connection
	profile := filepath.Join(dir, "duckdb-"+name+"-profile.json")
	for _, q := range []string{"SET parquet_metadata_cache = true", "SET enable_profiling = 'json'",
		"SET profiling_output = '" + strings.ReplaceAll(profile, "'", "''") + "'"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			db.Close()
			return nil, fmt.Errorf("%s: %w", q, err)
		}
	}
	return &duckPeer{db: db, profile: profile}, nil
}

func (d *duckPeer) Close() error { return d.db.Close() }

// query runs q, hands its rows to read and returns DuckDB's own latency.
func (d *duckPeer) query(ctx context.Context, read func(*sql.Rows) error, q string, args ...any) (time.Duration, error) {
	rows, err := d.db.QueryContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	err = read(rows)
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	return profileLatency(d.profile)
}

// ccfDuckDBIngest is DuckDB writing the layout lakesoul writes, from the
// same COPY text: per batch, the rows parsed, hashed into 4 buckets and
// each bucket written as one Parquet file sorted by key (zstd level 1,
// 128 Ki-row row groups, as the lakesoul writer). Writing each batch's text
// to a file first is not timed.
func ccfDuckDBIngest(ctx context.Context, o Options, bench string, w ccfWorkload) error {
	dir := filepath.Join(o.Dir, "duckdb-ingest")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // the temp table lives on one connection
	var cols []string
	for _, c := range ccfColumns {
		t := "VARCHAR"
		if c == "requests" {
			t = "BIGINT"
		}
		cols = append(cols, fmt.Sprintf("'%s': '%s'", c, t))
	}
	resetPeakRSS()
	var took, cpu time.Duration
	for b := 0; b <= w.upserts; b++ {
		src := filepath.Join(dir, fmt.Sprintf("batch-%03d.tsv", b))
		if err := os.WriteFile(src, w.copyText(b), 0o644); err != nil {
			return err
		}
		start, startCPU := time.Now(), processCPU()
		stmts := []string{fmt.Sprintf(`CREATE OR REPLACE TEMP TABLE staged AS SELECT *, hash(uuid) %% 4 AS bucket
			FROM read_csv('%s', delim = '\t', header = false, quote = '', escape = '', columns = {%s})`, src, strings.Join(cols, ", "))}
		for k := range 4 {
			stmts = append(stmts, fmt.Sprintf(`COPY (SELECT %s FROM staged WHERE bucket = %d ORDER BY uuid)
				TO '%s' (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, ROW_GROUP_SIZE 131072)`,
				strings.Join(ccfColumns, ", "), k, filepath.Join(dir, fmt.Sprintf("part-%03d_%04d.parquet", b, k))))
		}
		for _, q := range stmts {
			if _, err := db.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("duckdb ingest batch %d: %w", b, err)
			}
		}
		took, cpu = took+time.Since(start), cpu+processCPU()-startCPU
		if err := os.Remove(src); err != nil {
			return err
		}
	}
	o.Out.Emit(Row{Bench: bench, Phase: "ingest", System: "duckdb", Rows: w.totalRows(), Seconds: took.Seconds(),
		PeakRSSMB: peakRSSSinceReset(), Extra: map[string]any{"cpu_s": cpu.Seconds()}})
	return nil
}
