package engine_test

import (
	"context"
	"testing"

	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// execTag runs one statement and returns its command tag.
func execTag(t *testing.T, s pgwire.Session, text string) string {
	t.Helper()
	ctx := context.Background()
	stmts, err := s.Parse(ctx, text, nil)
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	p, err := stmts[0].Bind(ctx, nil)
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	defer p.Close()
	tag, _, err := p.Execute(ctx, 0, &rowCollector{})
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return tag
}

func wantTag(t *testing.T, s pgwire.Session, text, want string) {
	t.Helper()
	if got := execTag(t, s, text); got != want {
		t.Fatalf("%s: tag %q, want %q", text, got, want)
	}
}

func TestUpdateDeleteTruncatePKTable(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE t (id bigint PRIMARY KEY, k text, v double precision, d date) PARTITION BY LIST (d)`)
	mustRun(t, s, `INSERT INTO t VALUES (1,'a',1,'2026-01-01'),(2,'b',2,'2026-01-01'),(3,'c',3,'2026-01-02'),(4,'d',4,'2026-01-02')`)
	wantTag(t, s, "UPDATE t SET v = v * 10, k = upper(k) WHERE id IN (1, 3)", "UPDATE 2")
	expectRows(t, s, "SELECT id, k, v FROM t ORDER BY id", "1|A|10", "2|b|2", "3|C|30", "4|d|4")
	wantTag(t, s, "DELETE FROM t WHERE v > 5", "DELETE 2")
	expectRows(t, s, "SELECT id, k, v, d FROM t ORDER BY id", "2|b|2|2026-01-01 00:00:00 +0000 UTC", "4|d|4|2026-01-02 00:00:00 +0000 UTC")
	wantTag(t, s, "DELETE FROM t WHERE id = 99", "DELETE 0")
	// Upserts after a delete merge with the rewritten partition.
	mustRun(t, s, "INSERT INTO t (id, k, d) VALUES (2, 'B', '2026-01-01'), (1, 'new', '2026-01-01')")
	expectRows(t, s, "SELECT id, k, v FROM t ORDER BY id", "1|new|NULL", "2|B|2", "4|d|4")
	wantTag(t, s, "TRUNCATE t", "TRUNCATE TABLE")
	expectRows(t, s, "SELECT count(*) FROM t", "0")
	mustRun(t, s, "INSERT INTO t VALUES (7, 'x', 7, '2026-01-03')")
	expectRows(t, s, "SELECT id FROM t", "7")
}

func TestUpdateDeleteAppendTable(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE a (x int, y text)`)
	mustRun(t, s, `INSERT INTO a VALUES (1, 'one'), (2, 'two'), (2, 'two again'), (3, NULL)`)
	wantTag(t, s, "UPDATE a SET y = y || '!' WHERE x = 2", "UPDATE 2")
	expectRows(t, s, "SELECT x, y FROM a ORDER BY x, y", "1|one", "2|two again!", "2|two!", "3|NULL")
	wantTag(t, s, "DELETE FROM a WHERE y IS NULL OR x = 1", "DELETE 2")
	expectRows(t, s, "SELECT x, y FROM a ORDER BY y", "2|two again!", "2|two!")
	wantTag(t, s, "DELETE FROM a", "DELETE 2")
	expectRows(t, s, "SELECT count(*) FROM a", "0")
}

func TestMergeOperatorsAndCDCThroughSQL(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE m (id int PRIMARY KEY, total bigint, tags text, last_seen text)
		WITH (merge_op.total = 'SumAll', merge_op.tags = 'JoinedAllByComma', merge_op.last_seen = 'UseLastNotNull')`)
	mustRun(t, s, `INSERT INTO m VALUES (1, 10, 'a', 'mon')`)
	mustRun(t, s, `INSERT INTO m VALUES (1, 5, 'b', NULL)`)
	mustRun(t, s, `INSERT INTO m VALUES (1, 7, 'c', NULL)`)
	expectRows(t, s, "SELECT total, tags, last_seen FROM m", "22|a,b,c|mon")

	mustRun(t, s, `CREATE TABLE c (id int PRIMARY KEY, v text, op text) WITH (cdc_column = 'op')`)
	mustRun(t, s, `INSERT INTO c VALUES (1, 'a', 'insert'), (2, 'x', 'insert')`)
	mustRun(t, s, `INSERT INTO c VALUES (1, 'b', 'update')`)
	wantTag(t, s, "DELETE FROM c WHERE id = 1", "DELETE 1")
	expectRows(t, s, "SELECT id, v FROM c ORDER BY id", "2|x")
	mustRun(t, s, `INSERT INTO c VALUES (1, 'c', 'insert')`)
	expectRows(t, s, "SELECT id, v, op FROM c ORDER BY id", "1|c|insert", "2|x|insert")

	for _, tc := range []struct{ sql, code string }{
		{"CREATE TABLE bad1 (id int PRIMARY KEY, v text) WITH (merge_op.v = 'Concat')", sqlerr.InvalidParameterValue},
		{"CREATE TABLE bad2 (id int PRIMARY KEY, v text) WITH (merge_op.v = 'SumAll')", sqlerr.InvalidParameterValue},
		{"CREATE TABLE bad3 (id int, op text) WITH (cdc_column = 'op')", sqlerr.InvalidTableDefinition},
		{"INSERT INTO c VALUES (3, 'z', 'upsert')", sqlerr.CheckViolation},
	} {
		if _, err := run(t, s, tc.sql); sqlerr.Code(err) != tc.code {
			t.Errorf("%s: got %v, want %s", tc.sql, err, tc.code)
		}
	}
	expectRows(t, s, "SELECT count(*) FROM c", "2")
}

// TestCDCRowsWithoutOp: a row of a CDC table written without an op (the op
// column left out of INSERT or COPY, or NULL) is stored with op "insert",
// as LakeSoul's writers store it: LakeSoul's readers keep only rows whose op
// is not 'delete' by SQL's rule, which a NULL op fails, and a key written
// again after its delete must exist again.
func TestCDCRowsWithoutOp(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE cw (id int PRIMARY KEY, v text, op text) WITH (cdc_column = 'op', hash_bucket_num = 2)`)
	mustRun(t, s, `INSERT INTO cw (id, v) VALUES (1, 'a'), (2, 'b')`)
	mustRun(t, s, `INSERT INTO cw VALUES (3, 'c', NULL), (4, 'd', 'update')`)
	if tag, err := copyIn(t, s, "COPY cw (id, v) FROM STDIN", [][][]byte{row("5", "e")}); err != nil || tag != "COPY 1" {
		t.Fatalf("COPY: %q, %v", tag, err)
	}
	expectRows(t, s, "SELECT id, v, op FROM cw ORDER BY id", "1|a|insert", "2|b|insert", "3|c|insert", "4|d|update", "5|e|insert")
	wantTag(t, s, "DELETE FROM cw WHERE id IN (2, 5)", "DELETE 2")
	mustRun(t, s, `INSERT INTO cw (id, v) VALUES (2, 'B')`)
	if tag, err := copyIn(t, s, "COPY cw (id, v) FROM STDIN", [][][]byte{row("5", "E")}); err != nil || tag != "COPY 1" {
		t.Fatalf("COPY: %q, %v", tag, err)
	}
	expectRows(t, s, "SELECT id, v, op FROM cw ORDER BY id", "1|a|insert", "2|B|insert", "3|c|insert", "4|d|update", "5|E|insert")
}

func TestInsertOnConflict(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE u (id int PRIMARY KEY, name text, n bigint)`)
	mustRun(t, s, `INSERT INTO u VALUES (1, 'a', 1), (2, 'b', 2)`)
	wantTag(t, s, "INSERT INTO u VALUES (2, 'B', 20), (3, 'c', 3) ON CONFLICT DO NOTHING", "INSERT 0 1")
	expectRows(t, s, "SELECT * FROM u ORDER BY id", "1|a|1", "2|b|2", "3|c|3")
	// Only the SET columns change for existing keys; new keys are inserted whole.
	wantTag(t, s, "INSERT INTO u VALUES (1, 'A', 100), (4, 'd', 4) ON CONFLICT (id) DO UPDATE SET n = u.n + EXCLUDED.n", "INSERT 0 2")
	expectRows(t, s, "SELECT * FROM u ORDER BY id", "1|a|101", "2|b|2", "3|c|3", "4|d|4")
	wantTag(t, s, "INSERT INTO u AS x (id, name) VALUES (2, 'two'), (3, 'three') ON CONFLICT ON CONSTRAINT u_pkey DO UPDATE SET name = EXCLUDED.name WHERE x.n > 2", "INSERT 0 1")
	expectRows(t, s, "SELECT * FROM u ORDER BY id", "1|a|101", "2|b|2", "3|three|3", "4|d|4")
	for _, tc := range []struct{ sql, code string }{
		{"INSERT INTO u VALUES (1, 'x', 1) ON CONFLICT (name) DO NOTHING", "42P10"},
		{"INSERT INTO u VALUES (1, 'x', 1) ON CONFLICT (id) DO UPDATE SET id = 5", sqlerr.FeatureNotSupported},
	} {
		if _, err := run(t, s, tc.sql); sqlerr.Code(err) != tc.code {
			t.Errorf("%s: got %v, want %s", tc.sql, err, tc.code)
		}
	}
	mustRun(t, s, `CREATE TABLE ap (id int, v text)`)
	if _, err := run(t, s, "INSERT INTO ap VALUES (1, 'x') ON CONFLICT DO NOTHING"); sqlerr.Code(err) != "42P10" {
		t.Errorf("ON CONFLICT on a table without key: %v", err)
	}
}

func TestMergeInto(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE tgt (id int PRIMARY KEY, name text, n bigint)`)
	mustRun(t, s, `INSERT INTO tgt VALUES (1, 'a', 1), (2, 'b', 2), (3, 'c', 3)`)
	mustRun(t, s, `CREATE TABLE src (id int, name text, n bigint)`)
	mustRun(t, s, `INSERT INTO src VALUES (1, 'A', 10), (2, 'B', 20), (4, 'D', 40), (5, 'E', 50)`)
	wantTag(t, s, `MERGE INTO tgt t USING src s ON t.id = s.id
		WHEN MATCHED AND s.n > 15 THEN UPDATE SET n = t.n + s.n, name = s.name
		WHEN MATCHED THEN DO NOTHING
		WHEN NOT MATCHED AND s.id < 5 THEN INSERT (id, name, n) VALUES (s.id, s.name, s.n)`, "MERGE 2")
	expectRows(t, s, "SELECT * FROM tgt ORDER BY id", "1|a|1", "2|B|22", "3|c|3", "4|D|40")

	mustRun(t, s, `CREATE TABLE ct (id int PRIMARY KEY, v text, op text) WITH (cdc_column = 'op')`)
	mustRun(t, s, `INSERT INTO ct VALUES (1, 'x', 'insert'), (2, 'y', 'insert')`)
	wantTag(t, s, `MERGE INTO ct USING (SELECT 1 AS id UNION ALL SELECT 3) AS s ON ct.id = s.id
		WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT VALUES (s.id, 'new', 'insert')`, "MERGE 2")
	expectRows(t, s, "SELECT id, v FROM ct ORDER BY id", "2|y", "3|new")
}

// Copy-on-write changes and TRUNCATE inside a transaction block see the
// block's own writes and take effect at COMMIT, or never.
func TestRewritesInTransactionBlock(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE a (x int, y text)`)
	mustRun(t, s, `INSERT INTO a VALUES (1, 'keep'), (2, 'drop')`)
	mustRun(t, s, `BEGIN; INSERT INTO a VALUES (3, 'drop'); DELETE FROM a WHERE y = 'drop'; UPDATE a SET y = 'kept' WHERE x = 1`)
	expectRows(t, s, "SELECT x, y FROM a ORDER BY x", "1|kept")
	mustRun(t, s, "ROLLBACK")
	expectRows(t, s, "SELECT x, y FROM a ORDER BY x", "1|keep", "2|drop")
	mustRun(t, s, `BEGIN; INSERT INTO a VALUES (3, 'three'); DELETE FROM a WHERE x = 2; COMMIT`)
	expectRows(t, s, "SELECT x, y FROM a ORDER BY x", "1|keep", "3|three")
	mustRun(t, s, `BEGIN; TRUNCATE a; INSERT INTO a VALUES (9, 'nine')`)
	expectRows(t, s, "SELECT x FROM a", "9")
	mustRun(t, s, "COMMIT")
	expectRows(t, s, "SELECT x, y FROM a", "9|nine")
}

// TestKeyColumnsAssignedTheirOwnValue: every statement that assigns
// columns (UPDATE of a key table and of a partitioned append table, ON
// CONFLICT DO UPDATE, MERGE … UPDATE) may name a primary-key or partition
// column when the row keeps its value, as ORMs do (SET id = EXCLUDED.id,
// UPDATE … SET id = $1, … WHERE id = $1); a different value fails with
// 0A000 and writes nothing.
func TestKeyColumnsAssignedTheirOwnValue(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE k (id int PRIMARY KEY, d text, v text) PARTITION BY LIST (d)`)
	mustRun(t, s, `INSERT INTO k VALUES (1, 'x', 'a'), (2, 'x', 'b')`)
	mustRun(t, s, `CREATE TABLE ap (id int, d text, v text) PARTITION BY LIST (d)`)
	mustRun(t, s, `INSERT INTO ap VALUES (1, 'x', 'a'), (2, 'y', 'b')`)
	for _, c := range []struct{ ok, bad string }{
		{`UPDATE k SET id = id, d = d, v = 'u1' WHERE id = 1`, `UPDATE k SET id = id + 1, v = 'no' WHERE id = 1`},
		{`UPDATE k SET id = 2, v = 'u2' WHERE id = 2`, `UPDATE k SET d = 'y', v = 'no' WHERE id = 2`},
		{`INSERT INTO k VALUES (1, 'x', 'c1'), (3, 'x', 'c3') ON CONFLICT (id) DO UPDATE SET id = EXCLUDED.id, d = EXCLUDED.d, v = EXCLUDED.v`,
			`INSERT INTO k VALUES (1, 'x', 'no') ON CONFLICT (id) DO UPDATE SET id = EXCLUDED.id + 10, v = EXCLUDED.v`},
		{`MERGE INTO k USING (SELECT 2 AS id, 'm2' AS v) s ON k.id = s.id WHEN MATCHED THEN UPDATE SET id = s.id, v = s.v`,
			`MERGE INTO k USING (SELECT 2 AS id, 'no' AS v) s ON k.id = s.id WHEN MATCHED THEN UPDATE SET id = 7, v = s.v`},
		{`UPDATE ap SET d = d, v = 'a1' WHERE id = 1`, `UPDATE ap SET d = 'z', v = 'no' WHERE id = 2`},
	} {
		if _, err := run(t, s, c.ok); err != nil {
			t.Errorf("%s: %v", c.ok, err)
		}
		if _, err := run(t, s, c.bad); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
			t.Errorf("%s: %v, want 0A000", c.bad, err)
		}
	}
	expectRows(t, s, "SELECT id, d, v FROM k ORDER BY id", "1|x|c1", "2|x|m2", "3|x|c3")
	expectRows(t, s, "SELECT id, d, v FROM ap ORDER BY id", "1|x|a1", "2|y|b")
}
