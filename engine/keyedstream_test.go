package engine_test

import (
	"strings"
	"testing"
)

// A primary-key table whose buckets each hold one file of unique keys is
// read without merging (reader/unitplan.go), as EXPLAIN ANALYZE counts; an
// upsert of an existing key makes its bucket merge again, an insert of keys
// above every file's range does not. count(*), which reads no column
// (markRowsOnlyScans), counts each key once throughout.
func TestKeyedScanStreams(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE k (id bigint PRIMARY KEY, v text) WITH (hash_bucket_num = 2)`)
	mustRun(t, s, `INSERT INTO k SELECT i, 'v' || i FROM range(1000) AS r(i)`)
	plan := func(want ...string) {
		t.Helper()
		p := strings.Join(mustRun(t, s, "EXPLAIN ANALYZE SELECT sum(id), count(v) FROM k"), "\n")
		for _, w := range want {
			if !strings.Contains(p, w) {
				t.Errorf("EXPLAIN ANALYZE lacks %q:\n%s", w, p)
			}
		}
	}
	expectRows(t, s, "SELECT sum(id), count(v), count(*) FROM k", "499500|1000|1000")
	expectRows(t, s, "SELECT count(*) FROM k", "1000")
	plan("Files Streamed: 2 without merging", "Merge Fan-in: at most 0 files")
	mustRun(t, s, `INSERT INTO k VALUES (7, 'seven') ON CONFLICT (id) DO UPDATE SET v = excluded.v`)
	expectRows(t, s, "SELECT sum(id), count(v), count(*), max(v) FILTER (WHERE id = 7) FROM k", "499500|1000|1000|seven")
	expectRows(t, s, "SELECT count(*) FROM k", "1000")
	plan("Files Streamed: 1 without merging", "Merge Fan-in: at most 2 files")
	mustRun(t, s, `INSERT INTO k SELECT i, 'w' FROM range(5000, 5010) AS r(i)`)
	expectRows(t, s, "SELECT sum(id), count(v), count(*) FROM k", "549545|1010|1010")
	expectRows(t, s, "SELECT count(*) FROM k", "1010")
	expectRows(t, s, "SELECT count(*) FROM k WHERE EXISTS (SELECT 1 FROM k k2 WHERE k2.id = 7)", "1010")
	plan("Files Streamed: 3 without merging", "Merge Fan-in: at most 2 files")
}
