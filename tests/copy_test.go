package tests

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestCopyPgx drives COPY with pgx: CopyFrom (binary format) into a PK table
// (upsert) and an append table, text and CSV COPY FROM STDIN through the raw
// connection, COPY TO STDOUT in all formats, and the failure cases: bad
// values, wrong column counts and CopyFail leave nothing committed and the
// connection usable.
func TestCopyPgx(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := srv.connect(t)
	mustExec(t, ctx, c,
		"CREATE SCHEMA cp",
		`CREATE TABLE cp.pk (id bigint, k text, v double precision, n numeric(10,2), d date, ts timestamptz, b boolean, i int,
			PRIMARY KEY (id)) WITH (hash_bucket_num = 2)`,
		"CREATE TABLE cp.app (id int, s text, d date) PARTITION BY LIST (d)")

	// pgx CopyFrom: binary COPY.
	ts := time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC)
	var rows [][]any
	for i := 1; i <= 3000; i++ {
		rows = append(rows, []any{int64(i), fmt.Sprintf("k%d", i), float64(i) / 4, fmt.Sprintf("%d.%02d", i, i%100),
			date(2026, 1, 1+i%28), ts, i%2 == 0, int32(i)})
	}
	n, err := c.CopyFrom(ctx, pgx.Identifier{"cp", "pk"}, []string{"id", "k", "v", "n", "d", "ts", "b", "i"}, pgx.CopyFromRows(rows))
	if err != nil || n != 3000 {
		t.Fatalf("CopyFrom: %d, %v", n, err)
	}
	wantRows(t, "after binary copy", queryStrings(t, ctx, c,
		"SELECT count(*), sum(id)::text, sum(v), sum(n)::text, min(d), max(ts), count(*) FILTER (WHERE b), sum(i)::text FROM cp.pk"),
		[]string{"3000|4501500|1.125375e+06|4502985.00|2026-01-01|2026-01-02T03:04:05.123456Z|1500|4501500"})

	// A partial upsert through COPY (text format): k and v change for ids
	// 1..10, the other columns keep their values.
	var in bytes.Buffer
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&in, "%d\tnew\\t%d\t-1\n", i, i)
	}
	tag, err := c.PgConn().CopyFrom(ctx, &in, "COPY cp.pk (id, k, v) FROM STDIN")
	if err != nil || tag.String() != "COPY 10" {
		t.Fatalf("text copy: %q, %v", tag, err)
	}
	wantRows(t, "partial upsert", queryStrings(t, ctx, c, "SELECT id, k, v, n::text, b FROM cp.pk WHERE id IN (2, 11) ORDER BY id"),
		[]string{"2|new\t2|-1|2.02|true", "11|k11|2.75|11.11|false"})

	// CSV with header, quotes, NULLs and an embedded newline into an append
	// table with a range partition.
	csv := "id,s,d\n1,\"a,b\",2026-01-01\n2,,2026-01-01\n3,\"\",2026-01-02\n4,\"multi\nline \"\"q\"\"\",2026-01-02\n"
	tag, err = c.PgConn().CopyFrom(ctx, strings.NewReader(csv), "COPY cp.app FROM STDIN WITH (FORMAT csv, HEADER)")
	if err != nil || tag.String() != "COPY 4" {
		t.Fatalf("csv copy: %q, %v", tag, err)
	}
	wantRows(t, "csv rows", queryStrings(t, ctx, c, "SELECT id, s IS NULL, s, d FROM cp.app ORDER BY id"),
		[]string{"1|false|a,b|2026-01-01", "2|true|NULL|2026-01-01", "3|false||2026-01-02", "4|false|multi\nline \"q\"|2026-01-02"})

	// COPY TO STDOUT: text, CSV with header, binary round trip.
	var out bytes.Buffer
	if _, err := c.PgConn().CopyTo(ctx, &out, "COPY (SELECT id, s, d FROM cp.app ORDER BY id) TO STDOUT"); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "1\ta,b\t2026-01-01\n2\t\\N\t2026-01-01\n3\t\t2026-01-02\n4\tmulti\\nline \"q\"\t2026-01-02\n"; got != want {
		t.Errorf("COPY TO text:\n got %q\nwant %q", got, want)
	}
	out.Reset()
	tag, err = c.PgConn().CopyTo(ctx, &out, "COPY cp.app (id, s) TO STDOUT WITH (FORMAT csv, HEADER)")
	if err != nil || tag.String() != "COPY 4" {
		t.Fatalf("COPY TO csv: %q %v", tag, err)
	}
	lines := strings.SplitAfter(out.String(), "\n")
	if lines[0] != "id,s\n" || !strings.Contains(out.String(), "\"multi\nline \"\"q\"\"\"") || !strings.Contains(out.String(), "\n3,\"\"\n") {
		t.Errorf("COPY TO csv: %q", out.String())
	}
	out.Reset()
	if _, err := c.PgConn().CopyTo(ctx, &out, "COPY (SELECT id, k, v, n, d, ts, b, i FROM cp.pk WHERE id <= 1500) TO STDOUT (FORMAT binary)"); err != nil {
		t.Fatal(err)
	}
	mustExec(t, ctx, c, "CREATE TABLE cp.pk2 (id bigint, k text, v double precision, n numeric(10,2), d date, ts timestamptz, b boolean, i int, PRIMARY KEY (id))")
	tag, err = c.PgConn().CopyFrom(ctx, &out, "COPY cp.pk2 FROM STDIN (FORMAT binary)")
	if err != nil || tag.String() != "COPY 1500" {
		t.Fatalf("binary round trip: %q, %v", tag, err)
	}
	wantRows(t, "binary round trip", queryStrings(t, ctx, c,
		"SELECT count(*) FROM cp.pk a JOIN cp.pk2 b USING (id) WHERE a.k = b.k AND a.v = b.v AND a.n = b.n AND a.d = b.d AND a.ts = b.ts AND a.b = b.b AND a.i = b.i"),
		[]string{"1500"})

	// Failures: nothing committed, the connection stays usable.
	before := countRows(t, ctx, c, "cp.app")
	for _, tc := range []struct {
		data, sql, code, msg string
	}{
		{"1\tx\t2026-01-01\n2\ty\n", "COPY cp.app FROM STDIN", "22P04", "missing data for column \"d\""},
		{"1\tx\t2026-01-01\textra\n", "COPY cp.app FROM STDIN", "22P04", "extra data after last expected column"},
		{"1\tx\t2026-01-01\nabc\ty\t2026-01-01\n", "COPY cp.app FROM STDIN", "22P02", "invalid input syntax for type integer"},
		{"1,x,2026-13-01\n", "COPY cp.app FROM STDIN (FORMAT csv)", "22007", "date"},
		{"1,\"x,2026-01-01\n", "COPY cp.app FROM STDIN (FORMAT csv)", "22P04", "unterminated CSV quoted field"},
		{"not binary", "COPY cp.app FROM STDIN (FORMAT binary)", "22P04", "COPY file signature not recognized"},
		{"99999999999\tx\t2026-01-01\n", "COPY cp.app FROM STDIN", "22003", "out of range"},
	} {
		_, err := c.PgConn().CopyFrom(ctx, strings.NewReader(tc.data), tc.sql)
		if pgCode(err) != tc.code || err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s with %q: %v, want %s %q", tc.sql, tc.data, err, tc.code, tc.msg)
		}
	}
	// CopyFail from the client: pgx sends it when the reader fails.
	_, err = c.PgConn().CopyFrom(ctx, &failingReader{data: "7\tz\t2026-01-01\n"}, "COPY cp.app FROM STDIN")
	if pgCode(err) != "57014" {
		t.Errorf("CopyFail: %v, want 57014", err)
	}
	if got := countRows(t, ctx, c, "cp.app"); got != before {
		t.Errorf("rows after failed COPYs: %d, want %d", got, before)
	}
	// Unsupported forms are clear.
	if _, err := c.Exec(ctx, "COPY cp.app FROM '/etc/passwd'"); pgCode(err) != "42501" {
		t.Errorf("COPY FROM file: %v, want 42501", err)
	}
}

// failingReader returns data, then an error (pgx answers with CopyFail).
type failingReader struct {
	data string
	done bool
}

func (r *failingReader) Read(p []byte) (int, error) {
	if !r.done {
		r.done = true
		return copy(p, r.data), nil
	}
	return 0, fmt.Errorf("client gave up")
}

// TestCopyPsql uses psql's \copy in both directions (text and CSV) and
// COPY … FROM STDIN with inline data ending in \. .
func TestCopyPsql(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	p := &psqlClient{t: t, path: psqlPath(t), srv: srv}
	dir := t.TempDir()
	src := filepath.Join(dir, "in.csv")
	var b strings.Builder
	b.WriteString("id,name,score\n")
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(&b, "%d,name %d,%d.5\n", i, i, i)
	}
	if err := os.WriteFile(src, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	p.exec(ctx, "CREATE SCHEMA cpp", "CREATE TABLE cpp.t (id int PRIMARY KEY, name text, score double precision)")
	out := p.exec(ctx, `\copy cpp.t FROM '`+src+`' WITH (FORMAT csv, HEADER)`)
	if strings.TrimSpace(out) != "COPY 1000" {
		t.Errorf("\\copy from: %q", out)
	}
	p.check(ctx, "SELECT count(*), sum(score) FROM cpp.t", "1000|501000")
	dst := filepath.Join(dir, "out.txt")
	p.exec(ctx, `\copy (SELECT id, name FROM cpp.t WHERE id <= 3 ORDER BY id) TO '`+dst+`'`)
	got, err := os.ReadFile(dst)
	if err != nil || string(got) != "1\tname 1\n2\tname 2\n3\tname 3\n" {
		t.Errorf("\\copy to: %q %v", got, err)
	}
	// Inline data on psql's stdin, ended by \. .
	pw, _ := srv.adminPassword()
	cmd := exec.CommandContext(ctx, p.path, "-X", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", strconv.Itoa(srv.port), "-U", adminRole, "-d", database)
	cmd.Env = append(os.Environ(), "PGPASSWORD="+pw)
	cmd.Stdin = strings.NewReader("COPY cpp.t (id, name) FROM STDIN;\n2001\tinline\n2002\t\\N\n\\.\nSELECT count(*) FROM cpp.t WHERE id > 2000;\n")
	o, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(o), "COPY 2") || !strings.Contains(string(o), "     2") {
		t.Errorf("psql COPY FROM STDIN: %v\n%s", err, o)
	}
}

// TestCopyTransaction checks that COPY and INSERT inside BEGIN … COMMIT
// become visible together at COMMIT, that the block reads its own writes,
// and that ROLLBACK leaves nothing, not even files.
func TestCopyTransaction(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := srv.connect(t)
	other := srv.connect(t)
	mustExec(t, ctx, c, "CREATE SCHEMA cpt",
		"CREATE TABLE cpt.a (id bigint PRIMARY KEY, v text)",
		"CREATE TABLE cpt.b (id bigint, v text)")

	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO cpt.a VALUES (1, 'one'), (2, 'two')"); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"cpt", "b"}, []string{"id", "v"}, pgx.CopyFromRows([][]any{{int64(1), "x"}, {int64(2), "y"}})); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO cpt.a VALUES (2, 'TWO')"); err != nil {
		t.Fatal(err)
	}
	// Own writes are visible inside the block, not outside.
	wantRows(t, "inside", queryStrings(t, ctx, c, "SELECT id, v FROM cpt.a ORDER BY id"), []string{"1|one", "2|TWO"})
	// The same through a direct scan: the block's one file holds key 2
	// twice, in a batch of its own.
	direct := queryStrings(t, ctx, c, "SELECT id, v FROM cpt.a")
	slices.Sort(direct)
	wantRows(t, "inside, direct scan", direct, []string{"1|one", "2|TWO"})
	wantRows(t, "outside", queryStrings(t, ctx, other, "SELECT count(*) FROM cpt.a UNION ALL SELECT count(*) FROM cpt.b"), []string{"0", "0"})
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	wantRows(t, "after commit", queryStrings(t, ctx, other, "SELECT (SELECT count(*) FROM cpt.a), (SELECT string_agg(v, ',' ORDER BY id) FROM cpt.a), (SELECT count(*) FROM cpt.b)"),
		[]string{"2|one,TWO|2"})

	// ROLLBACK: nothing visible, files deleted.
	files := len(filesUnder(t, filepath.Join(srv.dataDir, "warehouse", "cpt")))
	tx, err = c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mustExecTx(t, ctx, tx, "INSERT INTO cpt.a VALUES (3, 'three')", "INSERT INTO cpt.b VALUES (3, 'z')")
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	wantRows(t, "after rollback", queryStrings(t, ctx, other, "SELECT (SELECT count(*) FROM cpt.a), (SELECT count(*) FROM cpt.b)"), []string{"2|2"})
	if got := len(filesUnder(t, filepath.Join(srv.dataDir, "warehouse", "cpt"))); got != files {
		t.Errorf("files after rollback: %d, want %d", got, files)
	}

	// A failed block: COMMIT rolls back.
	tx, err = c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mustExecTx(t, ctx, tx, "INSERT INTO cpt.a VALUES (4, 'four')")
	if _, err := tx.Exec(ctx, "SELECT * FROM cpt.nope"); err == nil {
		t.Fatal("expected an error")
	}
	if _, err := tx.Exec(ctx, "SAVEPOINT s1"); pgCode(err) != "25P02" {
		t.Errorf("statement in failed block: %v", err)
	}
	_ = tx.Commit(ctx)
	wantRows(t, "after failed block", queryStrings(t, ctx, other, "SELECT count(*) FROM cpt.a"), []string{"2"})
	// Many small INSERTs in a block (Spark's JDBC sink) are buffered and
	// written as one file per bucket at COMMIT; a COPY between them keeps
	// the order: the last write of a key wins.
	mustExec(t, ctx, c, "CREATE TABLE cpt.many (id bigint PRIMARY KEY, v text) WITH (hash_bucket_num = 1)")
	tx, err = c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 50; i++ {
		mustExecTx(t, ctx, tx, fmt.Sprintf("INSERT INTO cpt.many VALUES (%d, 'first')", i))
	}
	wantRows(t, "buffered rows are read in the block", queryStrings(t, ctx, c, "SELECT count(*) FROM cpt.many"), []string{"50"})
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"cpt", "many"}, []string{"id", "v"},
		pgx.CopyFromRows([][]any{{int64(7), "copied"}, {int64(8), "copied"}})); err != nil {
		t.Fatal(err)
	}
	mustExecTx(t, ctx, tx, "INSERT INTO cpt.many VALUES (8, 'last')")
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	wantRows(t, "order kept", queryStrings(t, ctx, other, "SELECT id, v FROM cpt.many WHERE id IN (6, 7, 8) ORDER BY id"),
		[]string{"6|first", "7|copied", "8|last"})
	if n := len(filesUnder(t, filepath.Join(srv.dataDir, "warehouse", "cpt", "many"))); n == 0 || n > 4 {
		t.Errorf("51 INSERTs and a COPY in one block made %d files, want at most 4", n)
	}

	// A savepoint rolls back the COPY after it alone.
	mustExec(t, ctx, c, "BEGIN", "SAVEPOINT s")
	if _, err := c.PgConn().CopyFrom(ctx, strings.NewReader("900\tsp\n"), "COPY cpt.many (id, v) FROM STDIN"); err != nil {
		t.Fatal(err)
	}
	mustExec(t, ctx, c, "ROLLBACK TO s", "COMMIT")
	wantRows(t, "copy rolled back to the savepoint", queryStrings(t, ctx, c, "SELECT count(*) FROM cpt.many WHERE id = 900"), []string{"0"})
}

func mustExecTx(t *testing.T, ctx context.Context, tx pgx.Tx, sqls ...string) {
	t.Helper()
	for _, q := range sqls {
		if _, err := tx.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}
