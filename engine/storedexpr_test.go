package engine_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/pgtest"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// TestInternalPropertiesRefusedAsOptions: every property key the server
// writes itself (catalog.InternalProperties, which the catalog package's
// TestInternalPropertyKeysAreListed holds complete) is refused as an option
// of CREATE TABLE … WITH and ALTER TABLE … SET/RESET, spelled as a
// qualified option name and as one quoted name, and the table keeps its
// properties.
func TestInternalPropertiesRefusedAsOptions(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE ip (id bigint PRIMARY KEY, v int CHECK (v > 0))`)
	mustRun(t, s, `COMMENT ON TABLE ip IS 'kept'`)
	before := mustRun(t, s, `SELECT properties FROM lakesoul.tables WHERE table_name = 'ip'`)
	for _, p := range catalog.InternalProperties {
		key := p.Key
		if strings.HasSuffix(key, ".") {
			key += "v"
		}
		spellings := []string{`"` + key + `"`}
		if i := strings.LastIndexByte(key, '.'); i > 0 {
			spellings = append(spellings, key[:i]+"."+key[i+1:]) // ns.name, as the grammar splits it
		}
		for _, opt := range spellings {
			for _, q := range []string{
				`CREATE TABLE ip_new (id bigint) WITH (` + opt + ` = 'false')`,
				`ALTER TABLE ip SET (` + opt + ` = 'false')`,
				`ALTER TABLE ip RESET (` + opt + `)`,
			} {
				if _, err := run(t, s, q); err == nil {
					t.Errorf("%s: accepted", q)
				} else if c := sqlerr.Code(err); c != sqlerr.InvalidParameterValue && c != sqlerr.FeatureNotSupported {
					t.Errorf("%s: %v, want 22023", q, err)
				}
			}
		}
	}
	expectRows(t, s, `SELECT properties FROM lakesoul.tables WHERE table_name = 'ip'`, before...)
	expectRows(t, s, `SELECT count(*) FROM lakesoul.tables WHERE table_name = 'ip_new'`, "0")
	wantCode(t, s, `INSERT INTO ip VALUES (1, 0)`, sqlerr.CheckViolation)
}

// TestStoredNamesResolvedAtCreation: a view's relations, a default's and a
// check's sequences are resolved when they are created, along the
// creator's search_path, and stored qualified; text stored unqualified
// before (written here by the catalog's owner) is read along the object's
// own namespace, then the default one, never the reader's search_path. A
// view cannot name a temporary table, a view's time travel takes
// constants, and a DEFAULT no subquery, as PostgreSQL refuses one.
func TestStoredNamesResolvedAtCreation(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	if err := catalog.MigrateUp(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	s := sessionOn(t, dsn, filepath.Join(t.TempDir(), "wh"))
	mustRun(t, s, `CREATE SCHEMA a`)
	mustRun(t, s, `CREATE TABLE t (v text)`)
	mustRun(t, s, `INSERT INTO t VALUES ('default')`)
	mustRun(t, s, `CREATE TABLE a.t (v text)`)
	mustRun(t, s, `INSERT INTO a.t VALUES ('a')`)
	mustRun(t, s, `CREATE SEQUENCE q START 100`)
	mustRun(t, s, `CREATE SEQUENCE a.q START 500`)

	mustRun(t, s, `CREATE VIEW a.v AS SELECT v FROM t`) // search_path: default
	mustRun(t, s, `CREATE TABLE a.d (id bigint PRIMARY KEY, n bigint DEFAULT nextval('q'), c bigint CHECK (c < currval('q') + 1000))`)
	expectRows(t, s, `SELECT definition FROM pg_views WHERE viewname = 'v'`, "SELECT v FROM public.t")
	mustRun(t, s, `SET search_path = a`)
	expectRows(t, s, `SELECT v FROM a.v`, "default")
	mustRun(t, s, `INSERT INTO a.d (id, c) VALUES (1, 1)`)
	expectRows(t, s, `SELECT n FROM a.d`, "100")
	mustRun(t, s, `RESET search_path`)

	owner, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close(ctx)
	for _, q := range []string{
		`INSERT INTO lakesoul.view (namespace, name, domain, definition, columns, types, typmods)
		 VALUES ('a', 'legacy', 'public', 'SELECT v FROM t', '{v}', '{25}', '{-1}')`,
		`UPDATE public.table_info SET table_schema = replace(table_schema, 'public.q', 'q')
		 WHERE table_namespace = 'a' AND table_name = 'd'`,
	} {
		if _, err := owner.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	expectRows(t, s, `SELECT v FROM a.legacy`, "a")
	mustRun(t, s, `INSERT INTO a.d (id, c) VALUES (2, 1)`)
	expectRows(t, s, `SELECT id, n FROM a.d ORDER BY id`, "1|100", "2|500")

	mustRun(t, s, `CREATE TEMP TABLE tmp (v text)`)
	wantCode(t, s, `CREATE VIEW a.vt AS SELECT v FROM tmp`, sqlerr.FeatureNotSupported)
	mustRun(t, s, `CREATE VIEW a.tt AS SELECT count(*) FROM lakesoul.snapshot('t', now() + interval '1 day')`)
	expectRows(t, s, `SELECT definition LIKE '%lakesoul.snapshot(''public.t''%' FROM pg_views WHERE viewname = 'tt'`, "true")
	wantCode(t, s, `CREATE VIEW a.tt2 AS SELECT count(*) FROM lakesoul.snapshot('t', current_setting('TimeZone')::timestamptz)`, sqlerr.FeatureNotSupported)
	wantCode(t, s, `CREATE TABLE a.sub (id int DEFAULT (SELECT 1))`, sqlerr.FeatureNotSupported)
	wantCode(t, s, `CREATE TABLE a.nos (id bigint DEFAULT nextval('nope'))`, sqlerr.UndefinedTable)
}
