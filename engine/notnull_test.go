package engine_test

import (
	"testing"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// NOT NULL holds on every write path of a primary-key table: a partial
// upsert (INSERT, ON CONFLICT, inside a block) of a new key that leaves a
// NOT NULL column out fails with 23502, existing keys keep their values;
// writing NULL (UPDATE, MERGE) fails too. SERIAL is refused (issue 14, item 9).
func TestNotNullOnEveryPath(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE pk (id int PRIMARY KEY, c text, n int NOT NULL)`)
	mustRun(t, s, `INSERT INTO pk VALUES (1, 'a', 1)`)
	wantCode := func(text, code string) {
		t.Helper()
		_, err := run(t, s, text)
		if got := sqlerr.Code(err); got != code {
			t.Fatalf("%s: %v (SQLSTATE %s), want %s", text, err, got, code)
		}
	}
	wantCode(`INSERT INTO pk (id, c) VALUES (2, 'b')`, sqlerr.NotNullViolation)
	mustRun(t, s, `INSERT INTO pk (id, c) VALUES (1, 'b')`) // existing key: n kept
	wantCode(`INSERT INTO pk (id, c) VALUES (1, 'c'), (3, 'd')`, sqlerr.NotNullViolation)
	wantCode(`UPDATE pk SET n = NULL`, sqlerr.NotNullViolation)
	wantCode(`INSERT INTO pk (id, c) VALUES (4, 'd') ON CONFLICT DO NOTHING`, sqlerr.NotNullViolation)
	wantCode(`INSERT INTO pk (id, c) VALUES (4, 'd') ON CONFLICT (id) DO UPDATE SET c = 'z'`, sqlerr.NotNullViolation)
	wantCode(`MERGE INTO pk t USING (SELECT 5 AS id) s ON t.id = s.id WHEN NOT MATCHED THEN INSERT (id, c) VALUES (s.id, 'm')`, sqlerr.NotNullViolation)
	mustRun(t, s, "BEGIN")
	mustRun(t, s, `INSERT INTO pk VALUES (6, 'a', 6)`)
	mustRun(t, s, `INSERT INTO pk (id, c) VALUES (6, 'b')`) // the block's own key
	wantCode(`INSERT INTO pk (id, c) VALUES (7, 'b')`, sqlerr.NotNullViolation)
	mustRun(t, s, "ROLLBACK")
	expectRows(t, s, "SELECT * FROM pk ORDER BY id", "1|b|1")
	// SERIAL columns are numbered by their sequences (sequence_test.go),
	// never left NULL.
	for _, typ := range []string{"serial", "bigserial", "smallserial", "serial8"} {
		mustRun(t, s, `CREATE TABLE sr (id `+typ+` PRIMARY KEY, v text)`)
		expectRows(t, s, `INSERT INTO sr (v) VALUES ('a') RETURNING id`, "1")
		mustRun(t, s, `DROP TABLE sr`)
	}
	// A SERIAL column added to a table with rows numbers them (alterrows.go).
	mustRun(t, s, `ALTER TABLE pk ADD COLUMN s serial`)
	expectRows(t, s, "SELECT id, s FROM pk ORDER BY id", "1|1")
}
