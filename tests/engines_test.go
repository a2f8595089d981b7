package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lakesoul-go/lakesoul/internal/pgtest"
)

// Engines: LakeSoul's own Python package and other engines' clients on the
// tables this server writes, and the other way round. Each engine is driven
// by a program of testdata/engines run under the engines' Python: a venv
// scripts/test creates and fills from PyPI ($LAKESOUL_ENGINES_PYTHON, default
// $HOME/.cache/lakesoul/engines-venv/bin/python; the versions are pinned in
// scripts/engines-requirements.txt). Without it the tests skip, naming what
// is missing, unless LAKESOUL_REQUIRE_ENGINES=1 (scripts/test sets it), which
// makes that a failure.

const (
	envEnginesPython  = "LAKESOUL_ENGINES_PYTHON"
	envRequireEngines = "LAKESOUL_REQUIRE_ENGINES"
)

// enginesPython returns the engines' Python when it imports every module,
// else skips (or fails) the test naming the missing ones.
func enginesPython(t *testing.T, modules ...string) string {
	t.Helper()
	py := os.Getenv(envEnginesPython)
	if py == "" {
		home, _ := os.UserHomeDir()
		py = filepath.Join(home, ".cache", "lakesoul", "engines-venv", "bin", "python")
	}
	missing := func(why string) {
		if os.Getenv(envRequireEngines) == "1" {
			t.Fatalf("the engines' Python is required (%s=1): %s", envRequireEngines, why)
		}
		t.Skipf("%s (scripts/test installs it; %s=1 makes this a failure)", why, envRequireEngines)
	}
	if _, err := os.Stat(py); err != nil {
		missing(fmt.Sprintf("no Python venv at %s", py))
	}
	var imports []string
	for _, m := range modules {
		imports = append(imports, "import "+m)
	}
	if out, err := exec.Command(py, "-c", strings.Join(imports, "; ")).CombinedOutput(); err != nil {
		missing(fmt.Sprintf("%s cannot import %v: %v\n%s", py, modules, err, out))
	}
	return py
}

// enginesPath is the path of a program of testdata/engines.
func enginesPath(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "engines", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// lakeEnv is a server whose catalog PostgreSQL listens on 127.0.0.1, as
// LakeSoul's engines need it (they connect to the catalog themselves), with
// Flight SQL on and compaction off (a test compacts when it says so).
type lakeEnv struct {
	srv        *server
	flightAddr string
	// pgURL, pgUser, pgPassword are the catalog as LakeSoul's clients take it.
	pgURL, pgUser, pgPassword string
	py                        string
	admin                     *pgx.Conn
}

func startLakeEnv(t *testing.T, py string) *lakeEnv {
	t.Helper()
	requirePG(t)
	cluster := pgtest.TCPCluster(t)
	ctx := testCtx(t)
	if err := cluster.CreateDatabase(ctx, "lake"); err != nil {
		t.Fatal(err)
	}
	base := testBaseDir(t)
	flightAddr, _, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	s, err := startServer(filepath.Join(base, "data"), "lake-pw", "--catalog-url", cluster.ConnString("lake"),
		"--flight-listen", flightAddr, "--compaction-workers", "0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", s.logTail(6000))
		}
		s.stopT(t)
	})
	e := &lakeEnv{srv: s, flightAddr: flightAddr, py: py,
		pgURL:  fmt.Sprintf("jdbc:postgresql://127.0.0.1:%d/lake", cluster.Port()),
		pgUser: cluster.SuperUser(), pgPassword: "unused-trust"}
	e.admin = s.connect(t)
	mustExec(t, ctx, e.admin, "SET TimeZone = 'UTC'")
	return e
}

// lakesoul runs testdata/engines/lakesoul_client.py with cmd (see its doc)
// and returns its output lines; a failure of the program (an "ERROR …"
// line, status 3) is returned as an error, anything else fails the test.
func (e *lakeEnv) lakesoul(t *testing.T, cmd map[string]any) ([]string, error) {
	t.Helper()
	b, err := json.Marshal(cmd)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(testCtx(t), 5*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, e.py, enginesPath(t, "lakesoul_client.py"), string(b))
	c.Env = append(os.Environ(), "LAKESOUL_PG_URL="+e.pgURL, "LAKESOUL_PG_USERNAME="+e.pgUser,
		"LAKESOUL_PG_PASSWORD="+e.pgPassword, "RUST_LOG=error")
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	err = c.Run()
	out := strings.TrimRight(stdout.String(), "\n")
	var lines []string
	if out != "" {
		lines = strings.Split(out, "\n")
	}
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 3 {
		return nil, fmt.Errorf("%s", out)
	}
	if err != nil {
		t.Fatalf("lakesoul_client.py %s: %v\nstdout:\n%s\nstderr:\n%s", b, err, out, stderr.String())
	}
	return lines, nil
}

// lakesoulRead is the rows LakeSoul's Python reader returns for cmd.
func (e *lakeEnv) lakesoulRead(t *testing.T, ns, table string, extra map[string]any) []string {
	t.Helper()
	cmd := map[string]any{"op": "read", "namespace": ns, "table": table}
	for k, v := range extra {
		cmd[k] = v
	}
	rows, err := e.lakesoul(t, cmd)
	if err != nil {
		t.Fatalf("LakeSoul reads %s.%s %v: %v", ns, table, extra, err)
	}
	return rows
}

// textRows runs sql over pgwire (simple protocol) and returns each row's
// values in PostgreSQL's text form joined by "|" (NULL for null).
func textRows(t *testing.T, ctx context.Context, c *pgx.Conn, sql string) []string {
	t.Helper()
	res, err := c.PgConn().Exec(ctx, sql).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	var out []string
	for _, r := range res {
		for _, row := range r.Rows {
			vals := make([]string, len(row))
			for i, v := range row {
				if v == nil {
					vals[i] = "NULL"
				} else {
					vals[i] = string(v)
				}
			}
			out = append(out, strings.Join(vals, "|"))
		}
	}
	return out
}

// sameRowSet fails the test unless got and want hold the same rows, in any
// order.
func sameRowSet(t *testing.T, what string, got, want []string) {
	t.Helper()
	g, w := slices.Clone(got), slices.Clone(want)
	slices.Sort(g)
	slices.Sort(w)
	if slices.Equal(g, w) {
		return
	}
	// The rows only one side has (at most 10 of each), with multiplicity.
	count := map[string]int{}
	for _, r := range g {
		count[r]++
	}
	for _, r := range w {
		count[r]--
	}
	var extra, missing []string
	for _, r := range slices.Compact(slices.Concat(g, w)) {
		switch n := count[r]; {
		case n > 0 && len(extra) < 10:
			extra = append(extra, fmt.Sprintf("%dx %s", n, r))
		case n < 0 && len(missing) < 10:
			missing = append(missing, fmt.Sprintf("%dx %s", -n, r))
		}
		count[r] = 0
	}
	t.Errorf("%s: %d rows, want %d; extra %q; missing %q", what, len(g), len(w), extra, missing)
}

// TestLakeSoulPythonReads: LakeSoul's Python package (lakesoul.catalog's
// scan → lakesoul.arrow's dataset, the Rust reader) reads the tables this
// server writes and returns exactly what SELECT returns over pgwire: a
// primary-key table after full and partial-column upserts and UPDATEs, many
// files per bucket and then compacted; an append table after UPDATE and
// DELETE (copy-on-write); range partitions read whole and by a partition
// filter; columns added and dropped, and a dropped one added again; every column type CREATE TABLE takes
// that LakeSoul's Arrow schema carries; a CDC table (the Python reader
// returns delete markers: LakeSoul's own behaviour, README "LakeSoul
// compatibility"); merge operators (LakeSoul's readers merge by UseLast
// unless told otherwise: likewise documented).
func TestLakeSoulPythonReads(t *testing.T) {
	py := enginesPython(t, "lakesoul.catalog", "pyarrow")
	e := startLakeEnv(t, py)
	ctx := testCtx(t)
	c := e.admin
	mustExec(t, ctx, c,
		"CREATE SCHEMA eng",
		`CREATE TABLE eng.pk (id bigint, k text, v double precision, n int, d date, PRIMARY KEY (id))
			PARTITION BY LIST (d) WITH (hash_bucket_num = 4)`,
		`INSERT INTO eng.pk SELECT g, 'k' || g, g * 1.5, g % 7, DATE '2026-01-01' + (g % 3) FROM generate_series(1, 300) g`,
		`INSERT INTO eng.pk VALUES (1, 'one', 100.25, 1, '2026-01-02'), (5000, 'new', 0.5, NULL, '2026-01-01')`,
		`INSERT INTO eng.pk (id, v, d) SELECT g, -g, DATE '2026-01-01' + (g % 3) FROM generate_series(10, 40) g`,
		`UPDATE eng.pk SET n = n + 100 WHERE id % 11 = 0`,
		`INSERT INTO eng.pk (id, k, d) VALUES (7, NULL, '2026-01-02')`)
	// More files in one partition's buckets: a small upsert at a time.
	for i := range 6 {
		mustExec(t, ctx, c, fmt.Sprintf(`INSERT INTO eng.pk (id, n, d) VALUES (%d, %d, '2026-01-03')`, 3*i+2, 1000+i))
	}
	mustExec(t, ctx, c,
		`CREATE TABLE eng.ap (x bigint, y text, z numeric(12,3))`,
		`INSERT INTO eng.ap SELECT g, 'y' || g, g / 8.0 FROM generate_series(1, 200) g`,
		`INSERT INTO eng.ap VALUES (NULL, NULL, NULL)`,
		`UPDATE eng.ap SET y = 'updated' WHERE x % 10 = 0`,
		`DELETE FROM eng.ap WHERE x > 190`,
		`CREATE TABLE eng.ty (id bigint PRIMARY KEY, i int, sm smallint, r real, f double precision, b bool,
			t text, vc varchar(10), ch char(3), u uuid, j json, jb jsonb, by bytea, dt date, ts timestamp, tz timestamptz,
			nu numeric(10,2), nb numeric(38,0), ai bigint[], at text[], ab boolean[]) WITH (hash_bucket_num = 2)`,
		`INSERT INTO eng.ty VALUES
			(1, -7, 3, 1.5, -2.25, true, 'text ü', 'vc', 'ab', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{"b": 1, "a": [2]}',
			 '{"a": 1}', '\x0102ff', '2026-03-04', '2026-03-04 05:06:07.5', '2026-03-04 05:06:07.123456+00', 12.30,
			 12345678901234567890123456789012345678, '{1,2,NULL}', '{x,y}', '{t,NULL,f}'),
			(2, 2147483647, -32768, 0, 1e-7, false, '', '', '', NULL, 'null', '[]', '\x', '1999-12-31',
			 '1970-01-01 00:00:00', '2000-02-29 23:59:59.999999+00', -0.01, 0, '{}', '{}', '{}'),
			(3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
			 NULL, NULL, NULL)`,
		`CREATE TABLE eng.ev (id bigint PRIMARY KEY, k text, v int) WITH (hash_bucket_num = 2)`,
		`INSERT INTO eng.ev VALUES (1, 'a', 1), (2, 'b', 2)`,
		`ALTER TABLE eng.ev ADD COLUMN c double precision`,
		`INSERT INTO eng.ev VALUES (3, 'c', 3, 3.5)`,
		`INSERT INTO eng.ev (id, c) VALUES (1, 1.25)`,
		`ALTER TABLE eng.ev DROP COLUMN k`,
		`INSERT INTO eng.ev (id, v) VALUES (4, 4)`,
		// A dropped column added again: a new column, its old values gone
		// from the files LakeSoul's reader takes it from by name.
		`CREATE TABLE eng.rd (id bigint PRIMARY KEY, k text, v int) WITH (hash_bucket_num = 2)`,
		`INSERT INTO eng.rd VALUES (1, 'a', 1), (2, 'b', 2)`,
		`ALTER TABLE eng.rd DROP COLUMN k`,
		`INSERT INTO eng.rd VALUES (3, 3)`,
		`ALTER TABLE eng.rd ADD COLUMN k text`,
		`INSERT INTO eng.rd VALUES (4, 4, 'd')`,
		`CREATE TABLE eng.cdc (id bigint PRIMARY KEY, v text, op text) WITH (hash_bucket_num = 2, cdc_column = 'op')`,
		`INSERT INTO eng.cdc (id, v) VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')`,
		`UPDATE eng.cdc SET v = 'C' WHERE id = 3`,
		`DELETE FROM eng.cdc WHERE id IN (2, 4)`,
		`INSERT INTO eng.cdc (id, v) VALUES (4, 'D')`,
		`CREATE TABLE eng.mo (id bigint PRIMARY KEY, s bigint, l text)
			WITH (hash_bucket_num = 2, merge_op.s = 'SumAll', merge_op.l = 'UseLastNotNull')`,
		`INSERT INTO eng.mo VALUES (1, 10, 'a'), (2, 20, 'b')`,
		`INSERT INTO eng.mo VALUES (1, 5, NULL)`)

	compare := func(what, table, where string, extra map[string]any) {
		t.Helper()
		got := e.lakesoulRead(t, "eng", table, extra)
		cols := "*"
		if table == "ty" {
			// character(n) values are stored without their trailing
			// blanks, as PostgreSQL compares them; pgwire pads them to n
			// as PostgreSQL shows them, readers of the files see them
			// unpadded (README, LakeSoul compatibility).
			cols = "id, i, sm, r, f, b, t, vc, ch::text, u, j, jb, by, dt, ts, tz, nu, nb, ai, at, ab"
		}
		want := textRows(t, ctx, c, "SELECT "+cols+" FROM eng."+table+" "+where)
		if len(want) == 0 {
			t.Fatalf("%s: SELECT returned no rows", what)
		}
		sameRowSet(t, what, got, want)
	}
	compare("pk table, upserted", "pk", "", nil)
	compare("pk table, two reader threads", "pk", "", map[string]any{"threads": 2})
	compare("pk table, filter d = 2026-01-03", "pk", "WHERE d = '2026-01-03'",
		map[string]any{"filter": []string{"d", "2026-01-03"}})
	// lakesoul 2.0.0's scan(partitions=…) naming every range column lists
	// the partition with ListPartitionByTableIdAndDesc, which returns every
	// version of it, and reads all their files: rows repeat (README,
	// "LakeSoul compatibility"). Naming some of several range columns
	// takes the latest versions and is exact.
	if got, want := e.lakesoulRead(t, "eng", "pk", map[string]any{"partitions": map[string]string{"d": "2026-01-03"}}),
		textRows(t, ctx, c, "SELECT * FROM eng.pk WHERE d = '2026-01-03'"); len(got) <= len(want) {
		t.Errorf("scan(partitions=d) gave %d rows, SELECT %d: LakeSoul's repeated rows are gone; update README's LakeSoul compatibility", len(got), len(want))
	}
	mustExec(t, ctx, c,
		`CREATE TABLE eng.p2 (id bigint PRIMARY KEY, v text, d date, r text) PARTITION BY LIST (d, r) WITH (hash_bucket_num = 2)`,
		`INSERT INTO eng.p2 SELECT g, 'v' || g, DATE '2026-05-01' + (g % 2), CASE WHEN g % 3 = 0 THEN 'east' ELSE 'west' END
			FROM generate_series(1, 60) g`,
		`INSERT INTO eng.p2 (id, v, d, r) VALUES (3, 'again', '2026-05-02', 'east'), (6, 'again', '2026-05-01', 'east')`,
		`UPDATE eng.p2 SET v = upper(v) WHERE id % 4 = 0`)
	compare("two range columns, partitions r=east", "p2", "WHERE r = 'east'",
		map[string]any{"partitions": map[string]string{"r": "east"}})
	compare("two range columns, filter d = 2026-05-02", "p2", "WHERE d = '2026-05-02'",
		map[string]any{"filter": []string{"d", "2026-05-02"}})
	compare("append table after UPDATE and DELETE", "ap", "", nil)
	compare("every column type", "ty", "", nil)
	compare("added and dropped columns", "ev", "", nil)
	compare("a dropped column added again", "rd", "", nil)

	// CDC: LakeSoul's Python reader merges by key and returns the delete
	// markers with their op; without them it is the server's answer.
	var live, deletes []string
	for _, r := range e.lakesoulRead(t, "eng", "cdc", nil) {
		if strings.HasSuffix(r, "|delete") {
			deletes = append(deletes, r)
		} else {
			live = append(live, r)
		}
	}
	sameRowSet(t, "CDC table without delete markers", live, textRows(t, ctx, c, "SELECT * FROM eng.cdc"))
	sameRowSet(t, "CDC delete markers LakeSoul's Python reader returns", deletes, []string{"2|b|delete"})
	wantRows(t, "CDC table over pgwire", textRows(t, ctx, c, "SELECT * FROM eng.cdc ORDER BY id"),
		[]string{"1|a|insert", "3|C|update", "4|D|insert"})

	// Merge operators are this server's table options; LakeSoul's readers
	// take them at read time and merge by UseLast by default.
	wantRows(t, "merge operators over pgwire", textRows(t, ctx, c, "SELECT * FROM eng.mo ORDER BY id"),
		[]string{"1|15|a", "2|20|b"})
	sameRowSet(t, "merge-operator table read by LakeSoul's Python reader (UseLast)",
		e.lakesoulRead(t, "eng", "mo", nil), []string{"1|5|NULL", "2|20|b"})

	// Compacted: the same answers from the compacted files.
	before := textRows(t, ctx, c, "SELECT count(*) FROM lakesoul.history('eng.pk') WHERE commit_op = 'CompactionCommit'")
	mustExec(t, ctx, c, "CALL lakesoul.compact('eng.pk')", "CALL lakesoul.compact('eng.ev')", "CALL lakesoul.compact('eng.cdc')")
	after := textRows(t, ctx, c, "SELECT count(*) FROM lakesoul.history('eng.pk') WHERE commit_op = 'CompactionCommit'")
	if before[0] != "0" || after[0] == "0" {
		t.Fatalf("compaction commits before/after CALL lakesoul.compact: %v/%v", before, after)
	}
	compare("pk table, compacted", "pk", "", nil)
	compare("pk table, compacted, filter d = 2026-01-02", "pk", "WHERE d = '2026-01-02'",
		map[string]any{"filter": []string{"d", "2026-01-02"}})
	compare("added and dropped columns, compacted", "ev", "", nil)
	sameRowSet(t, "CDC table, compacted (deletes dropped)", e.lakesoulRead(t, "eng", "cdc", nil),
		textRows(t, ctx, c, "SELECT * FROM eng.cdc"))
	// And upserts on top of the compacted files.
	mustExec(t, ctx, c, `INSERT INTO eng.pk (id, k, d) VALUES (2, 'after compaction', '2026-01-03'), (6000, 'x', '2026-01-02')`)
	compare("pk table, upserts after compaction", "pk", "", nil)
}

// TestLakeSoulPythonWrites: what LakeSoul's Python package writes (Parquet,
// LakeSoulTable.write_arrow, committed by its Rust metadata client) this
// server reads exactly — upserts into a table the server created, a new
// partition, a table the Python package created (which psql's \d and
// pg_class list like the server's own) and the server's upserts on top of
// it — and commits from both sides at once into one partition all land, in
// versions without gaps: LakeSoul's Rust client takes no advisory lock, and
// the catalog's commit protocol (sqlfuncs/020_commit.sql) lets its version
// collisions fail and retry.
func TestLakeSoulPythonWrites(t *testing.T) {
	py := enginesPython(t, "lakesoul.catalog", "pyarrow")
	e := startLakeEnv(t, py)
	ctx := testCtx(t)
	c := e.admin
	mustExec(t, ctx, c,
		"CREATE SCHEMA pyw",
		`CREATE TABLE pyw.t (id bigint, k text, v double precision, d date, PRIMARY KEY (id))
			PARTITION BY LIST (d) WITH (hash_bucket_num = 4)`,
		`INSERT INTO pyw.t VALUES (1, 'a', 1.5, '2026-01-01'), (2, 'b', 2.5, '2026-01-01'), (3, 'c', 3.5, '2026-01-02')`)
	write := func(table string, rows [][]any, extra map[string]any) {
		t.Helper()
		cmd := map[string]any{"op": "write", "namespace": "pyw", "table": table, "rows": rows, "format": "parquet"}
		for k, v := range extra {
			cmd[k] = v
		}
		if _, err := e.lakesoul(t, cmd); err != nil {
			t.Fatalf("LakeSoul writes %s: %v", table, err)
		}
	}
	write("t", [][]any{{2, "B", 20.25, "2026-01-01"}, {4, "d", nil, "2026-01-01"}, {5, nil, 5.5, "2026-02-01"}}, nil)
	wantRows(t, "after LakeSoul's upsert", textRows(t, ctx, c, "SELECT * FROM pyw.t ORDER BY id"), []string{
		"1|a|1.5|2026-01-01", "2|B|20.25|2026-01-01", "3|c|3.5|2026-01-02", "4|d|NULL|2026-01-01", "5|NULL|5.5|2026-02-01"})
	sameRowSet(t, "LakeSoul reads its own upsert", e.lakesoulRead(t, "pyw", "t", nil), textRows(t, ctx, c, "SELECT * FROM pyw.t"))
	mustExec(t, ctx, c, `INSERT INTO pyw.t (id, v, d) VALUES (5, 50, '2026-02-01')`)
	wantRows(t, "the server's partial upsert of LakeSoul's row", textRows(t, ctx, c, "SELECT * FROM pyw.t WHERE id = 5"),
		[]string{"5|NULL|50|2026-02-01"})

	// A table LakeSoul's Python package creates.
	path := "file://" + filepath.Join(e.srv.dataDir, "warehouse", "pyw", "made_by_python")
	if _, err := e.lakesoul(t, map[string]any{"op": "create", "namespace": "pyw", "table": "made_by_python", "path": path,
		"columns":      [][]string{{"id", "int64"}, {"name", "string"}, {"score", "float64"}, {"day", "date32"}, {"at", "timestamp_utc"}, {"ok", "bool_"}, {"region", "string"}},
		"primary_keys": []string{"id"}, "partition_by": []string{"region"}, "hash_bucket_num": 2}); err != nil {
		t.Fatal(err)
	}
	write("made_by_python", [][]any{
		{1, "x", 1.25, "2026-04-01", "2026-04-01T10:00:00.5+00:00", true, "eu"},
		{2, "y", nil, "2026-04-02", nil, false, "us"},
		{3, nil, -3.0, nil, "2026-04-03T00:00:00+00:00", nil, "eu"}}, nil)
	write("made_by_python", [][]any{{1, "x2", 2.5, "2026-04-01", "2026-04-01T11:00:00+00:00", true, "eu"}}, nil)
	wantRows(t, "a table LakeSoul created and wrote", textRows(t, ctx, c, "SELECT * FROM pyw.made_by_python ORDER BY id"), []string{
		"1|x2|2.5|2026-04-01|2026-04-01 11:00:00+00|t|eu",
		"2|y|NULL|2026-04-02|NULL|f|us",
		"3|NULL|-3|NULL|2026-04-03 00:00:00+00|NULL|eu"})
	wantRows(t, "its columns in pg_catalog", textRows(t, ctx, c, `SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull
		FROM pg_attribute a JOIN pg_class r ON r.oid = a.attrelid JOIN pg_namespace n ON n.oid = r.relnamespace
		WHERE n.nspname = 'pyw' AND r.relname = 'made_by_python' AND a.attnum > 0 ORDER BY a.attnum`), []string{
		"id|bigint|t", "name|text|f", "score|double precision|f", "day|date|f", "at|timestamp with time zone|f", "ok|boolean|f", "region|text|f"})
	mustExec(t, ctx, c, `INSERT INTO pyw.made_by_python (id, score, region) VALUES (2, 9.75, 'us'), (4, 4, 'ap')`)
	sameRowSet(t, "LakeSoul reads the server's upserts of its table", e.lakesoulRead(t, "pyw", "made_by_python", nil),
		textRows(t, ctx, c, "SELECT * FROM pyw.made_by_python"))

	// Both sides commit into one partition at once: 8 LakeSoul commits of
	// 3 rows and 8 server commits of 2 rows.
	done := make(chan error, 1)
	go func() {
		b, _ := json.Marshal(map[string]any{"op": "write", "namespace": "pyw", "table": "t", "format": "parquet",
			"rows":   [][]any{{1000, "py", 1, "2026-03-01"}, {1001, "py", 1, "2026-03-01"}, {1002, "py", 1, "2026-03-01"}},
			"repeat": 8, "step": 10})
		cmd := exec.CommandContext(ctx, e.py, enginesPath(t, "lakesoul_client.py"), string(b))
		cmd.Env = append(os.Environ(), "LAKESOUL_PG_URL="+e.pgURL, "LAKESOUL_PG_USERNAME="+e.pgUser,
			"LAKESOUL_PG_PASSWORD="+e.pgPassword, "RUST_LOG=error")
		out, err := cmd.CombinedOutput()
		if err != nil {
			err = fmt.Errorf("%v: %s", err, out)
		}
		done <- err
	}()
	for i := range 8 {
		mustExec(t, ctx, c, fmt.Sprintf(`INSERT INTO pyw.t VALUES (%d, 'go', 2, '2026-03-01'), (%d, 'go', 2, '2026-03-01')`, 2000+i*10, 2001+i*10))
	}
	if err := <-done; err != nil {
		t.Fatalf("LakeSoul's concurrent writes: %v", err)
	}
	wantRows(t, "rows of both writers", textRows(t, ctx, c, "SELECT k, count(*) FROM pyw.t WHERE d = '2026-03-01' GROUP BY k ORDER BY k"),
		[]string{"go|16", "py|24"})
	wantRows(t, "versions of the partition", textRows(t, ctx, c, `SELECT count(*), min(version), max(version)
		FROM lakesoul.history('pyw.t') WHERE partition = 'd=2026-03-01'`), []string{"16|0|15"})
	sameRowSet(t, "LakeSoul reads both writers' rows", e.lakesoulRead(t, "pyw", "t", map[string]any{"filter": []string{"d", "2026-03-01"}}),
		textRows(t, ctx, c, "SELECT * FROM pyw.t WHERE d = '2026-03-01'"))
}

// TestLakeSoulBadInput: what LakeSoul's engines may write and this server
// cannot read is an error naming the file or column and the reason — never
// a wrong answer, a crash, or other tables made unreadable: Vortex data files
// (the Python package's default format) in a table the server created and in
// one the Python package created without a key (DuckDB's native scan path),
// and a column type the server does not store (uint64).
func TestLakeSoulBadInput(t *testing.T) {
	py := enginesPython(t, "lakesoul.catalog", "pyarrow")
	e := startLakeEnv(t, py)
	ctx := testCtx(t)
	c := e.admin
	mustExec(t, ctx, c,
		"CREATE SCHEMA bad",
		`CREATE TABLE bad.vx (id bigint PRIMARY KEY, v text) WITH (hash_bucket_num = 2)`,
		`INSERT INTO bad.vx VALUES (1, 'parquet')`,
		`CREATE TABLE bad.fine (id bigint PRIMARY KEY, v text)`,
		`INSERT INTO bad.fine VALUES (1, 'fine')`)
	files, err := e.lakesoul(t, map[string]any{"op": "write", "namespace": "bad", "table": "vx", "rows": [][]any{{2, "vortex"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 || !strings.HasSuffix(files[0], ".vortex") {
		t.Fatalf("LakeSoul's default write gave files %q, want .vortex files", files)
	}
	wantVortexError := func(what, sql string, files []string) {
		t.Helper()
		_, err := c.Exec(ctx, sql)
		msg := fmt.Sprint(err)
		if pgCode(err) != "0A000" || !strings.Contains(msg, "Vortex file, not Parquet") ||
			!slices.ContainsFunc(files, func(f string) bool { return strings.Contains(msg, f) }) {
			t.Errorf("%s: %s gave %v, want 0A000 naming a file of %q as Vortex", what, sql, err, files)
		}
	}
	wantVortexError("a key table with Vortex files", "SELECT * FROM bad.vx", files)
	wantVortexError("a key table with Vortex files, count", "SELECT count(*) FROM bad.vx WHERE id = 2", files)

	path := "file://" + filepath.Join(e.srv.dataDir, "warehouse", "bad", "nokey")
	if _, err := e.lakesoul(t, map[string]any{"op": "create", "namespace": "bad", "table": "nokey", "path": path,
		"columns": [][]string{{"id", "int64"}, {"v", "string"}}}); err != nil {
		t.Fatal(err)
	}
	files, err = e.lakesoul(t, map[string]any{"op": "write", "namespace": "bad", "table": "nokey", "rows": [][]any{{1, "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	wantVortexError("a table without a key, Vortex files", "SELECT * FROM bad.nokey", files)
	wantVortexError("a table without a key, Vortex files, aggregate", "SELECT sum(id) FROM bad.nokey", files)

	path = "file://" + filepath.Join(e.srv.dataDir, "warehouse", "bad", "unsigned")
	if _, err := e.lakesoul(t, map[string]any{"op": "create", "namespace": "bad", "table": "unsigned", "path": path,
		"columns": [][]string{{"id", "int64"}, {"u", "uint64"}}, "primary_keys": []string{"id"}}); err != nil {
		t.Fatal(err)
	}
	_, err = c.Exec(ctx, "SELECT * FROM bad.unsigned")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "0A000" || !strings.Contains(pe.Message, "bad.unsigned") ||
		!strings.Contains(pe.Detail, `column "u"`) || !strings.Contains(pe.Detail, `"isSigned":false`) {
		t.Errorf("a table with a uint64 column: %v, want 0A000 naming bad.unsigned and column u", err)
	}
	// The rest of the lake is unaffected.
	wantRows(t, "another table", textRows(t, ctx, c, "SELECT * FROM bad.fine"), []string{"1|fine"})
	wantRows(t, "the tables pg_class lists", textRows(t, ctx, c, `SELECT c.relname FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'bad' AND c.relkind = 'r' ORDER BY 1`),
		[]string{"fine", "nokey", "unsigned", "vx"})
}

// TestEngineClients: the compute clients of the seed's matrix that run in
// CI, each on a real driver from PyPI: the ADBC PostgreSQL driver (pgwire)
// and the ADBC Flight SQL driver read a 200,000-row table whole
// (fetch_arrow_table: count and checksums equal to the server's), run a
// parameterised query, roll back and commit a transaction, and pandas'
// read_sql and polars' read_database run over both connections; the Flight
// SQL driver ingests (adbc_ingest) into a lake table and reads a scan's
// endpoints (one per bucket) on separate connections; DuckDB reads an append
// table's Parquet files by the path list lakesoul.snapshot_files gives and
// finds what the server finds.
func TestEngineClients(t *testing.T) {
	py := enginesPython(t, "adbc_driver_postgresql.dbapi", "adbc_driver_flightsql.dbapi", "duckdb", "pandas", "polars")
	e := startLakeEnv(t, py)
	ctx := testCtx(t)
	c := e.admin
	mustExec(t, ctx, c,
		"CREATE SCHEMA cl",
		`CREATE TABLE cl.big (id bigint PRIMARY KEY, s text, f double precision, d date) WITH (hash_bucket_num = 4)`,
		`INSERT INTO cl.big SELECT g, repeat('x', g % 17), g / 3.0, DATE '2026-01-01' + (g % 400) FROM generate_series(1, 150000) g`,
		`INSERT INTO cl.big SELECT g, repeat('y', g % 5), -g, DATE '2025-01-01' + (g % 30) FROM generate_series(100000, 200000) g`,
		`CREATE TABLE cl.target (id bigint, s text)`,
		`CREATE TABLE cl.ap (id bigint, s text)`,
		`INSERT INTO cl.ap SELECT g, 'a' || g FROM generate_series(1, 1000) g`,
		`INSERT INTO cl.ap SELECT g, 'b' || g FROM generate_series(1001, 1500) g`,
		`DELETE FROM cl.ap WHERE id % 7 = 0`)
	var files []string
	for _, p := range textRows(t, ctx, c, "SELECT path FROM lakesoul.snapshot_files('cl.ap', now())") {
		files = append(files, strings.TrimPrefix(p, "file://"))
	}
	pw, err := e.srv.adminPassword()
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{
		"pg":     strings.Replace(e.srv.dsn(adminRole, pw, database), "&connect_timeout=30", "", 1),
		"flight": "grpc://" + e.flightAddr, "user": adminRole, "password": pw,
		"big": "cl.big", "target": "cl.target", "files": files})
	out := runClient(t, ctx, nil, py, enginesPath(t, "clients.py"), string(cfg))
	sum := textRows(t, ctx, c, `SELECT count(*) || ' ' || sum(id) || ' ' || sum(length(s)) || ' ' ||
		round(sum(f))::bigint || ' ' || max(d) FROM cl.big`)[0]
	count := textRows(t, ctx, c, "SELECT count(*) || ' ' || sum(id) FROM cl.big")[0]
	param := fmt.Sprintf("[('%s',)]", textRows(t, ctx, c, "SELECT s FROM cl.big WHERE id = 7")[0])
	ap := textRows(t, ctx, c, "SELECT count(*) || ' ' || sum(id) || ' ' || sum(length(s)) FROM cl.ap")[0]
	var want []string
	for _, d := range []string{"adbc-postgresql", "adbc-flightsql"} {
		want = append(want, d+" read "+sum, d+" param "+param)
		if d == "adbc-flightsql" {
			want = append(want, d+" ingest 2")
		}
		want = append(want, d+" pandas "+count, d+" polars "+count)
	}
	want = append(want, "adbc-flightsql partitions 4 "+sum, "duckdb files "+ap)
	wantRows(t, "clients' answers", out, want)
	wantRows(t, "what the clients wrote", textRows(t, ctx, c, "SELECT id, s FROM cl.target ORDER BY id, s"), []string{
		"2|adbc-flightsql committed", "2|adbc-postgresql committed", "10|adbc-flightsql ingest a", "11|adbc-flightsql ingest b"})
}

// pgjdbcJar is the pgjdbc 42.7 jar Spark's tests load: $LAKESOUL_PGJDBC_JAR,
// else the one scripts/test fetches from Maven Central into ~/.m2.
func pgjdbcJar(t *testing.T) string {
	t.Helper()
	jar := os.Getenv("LAKESOUL_PGJDBC_JAR")
	if jar == "" {
		home, _ := os.UserHomeDir()
		jar = filepath.Join(home, ".m2", "repository", "org", "postgresql", "postgresql", "42.7.4", "postgresql-42.7.4.jar")
	}
	if _, err := os.Stat(jar); err != nil {
		if os.Getenv(envRequireEngines) == "1" {
			t.Fatalf("pgjdbc 42.7.4 is required (%s=1): %v", envRequireEngines, err)
		}
		t.Skipf("no pgjdbc 42.7.4 jar (mvn dependency:get -Dartifact=org.postgresql:postgresql:42.7.4): %v", err)
	}
	return jar
}

// TestSparkJDBC: Spark 3.5 (pyspark, local[2], Java 17) with pgjdbc 42.7
// from Maven Central: a read partitioned on id into four range queries that
// adds up to the server's answer, filters pushed into the JDBC query, a
// DataFrame append, and an upsert as an ON CONFLICT batch through pgjdbc.
// (LakeSoul's own Spark connector is not served by Maven Central here:
// TestLakeSoulSparkConnector.)
func TestSparkJDBC(t *testing.T) {
	py := enginesPython(t, "pyspark")
	jar := pgjdbcJar(t)
	if _, err := exec.LookPath("java"); err != nil {
		requireClient(t, "java (apt-get install default-jdk-headless)", "/nonexistent/java")
	}
	e := startLakeEnv(t, py)
	ctx := testCtx(t)
	c := e.admin
	mustExec(t, ctx, c,
		"CREATE SCHEMA sj",
		`CREATE TABLE sj.big (id bigint PRIMARY KEY, s text, f double precision, d date) WITH (hash_bucket_num = 4)`,
		`INSERT INTO sj.big SELECT g, repeat('x', g % 17), g / 3.0, DATE '2026-01-01' + (g % 400) FROM generate_series(1, 100000) g`,
		`CREATE TABLE sj.target (id bigint PRIMARY KEY, s text)`)
	pw, err := e.srv.adminPassword()
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{"url": fmt.Sprintf("jdbc:postgresql://%s/%s", e.srv.addr, database),
		"user": adminRole, "password": pw, "jar": jar, "big": "sj.big", "n": 100000, "target": "sj.target"})
	out := runClient(t, ctx, nil, py, enginesPath(t, "spark_jdbc.py"), string(cfg))
	read := textRows(t, ctx, c, "SELECT count(*) || ' ' || sum(id) || ' ' || sum(length(s)) FROM sj.big")[0]
	filtered := textRows(t, ctx, c, "SELECT count(*) FROM sj.big WHERE id < 100 AND s = 'xxx'")[0]
	wantRows(t, "Spark's answers", out, []string{"partitions 4", "read " + read, "pushed True", "filtered " + filtered,
		"batch [1, 1]", "target 1=spark a;2=upserted b;3=spark c;4=new d"})
	wantRows(t, "the table Spark wrote", textRows(t, ctx, c, "SELECT * FROM sj.target ORDER BY id"),
		[]string{"1|spark a", "2|upserted b", "3|spark c", "4|new d"})
}

// TestLakeSoulSparkConnector would run LakeSoul's Spark connector in a local
// Spark 3.5 on this server's tables. It needs the connector from Maven
// Central; it says precisely which coordinates it tried when none resolves.
func TestLakeSoulSparkConnector(t *testing.T) {
	probeMaven(t, "LakeSoul's Spark connector", "the LakeSoul Spark connector test",
		[]string{"com.dmetasoul:lakesoul-spark-3.5_2.12:4.0.0"}, []string{"com.dmetasoul:lakesoul-spark:3.5-3.0.0"})
}

// probeMaven asks Maven Central for the coordinates (groupId:artifactId:
// version[:packaging]) of each alternative, without dependencies, an
// alternative being the artifacts an engine needs together (asked in
// order, up to the first one not served). The test fails when every
// artifact of one alternative resolves (then the test named by write is
// due), else skips naming each coordinate tried and Maven's reason.
func probeMaven(t *testing.T, what, write string, alternatives ...[]string) {
	t.Helper()
	if _, err := exec.LookPath("mvn"); err != nil {
		t.Skipf("no mvn to resolve %s", what)
	}
	var tried []string
	for _, alt := range alternatives {
		served := 0
		for _, coord := range alt {
			out, err := exec.Command("mvn", "-q", "-B", "-U", "dependency:get", "-Dartifact="+coord, "-Dtransitive=false").CombinedOutput()
			if err == nil {
				served++
				tried = append(tried, coord+": served")
				continue
			}
			why := "not resolved"
			if m := regexp.MustCompile(`(Could not find|Failure to find)[^\n]*`).Find(out); m != nil {
				why = string(m)
			}
			tried = append(tried, coord+": "+why)
			break
		}
		if served == len(alt) {
			t.Fatalf("%s resolve now: write %s (README, Engines)", strings.Join(alt, " and "), write)
		}
	}
	t.Skipf("%s cannot run here; Maven Central does not serve what it needs: %s", what, strings.Join(tried, "; "))
}

// copyDir copies the files of directory src (recursively) into dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDBT: dbt (dbt-core and dbt-postgres from PyPI, a venv of its own:
// $LAKESOUL_DBT, default ~/.cache/lakesoul/dbt-venv/bin/dbt) builds a small
// project over pgwire: a table, a view, an incremental model (and its
// increment after the source changed) and a snapshot's first run, with
// not_null and unique tests, each equal to what the SQL means. (A
// snapshot's later runs read the columns of dbt's temporary table from
// information_schema, where this server's temporary tables do not appear:
// README, Engines.)
func TestDBT(t *testing.T) {
	dbt := os.Getenv("LAKESOUL_DBT")
	if dbt == "" {
		home, _ := os.UserHomeDir()
		dbt = filepath.Join(home, ".cache", "lakesoul", "dbt-venv", "bin", "dbt")
	}
	if _, err := os.Stat(dbt); err != nil {
		if os.Getenv(envRequireEngines) == "1" {
			t.Fatalf("dbt is required (%s=1): %v", envRequireEngines, err)
		}
		t.Skipf("no dbt at %s (scripts/test installs it; %s=1 makes this a failure)", dbt, envRequireEngines)
	}
	requirePG(t)
	s := sharedServer(t)
	ctx := testCtx(t)
	c := s.connect(t)
	mustExec(t, ctx, c, "SET TimeZone = 'UTC'",
		"CREATE SCHEMA dbtsrc",
		"CREATE TABLE dbtsrc.orders (id bigint PRIMARY KEY, customer text, amount numeric(10,2), updated_at timestamp)",
		"INSERT INTO dbtsrc.orders VALUES (1, 'a', 5, '2026-01-01'), (2, 'a', 15, '2026-01-02'), (3, 'b', 20, '2026-01-03')")
	dir := t.TempDir()
	copyDir(t, enginesPath(t, "dbt"), dir)
	pw, _ := s.adminPassword()
	profiles := fmt.Sprintf("lake:\n  target: dev\n  outputs:\n    dev:\n      type: postgres\n      host: 127.0.0.1\n"+
		"      port: %d\n      user: %s\n      password: %q\n      dbname: %s\n      schema: dbtl\n      threads: 1\n",
		s.port, adminRole, pw, database)
	if err := os.WriteFile(filepath.Join(dir, "profiles.yml"), []byte(profiles), 0o600); err != nil {
		t.Fatal(err)
	}
	build := func(selector string) {
		t.Helper()
		args := []string{"build", "--project-dir", dir, "--profiles-dir", dir, "--no-use-colors"}
		if selector != "" {
			args = append(args, "--select", selector)
		}
		cmd := exec.CommandContext(ctx, dbt, args...)
		cmd.Env = append(os.Environ(), "DBT_SEND_ANONYMOUS_USAGE_STATS=false")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("dbt %v: %v\n%s", args, err, out)
		}
	}
	build("")
	wantRows(t, "table model", textRows(t, ctx, c, "SELECT customer, n, total::numeric(10,2) FROM dbtl.order_totals ORDER BY 1"),
		[]string{"a|2|20.00", "b|1|20.00"})
	wantRows(t, "view model", textRows(t, ctx, c, "SELECT * FROM dbtl.big_orders ORDER BY id"), []string{"2|a|15.00", "3|b|20.00"})
	wantRows(t, "snapshot", textRows(t, ctx, c, "SELECT id, amount, dbt_valid_from, dbt_valid_to FROM dbtsnap.orders_snap ORDER BY id"),
		[]string{"1|5.00|2026-01-01 00:00:00|NULL", "2|15.00|2026-01-02 00:00:00|NULL", "3|20.00|2026-01-03 00:00:00|NULL"})
	mustExec(t, ctx, c, "INSERT INTO dbtsrc.orders VALUES (2, 'a', 25, '2026-01-05'), (4, 'c', 40, '2026-01-06')")
	build("orders_inc order_totals big_orders")
	wantRows(t, "incremental model after the source changed", textRows(t, ctx, c, "SELECT * FROM dbtl.orders_inc ORDER BY id"), []string{
		"1|a|5.00|2026-01-01 00:00:00", "2|a|25.00|2026-01-05 00:00:00", "3|b|20.00|2026-01-03 00:00:00", "4|c|40.00|2026-01-06 00:00:00"})
	wantRows(t, "table model rebuilt", textRows(t, ctx, c, "SELECT customer, n, total::numeric(10,2) FROM dbtl.order_totals ORDER BY 1"),
		[]string{"a|2|30.00", "b|1|20.00", "c|1|40.00"})
}

// TestRayDaft is the second engine tier (scripts/test-engines; skipped
// unless $LAKESOUL_HEAVY_ENGINES_PYTHON names its venv's python): Ray Data's
// read_sql split across tasks, and LakeSoul's own Ray and Daft entry points
// (scan().to_ray(), scan().to_daft()) over the catalog and the files, read a
// primary-key table after upserts and all find the server's answer.
func TestRayDaft(t *testing.T) {
	py := os.Getenv("LAKESOUL_HEAVY_ENGINES_PYTHON")
	if py == "" {
		t.Skip("the second engine tier runs with scripts/test-engines ($LAKESOUL_HEAVY_ENGINES_PYTHON)")
	}
	if out, err := exec.Command(py, "-c", "import ray, daft, lakesoul.catalog, psycopg").CombinedOutput(); err != nil {
		t.Fatalf("%s cannot import ray, daft, lakesoul, psycopg: %v\n%s", py, err, out)
	}
	e := startLakeEnv(t, py)
	ctx := testCtx(t)
	c := e.admin
	mustExec(t, ctx, c,
		"CREATE SCHEMA rd",
		`CREATE TABLE rd.t (id bigint PRIMARY KEY, s text) WITH (hash_bucket_num = 4)`,
		`INSERT INTO rd.t SELECT g, repeat('x', g % 13) FROM generate_series(1, 60000) g`,
		`INSERT INTO rd.t SELECT g, 'upserted' FROM generate_series(50000, 70000) g`)
	pw, _ := e.srv.adminPassword()
	cat := strings.TrimPrefix(e.pgURL, "jdbc:postgresql://")
	host, rest, _ := strings.Cut(cat, ":")
	port, db, _ := strings.Cut(rest, "/")
	cfg, _ := json.Marshal(map[string]any{
		"pg":        strings.Replace(e.srv.dsn(adminRole, pw, database), "&connect_timeout=30", "", 1),
		"catalog":   fmt.Sprintf("host=%s port=%s dbname=%s user=%s password=%s", host, port, db, e.pgUser, e.pgPassword),
		"namespace": "rd", "table": "t", "query": "SELECT id, s FROM rd.t"})
	out := runClient(t, ctx, []string{"RUST_LOG=error", "RAY_ENABLE_UV_RUN_RUNTIME_ENV=0"}, py, enginesPath(t, "ray_daft.py"), string(cfg))
	want := textRows(t, ctx, c, "SELECT count(*) || ' ' || sum(id) || ' ' || sum(length(s)) FROM rd.t")[0]
	var got []string
	for _, l := range out {
		if strings.HasPrefix(l, "ray-read_sql ") || strings.HasPrefix(l, "lakesoul-to_") {
			got = append(got, l)
		}
	}
	wantRows(t, "Ray's and Daft's reads", got, []string{"ray-read_sql " + want, "lakesoul-to_ray " + want, "lakesoul-to_daft " + want})
}
