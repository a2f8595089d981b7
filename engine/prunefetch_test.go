package engine_test

import "testing"

// Pruned listings (prunefetch.go) must be supersets of what each reference
// reads: exact descs, GIN terms on a subset of the range columns, IN lists,
// contradictions, and two references to one table with different filters.
func TestPrunedListingIsASuperset(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE SCHEMA s;
		CREATE TABLE s.t (id bigint, d date, r text, v int, PRIMARY KEY (id)) PARTITION BY LIST (d, r)`)
	mustRun(t, s, `INSERT INTO s.t VALUES
		(1, '2026-01-01', 'a', 1), (2, '2026-01-01', 'b', 2), (3, '2026-01-02', 'a', 3),
		(4, '2026-01-02', '', 4), (5, '2026-01-03', 'a b', 5)`)
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{`SELECT id FROM s.t WHERE d = '2026-01-01' AND r = 'b'`, []string{"2"}},
		{`SELECT id FROM s.t WHERE d = '2026-01-01' ORDER BY id`, []string{"1", "2"}},
		{`SELECT id FROM s.t WHERE r = 'a' ORDER BY id`, []string{"1", "3"}},
		{`SELECT id FROM s.t WHERE r = '' ORDER BY id`, []string{"4"}},
		{`SELECT id FROM s.t WHERE r = 'a b'`, []string{"5"}},
		{`SELECT id FROM s.t WHERE d IN ('2026-01-01', '2026-01-02') AND r = 'a' ORDER BY id`, []string{"1", "3"}},
		{`SELECT id FROM s.t WHERE d IN ('2026-01-02', '2026-01-03') ORDER BY id`, []string{"3", "4", "5"}},
		{`SELECT id FROM s.t WHERE d = '2026-01-01' AND d = '2026-01-02'`, nil},
		{`SELECT x.id, y.id FROM s.t x, s.t y WHERE x.r = 'b' AND y.d = '2026-01-03'`, []string{"2|5"}},
		{`SELECT count(*) FROM s.t WHERE v > 1 AND d = '2026-01-02'`, []string{"2"}},
	} {
		expectRows(t, s, tc.query, tc.want...)
	}
}
