package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/pgtest"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// TestCarriedValuesAreNotAssigned: varchar(n)/char(n) assignment applies
// to the values a statement assigns, not to those it carries over from the
// rows it read. Values longer than the declared length (stored before the
// 22001 rule held, or by another LakeSoul writer; made here by narrowing the
// declared length in the catalog) stay as they are through every statement
// that rewrites or re-writes rows without assigning those columns; the
// values a statement assigns still follow the rule.
func TestCarriedValuesAreNotAssigned(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	if err := catalog.MigrateUp(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	setup := sessionOn(t, dsn, dir)
	kinds := map[string]string{
		"append": `(id int, c varchar(10), d char(10), n int)`,
		"keyed":  `(id int PRIMARY KEY, c varchar(10), d char(10), n int)`,
		"cdc":    `(id int PRIMARY KEY, c varchar(10), d char(10), n int, op text) WITH (cdc_column = 'op')`,
		"vkey":   `(id varchar(10) PRIMARY KEY, c varchar(10), d char(10), n int)`,
	}
	cases := []struct {
		kind, stmt string
		want       []string // rows of SELECT id, c, d, n after it
		code       string   // or its SQLSTATE
	}{
		{"append", `UPDATE %s SET n = n + 1`, []string{"1|abcdef|abcdef|2", "2|abcdef|abcdef|3"}, ""},
		{"append", `UPDATE %s SET n = 9 WHERE id = 2`, []string{"1|abcdef|abcdef|1", "2|abcdef|abcdef|9"}, ""},
		{"append", `UPDATE %s SET c = 'x', d = 'y  ' WHERE id = 2`, []string{"1|abcdef|abcdef|1", "2|x|y  |2"}, ""},
		{"append", `UPDATE %s SET n = 5 RETURNING c, d`, []string{"1|abcdef|abcdef|5", "2|abcdef|abcdef|5"}, ""},
		{"append", `DELETE FROM %s WHERE id = 2`, []string{"1|abcdef|abcdef|1"}, ""},
		{"append", `UPDATE %s SET c = 'abc' WHERE id = 2`, nil, sqlerr.StringDataRightTruncation},
		{"keyed", `UPDATE %s SET n = 7 WHERE id = 1 RETURNING c, d`, []string{"1|abcdef|abcdef|7", "2|abcdef|abcdef|2"}, ""},
		{"keyed", `INSERT INTO %s VALUES (1, 'p', 'q', 0) ON CONFLICT (id) DO UPDATE SET n = 5`, []string{"1|abcdef|abcdef|5", "2|abcdef|abcdef|2"}, ""},
		{"keyed", `INSERT INTO %s VALUES (1, 'p', 'q', 0) ON CONFLICT (id) DO UPDATE SET c = EXCLUDED.c`, []string{"1|p|abcdef|1", "2|abcdef|abcdef|2"}, ""},
		{"keyed", `INSERT INTO %s VALUES (1, 'p', 'q', 0) ON CONFLICT (id) DO UPDATE SET c = 'pqr'`, nil, sqlerr.StringDataRightTruncation},
		{"keyed", `MERGE INTO %s t USING (SELECT 1 AS id) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET n = 5`, []string{"1|abcdef|abcdef|5", "2|abcdef|abcdef|2"}, ""},
		{"keyed", `MERGE INTO %s t USING (SELECT 1 AS id) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET d = 'wxyz'`, nil, sqlerr.StringDataRightTruncation},
		{"keyed", `MERGE INTO %s t USING (SELECT 3 AS id) s ON t.id = s.id WHEN NOT MATCHED THEN INSERT VALUES (3, 'ab   ', 'cd  ', 3)`,
			[]string{"1|abcdef|abcdef|1", "2|abcdef|abcdef|2", "3|ab|cd |3"}, ""},
		{"cdc", `DELETE FROM %s WHERE id = 2`, []string{"1|abcdef|abcdef|1"}, ""},
		{"cdc", `MERGE INTO %s t USING (SELECT 2 AS id) s ON t.id = s.id WHEN MATCHED THEN DELETE`, []string{"1|abcdef|abcdef|1"}, ""},
		{"vkey", `UPDATE %s SET n = 3 WHERE id = 'abcdef'`, []string{"abcdef|abcdef|abcdef|3", "abcdeg|abcdef|abcdef|2"}, ""},
		{"vkey", `DELETE FROM %s WHERE n = 2`, []string{"abcdef|abcdef|abcdef|1"}, ""},
		// The proposed row is assigned, its key too (as in PostgreSQL).
		{"vkey", `INSERT INTO %s VALUES ('abcdef', 'p', 'q', 0) ON CONFLICT (id) DO UPDATE SET n = 4`, nil, sqlerr.StringDataRightTruncation},
	}
	for i, c := range cases {
		tb := fmt.Sprintf("ov%d", i)
		mustRun(t, setup, fmt.Sprintf(`CREATE TABLE %s %s`, tb, kinds[c.kind]))
		if c.kind == "vkey" {
			mustRun(t, setup, fmt.Sprintf(`INSERT INTO %s (id, c, d, n) VALUES ('abcdef', 'abcdef', 'abcdef', 1), ('abcdeg', 'abcdef', 'abcdef', 2)`, tb))
		} else {
			mustRun(t, setup, fmt.Sprintf(`INSERT INTO %s (id, c, d, n) VALUES (1, 'abcdef', 'abcdef', 1), (2, 'abcdef', 'abcdef', 2)`, tb))
		}
	}
	// The declared lengths become 2 (varchar) and 3 (char), shorter than the values stored.
	cat, err := catalog.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	if _, err := cat.Pool().Exec(ctx, `UPDATE table_info SET table_schema = replace(replace(table_schema,
		'"varchar(10)"', '"varchar(2)"'), '"bpchar(10)"', '"bpchar(3)"') WHERE table_name LIKE 'ov%'`); err != nil {
		t.Fatal(err)
	}
	s := sessionOn(t, dsn, dir) // a new engine reads the narrowed schemas
	for i, c := range cases {
		tb := fmt.Sprintf("ov%d", i)
		_, err := run(t, s, fmt.Sprintf(c.stmt, tb))
		stmt := fmt.Sprintf("%s (%s table)", fmt.Sprintf(c.stmt, tb), c.kind)
		if c.code != "" {
			if sqlerr.Code(err) != c.code {
				t.Errorf("%s: got %v, want %s", stmt, err, c.code)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", stmt, err)
			continue
		}
		got := mustRun(t, s, fmt.Sprintf(`SELECT id, c, d, n FROM %s ORDER BY id`, tb))
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s: got %q, want %q", stmt, got, c.want)
		}
	}
}
