package engine_test

import (
	"strings"
	"testing"

	"github.com/lakesoul-go/lakesoul/engine"
)

// TestCharCastsAndPadding: explicit casts to varchar(n) and char(n) cut
// the value to n characters without an error, as PostgreSQL's do (DuckDB's
// VARCHAR has no length), and a character(n) result shows its values
// blank-padded to n, as PostgreSQL does, on pgwire and in Arrow results
// (the direct scan's and the DuckDB query's), while the value computes
// without the padding (length, ||, comparisons).
func TestCharCastsAndPadding(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE cc (id int PRIMARY KEY, c char(4), v varchar(3), t text)`)
	mustRun(t, s, `INSERT INTO cc VALUES (1, 'ab', 'abc', 'hello'), (2, '', '', 'héllo'), (3, NULL, NULL, NULL)`)
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{`SELECT id, c, v FROM cc ORDER BY id`, []string{"1|ab  |abc", "2|    |", "3|NULL|NULL"}},
		{`SELECT c FROM cc WHERE id = 1`, []string{"ab  "}},
		{`SELECT c, id + 1 FROM cc WHERE id = 1`, []string{"ab  |2"}},
		{`SELECT t::varchar(2), t::char(3), CAST(t AS character varying(4)), t::char, t::character(7) FROM cc ORDER BY id`,
			[]string{"he|hel|hell|h|hello  ", "hé|hél|héll|h|héllo  ", "NULL|NULL|NULL|NULL|NULL"}},
		{`SELECT id::varchar(1), (id * 100)::char(2), v::char(5) FROM cc WHERE id = 1`, []string{"1|10|abc  "}},
		{`SELECT length(c), c || '|', c = 'ab', c::varchar(1), c::text FROM cc WHERE id = 1`, []string{"2|ab||true|a|ab"}},
		{`SELECT max(c) FROM cc`, []string{"ab  "}},
	} {
		got := mustRun(t, s, tc.query)
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s (pgwire):\ngot  %q\nwant %q", tc.query, got, tc.want)
		}
		arrowGot, _ := arrowRows(t, s.(*engine.Session), tc.query)
		for i := range arrowGot {
			arrowGot[i] = strings.ReplaceAll(arrowGot[i], "(null)", "NULL")
		}
		if strings.Join(arrowGot, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s (Arrow):\ngot  %q\nwant %q", tc.query, arrowGot, tc.want)
		}
	}
}
