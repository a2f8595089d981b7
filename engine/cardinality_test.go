package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	pqfile "github.com/apache/arrow-go/v18/parquet/file"

	"github.com/lakesoul-go/lakesoul/pgwire"
)

// tableKinds are the two kinds of lake table, as CREATE TABLE suffixes of
// a table (k bigint, v bigint): keyed (merged on read) and append.
var tableKinds = []struct{ name, ddl string }{
	{"keyed", ", PRIMARY KEY (k)) WITH (hash_bucket_num = 2)"},
	{"append", ")"},
}

// footerCounts sums the row and row-group counts of the data files under
// dir (a table's directory), from their footers.
func footerCounts(t *testing.T, dir string) (files int, rows, rowGroups int64) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".parquet") {
			return err
		}
		pf, err := pqfile.OpenParquetFile(path, false)
		if err != nil {
			return err
		}
		defer pf.Close()
		files++
		rows += pf.NumRows()
		rowGroups += int64(pf.NumRowGroups())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files, rows, rowGroups
}

// twoWrites creates table name (k bigint, v bigint<ddl>) and writes it
// twice: keys 0 to n-1 with v = k % 10, then keys from to n+1000-1 with
// v = 1 (a keyed table's overlap is updated, 1000 keys are new).
func twoWrites(t *testing.T, s pgwire.Session, name, ddl string, n, from int) {
	t.Helper()
	mustRun(t, s, `CREATE TABLE `+name+` (k bigint, v bigint`+ddl)
	mustRun(t, s, fmt.Sprintf(`INSERT INTO %s SELECT i, i %% 10 FROM range(%d) AS r(i)`, name, n))
	mustRun(t, s, fmt.Sprintf(`INSERT INTO %s SELECT i, 1 FROM range(%d, %d) AS r(i)`, name, from, n+1000))
}

// DuckDB plans lake scans with the rows in their files' footers (the
// cardinality lakesoul_scan reports): an upper bound for a keyed table
// (every version of a key counts), exact for an append table. Knowing it,
// DuckDB builds a join's hash table on the small side.
func TestScanCardinality(t *testing.T) {
	ps, wh := newSessionIn(t)
	for _, kind := range tableKinds {
		name := "t_" + kind.name
		twoWrites(t, ps, name, kind.ddl, 20000, 15000)
		_, rows, _ := footerCounts(t, filepath.Join(wh, "default", name))
		if rows != 26000 {
			t.Fatalf("%s: footers hold %d rows, want 26000", name, rows)
		}
		plan := strings.Join(mustRun(t, ps, `EXPLAIN SELECT sum(v) FROM `+name), "\n")
		if want := "~26,000 rows"; !strings.Contains(plan, want) {
			t.Errorf("%s: plan lacks %q:\n%s", name, want, plan)
		}

		// The small table is written first, the keyed one joined to it:
		// the hash table is built on the right side, which must be small.
		mustRun(t, ps, `CREATE TABLE small_`+kind.name+` (k bigint, w text)`)
		mustRun(t, ps, `INSERT INTO small_`+kind.name+` SELECT i, 'w' || i FROM range(7) AS r(i)`)
		plan = strings.Join(mustRun(t, ps, `EXPLAIN SELECT * FROM small_`+kind.name+` s JOIN `+name+` USING (k)`), "\n")
		found := false
		for _, l := range strings.Split(plan, "\n") {
			big, small := strings.Index(l, "~26,000 rows"), strings.Index(l, "~7 rows")
			if big >= 0 && small >= 0 {
				found = true
				if big > small {
					t.Errorf("%s: the join builds on the big side:\n%s", name, plan)
				}
			}
		}
		if !found {
			t.Errorf("%s: no line shows both scans' estimates:\n%s", name, plan)
		}
	}
}

// EXPLAIN ANALYZE's counts of a scan are the files' own, for both kinds of
// table and both ways DuckDB reads a scan (columns, and count(*) alone):
// every file, row group and row the footers hold is considered and read,
// and the merge returns each key once.
func TestExplainAnalyzeCounts(t *testing.T) {
	s, wh := newSessionIn(t)
	for _, kind := range tableKinds {
		name := "t_" + kind.name
		twoWrites(t, s, name, kind.ddl, 300000, 295000)
		files, rows, groups := footerCounts(t, filepath.Join(wh, "default", name))
		if groups <= int64(files) {
			t.Fatalf("%s: %d row groups in %d files: the test wants files of several", name, groups, files)
		}
		merged := rows
		if kind.name == "keyed" {
			merged = 301000
		}
		// readsAll checks that q considers and reads every file, row group
		// and row, and passes passed rows.
		readsAll := func(q string, passed any) {
			t.Helper()
			plan := strings.Join(mustRun(t, s, "EXPLAIN ANALYZE "+q), "\n")
			for _, want := range []string{
				fmt.Sprintf("Files Read: %d of %d (", files, files),
				fmt.Sprintf("Row Groups Read: %d of %d (", groups, groups),
				fmt.Sprintf("Rows: %d read from files, %d merged, %v passed", rows, merged, passed),
			} {
				if !strings.Contains(plan, want) {
					t.Errorf("%s: EXPLAIN ANALYZE lacks %q:\n%s", q, want, plan)
				}
			}
		}
		readsAll("SELECT sum(v) FROM "+name, merged)
		readsAll("SELECT count(*) FROM "+name, merged)
		// A filter on a non-key column that prunes nothing (<>): the rows
		// that pass are the query's.
		q := "SELECT count(*) FROM " + name + " WHERE v <> 3"
		readsAll(q, mustRun(t, s, q)[0])
		// One that prunes by statistics (v is 1 in the second write): what
		// was read and what was skipped add up to the footers' counts.
		q = "SELECT count(*) FROM " + name + " WHERE v = 3"
		plan := strings.Join(mustRun(t, s, "EXPLAIN ANALYZE "+q), "\n")
		num := func(re string) []int64 {
			m := regexp.MustCompile(re).FindStringSubmatch(plan)
			if m == nil {
				t.Fatalf("%s: EXPLAIN ANALYZE lacks %s:\n%s", q, re, plan)
			}
			var out []int64
			for _, x := range m[1:] {
				v, _ := strconv.ParseInt(x, 10, 64)
				out = append(out, v)
			}
			return out
		}
		f := num(`Files Read: (\d+) of (\d+) \(skipped: (\d+) by statistics or page index, (\d+) by bloom`)
		fr := num(`Files Skipped by Row Filter: (\d+) by statistics, (\d+) by bloom`)
		g := num(`Row Groups Read: (\d+) of (\d+) \(skipped: (\d+) by statistics, (\d+) by bloom filters, (\d+) by page index`)
		if f[1] != int64(files) || f[0]+f[2]+f[3]+fr[0]+fr[1] != int64(files) {
			t.Errorf("%s: files %v %v of %d:\n%s", q, f, fr, files, plan)
		}
		if g[1] != groups || g[0]+g[2]+g[3]+g[4] != groups {
			t.Errorf("%s: row groups %v of %d:\n%s", q, g, groups, plan)
		}
		if kind.name == "append" && fr[0] == 0 {
			t.Errorf("%s: no file skipped by statistics:\n%s", q, plan)
		}
	}
}
