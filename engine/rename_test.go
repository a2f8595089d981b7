package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/pgtest"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// ALTER TABLE … RENAME TO: the data stay where they are and read under the
// new name, with their history; a new table of the old name gets a
// directory of its own, so neither sees the other's files, and dropping the
// renamed table removes only its own directory.
func TestRenameTable(t *testing.T) {
	s, wh := newSessionIn(t)
	mustRun(t, s, `CREATE SCHEMA rn`)
	mustRun(t, s, `CREATE TABLE rn.t (id bigint PRIMARY KEY, v text) WITH (hash_bucket_num = 2)`)
	mustRun(t, s, `INSERT INTO rn.t VALUES (1, 'a'), (2, 'b')`)
	mustRun(t, s, `INSERT INTO rn.t VALUES (2, 'b2'), (3, 'c')`)
	mustRun(t, s, `ALTER TABLE rn.t RENAME TO u`)
	expectRows(t, s, `SELECT id, v FROM rn.u ORDER BY id`, "1|a", "2|b2", "3|c")
	wantCode(t, s, `SELECT * FROM rn.t`, sqlerr.UndefinedTable)
	// History and time travel follow the table.
	expectRows(t, s, `SELECT count(*) FROM lakesoul.history('rn.u')`, "2")
	expectRows(t, s, `SELECT id, v FROM lakesoul.snapshot('rn.u', version => 0) ORDER BY id`, "1|a", "2|b")
	t1 := one(t, s, `SELECT committed_at::text FROM lakesoul.history('rn.u') WHERE version = 1`)
	expectRows(t, s, `SELECT id, v FROM lakesoul.changes('rn.u', TIMESTAMPTZ '`+t1+`') ORDER BY id`, "2|b2", "3|c")
	expectRows(t, s, `SELECT table_name, table_path LIKE '%/rn/t' FROM lakesoul.tables WHERE table_schema = 'rn'`, "u|true")

	// The old name again: a fresh sibling directory, its own data.
	mustRun(t, s, `CREATE TABLE rn.t (id bigint PRIMARY KEY, v text)`)
	mustRun(t, s, `INSERT INTO rn.t VALUES (9, 'new')`)
	expectRows(t, s, `SELECT id, v FROM rn.t`, "9|new")
	expectRows(t, s, `SELECT id, v FROM rn.u ORDER BY id`, "1|a", "2|b2", "3|c")
	path := one(t, s, `SELECT table_path FROM lakesoul.tables WHERE table_schema = 'rn' AND table_name = 't'`)
	if !regexp.MustCompile(`/rn/t_[0-9a-f]{8}$`).MatchString(path) {
		t.Fatalf("new table rn.t at %s, want a sibling rn/t_<8 hex>", path)
	}
	// Renaming onto an existing name, a missing table, ALTER VIEW on a table.
	wantCode(t, s, `ALTER TABLE rn.u RENAME TO t`, sqlerr.DuplicateTable)
	wantCode(t, s, `ALTER TABLE rn.nope RENAME TO x`, sqlerr.UndefinedTable)
	mustRun(t, s, `ALTER TABLE IF EXISTS rn.nope RENAME TO x`)
	wantCode(t, s, `ALTER VIEW rn.u RENAME TO x`, sqlerr.WrongObjectType)
	mustRun(t, s, `CREATE VIEW rn.w AS SELECT 1 AS one`)
	wantCode(t, s, `ALTER TABLE rn.u RENAME TO w`, sqlerr.DuplicateTable)

	// Dropping the renamed table removes its directory (rn/t), not the new
	// table's.
	mustRun(t, s, `DROP TABLE rn.u`)
	if _, err := os.Stat(filepath.Join(wh, "rn", "t")); !os.IsNotExist(err) {
		t.Errorf("directory of the dropped renamed table: %v, want it gone", err)
	}
	expectRows(t, s, `SELECT id, v FROM rn.t`, "9|new")

	// A rename in a block is undone by ROLLBACK and visible after COMMIT.
	mustRun(t, s, `BEGIN`)
	mustRun(t, s, `ALTER TABLE rn.t RENAME TO t2`)
	expectRows(t, s, `SELECT id FROM rn.t2`, "9")
	mustRun(t, s, `ROLLBACK`)
	expectRows(t, s, `SELECT id FROM rn.t`, "9")
	mustRun(t, s, `BEGIN`)
	mustRun(t, s, `ALTER TABLE rn.t RENAME TO t2`)
	mustRun(t, s, `INSERT INTO rn.t2 VALUES (10, 'in block')`)
	mustRun(t, s, `COMMIT`)
	expectRows(t, s, `SELECT id FROM rn.t2 ORDER BY id`, "9", "10")
}

// ALTER TABLE … RENAME COLUMN on a primary-key table: files written before
// the rename carry the old names, files after the new ones, and
// merge-on-read merges them — also for a renamed key column, which keyed
// reads and compaction find in both kinds of file.
func TestRenameColumnPrimaryKey(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE rc (id bigint PRIMARY KEY, v text, n int CHECK (n >= 0), d date) PARTITION BY LIST (d) WITH (hash_bucket_num = 2)`)
	mustRun(t, s, `INSERT INTO rc VALUES (1, 'a', 1, '2026-01-01'), (2, 'b', 2, '2026-01-01'), (3, 'c', 3, '2026-01-01')`)
	mustRun(t, s, `ALTER TABLE rc RENAME COLUMN v TO val`)
	expectRows(t, s, `SELECT id, val, n, d::text FROM rc ORDER BY id`, "1|a|1|2026-01-01", "2|b|2|2026-01-01", "3|c|3|2026-01-01")
	// A partial upsert after the rename: old files give n, new ones val.
	mustRun(t, s, `INSERT INTO rc (id, val, d) VALUES (2, 'b2', '2026-01-01'), (4, 'd', '2026-01-01')`)
	expectRows(t, s, `SELECT id, val, n FROM rc ORDER BY id`, "1|a|1", "2|b2|2", "3|c|3", "4|d|NULL")
	mustRun(t, s, `UPDATE rc SET n = n + 10 WHERE id = 1`)
	// The key column.
	mustRun(t, s, `ALTER TABLE rc RENAME id TO key`)
	mustRun(t, s, `INSERT INTO rc (key, val, d) VALUES (3, 'c3', '2026-01-01')`)
	expectRows(t, s, `SELECT key, val, n FROM rc ORDER BY key`, "1|a|11", "2|b2|2", "3|c3|3", "4|d|NULL")
	expectRows(t, s, `SELECT val FROM rc WHERE key = 1`, "a")
	expectRows(t, s, `SELECT val FROM rc WHERE key IN (2, 3) ORDER BY val`, "b2", "c3")
	// CHECK constraints follow the column.
	mustRun(t, s, `ALTER TABLE rc RENAME n TO cnt`)
	wantCode(t, s, `INSERT INTO rc (key, cnt, d) VALUES (5, -1, '2026-01-01')`, sqlerr.CheckViolation)
	mustRun(t, s, `INSERT INTO rc (key, cnt, d) VALUES (5, 5, '2026-01-01')`)
	mustRun(t, s, `CALL lakesoul.compact('rc')`)
	expectRows(t, s, `SELECT key, val, cnt FROM rc ORDER BY key`, "1|a|11", "2|b2|2", "3|c3|3", "4|d|NULL", "5|NULL|5")
	// Renaming back finds files of both names.
	mustRun(t, s, `ALTER TABLE rc RENAME val TO v`)
	mustRun(t, s, `INSERT INTO rc (key, v, d) VALUES (4, 'd4', '2026-01-01')`)
	expectRows(t, s, `SELECT key, v FROM rc ORDER BY key`, "1|a", "2|b2", "3|c3", "4|d4", "5|NULL")

	for _, tc := range []struct{ sql, code string }{
		{`ALTER TABLE rc RENAME COLUMN nope TO x`, sqlerr.UndefinedColumn},
		{`ALTER TABLE rc RENAME COLUMN v TO cnt`, sqlerr.DuplicateColumn},
		{`ALTER TABLE rc RENAME COLUMN d TO day`, sqlerr.FeatureNotSupported},  // partition column
		{`ALTER TABLE rc RENAME COLUMN cnt TO id`, sqlerr.FeatureNotSupported}, // id is key's former name
		{`ALTER TABLE rc ADD COLUMN n int`, sqlerr.FeatureNotSupported},        // cnt's former name
		{`ALTER TABLE nope RENAME COLUMN a TO b`, sqlerr.UndefinedTable},
	} {
		wantCode(t, s, tc.sql, tc.code)
	}
	mustRun(t, s, `ALTER TABLE IF EXISTS nope RENAME COLUMN a TO b`)
	expectRows(t, s, `SELECT column_name FROM information_schema.columns WHERE table_name = 'rc' ORDER BY ordinal_position`,
		"key", "v", "cnt", "d")
}

// RENAME COLUMN on an append table; a dropped renamed column's former
// name added again reads none of the dropped values.
func TestRenameColumnAppend(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE ra (a int, b text)`)
	mustRun(t, s, `INSERT INTO ra VALUES (1, 'x'), (2, 'y')`)
	mustRun(t, s, `ALTER TABLE ra RENAME COLUMN b TO c`)
	mustRun(t, s, `INSERT INTO ra VALUES (3, 'z')`)
	expectRows(t, s, `SELECT a, c FROM ra ORDER BY a`, "1|x", "2|y", "3|z")
	expectRows(t, s, `SELECT a FROM ra WHERE c = 'y'`, "2")
	mustRun(t, s, `DELETE FROM ra WHERE c = 'x'`)
	expectRows(t, s, `SELECT a, c FROM ra ORDER BY a`, "2|y", "3|z")
	// A column index follows its column; old files are pruned by it under
	// the former name.
	mustRun(t, s, `CREATE INDEX ra_a ON ra (a)`)
	mustRun(t, s, `ALTER TABLE ra RENAME a TO a2`)
	expectRows(t, s, `SELECT c FROM ra WHERE a2 = 2`, "y")
	expectRows(t, s, `SELECT c FROM ra WHERE a2 IN (3, 4)`, "z")
	expectRows(t, s, `SELECT indexdef LIKE '%(a2)%' FROM pg_indexes WHERE indexname = 'ra_a'`, "true")
	mustRun(t, s, `ALTER TABLE ra RENAME a2 TO a`)
	mustRun(t, s, `ALTER TABLE ra DROP COLUMN c`)
	mustRun(t, s, `ALTER TABLE ra ADD COLUMN e text`)
	expectRows(t, s, `SELECT a, e FROM ra ORDER BY a`, "2|NULL", "3|NULL")
	// A dropped column's former name is a new column when added again:
	// its files were rewritten without the dropped values.
	mustRun(t, s, `ALTER TABLE ra ADD COLUMN b text`)
	expectRows(t, s, `SELECT a, b FROM ra ORDER BY a`, "2|NULL", "3|NULL")
}

// Views follow a renamed table and a renamed column (keeping their output
// names); ALTER VIEW … RENAME TO renames a view.
func TestRenameViewsFollow(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE vt (id int PRIMARY KEY, v text)`)
	mustRun(t, s, `INSERT INTO vt VALUES (1, 'a'), (2, 'b')`)
	mustRun(t, s, `CREATE VIEW vv AS SELECT vt.id, v FROM vt WHERE v <> 'z'`)
	mustRun(t, s, `CREATE VIEW vstar AS SELECT * FROM vt`)
	mustRun(t, s, `ALTER TABLE vt RENAME TO vt2`)
	expectRows(t, s, `SELECT id, v FROM vv ORDER BY id`, "1|a", "2|b")
	mustRun(t, s, `ALTER TABLE vt2 RENAME COLUMN v TO w`)
	expectRows(t, s, `SELECT id, v FROM vv ORDER BY id`, "1|a", "2|b")
	expectRows(t, s, `SELECT id, v FROM vstar ORDER BY id`, "1|a", "2|b")
	mustRun(t, s, `CREATE VIEW vover AS SELECT vv.v FROM vv WHERE vv.id = 1`)
	mustRun(t, s, `ALTER VIEW vv RENAME TO vv2`)
	expectRows(t, s, `SELECT v FROM vv2 WHERE id = 2`, "b")
	expectRows(t, s, `SELECT v FROM vover`, "a") // a view of the renamed view follows it
	wantCode(t, s, `SELECT * FROM vv`, sqlerr.UndefinedTable)
	mustRun(t, s, `ALTER TABLE vstar RENAME TO vstar2`) // ALTER TABLE renames views too
	expectRows(t, s, `SELECT count(*) FROM vstar2`, "2")
	wantCode(t, s, `ALTER VIEW vv2 RENAME TO vstar2`, sqlerr.DuplicateTable)
	wantCode(t, s, `ALTER VIEW nope RENAME TO x`, sqlerr.UndefinedTable)
	mustRun(t, s, `ALTER VIEW IF EXISTS nope RENAME TO x`)
	expectRows(t, s, `SELECT viewname, definition LIKE '%vt2%' FROM pg_views WHERE schemaname = 'public' ORDER BY 1`,
		"vover|false", "vstar2|true", "vv2|true")
}

// A table created before directories were recorded (no lakesoul.table_dir
// row) is held to the directory of its name, renames (its directory is
// recorded then) and keeps its data; a record is honoured only inside the
// table's namespace, so a forged record cannot point a table at another
// namespace's files (42501).
func TestRenameTableDirRecords(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	if err := catalog.MigrateUp(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	owner, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close(ctx)
	ownerExec := func(q string) {
		t.Helper()
		if _, err := owner.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s := sessionOn(t, dsn, filepath.Join(t.TempDir(), "wh"))
	mustRun(t, s, `CREATE SCHEMA od`)
	mustRun(t, s, `CREATE SCHEMA other`)
	mustRun(t, s, `CREATE TABLE od.t (id int PRIMARY KEY, v text)`)
	mustRun(t, s, `INSERT INTO od.t VALUES (1, 'old')`)
	ownerExec(`DELETE FROM lakesoul.table_dir`) // as before migration 18
	expectRows(t, s, `SELECT v FROM od.t`, "old")
	mustRun(t, s, `ALTER TABLE od.t RENAME TO u`)
	expectRows(t, s, `SELECT v FROM od.u`, "old")
	mustRun(t, s, `CREATE TABLE od.t (id int PRIMARY KEY, v text)`)
	mustRun(t, s, `INSERT INTO od.t VALUES (2, 'new')`)
	expectRows(t, s, `SELECT id, v FROM od.t`, "2|new")
	expectRows(t, s, `SELECT id, v FROM od.u`, "1|old")

	// A record (and path) moved into another namespace's directory.
	mustRun(t, s, `CREATE TABLE other.victim (id int)`)
	mustRun(t, s, `INSERT INTO other.victim VALUES (42)`)
	ownerExec(`DELETE FROM lakesoul.table_dir WHERE table_id = (SELECT table_id FROM public.table_info WHERE table_name = 'u')`)
	ownerExec(`UPDATE public.table_info SET table_path = (SELECT table_path FROM public.table_info WHERE table_name = 'victim')
		WHERE table_name = 'u'`)
	ownerExec(`INSERT INTO lakesoul.table_dir SELECT table_id, table_path || '_x' FROM public.table_info WHERE table_name = 'u'`)
	wantCode(t, s, `SELECT * FROM od.u`, sqlerr.InsufficientPrivilege)
	ownerExec(`UPDATE public.table_info SET table_path = table_path || '_x' WHERE table_name = 'u'`)
	wantCode(t, s, `SELECT * FROM od.u`, sqlerr.InsufficientPrivilege)
	expectRows(t, s, `SELECT id FROM other.victim`, "42")
}

// A statement prepared on one server is not run with stale columns after
// another server of the catalog renamed one: once a file carries the new
// name, its next execution fails with 0A000, and a plan made again reads
// both kinds of file.
func TestRenamePreparedOtherServer(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	if err := catalog.MigrateUp(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "wh")
	a, b := sessionOn(t, dsn, dir), sessionOn(t, dsn, dir)
	for _, tc := range []struct{ create, query string }{
		{`CREATE TABLE po (id int PRIMARY KEY, v text)`, `SELECT id, v FROM po ORDER BY id`}, // merge, DuckDB
		{`CREATE TABLE pa (id int, v text)`, `SELECT id, v FROM pa ORDER BY id`},             // append, native scan
		{`CREATE TABLE pd (id int PRIMARY KEY, v text)`, `SELECT * FROM pd`},                 // direct scan
	} {
		mustRun(t, a, tc.create)
		name := regexp.MustCompile(`CREATE TABLE (\w+)`).FindStringSubmatch(tc.create)[1]
		mustRun(t, a, `INSERT INTO `+name+` VALUES (1, 'a')`)
		stmts, err := a.Parse(ctx, tc.query, nil)
		if err != nil {
			t.Fatal(err)
		}
		execute := func() ([]string, error) {
			p, err := stmts[0].Bind(ctx, nil)
			if err != nil {
				return nil, err
			}
			defer p.Close()
			c := &rowCollector{}
			_, _, err = p.Execute(ctx, 0, c)
			return c.rows, err
		}
		if rows, err := execute(); err != nil || len(rows) != 1 || rows[0] != "1|a" {
			t.Fatalf("%s before: %v %v", tc.query, rows, err)
		}
		mustRun(t, b, `ALTER TABLE `+name+` RENAME COLUMN v TO w`)
		if rows, err := execute(); err != nil || len(rows) != 1 {
			t.Fatalf("%s after the rename, before a new file: %v %v", tc.query, rows, err)
		}
		mustRun(t, b, `INSERT INTO `+name+` VALUES (2, 'b')`)
		if _, err := execute(); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
			t.Fatalf("%s after a file with the new name: %v, want 0A000", tc.query, err)
		}
		expectRows(t, a, `SELECT id, w FROM `+name+` ORDER BY id`, "1|a", "2|b")
	}
}
