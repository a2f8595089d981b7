package bench

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// The ccf phases "agg" and "filter": an aggregate over every column,
// computed in the engine (one row comes back), and the rows matching a
// 0.2 % predicate on a non-key column (requests is uniform in [0, 100000)).
// Each runs --reads times (the row reports the median), then DuckDB
// answers the same query over its own dedup of the same files, timed by
// its profiler. Answers are compared: the aggregate's row, the filter's
// row count and checksum.

// ccfAggSelect aggregates every column of the table (or of DuckDB's dedup).
//
// sum is cast to bigint so both systems return the same Go type (PostgreSQL
// sums bigints as numeric, DuckDB as hugeint).
const ccfAggSelect = "SELECT count(*), min(uuid), max(ip), min(hostname), sum(requests)::bigint, max(name), min(city), max(job), min(phonenum) FROM "

// ccfFilterWhere selects 0.2 % of the rows.
const ccfFilterWhere = " WHERE requests < 200"

// scanPhase is one of the two phases: its name and the query over a
// relation (the lake table, or DuckDB's dedup in parentheses).
type scanPhase struct {
	name  string
	query func(from string) string
}

var scanPhases = []scanPhase{
	{"agg", func(from string) string { return ccfAggSelect + from }},
	{"filter", func(from string) string {
		return "SELECT " + strings.Join(ccfColumns, ", ") + " FROM " + from + ccfFilterWhere
	}},
}

// scanAnswer is what a phase's query answered: the aggregate's row as text,
// or the filter's rows and checksum.
type scanAnswer struct {
	rows int64
	sum  uint64
	text string
}

// ccfScanLake runs phase p's query on lake n times and emits its row; it
// returns the answer for the DuckDB peer to match.
func ccfScanLake(ctx context.Context, o Options, bench string, lake *pgx.Conn, p scanPhase, n int) (scanAnswer, error) {
	q := p.query("ccf.t")
	var ans scanAnswer
	resetPeakRSS()
	rs, err := repeatRead(n, func() (int64, uint64, error) {
		if p.name == "agg" {
			rows, err := lake.Query(ctx, q)
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
		}
		return checksumQuery(ctx, lake, q)
	})
	if err != nil {
		return ans, fmt.Errorf("%s: %w", p.name, err)
	}
	ans.rows, ans.sum = rs.rows, rs.sum
	r := Row{Bench: bench, Phase: p.name, System: "lakesoul", Rows: rs.rows, Seconds: rs.median,
		PeakRSSMB: peakRSSSinceReset(), Extra: map[string]any{"runs_s": rs.runs, "answers_agree": rs.agree}}
	if ans.text != "" {
		r.Extra["answer"] = strings.TrimSpace(ans.text)
	}
	o.Out.Emit(r)
	return ans, nil
}

// ccfScanDuckDB runs phase p's query in DuckDB over its dedup of files n
// times (DuckDB's profiler times each) and emits its row, with whether it
// answered as lakesoul did.
func ccfScanDuckDB(ctx context.Context, o Options, bench string, files []string, p scanPhase, n int, want scanAnswer) error {
	duck, err := openDuckPeer(ctx, o.Dir, p.name)
	if err != nil {
		return err
	}
	defer duck.Close()
	q := p.query("(" + duckDedupSQL(files, "") + ") d")
	var got scanAnswer
	resetPeakRSS()
	var lat []time.Duration
	for range n {
		var read func(*sql.Rows) error
		if p.name == "agg" {
			read = func(rows *sql.Rows) error {
				var err error
				got.text, err = sqlRowsAnswer(rows, writeExactRow)
				return err
			}
		} else {
			read = func(rows *sql.Rows) error {
				var err error
				got.rows, got.sum, err = checksumRows(rows)
				return err
			}
		}
		d, err := duck.query(ctx, read, q)
		if err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		lat = append(lat, d)
	}
	runs := make([]float64, len(lat))
	for i, d := range lat {
		runs[i] = d.Seconds()
	}
	if p.name == "agg" {
		got.rows = 1
	}
	r := Row{Bench: bench, Phase: p.name, System: "duckdb", Rows: got.rows, Seconds: medianOf(runs),
		PeakRSSMB: peakRSSSinceReset(), Extra: map[string]any{"runs_s": runs, "answers_match": got == want}}
	if got.text != "" {
		r.Extra["answer"] = strings.TrimSpace(got.text)
	}
	o.Out.Emit(r)
	return nil
}

// writeExactRow renders a row's values exactly ("|"-separated).
func writeExactRow(b *strings.Builder, vals []any) {
	for i, v := range vals {
		if i > 0 {
			b.WriteByte('|')
		}
		fmt.Fprint(b, v)
	}
	b.WriteByte('\n')
}

// sqlRowsAnswer renders rows with write.
func sqlRowsAnswer(rows *sql.Rows, write func(*strings.Builder, []any)) (string, error) {
	cols, err := rows.Columns()
	if err != nil {
		return "", err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var b strings.Builder
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return "", err
		}
		write(&b, vals)
	}
	return b.String(), rows.Err()
}
