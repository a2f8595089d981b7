package engine_test

import (
	"strings"
	"testing"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Append tables are read through lakesoul_scan (files and row groups in
// parallel): partitions become constants, columns added later read NULL
// from older files, widened types read as the new type, filters apply,
// and count(*) counts rows from the footers; DuckDB's file functions are
// not a way around it.
func TestAppendTableScan(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE ev (n int, msg text, d date) PARTITION BY LIST (d)`)
	mustRun(t, s, `INSERT INTO ev VALUES (1, 'a', '2026-01-01'), (2, 'b', '2026-01-02'), (3, NULL, NULL)`)
	mustRun(t, s, `ALTER TABLE ev ADD COLUMN extra text`)
	mustRun(t, s, `ALTER TABLE ev ALTER COLUMN n TYPE bigint`)
	mustRun(t, s, `INSERT INTO ev VALUES (5000000000, 'c', '2026-01-01', 'x')`)
	expectRows(t, s, "SELECT n, msg, d IS NULL, extra FROM ev ORDER BY n",
		"1|a|false|NULL", "2|b|false|NULL", "3|NULL|true|NULL", "5000000000|c|false|x")
	expectRows(t, s, "SELECT count(*) FROM ev WHERE d = DATE '2026-01-01'", "2")
	expectRows(t, s, "SELECT sum(n) FROM ev e JOIN ev f USING (n) WHERE e.msg <> 'b'", "5000000001")
	expectRows(t, s, "SELECT count(*) FROM ev", "4")
	expectRows(t, s, "SELECT count(*) FROM ev WHERE EXISTS (SELECT 1 FROM ev e2 WHERE e2.n = 2)", "4")
	expectRows(t, s, "SELECT count(*), count(n) FROM ev", "4|4")
	expectRows(t, s, "SELECT n FROM ev WHERE n > 2 ORDER BY n", "3", "5000000000")
	mustRun(t, s, `CREATE TABLE empty (x int)`)
	expectRows(t, s, "SELECT count(*) FROM empty", "0")

	// A file of several row groups is read as one unit per row group,
	// every row once, the file counted once.
	mustRun(t, s, `CREATE TABLE big (i bigint, s text)`)
	mustRun(t, s, `INSERT INTO big SELECT i, md5(i::text) || md5((i + 1)::text) FROM range(300000) AS r(i)`)
	expectRows(t, s, "SELECT count(*), sum(i), count(DISTINCT s), count(s) FROM big", "300000|44999850000|300000|300000")
	if rows := mustRun(t, s, "SELECT s FROM big"); len(rows) != 300000 {
		t.Errorf("SELECT s FROM big: %d rows", len(rows))
	}
	plan := strings.Join(mustRun(t, s, "EXPLAIN ANALYZE SELECT sum(i) FROM big"), "\n")
	for _, want := range []string{"Files Read: 1 of 1", "Row Groups Read: 3 of", "Rows: 300000 read from files"} {
		if !strings.Contains(plan, want) {
			t.Errorf("EXPLAIN ANALYZE lacks %q:\n%s", want, plan)
		}
	}

	for _, q := range []string{
		"SELECT * FROM ev, read_parquet('/etc/passwd') p",
		"SELECT * FROM ev, read_csv('/etc/passwd') p",
		"SELECT * FROM ev, lakesoul_scan('x:y') p",
	} {
		if _, err := run(t, s, q); sqlerr.Code(err) != sqlerr.UndefinedFunction {
			t.Errorf("%s: got %v, want 42883", q, err)
		}
	}
	expectRows(t, s, "SELECT count(*) FROM ev, generate_series(1, 2) g", "8")
}
