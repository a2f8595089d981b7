package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// BenchmarkKeyedTableScan reads a lineitem-like table of 1 M rows written
// by one INSERT, keyed on (l_orderkey, l_linenumber) with one bucket and
// as an append table, through the engine: count(*), TPC-H Q1's, Q6's and
// Q19's shapes (an OR of conjunctions), Q6 and Q19 also with the table
// behind OFFSET 0, where no filter reaches the scan. The keyed table's one file is streamed without merging and read
// by row group in parallel (reader/unitplan.go); the append table is the
// peer. cpu-ns/op is the process's CPU time per query (the reader's and
// DuckDB's, user and system), which a loaded machine disturbs less than the
// wall time.
func BenchmarkKeyedTableScan(b *testing.B) {
	b.Setenv("LAKESOUL_POISON_FREED", "") // poison_test.go: timing without it
	s := newSessionAt(b, filepath.Join(b.TempDir(), "wh"))
	ctx := context.Background()
	exec := func(q string) {
		b.Helper()
		stmts, err := s.Parse(ctx, q, nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, st := range stmts {
			p, err := st.Bind(ctx, nil)
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := p.Execute(ctx, 0, countRows{}); err != nil {
				b.Fatal(err)
			}
			p.Close()
		}
	}
	const cols = `l_orderkey bigint, l_linenumber int, l_quantity numeric(15,2), l_extendedprice numeric(15,2),
		l_discount numeric(15,2), l_tax numeric(15,2), l_returnflag text, l_linestatus text, l_shipdate date, l_comment text`
	exec(`CREATE TABLE keyed (` + cols + `, PRIMARY KEY (l_orderkey, l_linenumber))`)
	exec(`CREATE TABLE plain (` + cols + `)`)
	for _, t := range []string{"keyed", "plain"} {
		exec(fmt.Sprintf(`INSERT INTO %s SELECT i / 4, (i %% 4)::int, (1 + i %% 50)::numeric(15,2), ((i * 7919) %% 100000 / 100.0)::numeric(15,2),
			((i %% 11) / 100.0)::numeric(15,2), ((i %% 9) / 100.0)::numeric(15,2), (ARRAY['A','N','R'])[1 + i %% 3], (ARRAY['F','O'])[1 + i %% 2],
			DATE '1992-01-01' + (i %% 2500)::int, 'comment ' || (i %% 10007)::text FROM range(1000000) AS r(i)`, t))
	}
	for _, t := range []string{"keyed", "plain"} {
		for _, q := range []struct{ name, sql string }{
			{"count", "SELECT count(*) FROM %s"},
			{"q1", `SELECT l_returnflag, l_linestatus, sum(l_quantity), sum(l_extendedprice), sum(l_extendedprice * (1 - l_discount)),
				sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)), avg(l_quantity), avg(l_discount), count(*)
				FROM %s WHERE l_shipdate <= DATE '1998-09-02' GROUP BY 1, 2 ORDER BY 1, 2`},
			{"q6", `SELECT sum(l_extendedprice * l_discount) FROM %s WHERE l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01'
				AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24`},
			{"q6-unpushed", `SELECT sum(l_extendedprice * l_discount) FROM (SELECT * FROM %s OFFSET 0) l WHERE l_shipdate >= DATE '1994-01-01'
				AND l_shipdate < DATE '1995-01-01' AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24`},
			{"q19", `SELECT sum(l_extendedprice * (1 - l_discount)) FROM %s WHERE (l_returnflag = 'A' AND l_linestatus = 'F' AND l_quantity >= 1 AND l_quantity <= 1 + 10)
				OR (l_returnflag = 'N' AND l_linestatus = 'F' AND l_quantity BETWEEN 10 AND 20)`},
			{"q19-unpushed", `SELECT sum(l_extendedprice * (1 - l_discount)) FROM (SELECT * FROM %s OFFSET 0) l WHERE (l_returnflag = 'A' AND l_linestatus = 'F'
				AND l_quantity >= 1 AND l_quantity <= 1 + 10) OR (l_returnflag = 'N' AND l_linestatus = 'F' AND l_quantity BETWEEN 10 AND 20)`},
		} {
			b.Run(t+"/"+q.name, func(b *testing.B) {
				sql := fmt.Sprintf(q.sql, t)
				start := processCPU()
				for b.Loop() {
					exec(sql)
				}
				b.ReportMetric(float64((processCPU()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// processCPU is the process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
