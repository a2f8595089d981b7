package tests

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// psqlPath finds psql: /usr/bin/psql, else on PATH. Missing psql skips the
// test unless LAKESOUL_REQUIRE_PG=1.
func psqlPath(t *testing.T) string {
	t.Helper()
	if fi, err := os.Stat("/usr/bin/psql"); err == nil && !fi.IsDir() {
		return "/usr/bin/psql"
	}
	if p, err := exec.LookPath("psql"); err == nil {
		return p
	}
	if os.Getenv(envRequirePG) == "1" {
		t.Fatalf("psql is required (%s=1) but was not found", envRequirePG)
	}
	t.Skipf("psql not found (%s=1 makes this a failure)", envRequirePG)
	return ""
}

// psqlClient runs psql against a server.
type psqlClient struct {
	t    *testing.T
	path string
	srv  *server
}

// run runs psql with one -c per command (each its own query), plus
// extra flags, and returns stdout and stderr and the error.
func (p *psqlClient) run(ctx context.Context, flags []string, cmds ...string) (string, string, error) {
	pw, err := p.srv.adminPassword()
	if err != nil {
		p.t.Fatal(err)
	}
	args := []string{"-X", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", strconv.Itoa(p.srv.port),
		"-U", adminRole, "-d", database}
	args = append(args, flags...)
	for _, c := range cmds {
		args = append(args, "-c", c)
	}
	cmd := exec.CommandContext(ctx, p.path, args...)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") && !strings.HasPrefix(kv, "LC_") && !strings.HasPrefix(kv, "LANG") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "PGPASSWORD="+pw, "PGCONNECT_TIMEOUT=30", "PGCLIENTENCODING=UTF8", "LC_ALL=C")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	return stdout.String(), stderr.String(), err
}

// exec runs commands in unaligned, tuples-only mode and returns stdout,
// failing the test when psql fails.
func (p *psqlClient) exec(ctx context.Context, cmds ...string) string {
	p.t.Helper()
	out, errOut, err := p.run(ctx, []string{"-A", "-t"}, cmds...)
	if err != nil {
		p.t.Fatalf("psql %q: %v\nstdout:\n%s\nstderr:\n%s", cmds, err, out, errOut)
	}
	return out
}

// check runs one command (unaligned, tuples only) and compares its output
// lines with want.
func (p *psqlClient) check(ctx context.Context, cmd string, want ...string) {
	p.t.Helper()
	got := p.exec(ctx, cmd)
	wantText := strings.Join(want, "\n")
	if len(want) > 0 {
		wantText += "\n"
	}
	if got != wantText {
		p.t.Errorf("psql -c %q:\n got:\n%s\n want:\n%s", cmd, got, wantText)
	}
}

// TestPsql drives the server with psql: DDL, inserts, upserts (full and
// partial), merge-on-read queries with filters on every kind of column,
// aggregates, joins, an append table, INSERT ... SELECT and the \dt and \d
// meta-commands.
func TestPsql(t *testing.T) {
	t.Parallel()
	path := psqlPath(t)
	p := &psqlClient{t: t, path: path, srv: sharedServer(t)}
	ctx := testCtx(t)

	// Each -c is its own statement; psql prints the command tags.
	got := p.exec(ctx,
		"CREATE SCHEMA s",
		"CREATE TABLE s.t (id bigint, k text, v double precision, d date, PRIMARY KEY (id)) PARTITION BY LIST (d) WITH (hash_bucket_num = 4)",
		"INSERT INTO s.t VALUES (1, 'a', 1.5, '2026-01-01'), (2, 'b', 2.5, '2026-01-01'), "+
			"(3, 'c', 3.5, '2026-01-02'), (4, 'd', 4.5, '2026-01-02'), (5, 'e', 5.5, '2026-01-02')",
		// Partial upsert: k is not written, so id 1 keeps 'a'; v changes.
		"INSERT INTO s.t (id, v, d) VALUES (1, 10.0, '2026-01-01')",
		// Full-row upsert.
		"INSERT INTO s.t VALUES (2, 'bb', 20.0, '2026-01-01')",
	)
	want := "CREATE SCHEMA\nCREATE TABLE\nINSERT 0 5\nINSERT 0 1\nINSERT 0 1\n"
	if got != want {
		t.Fatalf("setup output:\n got:\n%s\n want:\n%s", got, want)
	}

	p.check(ctx, "SELECT * FROM s.t ORDER BY id",
		"1|a|10|2026-01-01",
		"2|bb|20|2026-01-01",
		"3|c|3.5|2026-01-02",
		"4|d|4.5|2026-01-02",
		"5|e|5.5|2026-01-02")
	p.check(ctx, "SELECT id, k FROM s.t ORDER BY id DESC LIMIT 2", "5|e", "4|d")

	// Filters must apply to the merged rows (duckdb-go#24: filters on Arrow
	// scans were silently ignored), and never to a superseded version.
	// Non-PK column k: id 1's k only exists in its first version.
	p.check(ctx, "SELECT * FROM s.t WHERE k = 'a'", "1|a|10|2026-01-01")
	p.check(ctx, "SELECT * FROM s.t WHERE k = 'b'") // replaced by 'bb'
	p.check(ctx, "SELECT * FROM s.t WHERE k = 'bb'", "2|bb|20|2026-01-01")
	// Non-PK column v: the old values 1.5 and 2.5 of ids 1 and 2 must not match.
	p.check(ctx, "SELECT id, v FROM s.t WHERE v < 5 ORDER BY id", "3|3.5", "4|4.5")
	p.check(ctx, "SELECT id FROM s.t WHERE v = 1.5")
	p.check(ctx, "SELECT id, k FROM s.t WHERE v = 10", "1|a")
	p.check(ctx, "SELECT id FROM s.t WHERE k IS NULL")
	// The primary key.
	p.check(ctx, "SELECT * FROM s.t WHERE id = 2", "2|bb|20|2026-01-01")
	p.check(ctx, "SELECT * FROM s.t WHERE id = 1", "1|a|10|2026-01-01")
	p.check(ctx, "SELECT id FROM s.t WHERE id > 3 ORDER BY id", "4", "5")
	p.check(ctx, "SELECT id FROM s.t WHERE id IN (1, 5, 42) ORDER BY id", "1", "5")
	p.check(ctx, "SELECT id FROM s.t WHERE id = 42")
	// The partition column.
	p.check(ctx, "SELECT id, k FROM s.t WHERE d = '2026-01-02' ORDER BY id", "3|c", "4|d", "5|e")
	p.check(ctx, "SELECT id, k, v FROM s.t WHERE d = DATE '2026-01-01' ORDER BY id", "1|a|10", "2|bb|20")
	p.check(ctx, "SELECT id FROM s.t WHERE d = '2026-01-03'")
	p.check(ctx, "SELECT id FROM s.t WHERE d < '2026-01-02' ORDER BY id", "1", "2")
	// Combinations.
	p.check(ctx, "SELECT id FROM s.t WHERE d = '2026-01-01' AND v > 15", "2")
	p.check(ctx, "SELECT id FROM s.t WHERE d = '2026-01-02' AND (k = 'c' OR id = 5) ORDER BY id", "3", "5")
	p.check(ctx, "SELECT id FROM s.t WHERE id = 1 AND k = 'a' AND d = '2026-01-01'", "1")

	// Aggregates.
	p.check(ctx, "SELECT count(*), sum(v), min(k), max(k), min(d), max(d), avg(v) FROM s.t",
		"5|43.5|a|e|2026-01-01|2026-01-02|8.7")
	p.check(ctx, "SELECT d, count(*), sum(v) FROM s.t GROUP BY d ORDER BY d",
		"2026-01-01|2|30", "2026-01-02|3|13.5")
	p.check(ctx, "SELECT count(*) FROM s.t WHERE v > 4", "4")
	p.check(ctx, "SELECT count(DISTINCT d) FROM s.t", "2")

	// An append table (no primary key): the same row inserted twice is there twice.
	got = p.exec(ctx,
		"CREATE TABLE s.a (id bigint, note text)",
		"INSERT INTO s.a VALUES (1, 'x')",
		"INSERT INTO s.a VALUES (1, 'x')")
	if want := "CREATE TABLE\nINSERT 0 1\nINSERT 0 1\n"; got != want {
		t.Errorf("append table setup:\n got:\n%s\n want:\n%s", got, want)
	}
	p.check(ctx, "SELECT id, note FROM s.a", "1|x", "1|x")
	p.check(ctx, "SELECT count(*) FROM s.a WHERE note = 'x'", "2")

	// INSERT ... SELECT from one lake table into another: into the append
	// table, and into a new primary-key table.
	p.check(ctx, "INSERT INTO s.a SELECT id, k FROM s.t WHERE d = '2026-01-02'", "INSERT 0 3")
	p.check(ctx, "SELECT id, note FROM s.a ORDER BY id, note", "1|x", "1|x", "3|c", "4|d", "5|e")
	p.check(ctx, "CREATE TABLE s.c (id bigint PRIMARY KEY, total double precision)", "CREATE TABLE")
	p.check(ctx, "INSERT INTO s.c SELECT id, v * 2 FROM s.t WHERE v > 4", "INSERT 0 4")
	p.check(ctx, "SELECT id, total FROM s.c ORDER BY id", "1|20", "2|40", "4|9", "5|11")

	// Joins between lake tables.
	p.check(ctx, "SELECT t.id, t.k, a.note FROM s.t t JOIN s.a a ON a.id = t.id ORDER BY t.id, a.note",
		"1|a|x", "1|a|x", "3|c|c", "4|d|d", "5|e|e")
	p.check(ctx, "SELECT t.id, c.total FROM s.t t LEFT JOIN s.c c ON c.id = t.id ORDER BY t.id",
		"1|20", "2|40", "3|", "4|9", "5|11")
	p.check(ctx, "SELECT t.d, sum(c.total) FROM s.t t JOIN s.c c USING (id) GROUP BY t.d ORDER BY t.d",
		"2026-01-01|60", "2026-01-02|20")

	// \dt s.* lists the three tables (unaligned: schema|name|type|owner).
	p.check(ctx, `\dt s.*`, "s|a|table|lakesoul", "s|c|table|lakesoul", "s|t|table|lakesoul")

	// \d s.t: columns, types, not null on the key, and the key's index.
	out, errOut, err := p.run(ctx, []string{"-A"}, `\d s.t`)
	if err != nil {
		t.Fatalf(`psql \d s.t: %v\n%s`, err, errOut)
	}
	wantD := strings.Join([]string{
		`Table "s.t"`,
		`Column|Type|Collation|Nullable|Default`,
		`id|bigint||not null|`,
		`k|text|||`,
		`v|double precision|||`,
		`d|date|||`,
		`Indexes:`,
		`    "t_pkey" PRIMARY KEY, btree (id)`,
	}, "\n") + "\n"
	if out != wantD {
		t.Errorf("psql \\d s.t:\n got:\n%s\n want:\n%s", out, wantD)
	}

	// psql reports an error and exits non-zero (ON_ERROR_STOP).
	_, errOut, err = p.run(ctx, []string{"-A", "-t", "-v", "VERBOSITY=verbose"}, "SELECT * FROM s.nope")
	if err == nil || !strings.Contains(errOut, "ERROR:  42P01:") {
		t.Errorf("psql on an unknown table: err %v, stderr %q; want a failure with ERROR:  42P01", err, errOut)
	}
}
