package tests

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/internal/pgtest"
)

// pgDumpPaths are the pg_dump binaries installed here: the PostgreSQL 15
// one and Debian's wrapper, which picks the newest installed version.
func pgDumpPaths(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, p := range []string{"/usr/lib/postgresql/15/bin/pg_dump", "/usr/bin/pg_dump"} {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		if os.Getenv(envRequirePG) == "1" {
			t.Fatalf("pg_dump is required (%s=1) but was not found", envRequirePG)
		}
		t.Skipf("pg_dump not found (%s=1 makes this a failure)", envRequirePG)
	}
	return out
}

// cleanEnv is the environment without libpq and locale settings.
func cleanEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") && !strings.HasPrefix(kv, "LC_") && !strings.HasPrefix(kv, "LANG") {
			env = append(env, kv)
		}
	}
	return append(append(env, "PGCONNECT_TIMEOUT=30", "PGCLIENTENCODING=UTF8", "LC_ALL=C"), extra...)
}

// runTool runs a client binary and returns its stdout, failing the test
// when it fails.
func runTool(t *testing.T, ctx context.Context, env []string, stdin string, path string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %q: %v\nstderr:\n%s", path, args, err, stderr.String())
	}
	return stdout.String()
}

// runScript runs a client binary with script on stdin and returns its
// stdout and stderr together, and its error.
func runScript(ctx context.Context, env []string, script string, path string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env, cmd.Stdin = env, strings.NewReader(script)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestPgDump dumps a lake schema with the installed pg_dump binaries —
// schema only, data as COPY and as INSERTs — restores the dumps with psql
// into another lake schema and into a plain PostgreSQL 15, and compares
// tables, keys and rows with the source.
func TestPgDump(t *testing.T) {
	dumps := pgDumpPaths(t)
	psql := psqlPath(t)
	srv := sharedServer(t)
	ctx := testCtx(t)
	lake := &psqlClient{t: t, path: psql, srv: srv}
	lake.exec(ctx,
		"CREATE SCHEMA dump_src",
		"CREATE TABLE dump_src.kv (id bigint PRIMARY KEY, name text NOT NULL, score double precision, born date, ok boolean) WITH (hash_bucket_num = 2)",
		"CREATE TABLE dump_src.pair (a int, b text, v numeric(12,3), at timestamptz, PRIMARY KEY (a, b))",
		"CREATE TABLE dump_src.ev (region text, ts timestamp, n smallint, payload varchar(20)) PARTITION BY LIST (region)",
		`INSERT INTO dump_src.kv VALUES (1, 'a', 1.5, '2024-01-01', true), (2, 'b''q', NULL, NULL, NULL),
			(3, E'tab\there\nline', -0.1, '1999-12-31', false), (4, 'back\slash', 1e300, '2000-02-29', true)`,
		"INSERT INTO dump_src.kv VALUES (1, 'a2', 2.5, '2024-01-02', false)", // an upsert: one row per key
		"INSERT INTO dump_src.pair VALUES (1, 'x', 1.250, '2024-05-01 10:00:00+00'), (1, 'y', -3, NULL), (2, 'x', NULL, '1970-01-01 00:00:00+00')",
		"CREATE VIEW dump_src.kv_ok AS SELECT id, name FROM dump_src.kv WHERE ok",
		"INSERT INTO dump_src.ev VALUES ('eu', '2024-01-01 10:00:00', 1, 'x'), ('us', NULL, 2, NULL), ('eu', '2024-01-02 11:30:00.5', -3, 'ü')",
		// Defaults and CHECK constraints are dumped with the table.
		"CREATE TABLE dump_src.def (id bigint PRIMARY KEY, v text DEFAULT 'x', n int NOT NULL DEFAULT 7, CONSTRAINT n_pos CHECK (n > 0), CONSTRAINT v_len CHECK (length(v) < 5))",
		"INSERT INTO dump_src.def (id) VALUES (1)",
		"INSERT INTO dump_src.def VALUES (2, 'y', 3)",
		// Sequences: a SERIAL column's, owned by it, and a free one.
		"CREATE TABLE dump_src.ser (id serial PRIMARY KEY, w text)",
		"INSERT INTO dump_src.ser (w) VALUES ('a'), ('b')",
		"CREATE SEQUENCE dump_src.q START 5",
		"SELECT nextval('dump_src.q')",
		"CREATE TABLE dump_src.idn (id int GENERATED ALWAYS AS IDENTITY (START WITH 100), v text)",
		"INSERT INTO dump_src.idn (v) VALUES ('a'), ('b')",
	)
	pw, err := srv.adminPassword()
	if err != nil {
		t.Fatal(err)
	}
	lakeEnv := cleanEnv("PGPASSWORD=" + pw)
	conn := []string{"-h", "127.0.0.1", "-p", strconv.Itoa(srv.port), "-U", adminRole, "-d", database}
	dump := func(bin string, args ...string) string {
		t.Helper()
		return runTool(t, ctx, lakeEnv, "", bin, append(append([]string{"-n", "dump_src"}, args...), conn...)...)
	}
	// into renames the dumped schema.
	into := func(script, schema string) string {
		return regexp.MustCompile(`\bdump_src\b`).ReplaceAllString(script, schema)
	}
	restoreLake := func(script string) {
		t.Helper()
		runTool(t, ctx, lakeEnv, script, psql, append([]string{"-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", "-"}, conn...)...)
	}

	tables := map[string]string{"kv": "id", "pair": "a, b", "ev": "region, ts, n", "kv_ok": "id", "def": "id", "ser": "id", "idn": "id"}
	// describe is what must come back: columns with types, nullability and
	// whether they have a default, the primary key and the number of CHECK
	// constraints (their text differs in spelling between lakesoul and
	// PostgreSQL: restoredRules checks what they do).
	describe := func(query func(string) string, schema string) string {
		return query(`SELECT c.relname, a.attnum, a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod), a.attnotnull, a.atthasdef, a.attidentity,
				(SELECT pg_catalog.pg_get_constraintdef(k.oid) FROM pg_catalog.pg_constraint k WHERE k.conrelid = c.oid AND k.contype = 'p'),
				(SELECT count(*) FROM pg_catalog.pg_constraint k WHERE k.conrelid = c.oid AND k.contype = 'c')
			FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
			JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0
			WHERE n.nspname = '` + schema + `' AND c.relkind = 'r' ORDER BY 1, 2`)
	}
	contents := func(query func(string) string, schema string) map[string]string {
		out := map[string]string{}
		for tbl, order := range tables {
			out[tbl] = query("SELECT * FROM " + schema + "." + tbl + " ORDER BY " + order)
		}
		return out
	}
	lakeQuery := func(q string) string { return lake.exec(ctx, q) }
	wantSchema := describe(lakeQuery, "dump_src")
	wantRows := contents(lakeQuery, "dump_src")
	if !strings.Contains(wantSchema, "PRIMARY KEY (a, b)") || !strings.HasPrefix(wantRows["kv"], "1|a2|2.5|") || !strings.Contains(wantRows["kv_ok"], "4|back") {
		t.Fatalf("source:\n%s\n%v", wantSchema, wantRows)
	}
	same := func(what, got, want string) {
		t.Helper()
		if got != want {
			t.Errorf("%s:\n got:\n%s\n want:\n%s", what, got, want)
		}
	}
	if !strings.Contains(wantSchema, "def|2|v|text|f|t||PRIMARY KEY (id)|2") || wantRows["def"] != "1|x|7\n2|y|3\n" {
		t.Fatalf("source defaults and checks:\n%s\n%q", wantSchema, wantRows["def"])
	}
	// psql's \d shows them as PostgreSQL's does.
	if d, _, err := lake.run(ctx, []string{"-A"}, `\d dump_src.def`); err != nil || !strings.Contains(d, "v|text|||'x'") ||
		!strings.Contains(d, `"n_pos" CHECK (n > 0)`) || !strings.Contains(d, `"v_len" CHECK (length(v) < 5)`) {
		t.Errorf("\\d dump_src.def: %v\n%s", err, d)
	}
	// restoredRules checks that a restored def table applies the defaults
	// and refuses a row that breaks a check (23514), with psql: run runs a
	// script and returns its output and error.
	restoredRules := func(what, schema string, run func(script string) (string, error)) {
		t.Helper()
		out, err := run("INSERT INTO " + schema + ".def (id) VALUES (100); SELECT v, n FROM " + schema + ".def WHERE id = 100;")
		if err != nil || out != "x|7\n" {
			t.Errorf("%s: a row without v and n: %q %v", what, out, err)
		}
		// The sequences go on where the source's were.
		if out, err := run("INSERT INTO " + schema + ".ser (w) VALUES ('n') RETURNING id; SELECT nextval('" + schema + ".q');"); err != nil || out != "3\n6\n" {
			t.Errorf("%s: the SERIAL column and the free sequence after the restore: %q %v", what, out, err)
		}
		// The identity column stays one: it numbers on, and refuses a value.
		if out, err := run("INSERT INTO " + schema + ".idn (v) VALUES ('n') RETURNING id;"); err != nil || out != "102\n" {
			t.Errorf("%s: the identity column after the restore: %q %v", what, out, err)
		}
		if out, err := run("\\set VERBOSITY verbose\nINSERT INTO " + schema + ".idn VALUES (1, 'x');"); err == nil || !strings.Contains(out, "428C9") {
			t.Errorf("%s: a value for a GENERATED ALWAYS column: %v\n%s", what, err, out)
		}
		for _, bad := range []string{"(101, 'ok', -1)", "(102, 'toolong', 1)"} {
			if out, err := run("\\set VERBOSITY verbose\nINSERT INTO " + schema + ".def VALUES " + bad + ";"); err == nil || !strings.Contains(out, "23514") {
				t.Errorf("%s: INSERT %s breaking a check: %v\n%s", what, bad, err, out)
			}
		}
	}

	pg := pgtest.Cluster(t)
	pgEnv := cleanEnv()
	// The dumps hand objects to the lake owner.
	runTool(t, ctx, pgEnv, "", psql, "-X", "-q", "-h", pg.SocketDir(), "-p", strconv.Itoa(pg.Port()), "-U", pg.SuperUser(),
		"-d", "postgres", "-c", "DO $$BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '"+adminRole+"') THEN CREATE ROLE "+adminRole+"; END IF; END$$")
	for i, bin := range dumps {
		schemaOnly := dump(bin, "--schema-only")
		copyData := dump(bin, "--data-only")
		insertData := dump(bin, "--data-only", "--inserts")
		full := dump(bin)
		for _, want := range []string{"CREATE TABLE dump_src.kv", "CREATE VIEW dump_src.kv_ok AS", "ADD CONSTRAINT kv_pkey PRIMARY KEY (id)", "ADD CONSTRAINT pair_pkey PRIMARY KEY (a, b)",
			"CREATE SEQUENCE dump_src.ser_id_seq", "ALTER SEQUENCE dump_src.ser_id_seq OWNED BY dump_src.ser.id", "CREATE SEQUENCE dump_src.q",
			"ALTER TABLE dump_src.idn ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY"} {
			if !strings.Contains(schemaOnly, want) {
				t.Fatalf("%s --schema-only lacks %q:\n%s", bin, want, schemaOnly)
			}
		}
		if !strings.Contains(copyData, "COPY dump_src.kv (id, name, score, born, ok) FROM stdin;") ||
			!strings.Contains(insertData, "INSERT INTO dump_src.kv VALUES (2, 'b''q', NULL, NULL, NULL);") {
			t.Fatalf("%s data:\n%s\n%s", bin, copyData, insertData)
		}

		// Into lake schemas: the schema (keys added to the empty tables),
		// then the rows, as COPY and as INSERTs.
		for j, data := range []string{copyData, insertData} {
			dst := "dump_dst_" + strconv.Itoa(i) + "_" + strconv.Itoa(j)
			restoreLake(into(schemaOnly, dst))
			restoreLake(into(data, dst))
			same(bin+" lake schema "+dst, describe(lakeQuery, dst), into(wantSchema, dst))
			for tbl, rows := range contents(lakeQuery, dst) {
				same(bin+" lake rows "+dst+"."+tbl, rows, wantRows[tbl])
			}
			restoredRules(bin+" lake "+dst, dst, func(script string) (string, error) {
				return runScript(ctx, lakeEnv, script, psql, append([]string{"-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-f", "-"}, conn...)...)
			})
		}

		// Into plain PostgreSQL: the whole dump, and schema plus INSERTs.
		for j, script := range []string{full, schemaOnly + insertData} {
			db := "restore_" + strconv.Itoa(i) + "_" + strconv.Itoa(j)
			if err := pg.CreateDatabase(ctx, db); err != nil {
				t.Fatal(err)
			}
			pgArgs := []string{"-X", "-q", "-A", "-t", "-h", pg.SocketDir(), "-p", strconv.Itoa(pg.Port()), "-U", pg.SuperUser(), "-d", db}
			runTool(t, ctx, pgEnv, script, psql, append([]string{"-v", "ON_ERROR_STOP=1", "-f", "-"}, pgArgs...)...)
			pgQuery := func(q string) string {
				return runTool(t, ctx, pgEnv, "", psql, append([]string{"-c", q}, pgArgs...)...)
			}
			same(bin+" postgres schema "+db, describe(pgQuery, "dump_src"), wantSchema)
			for tbl, rows := range contents(pgQuery, "dump_src") {
				same(bin+" postgres rows "+db+"."+tbl, rows, wantRows[tbl])
			}
			restoredRules(bin+" postgres "+db, "dump_src", func(script string) (string, error) {
				return runScript(ctx, pgEnv, script, psql, append([]string{"-v", "ON_ERROR_STOP=1", "-f", "-"}, pgArgs...)...)
			})
		}
	}
}

// TestPgDumpWorkspaces: a workspace user's pg_dump sees what the user sees:
// the whole-database dump has the user's workspace's schemas and not another
// workspace's, which -n cannot name either.
func TestPgDumpWorkspaces(t *testing.T) {
	bin := pgDumpPaths(t)[0]
	srv := sharedServer(t)
	ctx := testCtx(t)
	admin := srv.connect(t)
	mustExec(t, ctx, admin,
		"SELECT lakesoul.create_workspace('dump_wa')",
		"SELECT lakesoul.create_workspace('dump_wb')",
		"SELECT lakesoul.create_user('dump_ua', 'dump-ua-Pw1', 'dump_wa', admin => true)",
		"SELECT lakesoul.create_user('dump_ub', 'dump-ub-Pw1', 'dump_wb', admin => true)")
	as := func(user, pw string, sqls ...string) {
		c, err := pgx.Connect(ctx, srv.dsn(user, pw, database))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		mustExec(t, ctx, c, sqls...)
	}
	as("dump_ua", "dump-ua-Pw1", "CREATE SCHEMA dump_wsa", "CREATE TABLE dump_wsa.t (id int PRIMARY KEY, v text)", "INSERT INTO dump_wsa.t VALUES (1, 'mine')")
	as("dump_ub", "dump-ub-Pw1", "CREATE SCHEMA dump_wsb", "CREATE TABLE dump_wsb.secret (id int PRIMARY KEY, v text)", "INSERT INTO dump_wsb.secret VALUES (1, 'theirs')")

	env := cleanEnv("PGPASSWORD=dump-ub-Pw1")
	conn := []string{"-h", "127.0.0.1", "-p", strconv.Itoa(srv.port), "-U", "dump_ub", "-d", database}
	out := runTool(t, ctx, env, "", bin, conn...)
	if !strings.Contains(out, "CREATE TABLE dump_wsb.secret") || !strings.Contains(out, "1\ttheirs") {
		t.Errorf("dump_ub's dump lacks its own table:\n%s", out)
	}
	if strings.Contains(out, "dump_wsa") || strings.Contains(out, "mine") {
		t.Errorf("dump_ub's dump shows another workspace:\n%s", out)
	}
	cmd := exec.CommandContext(ctx, bin, append([]string{"--strict-names", "-n", "dump_wsa"}, conn...)...)
	cmd.Env = env
	if b, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(b), "no matching schemas") {
		t.Errorf("dump_ub dumps dump_wsa: %v\n%s", err, b)
	}
}

// TestRestoreDDLRefusals: what a restore script may ask that lake tables
// cannot do fails with its SQLSTATE and changes nothing.
func TestRestoreDDLRefusals(t *testing.T) {
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := srv.connect(t)
	mustExec(t, ctx, c,
		"CREATE SCHEMA dump_ref",
		"CREATE TABLE dump_ref.rows (id int, v text)",
		"INSERT INTO dump_ref.rows VALUES (1, 'a'), (1, 'b')",
		"CREATE TABLE dump_ref.keyed (id int PRIMARY KEY, v text)",
		"CREATE TABLE dump_ref.empty (id int, v text)",
		"CREATE TABLE dump_ref.empty2 (id int)",
		"ALTER TABLE ONLY dump_ref.keyed ADD CONSTRAINT keyed_pkey PRIMARY KEY (id)", // the key it has: kept
		"ALTER TABLE ONLY dump_ref.empty ADD CONSTRAINT empty_pkey PRIMARY KEY (id)",
		"INSERT INTO dump_ref.empty VALUES (1, 'a'), (1, 'b')", // an upsert now
		"ALTER SCHEMA dump_ref OWNER TO "+adminRole,
		"ALTER TABLE dump_ref.rows OWNER TO CURRENT_USER")
	wantRows(t, "empty became keyed", queryStrings(t, ctx, c, "SELECT id || ':' || v FROM dump_ref.empty"), []string{"1:b"})
	for q, code := range map[string]string{
		"ALTER TABLE dump_ref.rows ADD PRIMARY KEY (id)":       "23505", // a key its rows repeat
		"ALTER TABLE dump_ref.keyed ADD PRIMARY KEY (v)":       "42P16",
		"ALTER TABLE dump_ref.empty ADD PRIMARY KEY (nope)":    "42P16",
		"ALTER TABLE dump_ref.rows OWNER TO somebody_else":     "0A000",
		"ALTER SCHEMA dump_nope OWNER TO " + adminRole:         "3F000",
		"LOCK TABLE dump_ref.rows IN ACCESS SHARE MODE":        "25P01", // outside a block
		"BEGIN; LOCK TABLE dump_ref.rows IN EXCLUSIVE MODE":    "0A000",
		"BEGIN; LOCK TABLE dump_ref.nope IN ACCESS SHARE MODE": "42P01",
	} {
		_, err := c.Exec(ctx, q)
		if pgCode(err) != code {
			t.Errorf("%s: %v, want %s", q, err, code)
		}
		c.Exec(ctx, "ROLLBACK") //nolint:errcheck // ends the blocks above
	}
	var pk string
	if err := c.QueryRow(ctx, `SELECT pg_get_constraintdef(k.oid) FROM pg_constraint k JOIN pg_class r ON r.oid = k.conrelid
		JOIN pg_namespace n ON n.oid = r.relnamespace WHERE n.nspname = 'dump_ref' AND r.relname = 'rows'`).Scan(&pk); err != pgx.ErrNoRows {
		t.Errorf("dump_ref.rows got a key: %q, %v", pk, err)
	}
	mustExec(t, ctx, c, "BEGIN", "LOCK TABLE dump_ref.rows, dump_ref.keyed IN ACCESS SHARE MODE", "COMMIT")
}
