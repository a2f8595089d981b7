package engine_test

import (
	"context"
	"testing"

	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// What ORMs' migrations and queries need of the SQL surface (issue 35,
// item 5): extensions, sequence functions of computed names, WITH … UPDATE,
// varchar[] columns.

// TestExtensions: the extensions migrations ask for (uuid-ossp, pgcrypto)
// are there, and their functions make uuids in queries, in defaults (of
// CREATE TABLE and of a column added to a table with rows) and in writes;
// an extension the engine does not serve is 0A000.
func TestExtensions(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE EXTENSION IF NOT EXISTS "uuid-ossp"`)
	mustRun(t, s, `CREATE EXTENSION pgcrypto`)
	mustRun(t, s, `CREATE EXTENSION IF NOT EXISTS pgcrypto WITH SCHEMA public`)
	if _, err := run(t, s, `CREATE EXTENSION postgis`); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
		t.Fatalf("CREATE EXTENSION postgis: %v", err)
	}
	expectRows(t, s, `SELECT uuid_generate_v4() <> public.uuid_generate_v4(), length(gen_random_uuid()::text)`, "true|36")
	mustRun(t, s, `CREATE SCHEMA x; CREATE TABLE x.u (id uuid DEFAULT uuid_generate_v4(), v text, PRIMARY KEY (id))`)
	mustRun(t, s, `INSERT INTO x.u (v) VALUES ('a'), ('b'); INSERT INTO x.u VALUES (uuid_generate_v4(), 'c')`)
	mustRun(t, s, `ALTER TABLE x.u ADD COLUMN w uuid NOT NULL DEFAULT uuid_generate_v4()`)
	expectRows(t, s, `SELECT count(DISTINCT id), count(DISTINCT w), count(*) FROM x.u`, "3|3|3")
	expectRows(t, s, `SELECT count(*) FROM x.u WHERE id::text ~ '^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$'`, "3")
}

// TestSequenceFunctionsOfComputedNames: nextval, currval and setval of a
// sequence named by a parameter or an expression (PHP's
// lastInsertId('seq') sends SELECT currval($1)) resolve the name when the
// statement runs, with search_path, and the engine's functions behind them
// cannot be called by name.
func TestSequenceFunctionsOfComputedNames(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, "CREATE SCHEMA q; CREATE SEQUENCE q.s; CREATE TABLE q.t (id serial, v text)")
	if _, err := run(t, s, "SELECT currval($1)", "q.s"); sqlerr.Code(err) != sqlerr.ObjectNotInPrerequisiteState {
		t.Fatalf("currval before nextval: %v", err)
	}
	if got := mustRun(t, s, "SELECT nextval($1)", "q.s"); len(got) != 1 || got[0] != "1" {
		t.Fatalf("nextval($1): %v", got)
	}
	if got := mustRun(t, s, "SELECT currval($1)", "q.s"); len(got) != 1 || got[0] != "1" {
		t.Fatalf("currval($1): %v", got)
	}
	mustRun(t, s, "INSERT INTO q.t (v) VALUES ('a'), ('b')")
	if got := mustRun(t, s, "SELECT currval($1)", "q.t_id_seq"); len(got) != 1 || got[0] != "2" {
		t.Fatalf("currval($1) of a serial: %v", got)
	}
	expectRows(t, s, "SELECT currval('q.' || 't_id_seq'), setval('q.' || 's', 10), nextval(lower('Q.S'))", "2|10|11")
	if _, err := run(t, s, "SELECT currval($1)", "q.nope"); err == nil {
		t.Fatal("currval of a sequence that does not exist")
	}
	for _, q := range []string{"SELECT lakesoul_currval_named('x', 'q.s')", "SELECT lakesoul_nextval_named('x', 'q.s')"} {
		if _, err := run(t, s, q); sqlerr.Code(err) != sqlerr.UndefinedFunction {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// TestWithUpdateDelete: WITH … UPDATE … FROM (bun's bulk update) and
// WITH … UPDATE/DELETE … WHERE … IN (SELECT … FROM cte), on keyed and
// append tables, with RETURNING; a data-modifying WITH query is 0A000.
func TestWithUpdateDelete(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, "CREATE SCHEMA w; CREATE TABLE w.k (id int PRIMARY KEY, v text); CREATE TABLE w.a (id int, v text)")
	mustRun(t, s, "INSERT INTO w.k VALUES (1, 'a'), (2, 'b'), (3, 'c'); INSERT INTO w.a VALUES (1, 'a'), (2, 'b'), (3, 'c')")
	expectRows(t, s, `WITH _data (id, v) AS (VALUES (1, 'x'), (3, 'z'))
		UPDATE w.k SET v = _data.v FROM _data WHERE w.k.id = _data.id RETURNING w.k.id, w.k.v`, "1|x", "3|z")
	expectRows(t, s, "SELECT id, v FROM w.k ORDER BY id", "1|x", "2|b", "3|z")
	for _, tbl := range []string{"w.k", "w.a"} {
		mustRun(t, s, `WITH two AS (SELECT 2 AS id) UPDATE `+tbl+` SET v = 'y' WHERE id IN (SELECT id FROM two)`)
		expectRows(t, s, "SELECT v FROM "+tbl+" WHERE id = 2", "y")
		mustRun(t, s, `WITH gone AS (SELECT id FROM `+tbl+` WHERE v = 'y') DELETE FROM `+tbl+` WHERE id IN (SELECT id FROM gone)`)
		expectRows(t, s, "SELECT count(*) FROM "+tbl+" WHERE id = 2", "0")
	}
	if _, err := run(t, s, `WITH d AS (DELETE FROM w.a RETURNING id) UPDATE w.k SET v = 'q' WHERE id IN (SELECT id FROM d)`); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
		t.Fatalf("data-modifying WITH: %v", err)
	}
	expectRows(t, s, "SELECT count(*) FROM w.a", "2")
}

// TestVarcharArrayColumns: varchar[] columns (bun's default for []string)
// store, read, compare and COPY as text[] does and are shown as character
// varying[] (result type 1015, information_schema, format_type);
// varchar(n)[] is 0A000, since nothing would bind the elements' length.
func TestVarcharArrayColumns(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, "CREATE SCHEMA va; CREATE TABLE va.b (id int PRIMARY KEY, tags varchar[], t2 character varying[])")
	mustRun(t, s, `INSERT INTO va.b VALUES (1, '{a,"b c"}', ARRAY['x']), (2, NULL, '{}')`)
	expectRows(t, s, "SELECT id, tags[2], cardinality(t2) FROM va.b ORDER BY id", "1|b c|1", "2|NULL|0")
	expectRows(t, s, "SELECT id FROM va.b WHERE 'a' = ANY(tags)", "1")
	expectRows(t, s, `SELECT data_type, udt_name, format_type(a.atttypid, a.atttypmod) FROM information_schema.columns c
		JOIN pg_attribute a ON a.attname = c.column_name AND a.attrelid = (SELECT oid FROM pg_class WHERE relname = 'b')
		WHERE c.table_schema = 'va' AND c.column_name = 'tags'`, "ARRAY|_varchar|character varying[]")
	stmts, err := s.Parse(context.Background(), "SELECT tags, t2 FROM va.b", nil)
	if err != nil {
		t.Fatal(err)
	}
	cols, err := stmts[0].Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cols {
		if c.TypeOID != schema.ArrayOID(schema.OIDVarchar) {
			t.Errorf("column %s described as %d, want %d", c.Name, c.TypeOID, schema.ArrayOID(schema.OIDVarchar))
		}
	}
	if _, err := run(t, s, "CREATE TABLE va.c (id int, tags varchar(10)[])"); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
		t.Fatalf("varchar(10)[]: %v", err)
	}
}

// TestTempTableFromCatalog: CREATE TEMP TABLE … AS SELECT over catalog
// relations (vacuumlo's first statement) makes a temporary table of the
// catalog's rows, which later statements read, change, join with lake
// tables and ANALYZE; WITH NO DATA makes it empty.
func TestTempTableFromCatalog(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, "CREATE SCHEMA tc; CREATE TABLE tc.t (id bigint, name text); INSERT INTO tc.t VALUES (1, 'a'), (2, 'b')")
	expectRows(t, s, "CREATE TEMP TABLE lo AS SELECT oid AS lo FROM pg_largeobject_metadata")
	expectRows(t, s, "SELECT count(*) FROM lo", "0")
	mustRun(t, s, "ANALYZE lo")
	mustRun(t, s, "VACUUM lo")
	mustRun(t, s, `CREATE TEMP TABLE rels AS SELECT c.relname::text AS relname, c.relnatts AS n, c.oid AS o
		FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace WHERE ns.nspname = 'tc'`)
	expectRows(t, s, "SELECT relname, n, o > 0 FROM rels", "t|2|true")
	expectRows(t, s, "SELECT t.id FROM tc.t t JOIN rels r ON r.n = t.id", "2")
	mustRun(t, s, "DELETE FROM rels WHERE n IN (SELECT id FROM tc.t)")
	expectRows(t, s, "SELECT count(*) FROM rels", "0")
	mustRun(t, s, "CREATE TEMP TABLE empty AS SELECT typname::text FROM pg_type WITH NO DATA")
	expectRows(t, s, "SELECT count(*) FROM empty", "0")
	if _, err := run(t, s, "CREATE TEMP TABLE lo AS SELECT 1 AS x FROM pg_class"); sqlerr.Code(err) != sqlerr.DuplicateTable {
		t.Fatalf("a second lo: %v", err)
	}
}

// TestCreateTableIfNotExistsOfExisting: CREATE TABLE IF NOT EXISTS naming an
// existing table or view does nothing, as in PostgreSQL, for every
// definition the lake refuses when the name is free (ORMs re-run theirs at
// every start: bun's migration lock table has a UNIQUE column).
func TestCreateTableIfNotExistsOfExisting(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE SCHEMA ine; CREATE TABLE ine.t (id bigint PRIMARY KEY, v text); CREATE VIEW ine.v AS SELECT 1 AS x`)
	refused := []string{
		`(id bigserial NOT NULL, table_name varchar UNIQUE, PRIMARY KEY (id))`,
		`(id bigint, UNIQUE (id))`,
		`(id bigint REFERENCES ine.t (id))`,
		`(id int, EXCLUDE USING btree (id WITH =))`,
		`(x nosuchtype)`,
		`(a int, a int)`,
		`(ctid int)`,
		`(id int PRIMARY KEY, v int PRIMARY KEY)`,
		`(id int, PRIMARY KEY (nope))`,
		`(id int) WITH (hash_bucket_num = 4)`,
		`(id int, d date) PARTITION BY RANGE (d)`,
		`(b bytea PRIMARY KEY)`,
	}
	for _, def := range refused {
		if _, err := run(t, s, `CREATE TABLE ine.free `+def); err == nil {
			t.Fatalf("CREATE TABLE ine.free %s: created; the list is of definitions the lake refuses", def)
		}
		if _, err := run(t, s, `CREATE TABLE IF NOT EXISTS ine.free `+def); err == nil {
			t.Fatalf("CREATE TABLE IF NOT EXISTS ine.free %s: created", def)
		}
		for _, rel := range []string{"ine.t", "ine.v"} {
			if _, err := run(t, s, `CREATE TABLE IF NOT EXISTS `+rel+` `+def); err != nil {
				t.Errorf("CREATE TABLE IF NOT EXISTS %s %s: %v, want nothing done", rel, def, err)
			}
		}
	}
	if _, err := run(t, s, `CREATE TABLE ine.t (id int)`); sqlerr.Code(err) != sqlerr.DuplicateTable {
		t.Errorf("CREATE TABLE of an existing table: %v, want 42P07", err)
	}
	expectRows(t, s, `SELECT column_name FROM information_schema.columns WHERE table_schema = 'ine' AND table_name = 't' ORDER BY ordinal_position`, "id", "v")
	expectRows(t, s, `SELECT x FROM ine.v`, "1")
}

// TestUnknownColumnType: a column type PostgreSQL does not have is 42704 (as
// in PostgreSQL), in CREATE TABLE and ALTER TABLE ADD COLUMN, while one it
// has but lake tables do not is 0A000.
func TestUnknownColumnType(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE SCHEMA uct; CREATE TABLE uct.t (id bigint PRIMARY KEY)`)
	for _, q := range []string{`CREATE TABLE uct.u (x nosuchtype)`, `CREATE TABLE uct.u (x nosuchtype[])`, `ALTER TABLE uct.t ADD COLUMN x nosuchtype`} {
		if _, err := run(t, s, q); sqlerr.Code(err) != sqlerr.UndefinedObject || err.Error() != `type "nosuchtype" does not exist` {
			t.Errorf("%s: %v, want 42704 type \"nosuchtype\" does not exist", q, err)
		}
	}
	for _, q := range []string{`CREATE TABLE uct.u (x tsvector)`, `ALTER TABLE uct.t ADD COLUMN x tsvector`} {
		if _, err := run(t, s, q); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
			t.Errorf("%s: %v, want 0A000", q, err)
		}
	}
	mustRun(t, s, `CREATE TABLE uct.v (a serial, b bigserial, c smallserial, d varchar[], e double precision, f timestamptz, g numeric(10, 2), h uuid, i jsonb, PRIMARY KEY (a))`)
}
