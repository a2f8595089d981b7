package engine_test

import "testing"

// TestJSONBComparesAsJSONB: on lake tables, jsonb values compare, sort and
// match IN lists as PostgreSQL's jsonb does — keys in any order, white
// space, duplicate keys (the last wins), numbers by value — not as their
// text; the answers are PostgreSQL 15's. DESC puts NULL first, as
// PostgreSQL does for every type.
func TestJSONBComparesAsJSONB(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE jb (id int, j jsonb, n int)`)
	mustRun(t, s, `INSERT INTO jb VALUES (1, '{"b": 2, "a": 1}', 1), (2, '{"a": 1.0, "a": 3}', NULL), (3, '{"a":1}', 3), (4, NULL, 4), (5, '[1, "x"]', 5)`)
	for q, want := range map[string][]string{
		`SELECT id FROM jb WHERE j = '{"a":1,"b":2}'::jsonb`:                             {"1"},
		`SELECT id FROM jb WHERE j = '{ "b" : 2.00, "a": 1, "b": 2 }'`:                   {"1"},
		`SELECT id FROM jb WHERE j = '{"a": 3.00}'::jsonb`:                               {"2"},
		`SELECT id FROM jb WHERE j = '{"a": 1.0}'::jsonb`:                                {"3"},
		`SELECT id FROM jb WHERE j <> '{"a":1}'::jsonb ORDER BY id`:                      {"1", "2", "5"},
		`SELECT id FROM jb WHERE j < '{"a": 2}'::jsonb ORDER BY id`:                      {"3", "5"},
		`SELECT id FROM jb WHERE j >= '[1, "x"]' ORDER BY id`:                            {"1", "2", "3", "5"},
		`SELECT id FROM jb ORDER BY j, id`:                                               {"5", "3", "2", "1", "4"},
		`SELECT id FROM jb ORDER BY j DESC, id`:                                          {"4", "1", "2", "3", "5"},
		`SELECT j, count(*) FROM jb GROUP BY 1 ORDER BY 1`:                               {"[1, \"x\"]|1", "{\"a\": 1}|1", "{\"a\": 3}|1", "{\"a\": 1, \"b\": 2}|1", "NULL|1"},
		`SELECT id, j FROM jb ORDER BY 2, 1`:                                             {"5|[1, \"x\"]", "3|{\"a\": 1}", "2|{\"a\": 3}", "1|{\"a\": 1, \"b\": 2}", "4|NULL"},
		`SELECT id FROM jb ORDER BY n DESC`:                                              {"2", "5", "4", "3", "1"},
		`SELECT id FROM jb WHERE j IN ('{"a":1}'::jsonb, '{"b":2,"a":1.0}') ORDER BY id`: {"1", "3"},
		`SELECT id FROM jb WHERE j NOT IN ('{"a":1}', '[1,"x"]') ORDER BY id`:            {"1", "2"},
		`SELECT a.id, b.id FROM jb a JOIN jb b ON a.j = b.j AND a.id < b.id`:             nil,
	} {
		expectRows(t, s, q, want...)
	}
}
