package engine_test

import (
	"testing"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Append tables are read by DuckDB's own Parquet scan: partitions become
// constants, columns added later read NULL from older files, widened types
// read as the new type, and filters apply.
func TestNativeScanOfAppendTables(t *testing.T) {
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
	mustRun(t, s, `CREATE TABLE empty (x int)`)
	expectRows(t, s, "SELECT count(*) FROM empty", "0")

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
