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
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/lakesoul-go/lakesoul/server"
)

func init() { Register("query", runQuery) }

// queryCorpus are aggregate queries over the ccf table, written once in SQL
// that LakeSoul-Go, DuckDB and PostgreSQL all accept.
var queryCorpus = []struct{ name, sql string }{
	{"count", "SELECT count(*) FROM t"},
	{"sum_group_city", "SELECT city, count(*), sum(requests), avg(requests) FROM t GROUP BY city ORDER BY city"},
	{"filter_range", "SELECT count(*), max(requests) FROM t WHERE requests BETWEEN 1000 AND 2000"},
	{"distinct_job", "SELECT count(DISTINCT job) FROM t"},
	{"top_hosts", "SELECT hostname, requests FROM t ORDER BY requests DESC, hostname LIMIT 10"},
	{"like_name", "SELECT count(*) FROM t WHERE name LIKE 'Ada%'"},
}

// runQuery loads the ccf rows (base and upserts) into a LakeSoul PK table
// and a PostgreSQL heap table, then times each query of the corpus over
// pgwire (LakeSoul), on DuckDB reading the table's Parquet files directly
// (deduplicated as the ccf peer does), and on PostgreSQL. Answers are compared.
func runQuery(ctx context.Context, o Options) error {
	fs := flag.NewFlagSet("query", flag.ContinueOnError)
	repeat := fs.Int("repeat", 3, "runs per query (the fastest counts)")
	if err := fs.Parse(o.Args); err != nil {
		return err
	}
	w := newCCFWorkload(o.Scale, 10)
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
	for _, q := range []string{"DROP TABLE IF EXISTS t", "CREATE TABLE t (" + ccfCreateColumns + ", PRIMARY KEY (uuid)) WITH (hash_bucket_num = 4)"} {
		if _, err := lake.Exec(ctx, q); err != nil {
			return err
		}
	}
	admin, err := pgx.Connect(ctx, srv.CatalogURL())
	if err != nil {
		return err
	}
	admin.Exec(ctx, "DROP DATABASE IF EXISTS query_pg")
	if _, err := admin.Exec(ctx, "CREATE DATABASE query_pg"); err != nil {
		admin.Close(ctx)
		return err
	}
	admin.Close(ctx)
	cfg, err := pgx.ParseConfig(srv.CatalogURL())
	if err != nil {
		return err
	}
	cfg.Database = "query_pg"
	pg, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer pg.Close(ctx)
	var set []string
	for _, col := range ccfColumns[1:] {
		set = append(set, col+" = EXCLUDED."+col)
	}
	for _, q := range []string{"CREATE TABLE t (" + ccfCreateColumns + ", PRIMARY KEY (uuid))", "CREATE TABLE staging (" + ccfCreateColumns + ")"} {
		if _, err := pg.Exec(ctx, q); err != nil {
			return err
		}
	}
	for b := 0; b <= w.upserts; b++ {
		data := w.copyText(b)
		if err := copyBatch(ctx, lake, "COPY t FROM STDIN", data); err != nil {
			return err
		}
		if err := copyBatch(ctx, pg, "COPY staging FROM STDIN", data); err != nil {
			return err
		}
		if _, err := pg.Exec(ctx, "INSERT INTO t SELECT * FROM staging ON CONFLICT (uuid) DO UPDATE SET "+strings.Join(set, ", ")); err != nil {
			return err
		}
		if _, err := pg.Exec(ctx, "TRUNCATE staging"); err != nil {
			return err
		}
	}
	if _, err := pg.Exec(ctx, "VACUUM ANALYZE t"); err != nil {
		return err
	}
	files, err := ccfFilesOf(ctx, srv.CatalogURL(), "default", "t")
	if err != nil {
		return err
	}
	duck, err := sql.Open("duckdb", "")
	if err != nil {
		return err
	}
	defer duck.Close()
	var values []string
	for i, f := range files {
		values = append(values, fmt.Sprintf("('%s', %d)", strings.ReplaceAll(f, "'", "''"), i))
	}
	dedup := fmt.Sprintf(`CREATE VIEW t AS WITH seq(filename, n) AS (VALUES %s)
		SELECT %s FROM read_parquet(['%s'], filename = true) p JOIN seq USING (filename)
		QUALIFY row_number() OVER (PARTITION BY uuid ORDER BY seq.n DESC) = 1`,
		strings.Join(values, ", "), "p."+strings.Join(ccfColumns, ", p."), strings.Join(quoteEach(files), "', '"))
	if _, err := duck.ExecContext(ctx, dedup); err != nil {
		return err
	}

	rows := int64(w.finalKeys())
	for _, q := range queryCorpus {
		answers := map[string]string{}
		run := func(system string, f func() (string, error)) error {
			best := time.Duration(1<<63 - 1)
			var ans string
			for i := 0; i < *repeat; i++ {
				start := time.Now()
				a, err := f()
				if err != nil {
					return fmt.Errorf("%s %s: %w", system, q.name, err)
				}
				best = min(best, time.Since(start))
				ans = a
			}
			answers[system] = ans
			o.Out.Emit(Row{Bench: "query", Phase: q.name, System: system, Rows: rows, Seconds: best.Seconds(),
				Extra: map[string]any{"answer_matches_postgres": answers["postgres"] == "" || ans == answers["postgres"]}})
			return nil
		}
		if err := run("postgres", func() (string, error) { return pgxAnswer(ctx, pg, q.sql) }); err != nil {
			return err
		}
		if err := run("lakesoul", func() (string, error) { return pgxAnswer(ctx, lake, q.sql) }); err != nil {
			return err
		}
		if err := run("duckdb", func() (string, error) { return sqlAnswer(ctx, duck, q.sql) }); err != nil {
			return err
		}
	}
	return nil
}

// pgxAnswer renders a query's whole result as text (numbers rounded so
// float sums agree across engines).
func pgxAnswer(ctx context.Context, c *pgx.Conn, q string) (string, error) {
	rows, err := c.Query(ctx, q)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return "", err
		}
		writeAnswerRow(&b, vals)
	}
	return b.String(), rows.Err()
}

func sqlAnswer(ctx context.Context, db *sql.DB, q string) (string, error) {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	return sqlRowsAnswer(rows, writeAnswerRow)
}

func writeAnswerRow(b *strings.Builder, vals []any) {
	for i, v := range vals {
		if i > 0 {
			b.WriteByte('|')
		}
		if n, ok := v.(interface {
			Float64Value() (pgtype.Float8, error)
		}); ok {
			if f, err := n.Float64Value(); err == nil && f.Valid {
				v = f.Float64
			}
		}
		var f float64
		if _, err := fmt.Sscan(fmt.Sprint(v), &f); err == nil {
			fmt.Fprintf(b, "%.4g", f)
		} else {
			fmt.Fprint(b, v)
		}
	}
	b.WriteByte('\n')
}
