package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// newSessionIn is newSession with a known warehouse directory.
func newSessionIn(t *testing.T) (pgwire.Session, string) {
	t.Helper()
	wh := filepath.Join(t.TempDir(), "wh")
	return newSessionAt(t, wh), wh
}

func one(t *testing.T, s pgwire.Session, query string) string {
	t.Helper()
	rows := mustRun(t, s, query)
	if len(rows) != 1 {
		t.Fatalf("%s: %d rows", query, len(rows))
	}
	return rows[0]
}

func countFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(d.Name(), ".parquet") {
			n++
		}
		return nil
	})
	return n
}

func wantCode(t *testing.T, s pgwire.Session, query, code string) {
	t.Helper()
	if _, err := run(t, s, query); sqlerr.Code(err) != code {
		t.Fatalf("%s: %v (SQLSTATE %s), want %s", query, err, sqlerr.Code(err), code)
	}
}

// The SQL surface of DESIGN.md §4 for history and time travel: history,
// snapshot by time and by version, changes, in plain reads and inside joins
// and aggregates; rollback and cleanup with CALL; lakesoul.tables.
func TestTimeTravelSQL(t *testing.T) {
	s, wh := newSessionIn(t)
	mustRun(t, s, `CREATE SCHEMA s;
		CREATE TABLE s.t (id bigint, v text, d date, PRIMARY KEY (id)) PARTITION BY LIST (d) WITH (hash_bucket_num = 2)`)
	mustRun(t, s, `INSERT INTO s.t VALUES (1, 'a', '2026-01-01'), (2, 'b', '2026-01-02')`)
	time.Sleep(5 * time.Millisecond)
	mustRun(t, s, `INSERT INTO s.t VALUES (1, 'a2', '2026-01-01')`)
	time.Sleep(5 * time.Millisecond)
	mustRun(t, s, `INSERT INTO s.t VALUES (3, 'c', '2026-01-01')`)

	expectRows(t, s, `SELECT "partition", version, commit_op FROM lakesoul.history('s.t') ORDER BY 1, 2`,
		"d=2026-01-01|0|MergeCommit", "d=2026-01-01|1|MergeCommit", "d=2026-01-01|2|MergeCommit", "d=2026-01-02|0|MergeCommit")
	t1 := one(t, s, `SELECT committed_at::text FROM lakesoul.history('s.t') WHERE version = 1`)
	t2 := one(t, s, `SELECT committed_at::text FROM lakesoul.history('s.t') WHERE version = 2`)

	// Strict "<": at t1 itself, version 1 is not yet visible.
	expectRows(t, s, `SELECT id, v, d::text FROM lakesoul.snapshot('s.t', TIMESTAMPTZ '`+t1+`') ORDER BY id`,
		"1|a|2026-01-01", "2|b|2026-01-02")
	expectRows(t, s, `SELECT id, v FROM lakesoul.snapshot('s.t', TIMESTAMPTZ '`+t2+`') ORDER BY id`, "1|a2", "2|b")
	expectRows(t, s, `SELECT id, v FROM lakesoul.snapshot('s.t', version => 1, partition => 'd=2026-01-01') ORDER BY id`, "1|a2")
	mustRun(t, s, "SET search_path = s")
	expectRows(t, s, `SELECT id, v FROM lakesoul.snapshot('t', version => 0) ORDER BY id`, "1|a", "2|b")
	// Inside larger queries: a join of now and then, an aggregate, a CTE.
	expectRows(t, s, `SELECT cur.id, old.v AS was, cur.v AS now FROM s.t cur
		JOIN lakesoul.snapshot('s.t', version => 0) old ON old.id = cur.id ORDER BY cur.id`, "1|a|a2", "2|b|b")
	expectRows(t, s, `SELECT count(*), max(v) FROM lakesoul.snapshot('s.t', TIMESTAMPTZ '`+t2+`')`, "2|b")
	expectRows(t, s, `WITH old AS (SELECT * FROM lakesoul.snapshot('s.t', TIMESTAMPTZ '`+t1+`'))
		SELECT count(*) FROM s.t WHERE id NOT IN (SELECT id FROM old)`, "1")
	// Incremental read [t1, ∞): the two later upserts of d=2026-01-01.
	expectRows(t, s, `SELECT id, v FROM lakesoul.changes('s.t', TIMESTAMPTZ '`+t1+`') ORDER BY id`, "1|a2", "3|c")
	expectRows(t, s, `SELECT id, v FROM lakesoul.changes('s.t', TIMESTAMPTZ '`+t1+`', TIMESTAMPTZ '`+t2+`') ORDER BY id`, "1|a2")
	// INSERT … SELECT from a snapshot restores old rows.
	mustRun(t, s, `CREATE TABLE s.copy (id bigint, v text, d date, PRIMARY KEY (id))`)
	mustRun(t, s, `INSERT INTO s.copy SELECT * FROM lakesoul.snapshot('s.t', version => 0)`)
	expectRows(t, s, `SELECT id, v FROM s.copy ORDER BY id`, "1|a", "2|b")

	expectRows(t, s, `SELECT table_schema, table_name, partitions, table_id LIKE 'table_%' FROM lakesoul.tables ORDER BY table_name`,
		"s|copy|;id|true", "s|t|d;id|true")

	// Rollback is a new version; reads go back.
	expectRows(t, s, `CALL lakesoul.rollback('s.t', version => 0, partition => 'd=2026-01-01')`, "d=2026-01-01|3")
	expectRows(t, s, `SELECT id, v FROM s.t ORDER BY id`, "1|a", "2|b")
	expectRows(t, s, `CALL lakesoul.rollback('s.t', TIMESTAMPTZ '`+t2+`')`, "d=2026-01-01|4", "d=2026-01-02|1")
	expectRows(t, s, `SELECT id, v FROM s.t ORDER BY id`, "1|a2", "2|b")
	t4 := one(t, s, `SELECT committed_at::text FROM lakesoul.history('s.t') WHERE version = 4`)

	// Cleanup before the rollback: versions 0..3 of d=2026-01-01 go; the
	// files only they listed are deleted, reads are unchanged.
	before := countFiles(t, wh)
	rows := mustRun(t, s, `CALL lakesoul.cleanup('s.t', TIMESTAMPTZ '`+t4+`' - interval '1 millisecond', partition => 'd=2026-01-01')`)
	if len(rows) != 1 || !strings.HasPrefix(rows[0], "d=2026-01-01|") {
		t.Fatalf("cleanup: %v", rows)
	}
	deleted := strings.TrimPrefix(rows[0], "d=2026-01-01|")
	if after := countFiles(t, wh); deleted != "1" || after != before-1 {
		t.Fatalf("cleanup deleted %s files; %d files before, %d after", deleted, before, after)
	}
	expectRows(t, s, `SELECT id, v FROM s.t ORDER BY id`, "1|a2", "2|b")
	expectRows(t, s, `SELECT version FROM lakesoul.history('s.t') WHERE "partition" = 'd=2026-01-01' ORDER BY 1`, "4")

	// Drop partition: gone from reads, files stay.
	before = countFiles(t, wh)
	expectRows(t, s, `CALL lakesoul.drop_partition('s.t', 'd=2026-01-02')`, "2")
	expectRows(t, s, `SELECT id, v FROM s.t ORDER BY id`, "1|a2")
	if after := countFiles(t, wh); after != before {
		t.Fatalf("drop partition removed files: %d → %d", before, after)
	}

	// Bad input: clear errors.
	wantCode(t, s, `SELECT * FROM lakesoul.snapshot('s.t', version => 99)`, sqlerr.InvalidParameterValue)
	wantCode(t, s, `SELECT * FROM lakesoul.snapshot('s.t', version => 0, partition => 'd=1999-01-01')`, sqlerr.UndefinedObject)
	wantCode(t, s, `SELECT * FROM lakesoul.snapshot('s.t', TIMESTAMPTZ '2000-01-01 00:00:00+00')`, sqlerr.InvalidParameterValue)
	wantCode(t, s, `SELECT * FROM lakesoul.snapshot('s.nope', version => 0)`, sqlerr.UndefinedTable)
	wantCode(t, s, `SELECT * FROM s.t JOIN lakesoul.snapshot('s.t', version => s.t.id) o ON true`, sqlerr.FeatureNotSupported)
	wantCode(t, s, `CALL lakesoul.rollback('s.t', version => 42)`, sqlerr.InvalidParameterValue)
	wantCode(t, s, `CALL lakesoul.compact('s.nope')`, sqlerr.UndefinedTable) // compaction: compact_call.go
	wantCode(t, s, `CALL lakesoul.nope('s.t')`, sqlerr.UndefinedFunction)
	wantCode(t, s, `CALL public.whatever()`, sqlerr.FeatureNotSupported)
	mustRun(t, s, "BEGIN")
	wantCode(t, s, `CALL lakesoul.rollback('s.t', version => 0)`, "25001")
	mustRun(t, s, "ROLLBACK")
	// The session's time zone applies to literals without an offset.
	mustRun(t, s, "SET TimeZone = 'Asia/Tokyo'")
	// (t4 read as Tokyo local time is t4 itself: strict "<" excludes version 4.)
	local := one(t, s, `SELECT (TIMESTAMPTZ '`+t4+`' AT TIME ZONE 'Asia/Tokyo')::text`)
	expectRows(t, s, `SELECT id, v FROM lakesoul.snapshot('s.t', TIMESTAMP '`+local+`'::timestamptz, partition => 'd=2026-01-01') ORDER BY id`)
	expectRows(t, s, `SELECT id, v FROM lakesoul.snapshot('s.t', TIMESTAMP '`+local+`'::timestamptz + interval '1 ms', partition => 'd=2026-01-01') ORDER BY id`, "1|a2")
}

// Scenarios 5 and 6: two range columns give partition desc
// "date=…,region=…" and directories date=…/region=…; a null range value is
// stored as __L@KE$OUL_NULL__ and an empty string as
// __L@KE$OUL_EMPTY_STRING__, and both read back as they were.
func TestPartitionDescsOnDisk(t *testing.T) {
	s, wh := newSessionIn(t)
	mustRun(t, s, `CREATE SCHEMA s; CREATE TABLE s.r (id bigint, date date, region text) PARTITION BY LIST (date, region)`)
	mustRun(t, s, `INSERT INTO s.r VALUES (1, '2024-01-01', 'x'), (2, '2024-01-01', NULL), (3, '2024-01-01', '')`)
	expectRows(t, s, `SELECT "partition" FROM lakesoul.history('s.r') ORDER BY 1`,
		"date=2024-01-01,region=__L@KE$OUL_EMPTY_STRING__", "date=2024-01-01,region=__L@KE$OUL_NULL__", "date=2024-01-01,region=x")
	if n := countFiles(t, filepath.Join(wh, "s", "r", "date=2024-01-01", "region=x")); n != 1 {
		t.Fatalf("%d files under date=2024-01-01/region=x", n)
	}
	expectRows(t, s, `SELECT id, region IS NULL, region = '' FROM s.r ORDER BY id`, "1|false|false", "2|true|NULL", "3|false|true")
}
