package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	pqfile "github.com/apache/arrow-go/v18/parquet/file"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/pgtest"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// explainCounts runs EXPLAIN ANALYZE of query with params and returns the
// numbers of its lines, by label ("Files Read" → [read, of, skipped by
// stats, skipped by bloom], "Buckets" → [read, of], …).
func explainCounts(t *testing.T, s pgwire.Session, query string, params ...any) map[string][]int {
	t.Helper()
	lines := mustRun(t, s, "EXPLAIN ANALYZE "+query, params...)
	out := map[string][]int{}
	num := regexp.MustCompile(`\d+`)
	for _, l := range lines {
		label, rest, ok := strings.Cut(strings.TrimSpace(l), ":")
		if !ok {
			continue
		}
		for _, n := range num.FindAllString(rest, -1) {
			v, _ := strconv.Atoi(n)
			out[label] = append(out[label], v)
		}
	}
	return out
}

// keyedTable is a 4-bucket table of the 2000 even keys below 4000 and 20
// upserts of a few of them each (so a key's bucket holds many files, most
// without it, and odd keys are absent inside every file's key range).
func keyedTable(t *testing.T) pgwire.Session {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE k (id bigint PRIMARY KEY, v text, n int) WITH (hash_bucket_num = 4)`)
	mustRun(t, s, `INSERT INTO k SELECT i, 'v' || i, 0 FROM range(0, 4000, 2) AS r(i)`)
	for u := 1; u <= 20; u++ {
		mustRun(t, s, fmt.Sprintf(`INSERT INTO k (id, n) SELECT i, %d FROM range(%d, 4000, 194) AS r(i)`, u, u*14))
	}
	return s
}

// Key predicates with bind parameters prune as constants do: the bucket,
// then files by statistics and bloom filters, then row groups and pages;
// every variant returns what the unpruned query returns (id + 0 defeats
// pruning), and the counters prove the pruning.
func TestParameterKeyPruning(t *testing.T) {
	s := keyedTable(t)
	for _, c := range []struct {
		query, unpruned string
		params          []any
		buckets         int // buckets read (0: all, -n: at most n)
	}{
		{`SELECT * FROM k WHERE id = 1178`, `SELECT * FROM k WHERE id + 0 = 1178`, nil, 1},
		{`SELECT * FROM k WHERE id = $1`, `SELECT * FROM k WHERE id + 0 = $1`, []any{int64(1178)}, 1},
		{`SELECT v, n FROM k WHERE id IN ($1, $2)`, `SELECT v, n FROM k WHERE id + 0 IN ($1, $2)`, []any{int64(28), int64(3000)}, -2},
		{`SELECT count(*), sum(n) FROM k WHERE id BETWEEN $1 AND $2`, `SELECT count(*), sum(n) FROM k WHERE id + 0 BETWEEN $1 AND $2`, []any{int64(100), int64(140)}, 0},
		{`SELECT id, n FROM k WHERE id >= $1 AND id < $2 AND n > 0`, `SELECT id, n FROM k WHERE id + 0 >= $1 AND id + 0 < $2 AND n > 0`, []any{int64(0), int64(40)}, 0},
		{`SELECT * FROM k WHERE id = $1`, `SELECT * FROM k WHERE id + 0 = $1`, []any{int64(1177)}, 1}, // absent
		{`SELECT * FROM k WHERE id = $1`, `SELECT * FROM k WHERE id + 0 = $1`, []any{nil}, 0},
	} {
		got := strings.Join(sortedRows(mustRun(t, s, c.query, c.params...)), "\n")
		want := strings.Join(sortedRows(mustRun(t, s, c.unpruned, c.params...)), "\n")
		if got != want {
			t.Errorf("%s %v:\n got %s\nwant %s", c.query, c.params, got, want)
		}
		n := explainCounts(t, s, c.query, c.params...)
		files := n["Files Read"]
		if c.params != nil && c.params[0] == nil {
			if len(files) < 2 || files[0] != 0 {
				t.Errorf("%s with NULL: %v", c.query, n)
			}
			continue
		}
		if len(files) < 4 || files[0] >= files[1] || (c.buckets != 0 && files[0] > 3*max(-c.buckets, c.buckets)) {
			t.Errorf("%s %v: files %v (want few of many)", c.query, c.params, files)
		}
		if b := n["Buckets"]; c.buckets > 0 && (len(b) < 2 || b[0] != c.buckets) || c.buckets < 0 && (len(b) < 2 || b[0] > -c.buckets) {
			t.Errorf("%s %v: buckets %v, want %d read", c.query, c.params, n["Buckets"], c.buckets)
		}
		if c.params != nil && c.params[0] == int64(1177) && (files[3] == 0 || files[0] > 1) {
			t.Errorf("absent key: files %v, want the bloom filters to skip nearly all", files)
		}
	}
}

func sortedRows(rows []string) []string {
	out := append([]string(nil), rows...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// Two statements of one session with different key predicates each keep
// their own filter, whatever order they are prepared and executed in.
func TestPrunedStatementsKeepTheirOwnFilters(t *testing.T) {
	s := keyedTable(t)
	ctx := context.Background()
	bucket := func(id int) int {
		b := explainCounts(t, s, fmt.Sprintf(`SELECT v FROM k WHERE id = %d`, id))["Buckets"]
		return b[len(b)-1]
	}
	other := 6
	for bucket(other) == bucket(4) {
		other += 2
	}
	a, err := s.Parse(ctx, `SELECT v FROM k WHERE id = 4`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Parse(ctx, fmt.Sprintf(`SELECT v FROM k WHERE id = %d`, other), nil); err != nil {
		t.Fatal(err)
	}
	p, err := a[0].Bind(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &rowCollector{}
	if _, _, err := p.Execute(ctx, 0, c); err != nil {
		t.Fatal(err)
	}
	p.Close()
	if strings.Join(c.rows, ",") != "v4" {
		t.Fatalf("rows %q, want v4", c.rows)
	}
}

// A key constant that cannot be of the key's type fails as in PostgreSQL;
// one that can, with PostgreSQL's integer syntax, finds its row.
func TestKeyPredicateTypes(t *testing.T) {
	s := keyedTable(t)
	for q, code := range map[string]string{
		`SELECT * FROM k WHERE id = 'abc'`:                  sqlerr.InvalidTextRepresentation,
		`SELECT * FROM k WHERE id IN (1, 'x1')`:             sqlerr.InvalidTextRepresentation,
		`SELECT * FROM k WHERE id = '99999999999999999999'`: sqlerr.NumericValueOutOfRange,
		`SELECT * FROM k WHERE id > 'abc' AND id < 5`:       sqlerr.InvalidTextRepresentation,
	} {
		if _, err := run(t, s, q); sqlerr.Code(err) != code {
			t.Errorf("%s: %v (%s), want %s", q, err, sqlerr.Code(err), code)
		}
	}
	expectRows(t, s, `SELECT v FROM k WHERE id = ' 42 '`, "v42")
	expectRows(t, s, `SELECT v FROM k WHERE id = '+4_2'`, "v42")
	expectRows(t, s, `SELECT v FROM k WHERE id = 42.0`, "v42") // a numeric: DuckDB compares it
	expectRows(t, s, `SELECT v FROM k WHERE id = 3000000000`)
}

// A lookup in a partition that does not exist lists nothing and reads
// nothing, with a constant or a parameter.
func TestMissingPartitionReadsNothing(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE p (id bigint PRIMARY KEY, d text, v int) PARTITION BY LIST (d) WITH (hash_bucket_num = 2)`)
	mustRun(t, s, `INSERT INTO p VALUES (1, 'a', 1), (2, 'b', 2)`)
	for _, params := range [][]any{nil, {"zz"}} {
		q := `SELECT * FROM p WHERE d = 'zz' AND id = 1`
		if params != nil {
			q = `SELECT * FROM p WHERE d = $1 AND id = 1`
		}
		expectRowsP(t, s, q, params)
		n := explainCounts(t, s, q, params...)
		if p := n["Partitions"]; len(p) < 2 || p[0] != 0 || p[1] != 0 {
			t.Errorf("%s: partitions %v", q, p)
		}
		if f := n["Files Read"]; len(f) < 2 || f[1] != 0 {
			t.Errorf("%s: files %v", q, f)
		}
	}
	expectRowsP(t, s, `SELECT v FROM p WHERE d = $1 AND id = $2`, []any{"b", int64(2)}, "2")
}

func expectRowsP(t *testing.T, s pgwire.Session, q string, params []any, want ...string) {
	t.Helper()
	got := mustRun(t, s, q, params...)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%s %v: got %q, want %q", q, params, got, want)
	}
}

// A damaged bloom filter fails a keyed read with 58030 naming the file, on
// the direct route and through DuckDB (whose errors carry only text), and
// never returns a wrong answer.
func TestDamagedBloomFilterFailsTheRead(t *testing.T) {
	wh := filepath.Join(t.TempDir(), "wh")
	dsn := pgtest.DSN(t)
	if err := catalog.MigrateUp(context.Background(), dsn); err != nil {
		t.Fatal(err)
	}
	s := sessionOn(t, dsn, wh)
	mustRun(t, s, `CREATE TABLE b (id bigint PRIMARY KEY, v text) WITH (hash_bucket_num = 1)`)
	mustRun(t, s, `INSERT INTO b SELECT i, 'v' || i FROM range(1000) AS r(i)`)
	expectRows(t, s, `SELECT v FROM b WHERE id = 7`, "v7")
	files, _ := filepath.Glob(filepath.Join(wh, "default", "b", "*.parquet"))
	if len(files) != 1 {
		t.Fatalf("files %v", files)
	}
	pf, err := pqfile.OpenParquetFile(files[0], false)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := pf.MetaData().RowGroup(0).ColumnChunk(0)
	if err != nil {
		t.Fatal(err)
	}
	off, n := cc.BloomFilterOffset(), int64(cc.BloomFilterLength())
	pf.Close()
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	clear(data[off+n-32 : off+n]) // zeroed bits answer "absent" for keys that are there
	if err := os.WriteFile(files[0], data, 0o644); err != nil {
		t.Fatal(err)
	}
	// A fresh engine: the metadata cache of the first one holds the sound filter.
	s2 := sessionOn(t, dsn, wh)
	for _, q := range []string{`SELECT v FROM b WHERE id = 7`, `SELECT count(*) FROM b WHERE id = 7 AND v > ''`} {
		rows, err := run(t, s2, q)
		if sqlerr.Code(err) != sqlerr.IOError || !strings.Contains(err.Error(), filepath.Base(files[0])) {
			t.Errorf("%s with a damaged bloom filter: rows %q, %v (%s)", q, rows, err, sqlerr.Code(err))
		}
	}
}
