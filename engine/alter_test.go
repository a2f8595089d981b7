package engine_test

import (
	"testing"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

func TestAlterTableSchemaEvolution(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE e (id int PRIMARY KEY, small int, f real, gone text)`)
	mustRun(t, s, `INSERT INTO e VALUES (1, 10, 1.5, 'x'), (2, 20, 2.5, 'y')`)
	mustRun(t, s, `ALTER TABLE e ADD COLUMN extra text`)
	mustRun(t, s, `ALTER TABLE e DROP COLUMN gone`)
	mustRun(t, s, `ALTER TABLE e ALTER COLUMN small TYPE bigint, ALTER COLUMN f TYPE double precision`)
	expectRows(t, s, "SELECT * FROM e ORDER BY id", "1|10|1.5|NULL", "2|20|2.5|NULL")
	// New files carry the new schema; old and new merge.
	mustRun(t, s, `INSERT INTO e (id, small, extra) VALUES (2, 5000000000, 'new')`)
	expectRows(t, s, "SELECT id, small, f, extra FROM e ORDER BY id", "1|10|1.5|NULL", "2|5000000000|2.5|new")
	expectRows(t, s, "SELECT sum(small) FROM e", "5000000010")
	mustRun(t, s, `ALTER TABLE e SET (merge_op.small = 'SumAll')`)
	mustRun(t, s, `INSERT INTO e (id, small) VALUES (1, 5)`)
	expectRows(t, s, "SELECT small FROM e WHERE id = 1", "15")
	for _, tc := range []struct{ sql, code string }{
		{"ALTER TABLE e ADD COLUMN extra text", sqlerr.DuplicateObject},
		{"ALTER TABLE e DROP COLUMN id", sqlerr.FeatureNotSupported},
		{"ALTER TABLE e ALTER COLUMN small TYPE int", sqlerr.FeatureNotSupported},
		{"ALTER TABLE e DROP COLUMN nope", sqlerr.UndefinedColumn},
		{"ALTER TABLE e SET (merge_op.extra = 'SumAll')", sqlerr.InvalidParameterValue},
		{"ALTER TABLE nope ADD COLUMN x int", sqlerr.UndefinedTable},
	} {
		if _, err := run(t, s, tc.sql); sqlerr.Code(err) != tc.code {
			t.Errorf("%s: got %v, want %s", tc.sql, err, tc.code)
		}
	}
	expectRows(t, s, "SELECT count(*) FROM e", "2")
}
