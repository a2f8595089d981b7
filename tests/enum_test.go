package tests

import (
	"bytes"
	"encoding/binary"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestEnumTypes: enum types as PostgreSQL has them on lake tables — values
// ordered by declaration (ORDER BY, <, >, min, max), casts both ways, the
// type's OID on result columns, 22P02 for a value that is no label on every
// write path with nothing committed, ADD VALUE BEFORE/AFTER, RENAME VALUE
// (old rows read as the new label) and DROP TYPE's 2BP01 and CASCADE.
func TestEnumTypes(t *testing.T) {
	t.Parallel()
	s := sharedServer(t)
	ctx := testCtx(t)
	c := s.connect(t)
	mustExec(t, ctx, c, "CREATE SCHEMA enm",
		"CREATE TYPE enm.mood AS ENUM ('sad', 'ok', 'happy')",
		"CREATE TABLE enm.pk (id bigint PRIMARY KEY, m enm.mood, note text)",
		"CREATE TABLE enm.app (id bigint, m enm.mood)",
		"INSERT INTO enm.pk VALUES (1, 'happy', 'a'), (2, 'sad', 'b'), (3, 'ok', 'c'), (4, NULL, 'd')",
		"INSERT INTO enm.app VALUES (1, 'happy'), (2, 'sad'), (3, 'ok')")
	for _, tbl := range []string{"enm.pk", "enm.app"} {
		wantRows(t, tbl+" ORDER BY", queryStrings(t, ctx, c, "SELECT id FROM "+tbl+" WHERE m IS NOT NULL ORDER BY m"),
			[]string{"2", "3", "1"})
		wantRows(t, tbl+" > 'ok'", queryStrings(t, ctx, c, "SELECT id FROM "+tbl+" WHERE m > 'ok'"), []string{"1"})
		wantRows(t, tbl+" < 'happy'", queryStrings(t, ctx, c, "SELECT id FROM "+tbl+" WHERE 'happy' > m ORDER BY id"),
			[]string{"2", "3"})
		wantRows(t, tbl+" min/max", queryStrings(t, ctx, c, "SELECT min(m)::text || '/' || max(m)::text FROM "+tbl),
			[]string{"sad/happy"})
		wantRows(t, tbl+" IN", queryStrings(t, ctx, c, "SELECT id FROM "+tbl+" WHERE m IN ('sad', 'happy') ORDER BY id"),
			[]string{"1", "2"})
	}
	wantRows(t, "casts", queryStrings(t, ctx, c,
		"SELECT ('happy'::enm.mood > 'sad'::enm.mood)::text || ' ' || CAST('ok' AS enm.mood)::text || ' ' || length('ok'::enm.mood::text)"),
		[]string{"true ok 2"})
	wantRows(t, "text to enum", queryStrings(t, ctx, c, "SELECT id FROM enm.pk WHERE m = 'ok'::text::enm.mood OR m::text = 'x'"),
		[]string{"3"})

	// The result column is of the type, by its OID.
	var oid uint32
	if err := c.QueryRow(ctx, "SELECT t.oid FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace WHERE t.typname = 'mood' AND t.typtype = 'e' AND n.nspname = 'enm'").Scan(&oid); err != nil {
		t.Fatal(err)
	}
	rows, err := c.Query(ctx, "SELECT m FROM enm.pk WHERE id = 1")
	if err != nil {
		t.Fatal(err)
	}
	if got := rows.FieldDescriptions()[0].DataTypeOID; got != oid {
		t.Errorf("result column OID %d, want the enum's %d", got, oid)
	}
	rows.Close()

	// A value that is no label: 22P02 on every write path, nothing committed.
	const bad = `invalid input value for enum mood: "angry"`
	wantBad := func(what string, err error) {
		t.Helper()
		if pgCode(err) != "22P02" || !strings.Contains(err.Error(), bad) {
			t.Errorf("%s: %v, want 22P02 %s", what, err, bad)
		}
	}
	for _, q := range []string{
		"INSERT INTO enm.pk VALUES (10, 'ok', 'x'), (11, 'angry', 'y')",
		"INSERT INTO enm.app SELECT 10, 'angry'",
		"UPDATE enm.pk SET m = 'angry' WHERE id = 1",
		"UPDATE enm.app SET m = 'angry' WHERE id = 1",
		"UPDATE enm.pk SET m = note WHERE id = 1", // 'a' is no label either
		"MERGE INTO enm.pk USING (VALUES (1, 'angry'), (12, 'ok')) AS v(id, m) ON enm.pk.id = v.id " +
			"WHEN MATCHED THEN UPDATE SET m = v.m WHEN NOT MATCHED THEN INSERT VALUES (v.id, v.m, 'z')",
		"SELECT 'angry'::enm.mood",
		"SELECT id FROM enm.pk WHERE m = 'angry'",
	} {
		_, err := c.Exec(ctx, q)
		if q == "UPDATE enm.pk SET m = note WHERE id = 1" {
			if pgCode(err) != "22P02" || !strings.Contains(err.Error(), `invalid input value for enum mood: "a"`) {
				t.Errorf("%s: %v, want 22P02", q, err)
			}
			continue
		}
		wantBad(q, err)
	}
	_, err = c.PgConn().CopyFrom(ctx, strings.NewReader("20\tok\tx\n21\tangry\ty\n"), "COPY enm.pk FROM STDIN")
	wantBad("COPY text", err)
	_, err = c.PgConn().CopyFrom(ctx, strings.NewReader("20,ok\n21,angry\n"), "COPY enm.app FROM STDIN WITH (FORMAT csv)")
	wantBad("COPY csv", err)
	_, err = c.PgConn().CopyFrom(ctx, bytes.NewReader(binaryCopy([]int64{20, 21}, []string{"ok", "angry"})),
		"COPY enm.app (id, m) FROM STDIN (FORMAT binary)")
	wantBad("COPY binary", err)
	wantRows(t, "nothing committed (pk)", queryStrings(t, ctx, c, "SELECT id || ':' || coalesce(m::text, '-') FROM enm.pk ORDER BY id"),
		[]string{"1:happy", "2:sad", "3:ok", "4:-"})
	wantRows(t, "nothing committed (app)", queryStrings(t, ctx, c, "SELECT count(*) FROM enm.app"), []string{"3"})

	// The same paths with labels commit.
	if _, err := c.PgConn().CopyFrom(ctx, bytes.NewReader(binaryCopy([]int64{20}, []string{"ok"})),
		"COPY enm.app (id, m) FROM STDIN (FORMAT binary)"); err != nil {
		t.Fatalf("COPY binary: %v", err)
	}
	mustExec(t, ctx, c, "UPDATE enm.pk SET m = 'ok' WHERE id = 4",
		"MERGE INTO enm.pk USING (VALUES (1, 'sad')) AS v(id, m) ON enm.pk.id = v.id WHEN MATCHED THEN UPDATE SET m = v.m::enm.mood")
	wantRows(t, "written", queryStrings(t, ctx, c, "SELECT id || ':' || m::text FROM enm.pk ORDER BY m, id"),
		[]string{"1:sad", "2:sad", "3:ok", "4:ok"})
	wantRows(t, "binary copy", queryStrings(t, ctx, c, "SELECT m::text FROM enm.app WHERE id = 20"), []string{"ok"})

	// ADD VALUE orders new labels where they are put.
	mustExec(t, ctx, c, "ALTER TYPE enm.mood ADD VALUE 'meh' BEFORE 'ok'",
		"ALTER TYPE enm.mood ADD VALUE 'ecstatic'",
		"ALTER TYPE enm.mood ADD VALUE 'glum' AFTER 'sad'",
		"ALTER TYPE enm.mood ADD VALUE IF NOT EXISTS 'meh'",
		"INSERT INTO enm.app VALUES (30, 'meh'), (31, 'ecstatic'), (32, 'glum')")
	wantRows(t, "labels", queryStrings(t, ctx, c,
		"SELECT enumlabel FROM pg_enum WHERE enumtypid = $1 ORDER BY enumsortorder", oid),
		[]string{"sad", "glum", "meh", "ok", "happy", "ecstatic"})
	wantRows(t, "order after ADD VALUE", queryStrings(t, ctx, c, "SELECT m::text AS label FROM enm.app GROUP BY m ORDER BY m"),
		[]string{"sad", "glum", "meh", "ok", "happy", "ecstatic"})
	for q, code := range map[string]string{
		"ALTER TYPE enm.mood ADD VALUE 'meh'":              "42710",
		"ALTER TYPE enm.mood ADD VALUE 'x' BEFORE 'nope'":  "22023",
		"ALTER TYPE enm.nope ADD VALUE 'x'":                "42704",
		"ALTER TYPE enm.mood RENAME VALUE 'nope' TO 'x'":   "22023",
		"ALTER TYPE enm.mood RENAME VALUE 'meh' TO 'glum'": "42710",
		"CREATE TYPE enm.mood AS ENUM ('a')":               "42710",
		"CREATE TYPE enm.dup AS ENUM ('a', 'a')":           "42710",
		"CREATE TYPE enm.app AS ENUM ('a')":                "42710", // a table's row type has its name
		"CREATE TABLE enm.bad (id int, m enm.nope)":        "42704",
	} {
		if _, err := c.Exec(ctx, q); pgCode(err) != code {
			t.Errorf("%s: %v, want %s", q, err, code)
		}
	}

	// RENAME VALUE: rows written before read as the new label.
	mustExec(t, ctx, c, "ALTER TYPE enm.mood RENAME VALUE 'sad' TO 'blue'")
	wantRows(t, "renamed (pk)", queryStrings(t, ctx, c, "SELECT id || ':' || m::text FROM enm.pk WHERE m < 'ok' ORDER BY id"),
		[]string{"1:blue", "2:blue"})
	wantRows(t, "renamed (app)", queryStrings(t, ctx, c, "SELECT m::text FROM enm.app WHERE id = 2"), []string{"blue"})
	wantRows(t, "renamed (plain scan)", queryStrings(t, ctx, c, "SELECT m FROM enm.pk WHERE id = 2"), []string{"blue"})
	if _, err := c.Exec(ctx, "INSERT INTO enm.app VALUES (40, 'sad')"); pgCode(err) != "22P02" {
		t.Errorf("the former label: %v, want 22P02", err)
	}
	// Keys hash and partitions are named by the stored text: a type of a
	// key or partition column keeps its labels' names.
	mustExec(t, ctx, c, "CREATE TYPE enm.k AS ENUM ('x', 'y')", "CREATE TABLE enm.bykey (m enm.k, n int, PRIMARY KEY (m))")
	if _, err := c.Exec(ctx, "ALTER TYPE enm.k RENAME VALUE 'x' TO 'z'"); pgCode(err) != "0A000" {
		t.Errorf("renaming a key's label: %v, want 0A000", err)
	}
	mustExec(t, ctx, c, "INSERT INTO enm.bykey VALUES ('y', 1), ('x', 2), ('y', 3)")
	wantRows(t, "enum key", queryStrings(t, ctx, c, "SELECT m::text || n FROM enm.bykey ORDER BY m"), []string{"x2", "y3"})

	// DROP TYPE: refused while columns use it; CASCADE drops the columns.
	_, err = c.Exec(ctx, "DROP TYPE enm.mood")
	if pgCode(err) != "2BP01" || !strings.Contains(err.Error(), "cannot drop type enm.mood because other objects depend on it") {
		t.Fatalf("DROP TYPE in use: %v, want 2BP01", err)
	}
	_, err = c.Exec(ctx, "DROP TYPE enm.mood RESTRICT")
	if pgCode(err) != "2BP01" {
		t.Fatalf("DROP TYPE RESTRICT in use: %v, want 2BP01", err)
	}
	mustExec(t, ctx, c, "DROP TYPE enm.mood CASCADE", "DROP TYPE IF EXISTS enm.mood")
	wantRows(t, "columns dropped", queryStrings(t, ctx, c,
		"SELECT table_name || '.' || column_name FROM information_schema.columns WHERE table_schema = 'enm' ORDER BY 1"),
		[]string{"app.id", "bykey.m", "bykey.n", "pk.id", "pk.note"})
	wantRows(t, "rows kept", queryStrings(t, ctx, c, "SELECT count(*) FROM enm.pk"), []string{"4"})
	if _, err := c.Exec(ctx, "DROP TYPE enm.mood"); pgCode(err) != "42704" {
		t.Errorf("DROP TYPE of no type: %v, want 42704", err)
	}
	wantRows(t, "pg_type after DROP", queryStrings(t, ctx, c, "SELECT count(*) FROM pg_type WHERE oid = $1", oid), []string{"0"})

	// A schema with a type in it is dropped only with CASCADE, which drops
	// the type.
	mustExec(t, ctx, c, "CREATE SCHEMA enm_only", "CREATE TYPE enm_only.e AS ENUM ('a')")
	if _, err := c.Exec(ctx, "DROP SCHEMA enm_only"); pgCode(err) != "2BP01" {
		t.Errorf("DROP SCHEMA with a type: %v, want 2BP01", err)
	}
	mustExec(t, ctx, c, "DROP SCHEMA enm_only CASCADE", "CREATE SCHEMA enm_only", "CREATE TYPE enm_only.e AS ENUM ('b')")
}

// TestEnumCatalog: ALTER TABLE ADD COLUMN of an enum type, pg_type (typtype
// 'e'), pg_enum and information_schema.columns ('USER-DEFINED', udt_name),
// the type in a transaction block with the table using it.
func TestEnumCatalog(t *testing.T) {
	t.Parallel()
	s := sharedServer(t)
	ctx := testCtx(t)
	c := s.connect(t)
	mustExec(t, ctx, c, "CREATE SCHEMA enmc", "BEGIN",
		"CREATE TYPE enmc.size AS ENUM ('s', 'm', 'l')",
		"CREATE TABLE enmc.t (id int PRIMARY KEY)",
		"ALTER TABLE enmc.t ADD COLUMN sz enmc.size",
		"COMMIT",
		"INSERT INTO enmc.t VALUES (1, 'l'), (2, 's')")
	wantRows(t, "pg_type", queryStrings(t, ctx, c,
		"SELECT t.typname || ' ' || t.typtype::text || ' ' || n.nspname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace WHERE t.typname = 'size'"),
		[]string{"size e enmc"})
	wantRows(t, "pg_enum", queryStrings(t, ctx, c,
		"SELECT e.enumlabel FROM pg_enum e JOIN pg_type t ON t.oid = e.enumtypid WHERE t.typname = 'size' ORDER BY e.enumsortorder"),
		[]string{"s", "m", "l"})
	wantRows(t, "information_schema.columns", queryStrings(t, ctx, c,
		"SELECT data_type || ' ' || udt_schema || ' ' || udt_name FROM information_schema.columns WHERE table_schema = 'enmc' AND column_name = 'sz'"),
		[]string{"USER-DEFINED enmc size"})
	wantRows(t, "format_type", queryStrings(t, ctx, c,
		"SELECT format_type(a.atttypid, a.atttypmod) FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid WHERE c.relname = 't' AND a.attname = 'sz'"),
		[]string{"enmc.size"})
	wantRows(t, "order", queryStrings(t, ctx, c, "SELECT id FROM enmc.t ORDER BY sz DESC"), []string{"1", "2"})

	// CREATE TABLE AS keeps the type.
	mustExec(t, ctx, c, "CREATE TABLE enmc.copy AS SELECT id, sz FROM enmc.t")
	wantRows(t, "CTAS column", queryStrings(t, ctx, c,
		"SELECT udt_name FROM information_schema.columns WHERE table_schema = 'enmc' AND table_name = 'copy' AND column_name = 'sz'"),
		[]string{"size"})
	wantRows(t, "CTAS order", queryStrings(t, ctx, c, "SELECT id FROM enmc.copy WHERE sz > 's' ORDER BY sz"), []string{"1"})
	if _, err := c.Exec(ctx, "INSERT INTO enmc.copy VALUES (3, 'xl')"); pgCode(err) != "22P02" {
		t.Errorf("CTAS table insert of no label: %v, want 22P02", err)
	}
}

// TestEnumWorkspaces: a workspace's types are visible, usable and droppable
// only in that workspace, as its tables are.
func TestEnumWorkspaces(t *testing.T) {
	t.Parallel()
	s := sharedServer(t)
	ctx := testCtx(t)
	admin := s.connect(t)
	mustExec(t, ctx, admin,
		"SELECT lakesoul.create_workspace('enm_w1')",
		"SELECT lakesoul.create_workspace('enm_w2')",
		"SELECT lakesoul.create_user('enm_ann', 'ann-pw', 'enm_w1', admin => true)",
		"SELECT lakesoul.create_user('enm_ben', 'ben-pw', 'enm_w2', admin => true)")
	ann, err := pgx.Connect(ctx, s.dsn("enm_ann", "ann-pw", database))
	if err != nil {
		t.Fatal(err)
	}
	defer ann.Close(ctx)
	mustExec(t, ctx, ann, "CREATE SCHEMA enm_ws", "CREATE TYPE enm_ws.tier AS ENUM ('gold', 'silver')",
		"CREATE TABLE enm_ws.t (id int, tr enm_ws.tier)", "INSERT INTO enm_ws.t VALUES (1, 'silver'), (2, 'gold')")
	wantRows(t, "ann's order", queryStrings(t, ctx, ann, "SELECT id FROM enm_ws.t ORDER BY tr"), []string{"2", "1"})
	wantRows(t, "ann's pg_type", queryStrings(t, ctx, ann, "SELECT count(*) FROM pg_type WHERE typname = 'tier'"), []string{"1"})
	ben, err := pgx.Connect(ctx, s.dsn("enm_ben", "ben-pw", database))
	if err != nil {
		t.Fatal(err)
	}
	defer ben.Close(ctx)
	mustExec(t, ctx, ben, "CREATE SCHEMA enm_ws2")
	wantRows(t, "ben's pg_type", queryStrings(t, ctx, ben, "SELECT count(*) FROM pg_type WHERE typname = 'tier'"), []string{"0"})
	wantRows(t, "ben's pg_enum", queryStrings(t, ctx, ben, "SELECT count(*) FROM pg_enum WHERE enumlabel = 'gold'"), []string{"0"})
	for _, q := range []string{"CREATE TABLE enm_ws2.t (id int, tr enm_ws.tier)", "ALTER TYPE enm_ws.tier ADD VALUE 'bronze'",
		"DROP TYPE enm_ws.tier", "SELECT 'gold'::enm_ws.tier"} {
		// PostgreSQL says the schema does not exist (ben does not see
		// it), or the type does not
		if _, err := ben.Exec(ctx, q); pgCode(err) != "42704" && pgCode(err) != "3F000" {
			t.Errorf("ben: %s: %v, want 42704 or 3F000", q, err)
		}
	}
	if _, err := ben.Exec(ctx, "CREATE TYPE enm_ws.other AS ENUM ('x')"); pgCode(err) != "3F000" {
		t.Errorf("ben creates a type in ann's schema: %v, want 3F000", err)
	}
	wantRows(t, "type untouched", queryStrings(t, ctx, ann,
		"SELECT string_agg(enumlabel, ',' ORDER BY enumsortorder) FROM pg_enum e JOIN pg_type t ON t.oid = e.enumtypid WHERE t.typname = 'tier'"),
		[]string{"gold,silver"})
}

// TestEnumClients: psycopg2 sees enum result columns by the type's OID and
// gets 22P02 for a bad label; psql's \dT+ lists the type with its labels.
func TestEnumClients(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := srv.connect(t)
	mustExec(t, ctx, c, "CREATE SCHEMA enm_cl", "CREATE TYPE enm_cl.color AS ENUM ('red', 'green', 'blue')",
		"CREATE TABLE enm_cl.t (id int PRIMARY KEY, col enm_cl.color)")
	p := &psqlClient{t: t, path: psqlPath(t), srv: srv}
	out := p.exec(ctx, `\dT+ enm_cl.*`)
	if !strings.Contains(out, "enm_cl|enm_cl.color|color|4|red\ngreen\nblue|") {
		t.Errorf(`\dT+ enm_cl.*: %q`, out)
	}
	if out := p.exec(ctx, `\d enm_cl.t`); !strings.Contains(out, "col|enm_cl.color|") {
		t.Errorf(`\d enm_cl.t: %q`, out)
	}

	python := requireClient(t, "python3", "/usr/bin/python3")
	if err := exec.Command(python, "-c", "import psycopg2").Run(); err != nil {
		requireClient(t, "psycopg2 (apt-get install python3-psycopg2)", "/nonexistent/psycopg2")
	}
	pw, _ := srv.adminPassword()
	dsn := (&url.URL{Scheme: "postgresql", User: url.UserPassword(adminRole, pw),
		Host: "127.0.0.1:" + strconv.Itoa(srv.port), Path: "/" + database}).String()
	got := runClient(t, ctx, nil, python, "-c", `
import sys, psycopg2
c = psycopg2.connect(sys.argv[1]); c.autocommit = True
cur = c.cursor()
cur.execute("INSERT INTO enm_cl.t VALUES (%s, %s), (%s, %s), (%s, %s)", (1, 'blue', 2, 'red', 3, 'green'))
cur.execute("SELECT col FROM enm_cl.t ORDER BY col")
print("ROWS", [r[0] for r in cur.fetchall()])
cur.execute("SELECT oid FROM pg_type WHERE typname = 'color'")
oid = cur.fetchone()[0]
cur.execute("SELECT col FROM enm_cl.t WHERE col > %s ORDER BY id", ('red',))
print("OID", cur.description[0].type_code == oid, oid > 0)
print("GT", [r[0] for r in cur.fetchall()])
try:
    cur.execute("INSERT INTO enm_cl.t VALUES (%s, %s)", (4, 'pink'))
except psycopg2.Error as e:
    print("ERR", e.pgcode, e.diag.message_primary)
cur.execute("SELECT count(*) FROM enm_cl.t")
print("COUNT", cur.fetchone()[0])
print("DONE")
`, dsn)
	expectLines(t, got,
		"ROWS ['red', 'green', 'blue']",
		"OID True True",
		"GT ['blue', 'green']",
		`ERR 22P02 invalid input value for enum color: "pink"`,
		"COUNT 3",
		"DONE")
}

// binaryCopy is COPY's binary format of rows (id bigint, m text-like).
func binaryCopy(ids []int64, labels []string) []byte {
	var b bytes.Buffer
	b.WriteString("PGCOPY\n\xff\r\n\x00")
	binary.Write(&b, binary.BigEndian, int32(0))
	binary.Write(&b, binary.BigEndian, int32(0))
	for i := range ids {
		binary.Write(&b, binary.BigEndian, int16(2))
		binary.Write(&b, binary.BigEndian, int32(8))
		binary.Write(&b, binary.BigEndian, ids[i])
		binary.Write(&b, binary.BigEndian, int32(len(labels[i])))
		b.WriteString(labels[i])
	}
	binary.Write(&b, binary.BigEndian, int16(-1))
	return b.Bytes()
}
