package engine_test

import (
	"testing"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// ROLLBACK TO undoes the writes and DDL after its savepoint, and only them,
// and makes a failed block usable again; RELEASE keeps them; the block
// commits what is left.
func TestSavepoints(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE p (id int PRIMARY KEY, v text)`)
	mustRun(t, s, `CREATE TABLE a (x int)`)
	mustRun(t, s, "BEGIN")
	mustRun(t, s, `INSERT INTO p VALUES (1, 'one')`)
	wantTag(t, s, "SAVEPOINT s1", "SAVEPOINT")
	mustRun(t, s, `INSERT INTO p VALUES (2, 'two')`)
	mustRun(t, s, `UPDATE p SET v = 'ONE' WHERE id = 1`)
	mustRun(t, s, `INSERT INTO a VALUES (10)`)
	expectRows(t, s, `SELECT id, v FROM p ORDER BY id`, "1|ONE", "2|two")
	wantTag(t, s, "ROLLBACK TO SAVEPOINT s1", "ROLLBACK")
	expectRows(t, s, `SELECT id, v FROM p ORDER BY id`, "1|one")
	expectRows(t, s, `SELECT count(*) FROM a`, "0")
	// An error, then ROLLBACK TO: the block goes on (psql ON_ERROR_ROLLBACK).
	mustRun(t, s, "SAVEPOINT s2")
	mustRun(t, s, `INSERT INTO a VALUES (1), (2)`)
	mustRun(t, s, `DELETE FROM a WHERE x = 1`) // copy-on-write: supersedes the staged append
	wantCode(t, s, `SELECT 1/0 FROM a`, "22012")
	wantCode(t, s, `SELECT 1`, sqlerr.InFailedSQLTransaction)
	mustRun(t, s, "ROLLBACK TO s2")
	expectRows(t, s, `SELECT count(*) FROM a`, "0")
	// DDL after a savepoint rolls back with it; DDL before stays.
	mustRun(t, s, `CREATE TABLE d1 (x int)`)
	mustRun(t, s, "SAVEPOINT s3")
	mustRun(t, s, `CREATE TABLE d2 (x int)`)
	mustRun(t, s, `DROP TABLE a`)
	mustRun(t, s, "ROLLBACK TO SAVEPOINT s3")
	wantCode(t, s, `SELECT * FROM d2`, sqlerr.UndefinedTable)
	mustRun(t, s, "ROLLBACK TO s3")
	expectRows(t, s, `SELECT count(*) FROM d1`, "0")
	mustRun(t, s, `INSERT INTO a VALUES (3)`)
	mustRun(t, s, "SAVEPOINT s4")
	mustRun(t, s, `INSERT INTO p VALUES (4, 'four')`)
	wantTag(t, s, "RELEASE SAVEPOINT s4", "RELEASE")
	wantCode(t, s, "ROLLBACK TO s4", sqlerr.InvalidSavepointSpec)
	mustRun(t, s, "ROLLBACK TO s1") // the failed ROLLBACK TO failed the block; s1 still exists
	mustRun(t, s, `INSERT INTO p VALUES (5, 'five')`)
	wantTag(t, s, "COMMIT", "COMMIT")
	expectRows(t, s, `SELECT id, v FROM p ORDER BY id`, "1|one", "5|five")
	expectRows(t, s, `SELECT count(*) FROM a`, "0")
	wantCode(t, s, `SELECT * FROM d1`, sqlerr.UndefinedTable) // created after s1
	wantCode(t, s, "SAVEPOINT x", sqlerr.NoActiveSQLTransaction)
}

// PREPARE / EXECUTE / DEALLOCATE as SQL: arguments take the declared types;
// a writing statement executes each time; names are checked.
func TestPrepareExecute(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE p (id int PRIMARY KEY, v text)`)
	wantTag(t, s, `PREPARE ins (int, text) AS INSERT INTO p VALUES ($1, $2)`, "PREPARE")
	wantTag(t, s, `EXECUTE ins(1, 'one')`, "INSERT 0 1")
	wantTag(t, s, `EXECUTE ins('2', 'two')`, "INSERT 0 1")
	mustRun(t, s, `PREPARE q AS SELECT v FROM p WHERE id = $1`)
	expectRows(t, s, `EXECUTE q(2)`, "two")
	wantCode(t, s, `EXECUTE q(1, 2)`, sqlerr.SyntaxError)
	wantCode(t, s, `PREPARE q AS SELECT 1`, sqlerr.DuplicatePreparedStatement)
	wantTag(t, s, `DEALLOCATE q`, "DEALLOCATE")
	wantCode(t, s, `EXECUTE q(1)`, sqlerr.InvalidSQLStatementName)
	wantCode(t, s, `EXECUTE ins('x', 'bad')`, sqlerr.InvalidTextRepresentation)
	expectRows(t, s, `SELECT id, v FROM p ORDER BY id`, "1|one", "2|two")
}

// CREATE TABLE … AS and SELECT … INTO create a table of the query's columns
// and rows in one commit: a failing query leaves no table; WITH NO DATA
// makes it empty; inside a block it rolls back with the block.
func TestCreateTableAs(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE src (id int PRIMARY KEY, k varchar(5), v numeric(10,2), d date)`)
	mustRun(t, s, `INSERT INTO src VALUES (1, 'a', 1.5, '2026-01-01'), (2, 'b', 2.25, '2026-01-02')`)
	wantTag(t, s, `CREATE TABLE c1 AS SELECT id, k, v * 2 AS v2, d FROM src WHERE id > 0`, "SELECT 2")
	expectRows(t, s, `SELECT id, k, v2 FROM c1 ORDER BY id`, "1|a|3.00", "2|b|4.50")
	wantTag(t, s, `SELECT id AS n, upper(k) AS u INTO c2 FROM src`, "SELECT 2")
	expectRows(t, s, `SELECT n, u FROM c2 ORDER BY n`, "1|A", "2|B")
	wantTag(t, s, `CREATE TABLE c3 (a, b) AS VALUES (1, 'x') WITH NO DATA`, "SELECT 0")
	expectRows(t, s, `SELECT count(*) FROM c3`, "0")
	wantCode(t, s, `CREATE TABLE c4 AS SELECT id / (id - 1) AS q FROM src`, "22012")
	wantCode(t, s, `SELECT * FROM c4`, sqlerr.UndefinedTable)
	mustRun(t, s, "BEGIN")
	mustRun(t, s, `CREATE TABLE c5 AS SELECT id FROM src`)
	expectRows(t, s, `SELECT count(*) FROM c5`, "2")
	mustRun(t, s, "ROLLBACK")
	wantCode(t, s, `SELECT * FROM c5`, sqlerr.UndefinedTable)
	wantCode(t, s, `CREATE TABLE c1 AS SELECT 1 AS x`, sqlerr.DuplicateTable)
	expectRows(t, s, `SELECT count(*) FROM c1`, "2")
}

// Views are stored in the catalog and expanded where they are named: joins,
// filters, views of views, OR REPLACE, DROP; pg_views and
// information_schema list them.
func TestViews(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE e (id int PRIMARY KEY, dept text, pay int)`)
	mustRun(t, s, `INSERT INTO e VALUES (1, 'eng', 10), (2, 'eng', 20), (3, 'ops', 5)`)
	wantTag(t, s, `CREATE VIEW by_dept (d, total) AS SELECT dept, sum(pay) FROM e GROUP BY dept`, "CREATE VIEW")
	expectRows(t, s, `SELECT d, total FROM by_dept ORDER BY d`, "eng|30", "ops|5")
	expectRows(t, s, `SELECT e.id, v.total FROM e JOIN by_dept v ON v.d = e.dept WHERE e.id = 3`, "3|5")
	mustRun(t, s, `CREATE VIEW big AS WITH b AS (SELECT d FROM by_dept WHERE total > 10) SELECT d FROM b`)
	expectRows(t, s, `SELECT * FROM big`, "eng")
	mustRun(t, s, `INSERT INTO e VALUES (4, 'ops', 50)`)
	expectRows(t, s, `SELECT * FROM big ORDER BY 1`, "eng", "ops")
	wantCode(t, s, `CREATE VIEW big AS SELECT 1 AS x`, sqlerr.DuplicateTable)
	wantCode(t, s, `CREATE VIEW e AS SELECT 1 AS x`, sqlerr.DuplicateTable)
	wantCode(t, s, `CREATE TABLE big (x int)`, sqlerr.DuplicateTable)
	wantCode(t, s, `CREATE VIEW bad AS SELECT nope FROM e`, sqlerr.UndefinedColumn)
	mustRun(t, s, `CREATE OR REPLACE VIEW by_dept (d, total) AS SELECT dept, max(pay) FROM e GROUP BY dept`)
	expectRows(t, s, `SELECT d, total FROM by_dept ORDER BY d`, "eng|20", "ops|50")
	expectRows(t, s, `SELECT viewname FROM pg_views WHERE schemaname = 'public' ORDER BY 1`, "big", "by_dept")
	expectRows(t, s, `SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`,
		"big|VIEW", "by_dept|VIEW", "e|BASE TABLE")
	expectRows(t, s, `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind = 'v' AND n.nspname = 'public' ORDER BY 1`, "big", "by_dept")
	mustRun(t, s, "BEGIN")
	mustRun(t, s, `DROP VIEW big`)
	mustRun(t, s, "ROLLBACK")
	expectRows(t, s, `SELECT count(*) FROM big`, "2")
	mustRun(t, s, `DROP VIEW big, by_dept`)
	wantCode(t, s, `SELECT * FROM big`, sqlerr.UndefinedTable)
	wantCode(t, s, `DROP VIEW big`, sqlerr.UndefinedTable)
	mustRun(t, s, `DROP VIEW IF EXISTS big`)
}

// VACUUM collects a table's expired history (compaction.ttl) and VACUUM FULL
// compacts it; neither runs in a block; ANALYZE is accepted.
func TestVacuumAnalyze(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE v (id int PRIMARY KEY, x int)`)
	for i := 0; i < 3; i++ {
		mustRun(t, s, `INSERT INTO v VALUES (1, `+string(rune('0'+i))+`), (2, 2)`)
	}
	wantTag(t, s, `VACUUM FULL v`, "VACUUM")
	expectRows(t, s, `SELECT id, x FROM v ORDER BY id`, "1|2", "2|2")
	expectRows(t, s, `SELECT count(*) FROM lakesoul.history('v') WHERE commit_op = 'CompactionCommit'`, "1")
	wantTag(t, s, `VACUUM`, "VACUUM")
	wantTag(t, s, `VACUUM (VERBOSE, ANALYZE) v`, "VACUUM")
	wantTag(t, s, `ANALYZE v`, "ANALYZE")
	wantCode(t, s, `VACUUM nope`, sqlerr.UndefinedTable)
	mustRun(t, s, "BEGIN")
	wantCode(t, s, `VACUUM v`, "25001")
	mustRun(t, s, "ROLLBACK")
}

// What stays unsupported answers 0A000 with a hint and creates nothing.
func TestUnsupportedCreateNothing(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE base (id int PRIMARY KEY)`)
	for _, q := range []string{
		`CREATE TABLE f1 (id int, b int REFERENCES base (id))`,
		`CREATE TABLE f2 (id int, b int, FOREIGN KEY (b) REFERENCES base (id))`,
		`CREATE TABLE f3 (id int UNIQUE, v text)`,
		`CREATE TABLE f4 (id int, EXCLUDE USING gist (id WITH =))`,
		`CREATE TRIGGER tr AFTER INSERT ON base FOR EACH ROW EXECUTE FUNCTION f()`,
		`CREATE RULE r AS ON INSERT TO base DO NOTHING`,
		`ALTER TABLE base RENAME CONSTRAINT base_pkey TO k`,
		`ALTER VIEW base RENAME COLUMN id TO id2`,
		`COMMENT ON FUNCTION now() IS 'x'`,
	} {
		wantCode(t, s, q, sqlerr.FeatureNotSupported)
	}
	for _, tbl := range []string{"f1", "f2", "f3", "f4"} {
		wantCode(t, s, `SELECT * FROM `+tbl, sqlerr.UndefinedTable)
	}
	expectRows(t, s, `SELECT id FROM base`)
}
