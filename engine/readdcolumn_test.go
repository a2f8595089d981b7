package engine_test

import (
	"fmt"
	"testing"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// A column dropped and added again under its name is a new column, as in
// PostgreSQL: rows written before the re-add read NULL (or the ADD
// COLUMN's default) for it, never the dropped values, on keyed and append
// tables, after compaction, in a transaction block, with another type, and
// when it happens twice. Snapshots from before the drop keep the values
// the column had then.
func TestReaddDroppedColumn(t *testing.T) {
	s := newSession(t)
	for _, tc := range []struct{ name, key string }{{"rk", "PRIMARY KEY"}, {"ra", ""}} {
		t.Run(tc.name, func(t *testing.T) {
			tb := tc.name
			mustRun(t, s, fmt.Sprintf(`CREATE TABLE %s (id int %s, c text, v int)`, tb, tc.key))
			mustRun(t, s, fmt.Sprintf(`INSERT INTO %s VALUES (1, 'old1', 10), (2, 'old2', 20)`, tb))
			mustRun(t, s, fmt.Sprintf(`ALTER TABLE %s DROP COLUMN c`, tb))
			mustRun(t, s, fmt.Sprintf(`INSERT INTO %s VALUES (3, 30)`, tb))
			mustRun(t, s, fmt.Sprintf(`ALTER TABLE %s ADD COLUMN c text`, tb))
			expectRows(t, s, fmt.Sprintf(`SELECT id, v, c FROM %s ORDER BY id`, tb), "1|10|NULL", "2|20|NULL", "3|30|NULL")
			mustRun(t, s, fmt.Sprintf(`INSERT INTO %s VALUES (4, 40, 'new4')`, tb))
			mustRun(t, s, fmt.Sprintf(`UPDATE %s SET v = 11 WHERE id = 1`, tb))
			expectRows(t, s, fmt.Sprintf(`SELECT id, v, c FROM %s ORDER BY id`, tb), "1|11|NULL", "2|20|NULL", "3|30|NULL", "4|40|new4")
			expectRows(t, s, fmt.Sprintf(`SELECT count(*) FROM %s WHERE c IS NULL`, tb), "3")
			// The first snapshot (the first INSERT) has the dropped values.
			expectRows(t, s, fmt.Sprintf(`SELECT id, c FROM lakesoul.snapshot('%s', version => 0) ORDER BY id`, tb), "1|old1", "2|old2")
			mustRun(t, s, fmt.Sprintf(`CALL lakesoul.compact('%s')`, tb))
			expectRows(t, s, fmt.Sprintf(`SELECT id, v, c FROM %s ORDER BY id`, tb), "1|11|NULL", "2|20|NULL", "3|30|NULL", "4|40|new4")

			// Twice, with another type and a default, inside a block.
			mustRun(t, s, `BEGIN`)
			mustRun(t, s, fmt.Sprintf(`ALTER TABLE %s DROP COLUMN c`, tb))
			mustRun(t, s, fmt.Sprintf(`ALTER TABLE %s ADD COLUMN c bigint DEFAULT 7`, tb))
			mustRun(t, s, fmt.Sprintf(`INSERT INTO %s VALUES (5, 50, 5000000000)`, tb))
			expectRows(t, s, fmt.Sprintf(`SELECT id, c FROM %s ORDER BY id`, tb), "1|7", "2|7", "3|7", "4|7", "5|5000000000")
			mustRun(t, s, `COMMIT`)
			expectRows(t, s, fmt.Sprintf(`SELECT id, v, c FROM %s ORDER BY id`, tb), "1|11|7", "2|20|7", "3|30|7", "4|40|7", "5|50|5000000000")
			mustRun(t, s, fmt.Sprintf(`CALL lakesoul.compact('%s')`, tb))
			expectRows(t, s, fmt.Sprintf(`SELECT id, v, c FROM %s ORDER BY id`, tb), "1|11|7", "2|20|7", "3|30|7", "4|40|7", "5|50|5000000000")
		})
	}
}

// A CDC table whose rows are all deleted still has files holding the
// dropped values under delete markers: a key written again after the
// re-add must not take the dropped value from them.
func TestReaddDroppedColumnDeletedRows(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE rc (id int PRIMARY KEY, c text, v int, op text) WITH (cdc_column = 'op')`)
	mustRun(t, s, `INSERT INTO rc VALUES (1, 'x', 1)`)
	mustRun(t, s, `DELETE FROM rc WHERE id = 1`)
	mustRun(t, s, `ALTER TABLE rc DROP COLUMN c`)
	mustRun(t, s, `ALTER TABLE rc ADD COLUMN c text`)
	mustRun(t, s, `INSERT INTO rc (id, v) VALUES (1, 2)`)
	expectRows(t, s, `SELECT id, v, c FROM rc`, "1|2|NULL")
}

// Dropping and adding one name in a single ALTER TABLE would rewrite the
// files while the column still exists: 0A000, and nothing changes.
func TestReaddDroppedColumnOneStatement(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE r1 (id int, c text)`)
	mustRun(t, s, `INSERT INTO r1 VALUES (1, 'x')`)
	if _, err := run(t, s, `ALTER TABLE r1 DROP COLUMN c, ADD COLUMN c text`); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
		t.Fatalf("DROP COLUMN c, ADD COLUMN c: %v, want 0A000", err)
	}
	expectRows(t, s, `SELECT id, c FROM r1`, "1|x")
}

// Every range partition's files are rewritten.
func TestReaddDroppedColumnPartitioned(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE rp (id int, d text, c text, PRIMARY KEY (id)) PARTITION BY LIST (d)`)
	mustRun(t, s, `INSERT INTO rp VALUES (1, 'a', 'x'), (2, 'b', 'y'), (3, 'c', 'z')`)
	mustRun(t, s, `ALTER TABLE rp DROP COLUMN c`)
	mustRun(t, s, `ALTER TABLE rp ADD COLUMN c text`)
	mustRun(t, s, `INSERT INTO rp VALUES (4, 'a', 'new')`)
	expectRows(t, s, `SELECT id, d, c FROM rp ORDER BY id`, "1|a|NULL", "2|b|NULL", "3|c|NULL", "4|a|new")
	expectRows(t, s, `SELECT id, c FROM rp WHERE d = 'b'`, "2|NULL")
}

// A snapshot from before the drop of a column added again with another
// type cannot show the old values under the new type: 0A000 for that
// column, its other columns read.
func TestReaddDroppedColumnOtherTypeSnapshot(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE ro (id int, c text)`)
	mustRun(t, s, `INSERT INTO ro VALUES (1, 'x')`)
	mustRun(t, s, `ALTER TABLE ro DROP COLUMN c`)
	mustRun(t, s, `ALTER TABLE ro ADD COLUMN c bigint`)
	if _, err := run(t, s, `SELECT c FROM lakesoul.snapshot('ro', version => 0)`); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
		t.Errorf("snapshot before the drop, c: %v, want 0A000", err)
	}
	expectRows(t, s, `SELECT id FROM lakesoul.snapshot('ro', version => 0)`, "1")
	expectRows(t, s, `SELECT id, c FROM ro`, "1|NULL")
}
