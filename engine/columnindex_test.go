package engine_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// indexedTable is a 4-bucket primary-key table partitioned by p (4
// values), written in 6 batches: tag is a text unrelated to the key, of
// which 't05000x' is held by one row only, and n grows with p (so each
// partition's files cover a range of n of their own).
func indexedTable(t *testing.T) pgwire.Session {
	s := newSession(t)
	mustRun(t, s, `CREATE SCHEMA ix;
		CREATE TABLE ix.t (id bigint, p int, tag text, n int, PRIMARY KEY (id)) PARTITION BY LIST (p) WITH (hash_bucket_num = 4)`)
	for b := range 6 {
		mustRun(t, s, fmt.Sprintf(`INSERT INTO ix.t SELECT i, i %% 4, 't' || lpad((i * 7919 %% 10007)::text, 5, '0'), (i %% 4) * 10000 + i
			FROM range(%d, %d) AS r(i)`, b*500, (b+1)*500))
	}
	mustRun(t, s, `UPDATE ix.t SET tag = 't05000x' WHERE id = 1234`)
	return s
}

// queryPairs are a query on indexed columns and the same query with the
// columns hidden behind expressions (nothing prunes).
var queryPairs = [][2]string{
	{`SELECT id, tag FROM ix.t WHERE tag = 't05000x'`, `SELECT id, tag FROM ix.t WHERE tag || '' = 't05000x'`},
	{`SELECT id FROM ix.t WHERE tag IN ('t05000x', 't07777x') ORDER BY id`, `SELECT id FROM ix.t WHERE tag || '' IN ('t05000x', 't07777x') ORDER BY id`},
	{`SELECT count(*), sum(n) FROM ix.t WHERE n BETWEEN 20100 AND 20300`, `SELECT count(*), sum(n) FROM ix.t WHERE n + 0 BETWEEN 20100 AND 20300`},
	{`SELECT id, tag FROM ix.t WHERE tag = 't07777x'`, `SELECT id, tag FROM ix.t WHERE tag || '' = 't07777x'`},
}

func checkSameResults(t *testing.T, s pgwire.Session) {
	t.Helper()
	for _, q := range queryPairs {
		got, want := mustRun(t, s, q[0]), mustRun(t, s, q[1])
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%s:\n%v\nunpruned:\n%v", q[0], got, want)
		}
	}
}

// TestColumnIndexPrunes: CREATE INDEX on non-key columns makes reads skip
// units by the columns' statistics at once (existing files) and by their
// bloom filters once files carry them (new writes, compaction); results
// are those of the unpruned query before and after, also after an upsert
// moved a key away from the searched value; DROP INDEX stops the pruning.
func TestColumnIndexPrunes(t *testing.T) {
	s := indexedTable(t)
	needle := `SELECT id, tag FROM ix.t WHERE tag = 't05000x'`
	rng := `SELECT count(*) FROM ix.t WHERE n BETWEEN 20100 AND 20300`
	checkSameResults(t, s)
	expectRows(t, s, needle, "1234|t05000x")
	// Without an index, statistics prune (every column has them); bloom
	// filters do not exist.
	if c := explainCounts(t, s, needle)["Files Skipped by Row Filter"]; c[1] != 0 {
		t.Fatalf("skipped %v by bloom filters without an index", c)
	}
	if c := explainCounts(t, s, rng)["Files Skipped by Row Filter"]; c[0] == 0 {
		t.Fatalf("statistics of n skipped nothing without an index: %v", c)
	}

	mustRun(t, s, `CREATE INDEX t_tag ON ix.t (tag)`)
	mustRun(t, s, `CREATE INDEX IF NOT EXISTS t_n ON ix.t USING btree (n, tag)`)
	if plan := strings.Join(mustRun(t, s, "EXPLAIN "+needle), "\n"); !strings.Contains(plan, "Index Filter: tag = 't05000x'") {
		t.Fatalf("plan does not show the index filter:\n%s", plan)
	}
	// Old files: no bloom filters, but statistics prune ranges.
	c := explainCounts(t, s, needle)
	if c["Files Skipped by Row Filter"][1] != 0 {
		t.Fatalf("files without bloom filters skipped by them: %v", c)
	}
	c = explainCounts(t, s, rng)
	if c["Files Skipped by Row Filter"][0] == 0 {
		t.Fatalf("statistics of the indexed column n skipped nothing: %v", c)
	}
	checkSameResults(t, s)

	// Compaction writes the filters: most units skipped by them.
	mustRun(t, s, `CALL lakesoul.compact('ix.t')`)
	c = explainCounts(t, s, needle)
	files := c["Files Read"]
	if c["Files Skipped by Row Filter"][1] < files[1]/2 || files[0] > files[1]/2 {
		t.Fatalf("bloom filters of the compacted files skipped too little: %v", c)
	}
	checkSameResults(t, s)

	// An upsert moves key 1234 off the needle, in a newer file of its unit:
	// the unit must not be skipped for the old value's sake, nor the key
	// come back with its old tag.
	mustRun(t, s, `INSERT INTO ix.t (id, p, tag, n) VALUES (1234, 2, 't06000x', 21234), (99999, 3, 't05000x', 39999)`)
	expectRows(t, s, needle, "99999|t05000x")
	expectRows(t, s, `SELECT id FROM ix.t WHERE tag = 't06000x'`, "1234")
	checkSameResults(t, s)

	mustRun(t, s, `DROP INDEX ix.t_tag`)
	mustRun(t, s, `DROP INDEX IF EXISTS t_tag`)
	mustRun(t, s, `DROP INDEX ix.t_n`)
	// The files keep their bloom filters, which still prove absence; the
	// plan no longer names the index.
	if plan := strings.Join(mustRun(t, s, "EXPLAIN "+needle), "\n"); strings.Contains(plan, "Index Filter") {
		t.Fatalf("plan shows an index filter after DROP INDEX:\n%s", plan)
	}
	checkSameResults(t, s)
}

// bloomColumns lists, per data file under dir, the columns of its first
// row group that carry a bloom filter.
func bloomColumns(t *testing.T, dir string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.parquet"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no data files in %s: %v", dir, err)
	}
	var out []string
	for _, p := range paths {
		r, err := file.OpenParquetFile(p, false)
		if err != nil {
			t.Fatal(err)
		}
		var cols []string
		rg := r.MetaData().RowGroup(0)
		for c := range rg.NumColumns() {
			if cc, _ := rg.ColumnChunk(c); cc.BloomFilterOffset() > 0 {
				cols = append(cols, r.MetaData().Schema.Column(c).Name())
			}
		}
		r.Close()
		out = append(out, strings.Join(cols, ","))
	}
	return out
}

// TestColumnIndexAppendTable: files of a table without a primary key
// written after CREATE INDEX carry the indexed column's bloom filters (the
// native scan hands them to DuckDB's Parquet reader, lakesoul_scan prunes
// file by file); results are those of the unpruned query.
func TestColumnIndexAppendTable(t *testing.T) {
	wh := filepath.Join(t.TempDir(), "wh")
	s := newSessionAt(t, wh)
	mustRun(t, s, `CREATE TABLE ev0 (k text, v bigint); INSERT INTO ev0 VALUES ('a', 0)`)
	if got := bloomColumns(t, filepath.Join(wh, "default", "ev0")); strings.Join(got, ";") != "" {
		t.Fatalf("bloom filters without an index: %v", got)
	}
	mustRun(t, s, `CREATE TABLE ev (k text, v bigint)`)
	mustRun(t, s, `CREATE INDEX ON ev (k)`)
	for b := range 8 {
		mustRun(t, s, fmt.Sprintf(`INSERT INTO ev SELECT 'k' || lpad((i * 31 %% 1000)::text, 4, '0'), i FROM range(%d, %d) AS r(i)`, b*1000, (b+1)*1000))
	}
	mustRun(t, s, `INSERT INTO ev VALUES ('k0500x', -1)`)
	expectRows(t, s, `SELECT v FROM ev WHERE k = 'k0500x'`, "-1")
	expectRows(t, s, `SELECT count(*) FROM ev WHERE k = 'k0007'`, "8")
	expectRows(t, s, `SELECT count(*) FROM ev WHERE k IN ('k0007', 'k0500y')`, "8")
	for _, c := range bloomColumns(t, filepath.Join(wh, "default", "ev")) {
		if c != "k" {
			t.Fatalf("file with bloom filters on %q, want k", c)
		}
	}
}

// TestColumnIndexErrors: bad CREATE/DROP INDEX input fails with
// PostgreSQL's SQLSTATEs and records nothing.
func TestColumnIndexErrors(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE SCHEMA e; CREATE TABLE e.t (a bigint, b text, c int, PRIMARY KEY (a, b)); CREATE TABLE e.u (x int)`)
	mustRun(t, s, `CREATE INDEX e_c ON e.t (c)`)
	for _, c := range []struct{ sql, code string }{
		{`CREATE INDEX e_x ON e.t (nope)`, sqlerr.UndefinedColumn},
		{`CREATE INDEX e_c ON e.t (b)`, sqlerr.DuplicateTable},
		{`CREATE INDEX e_c ON e.u (x)`, sqlerr.DuplicateTable},
		{`CREATE INDEX u ON e.t (b)`, sqlerr.DuplicateTable},
		{`CREATE INDEX e_x ON e.nope (b)`, sqlerr.UndefinedTable},
		{`CREATE INDEX e_x ON e.t (lower(b))`, sqlerr.FeatureNotSupported},
		{`CREATE INDEX e_x ON e.t (c) WHERE c > 0`, sqlerr.FeatureNotSupported},
		{`CREATE INDEX e_x ON e.t (c) INCLUDE (b)`, sqlerr.FeatureNotSupported},
		{`CREATE INDEX e_x ON e.t USING gist (c)`, sqlerr.FeatureNotSupported},
		{`CREATE UNIQUE INDEX e_x ON e.t (c)`, sqlerr.FeatureNotSupported},
		{`CREATE UNIQUE INDEX e_x ON e.t (a)`, sqlerr.FeatureNotSupported},
		{`CREATE UNIQUE INDEX e_x ON e.u (x)`, sqlerr.FeatureNotSupported},
		{`CREATE INDEX e_x ON e.t (c) WITH (pages = 3)`, sqlerr.InvalidParameterValue},
		{`DROP INDEX e.nope`, sqlerr.UndefinedObject},
	} {
		if _, err := run(t, s, c.sql); sqlerr.Code(err) != c.code {
			t.Fatalf("%s: %v (SQLSTATE %s), want %s", c.sql, err, sqlerr.Code(err), c.code)
		}
	}
	_, err := run(t, s, `CREATE UNIQUE INDEX e_x ON e.t (c)`)
	if e, ok := err.(*sqlerr.Error); !ok || !strings.Contains(e.Hint, "(a, b)") {
		t.Fatalf("UNIQUE off the key: hint %v does not name the primary key", err)
	}
	// UNIQUE on exactly the key (any order) is a recorded no-op; IF NOT
	// EXISTS skips an existing name; unnamed indexes get PostgreSQL's names.
	mustRun(t, s, `CREATE UNIQUE INDEX e_pk ON e.t (b, a)`)
	mustRun(t, s, `CREATE INDEX IF NOT EXISTS e_c ON e.t (b)`)
	mustRun(t, s, `CREATE INDEX ON e.t (c); CREATE INDEX ON e.t (c)`)
	expectRows(t, s, `SELECT index_name, columns, is_unique FROM lakesoul.column_index ORDER BY 1`,
		"e_c|[c]|false", "e_pk|[b a]|true", "t_c_idx|[c]|false", "t_c_idx1|[c]|false")
}
