package engine_test

import (
	"slices"
	"strings"
	"testing"
)

// RETURNING gives back exactly the rows written: volatile expressions are
// evaluated once (the uuid returned is the uuid stored), and the list is
// any expression over the target's columns, under its alias.
func TestInsertReturning(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE r (id bigint PRIMARY KEY, u uuid, k text)`)
	got := mustRun(t, s, `INSERT INTO r VALUES (1, gen_random_uuid(), 'a'), (2, gen_random_uuid(), 'b') RETURNING id, u::text AS u, k || '!' AS bang`)
	if len(got) != 2 {
		t.Fatalf("RETURNING rows: %v", got)
	}
	stored := mustRun(t, s, `SELECT id, u::text, k || '!' FROM r ORDER BY id`)
	if got[0]+got[1] != stored[0]+stored[1] && got[1]+got[0] != stored[0]+stored[1] {
		t.Fatalf("returned %v, stored %v", got, stored)
	}
	expectRows(t, s, `INSERT INTO r AS x (id, k) VALUES (3, 'c') RETURNING x.id, *`, "3|3|NULL|c")
	mustRun(t, s, `CREATE TABLE a (x int, y text)`)
	expectRows(t, s, `INSERT INTO a SELECT i, 'v' || i FROM range(3) t(i) RETURNING y, x * 10`, "v0|0", "v1|10", "v2|20")
	// ON CONFLICT DO UPDATE of a table with a uuid column.
	expectRows(t, s, `INSERT INTO r VALUES (3, NULL, 'c2') ON CONFLICT (id) DO UPDATE SET k = EXCLUDED.k RETURNING id, u, k`, "3|NULL|c2")
	mustRun(t, s, `CREATE TABLE c (id bigint PRIMARY KEY, k text)`)
	mustRun(t, s, `INSERT INTO c VALUES (3, 'c')`)
	expectRows(t, s, `INSERT INTO c VALUES (3, 'dup'), (4, 'd') ON CONFLICT (id) DO NOTHING RETURNING id`, "4")
	expectRows(t, s, `INSERT INTO c VALUES (3, 'c3') ON CONFLICT (id) DO UPDATE SET k = c.k || EXCLUDED.k RETURNING id, k`, "3|cc3")
}

// UPDATE, DELETE and MERGE return the rows after the change (DELETE: the
// rows removed), on every write path: partial upsert, CDC delete markers,
// copy-on-write.
func TestUpdateDeleteMergeReturning(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE p (id int PRIMARY KEY, k text, v int)`)
	mustRun(t, s, `INSERT INTO p VALUES (1, 'a', 10), (2, 'b', 20), (3, 'c', 30)`)
	expectRows(t, s, `UPDATE p SET v = v + 1 WHERE id >= 2 RETURNING id, k, v`, "2|b|21", "3|c|31")
	expectRows(t, s, `SELECT id, v FROM p ORDER BY id`, "1|10", "2|21", "3|31")
	expectRows(t, s, `UPDATE p SET v = 0 WHERE id = 99 RETURNING *`)

	mustRun(t, s, `CREATE TABLE a (x int, y text)`)
	mustRun(t, s, `INSERT INTO a VALUES (1, 'one'), (2, 'two'), (3, 'three')`)
	expectRows(t, s, `UPDATE a SET y = upper(y) WHERE x > 1 RETURNING x, y`, "2|TWO", "3|THREE")
	expectRows(t, s, `DELETE FROM a WHERE x = 2 RETURNING *`, "2|TWO")
	expectRows(t, s, `SELECT x, y FROM a ORDER BY x`, "1|one", "3|THREE")

	mustRun(t, s, `CREATE TABLE c (id int PRIMARY KEY, v text, op text) WITH (cdc_column = 'op')`)
	mustRun(t, s, `INSERT INTO c VALUES (1, 'a', 'insert'), (2, 'b', 'insert')`)
	expectRows(t, s, `DELETE FROM c WHERE id = 1 RETURNING id, v, op`, "1|a|insert")
	expectRows(t, s, `SELECT id, v FROM c`, "2|b")

	// RETURNING's rows come in no order PostgreSQL promises (the join's).
	merged := mustRun(t, s, `MERGE INTO p USING (VALUES (1, 'z'), (4, 'd')) AS src(id, k) ON p.id = src.id
		WHEN MATCHED THEN UPDATE SET k = src.k
		WHEN NOT MATCHED THEN INSERT (id, k, v) VALUES (src.id, src.k, 40) RETURNING p.id, p.k, p.v`)
	slices.Sort(merged)
	if strings.Join(merged, ",") != "1|z|10,4|d|40" {
		t.Fatalf("MERGE … RETURNING: %q", merged)
	}
	expectRows(t, s, `SELECT id, k, v FROM p ORDER BY id`, "1|z|10", "2|b|21", "3|c|31", "4|d|40")
}
