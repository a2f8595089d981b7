package tests

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// diffPipelines are sent as one pgx batch each (Parse, Bind, Execute per
// statement, one Sync) to lakesoul and to PostgreSQL, on a table pl.t of
// its own (pl.t0, pl.t1, …: no prepared statement outlives its table);
// each statement's outcome and the table afterwards must agree.
var diffPipelines = [][]string{
	{"INSERT INTO pl.t VALUES (1, 'a')", "INSERT INTO pl.t VALUES (2, 'b')", "INSERT INTO pl.t VALUES (3, 'c' || (10 / 0::int))"},
	{"INSERT INTO pl.t VALUES (1, 'a')", "INSERT INTO pl.t VALUES (2, 'b')", "UPDATE pl.t SET v = 'z' WHERE id = 1"},
	{"INSERT INTO pl.t VALUES (1, 'a')", "ALTER TABLE pl.t ADD COLUMN c int", "SELECT 1 / 0::int"},
	{"INSERT INTO pl.t VALUES (1, 'a')", "DELETE FROM pl.t WHERE id = 1", "INSERT INTO pl.t VALUES (2, 'b')"},
	{"VACUUM pl.t", "INSERT INTO pl.t VALUES (1, 'a')"},
	{"VACUUM pl.t", "VACUUM pl.t", "INSERT INTO pl.t VALUES (1, 'a')"},
	{"INSERT INTO pl.t VALUES (1, 'a')", "VACUUM pl.t"},
	{"INSERT INTO pl.t VALUES (1, 'a')", "COMMIT", "INSERT INTO pl.t VALUES (2, 'b' || (1 / 0::int))"},
	{"INSERT INTO pl.t VALUES (1, 'a')", "ROLLBACK", "INSERT INTO pl.t VALUES (2, 'b')"},
	{"INSERT INTO pl.t VALUES (1, 'a')", "BEGIN", "INSERT INTO pl.t VALUES (2, 'b')", "COMMIT"},
	{"BEGIN", "INSERT INTO pl.t VALUES (1, 'a')", "ROLLBACK", "INSERT INTO pl.t VALUES (2, 'b')"},
	{"INSERT INTO pl.t VALUES (1, 'a')", "SAVEPOINT s", "INSERT INTO pl.t VALUES (2, 'b')"},
	{"LOCK TABLE pl.t IN ACCESS SHARE MODE", "INSERT INTO pl.t VALUES (1, 'a')"},
	{"INSERT INTO pl.t VALUES (1, 'a')", "DECLARE c CURSOR FOR SELECT * FROM pl.t"},
	{"INSERT INTO pl.t VALUES (1, 'a')", "SET LOCAL search_path = pl", "SHOW search_path"},
}

// TestDifferentialPipelines compares pipelines (pgx batches) on lakesoul
// and on PostgreSQL: statement by statement (command tag or SQLSTATE) and
// the table's rows and columns after the Sync.
func TestDifferentialPipelines(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	lake := srv.connect(t)
	ref := srv.referenceDB(t, "pipref")
	for _, c := range []*pgx.Conn{lake, ref} {
		mustExec(t, ctx, c, "CREATE SCHEMA pl")
	}
	run := func(c *pgx.Conn, i int, stmts []string) string {
		table := fmt.Sprintf("pl.t%d", i)
		for _, q := range []string{"CREATE TABLE " + table + " (id int PRIMARY KEY, v text)"} {
			if _, err := c.Exec(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		b := &pgx.Batch{}
		for _, q := range stmts {
			b.Queue(strings.ReplaceAll(q, "pl.t", table))
		}
		br := c.SendBatch(ctx, b)
		var out []string
		for range stmts {
			tag, err := br.Exec()
			if err != nil {
				out = append(out, "ERROR "+pgCode(err))
				t.Logf("%s: %v", table, err)
			} else {
				out = append(out, tag.String())
			}
		}
		_ = br.Close()
		out = append(out, fmt.Sprintf("status %c", c.PgConn().TxStatus()))
		if c.PgConn().TxStatus() != 'I' {
			if _, err := c.Exec(ctx, "ROLLBACK"); err != nil {
				t.Fatal(err)
			}
		}
		rows, err := textResult(ctx, c, "SELECT * FROM "+table+" ORDER BY id")
		if err != nil {
			rows = "ERROR " + pgCode(err)
		}
		return strings.Join(out, "; ") + "\n" + rows
	}
	for i, stmts := range diffPipelines {
		if got, want := run(lake, i, stmts), run(ref, i, stmts); got != want {
			t.Errorf("pipeline %q:\nlakesoul: %s\npostgres: %s", stmts, got, want)
		}
	}
}
