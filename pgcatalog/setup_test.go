package pgcatalog

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/internal/pgtest"
	"github.com/lakesoul-go/lakesoul/migrations"
	"github.com/lakesoul-go/lakesoul/sqlfuncs"
)

// Lake fixture: namespace s with table t (key id, range partition d) and
// table u (no key). tSchema uses every Spark type and pg_type override.
const (
	tSchema = `{"type":"struct","fields":[
		{"name":"id","type":"long","nullable":false,"metadata":{}},
		{"name":"d","type":"date","nullable":true,"metadata":{}},
		{"name":"name","type":"string","nullable":true,"metadata":{}},
		{"name":"amount","type":"decimal(10,2)","nullable":true,"metadata":{}},
		{"name":"score","type":"double","nullable":true,"metadata":{}},
		{"name":"v","type":"string","nullable":true,"metadata":{"pg_type":"varchar(20)"}},
		{"name":"uid","type":"string","nullable":true,"metadata":{"pg_type":"uuid"}},
		{"name":"ts","type":"timestamp","nullable":true,"metadata":{}},
		{"name":"tsn","type":"timestamp_ntz","nullable":true,"metadata":{}},
		{"name":"b","type":"binary","nullable":true,"metadata":{}},
		{"name":"f","type":"float","nullable":true,"metadata":{}},
		{"name":"i","type":"integer","nullable":true,"metadata":{}},
		{"name":"sm","type":"short","nullable":true,"metadata":{}},
		{"name":"by","type":"byte","nullable":true,"metadata":{}},
		{"name":"ok","type":"boolean","nullable":true,"metadata":{}},
		{"name":"j","type":"string","nullable":true,"metadata":{"pg_type":"json"}}]}`
	uSchema = `{"type":"struct","fields":[
		{"name":"a","type":"integer","nullable":true,"metadata":{}},
		{"name":"b","type":"string","nullable":true,"metadata":{}}]}`
)

// tColumns is what format_type and attnotnull must say of t's columns.
var tColumns = [][2]string{
	{"id", "bigint"}, {"d", "date"}, {"name", "text"}, {"amount", "numeric(10,2)"},
	{"score", "double precision"}, {"v", "character varying(20)"}, {"uid", "uuid"},
	{"ts", "timestamp with time zone"}, {"tsn", "timestamp without time zone"},
	{"b", "bytea"}, {"f", "real"}, {"i", "integer"}, {"sm", "smallint"}, {"by", "smallint"},
	{"ok", "boolean"}, {"j", "json"},
}

// internalNames are objects of the catalog database no client may see.
var internalNames = []string{
	"table_info", "table_name_id", "table_path_id", "partition_info", "data_commit_info",
	"global_config", "discard_compressed_file_info", "namespace_oid", "table_oid",
	"object_oid_seq", "partition_insert", "data_file_op", "lakesoul_pg",
}

// catalogDB is a migrated catalog database holding the lake fixture.
type catalogDB struct {
	dsn   string
	su    *pgx.Conn // superuser session
	owner string    // owner of the database: the owner of every lake object
	oids  map[string]string
}

// newCatalogDB migrates a fresh database (migrations in order, then the
// sqlfuncs scripts in name order) and creates the lake fixture.
func newCatalogDB(t *testing.T) *catalogDB {
	t.Helper()
	c := &catalogDB{dsn: pgtest.DSN(t)}
	c.su = connect(t, c.dsn)
	ups, err := fs.Glob(migrations.FS, "*.up.sql")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(ups)
	for _, name := range ups {
		b, err := migrations.FS.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		exec(t, c.su, string(b))
	}
	scripts, err := sqlfuncs.Scripts()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range scripts {
		if _, err := c.su.Exec(context.Background(), s.SQL); err != nil {
			t.Fatalf("sqlfuncs %s: %v", s.Name, err)
		}
	}
	exec(t, c.su, `SELECT lakesoul.create_namespace('s')`)
	exec(t, c.su, `SELECT lakesoul.create_table('tid_t', 's', 't', 'file:///lake/s/t', $1, '{}', 'd;id')`, tSchema)
	exec(t, c.su, `SELECT lakesoul.create_table('tid_u', 's', 'u', 'file:///lake/s/u', $1, '{}', ';')`, uSchema)
	c.owner = query(t, c.su, `SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = current_database()`)[0][0]
	c.oids = map[string]string{}
	rows := query(t, c.su, `SELECT n.nspname || '.' || c.relname, c.oid::text
		FROM lakesoul_pg.pg_class c JOIN lakesoul_pg.pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 's'`)
	for _, r := range rows {
		c.oids[r[0]] = r[1]
	}
	for _, rel := range []string{"s.t", "s.u", "s.t_pkey"} {
		if c.oids[rel] == "" {
			t.Fatalf("lakesoul_pg.pg_class has no %s: %v", rel, rows)
		}
	}
	return c
}

// migrationsFile returns the text of one migration file.
func migrationsFile(name string) (string, error) {
	b, err := migrations.FS.ReadFile(name)
	return string(b), err
}

// reader returns a session of a new non-superuser role that may read the
// lake metadata (as the server's catalog role will), plus its name.
func (c *catalogDB) reader(t *testing.T) (*pgx.Conn, string) {
	t.Helper()
	var r [4]byte
	_, _ = rand.Read(r[:])
	role := "lake_reader_" + hex.EncodeToString(r[:])
	exec(t, c.su, "CREATE ROLE "+role+" NOLOGIN")
	exec(t, c.su, "GRANT USAGE ON SCHEMA lakesoul TO "+role)
	exec(t, c.su, "GRANT SELECT ON public.namespace, public.table_info, lakesoul.namespace_oid, lakesoul.table_oid TO "+role)
	t.Cleanup(func() {
		// Runs before pgtest drops the database (cleanups run last-in first-out).
		conn, err := pgx.Connect(context.Background(), c.dsn)
		if err != nil {
			t.Logf("drop role %s: %v", role, err)
			return
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(context.Background(), "DROP OWNED BY "+role+"; DROP ROLE "+role); err != nil {
			t.Logf("drop role %s: %v", role, err)
		}
	})
	conn := connect(t, c.dsn)
	exec(t, conn, "SET ROLE "+role)
	return conn, role
}

// connect opens a simple-protocol session (results in text, as psql gets them).
func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	conn, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func exec(t *testing.T, conn *pgx.Conn, sql string, args ...any) {
	t.Helper()
	if _, err := conn.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%v\n%s", err, sql)
	}
}

// null is how query renders SQL NULL.
const null = "<NULL>"

// query returns the rows of sql as text; t fails on error.
func query(t *testing.T, conn *pgx.Conn, sql string, args ...any) [][]string {
	t.Helper()
	rows, err := tryQuery(conn, sql, args...)
	if err != nil {
		t.Fatalf("%v\n%s", err, sql)
	}
	return rows
}

func tryQuery(conn *pgx.Conn, sql string, args ...any) ([][]string, error) {
	rows, err := conn.Query(context.Background(), sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]string
	for rows.Next() {
		raw := rows.RawValues()
		row := make([]string, len(raw))
		for i, v := range raw {
			if v == nil {
				row[i] = null
			} else {
				row[i] = string(v)
			}
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// rewriteAndQuery runs a client's catalog query as the server will: through
// RewriteSQL, on the catalog database.
func rewriteAndQuery(t *testing.T, conn *pgx.Conn, sql string) [][]string {
	t.Helper()
	out, err := RewriteSQL(sql)
	if err != nil {
		t.Fatalf("RewriteSQL: %v\n%s", err, sql)
	}
	rows, err := tryQuery(conn, out)
	if err != nil {
		t.Fatalf("%v\noriginal:  %s\nrewritten: %s", err, sql, out)
	}
	return rows
}

// assertNoInternalNames fails when a cell names an object of the catalog
// database that must stay hidden.
func assertNoInternalNames(t *testing.T, what string, rows [][]string) {
	t.Helper()
	for _, r := range rows {
		for _, v := range r {
			for _, n := range internalNames {
				if v == n || strings.HasPrefix(v, n+".") || strings.Contains(v, " "+n+".") {
					t.Errorf("%s: internal name %q in row %q", what, n, r)
				}
			}
			if strings.HasPrefix(v, "lakesoul.") || strings.Contains(v, " lakesoul.") {
				t.Errorf("%s: object of schema lakesoul in row %q", what, r)
			}
		}
	}
}
