package bench

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/server"
)

func init() { Register("append", runAppend) }

// appendPhases are the queries over a large append table (no primary key,
// so no merge: its rows are the concatenation of its files): a count, an
// aggregate over every column, a 0.2 % filter on a non-key column and the
// full read of every row to the client.
var appendPhases = []struct{ name, sql string }{
	{"count", "SELECT count(*) FROM %s"},
	{"agg", ccfAggSelect + "%s"},
	{"filter", "SELECT " + strings.Join(ccfColumns, ", ") + " FROM %s" + ccfFilterWhere},
	{"read", "SELECT " + strings.Join(ccfColumns, ", ") + " FROM %s"},
}

// runAppend loads every ccf row (base and upsert batches, each batch one
// COPY, so one file per batch) into an append table and times each phase's
// query over pgwire, then DuckDB answering the same query over the same
// Parquet files with its own reader (timed by its profiler). Answers are
// compared: aggregate rows exactly, row sets by count and checksum.
func runAppend(ctx context.Context, o Options) error {
	fs := flag.NewFlagSet("append", flag.ContinueOnError)
	reads := fs.Int("reads", 3, "times each query runs (the row reports the median, runs_s every run)")
	skip := fs.String("skip", "", "comma-separated systems to skip (duckdb)")
	if err := fs.Parse(o.Args); err != nil {
		return err
	}
	if *reads < 1 {
		return fmt.Errorf("append: --reads must be at least 1")
	}
	w := newCCFWorkload(o.Scale, 10)
	if w.batch < 2 {
		return fmt.Errorf("append: scale %v is too small", o.Scale)
	}
	fmt.Fprintf(o.Log, "append: %d rows in %d files\n", w.totalRows(), w.upserts+1)
	srv, err := server.Start(ctx, server.Config{
		DataDir: filepath.Join(o.Dir, "lakesoul"), Listen: "127.0.0.1:0", AdminPassword: "bench",
		CatalogURL: o.CatalogURL, Announce: io.Discard,
		Logger: slog.New(slog.NewTextHandler(o.Log, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return err
	}
	defer srv.Close(context.WithoutCancel(ctx))
	lake, err := connectBench(ctx, srv)
	if err != nil {
		return err
	}
	defer lake.Close(ctx)
	for _, q := range []string{"DROP SCHEMA IF EXISTS app CASCADE", "CREATE SCHEMA app", "CREATE TABLE app.t (" + ccfCreateColumns + ")"} {
		if _, err := lake.Exec(ctx, q); err != nil {
			return fmt.Errorf("setup %q: %w", q, err)
		}
	}
	var took time.Duration
	for b := 0; b <= w.upserts; b++ {
		data := w.copyText(b)
		start := time.Now()
		if err := copyBatch(ctx, lake, "COPY app.t FROM STDIN", data); err != nil {
			return fmt.Errorf("ingest batch %d: %w", b, err)
		}
		took += time.Since(start)
	}
	o.Out.Emit(Row{Bench: "append", Phase: "ingest", System: "lakesoul", Rows: w.totalRows(), Seconds: took.Seconds()})
	files, err := ccfFilesOf(ctx, srv.CatalogURL(), "app", "t")
	if err != nil {
		return err
	}
	answers := map[string]scanAnswer{}
	for _, p := range appendPhases {
		ans, row, err := appendLake(ctx, lake, p.name, fmt.Sprintf(p.sql, "app.t"), *reads)
		if err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		answers[p.name] = ans
		o.Out.Emit(row)
	}
	if strings.Contains(","+*skip+",", ",duckdb,") {
		return nil
	}
	from := "read_parquet(['" + strings.Join(quoteEach(files), "', '") + "'])"
	for _, p := range appendPhases {
		row, err := appendDuckDB(ctx, o, p.name, fmt.Sprintf(p.sql, from), *reads, answers[p.name])
		if err != nil {
			return fmt.Errorf("duckdb %s: %w", p.name, err)
		}
		o.Out.Emit(row)
	}
	return nil
}

// appendLake runs query n times over pgwire and returns its answer and row.
func appendLake(ctx context.Context, lake *pgx.Conn, phase, query string, n int) (scanAnswer, Row, error) {
	var ans scanAnswer
	resetPeakRSS()
	rs, err := repeatRead(n, func() (int64, uint64, error) {
		if phase == "filter" || phase == "read" {
			return checksumQuery(ctx, lake, query)
		}
		rows, err := lake.Query(ctx, query)
		if err != nil {
			return 0, 0, err
		}
		defer rows.Close()
		var b strings.Builder
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				return 0, 0, err
			}
			writeExactRow(&b, vals)
		}
		ans.text = b.String()
		return 1, 0, rows.Err()
	})
	if err != nil {
		return ans, Row{}, err
	}
	ans.rows, ans.sum = rs.rows, rs.sum
	r := Row{Bench: "append", Phase: phase, System: "lakesoul", Rows: rs.rows, Seconds: rs.median,
		PeakRSSMB: peakRSSSinceReset(), Extra: map[string]any{"runs_s": rs.runs, "runs_agree": rs.agree}}
	if ans.text != "" {
		r.Extra["answer"] = strings.TrimSpace(ans.text)
	}
	return ans, r, nil
}

// appendDuckDB runs query n times in DuckDB (its profiler times each) and
// returns its row, with whether it answered as lakesoul did.
func appendDuckDB(ctx context.Context, o Options, phase, query string, n int, want scanAnswer) (Row, error) {
	duck, err := openDuckPeer(ctx, o.Dir, "append-"+phase)
	if err != nil {
		return Row{}, err
	}
	defer duck.Close()
	var got scanAnswer
	resetPeakRSS()
	var runs []float64
	for range n {
		read := func(rows *sql.Rows) error {
			var err error
			got.rows, got.sum, err = checksumRows(rows)
			return err
		}
		if phase == "count" || phase == "agg" {
			read = func(rows *sql.Rows) error {
				var err error
				got.text, err = sqlRowsAnswer(rows, writeExactRow)
				got.rows = 1
				return err
			}
		}
		d, err := duck.query(ctx, read, query)
		if err != nil {
			return Row{}, err
		}
		runs = append(runs, d.Seconds())
	}
	r := Row{Bench: "append", Phase: phase, System: "duckdb", Rows: got.rows, Seconds: medianOf(runs),
		PeakRSSMB: peakRSSSinceReset(), Extra: map[string]any{"runs_s": runs, "answers_match": got == want}}
	if got.text != "" {
		r.Extra["answer"] = strings.TrimSpace(got.text)
	}
	return r, nil
}
