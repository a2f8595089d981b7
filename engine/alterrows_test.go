package engine_test

import (
	"testing"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// TestAlterTableOverExistingRows: ADD COLUMN with DEFAULT (constant and
// volatile), NOT NULL, CHECK and SERIAL, ADD CONSTRAINT … CHECK and ALTER
// COLUMN SET/DROP NOT NULL on tables that hold rows, keyed and not, as
// PostgreSQL runs them: existing rows get the default, a constraint that a
// row breaks refuses the statement (23502, 23514) and leaves the table as it
// was, and inside a block ROLLBACK undoes all of it.
func TestAlterTableOverExistingRows(t *testing.T) {
	s := newSession(t)
	for _, tc := range []struct{ name, create string }{
		{"append", "CREATE TABLE a.t (id bigint, v text)"},
		{"keyed", "CREATE TABLE a.t (id bigint, v text, PRIMARY KEY (id)) WITH (hash_bucket_num = 2)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mustRun(t, s, "DROP SCHEMA IF EXISTS a CASCADE; CREATE SCHEMA a")
			mustRun(t, s, tc.create)
			mustRun(t, s, "INSERT INTO a.t VALUES (1, 'x'), (2, NULL), (3, 'z')")
			mustRun(t, s, "ALTER TABLE a.t ADD COLUMN flag boolean NOT NULL DEFAULT false")
			mustRun(t, s, "ALTER TABLE a.t ADD COLUMN n int DEFAULT 7, ADD COLUMN m int CHECK (m > 0)")
			mustRun(t, s, "ALTER TABLE a.t ADD COLUMN s bigserial")
			mustRun(t, s, "ALTER TABLE a.t ADD COLUMN u uuid NOT NULL DEFAULT gen_random_uuid()")
			expectRows(t, s, "SELECT id, v, flag, n, m FROM a.t ORDER BY id",
				"1|x|false|7|NULL", "2|NULL|false|7|NULL", "3|z|false|7|NULL")
			// Each row its own serial number and uuid (in no particular order).
			expectRows(t, s, "SELECT min(s), max(s), count(DISTINCT s), count(DISTINCT u) FROM a.t", "1|3|3|3")

			for _, bad := range []struct {
				sql  string
				code string
			}{
				{"ALTER TABLE a.t ADD COLUMN w int NOT NULL", sqlerr.NotNullViolation},
				{"ALTER TABLE a.t ADD COLUMN w int DEFAULT 0 CHECK (w > 0)", sqlerr.CheckViolation},
				{"ALTER TABLE a.t ADD CONSTRAINT small CHECK (id < 3)", sqlerr.CheckViolation},
				{"ALTER TABLE a.t ALTER COLUMN v SET NOT NULL", sqlerr.NotNullViolation},
				{"ALTER TABLE a.t ADD COLUMN w int DEFAULT 1, ADD CONSTRAINT small CHECK (id < 3)", sqlerr.CheckViolation},
			} {
				if _, err := run(t, s, bad.sql); sqlerr.Code(err) != bad.code {
					t.Fatalf("%s: %v, want %s", bad.sql, err, bad.code)
				}
			}
			// Nothing of the refused statements stayed.
			expectRows(t, s, "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'a' AND table_name = 't'", "7")
			mustRun(t, s, "INSERT INTO a.t (id, v) VALUES (4, NULL), (5, 'q')")
			expectRows(t, s, "SELECT id, flag, n, s FROM a.t WHERE id >= 4 ORDER BY id", "4|false|7|4", "5|false|7|5")

			mustRun(t, s, "ALTER TABLE a.t ADD CONSTRAINT pos CHECK (id > 0)")
			if _, err := run(t, s, "INSERT INTO a.t (id) VALUES (-1)"); sqlerr.Code(err) != sqlerr.CheckViolation {
				t.Fatalf("INSERT breaking the added check: %v", err)
			}
			if _, err := run(t, s, "INSERT INTO a.t (id, flag) VALUES (6, NULL)"); sqlerr.Code(err) != sqlerr.NotNullViolation {
				t.Fatalf("INSERT of NULL into the NOT NULL column: %v", err)
			}
			mustRun(t, s, "UPDATE a.t SET v = 'y' WHERE v IS NULL")
			mustRun(t, s, "ALTER TABLE a.t ALTER COLUMN v SET NOT NULL")
			if _, err := run(t, s, "INSERT INTO a.t (id, v) VALUES (7, NULL)"); sqlerr.Code(err) != sqlerr.NotNullViolation {
				t.Fatalf("INSERT of NULL after SET NOT NULL: %v", err)
			}
			mustRun(t, s, "ALTER TABLE a.t ALTER COLUMN v DROP NOT NULL")
			mustRun(t, s, "INSERT INTO a.t (id, v) VALUES (7, NULL)")

			// In a block: ROLLBACK undoes the column and its rows' values.
			mustRun(t, s, "BEGIN")
			mustRun(t, s, "ALTER TABLE a.t ADD COLUMN late text NOT NULL DEFAULT 'l'")
			expectRows(t, s, "SELECT count(*) FROM a.t WHERE late = 'l'", "6")
			mustRun(t, s, "ROLLBACK")
			if _, err := run(t, s, "SELECT late FROM a.t"); sqlerr.Code(err) != sqlerr.UndefinedColumn {
				t.Fatalf("the column added in a rolled-back block: %v", err)
			}
			expectRows(t, s, "SELECT count(*), count(DISTINCT s), min(n), max(n) FROM a.t", "6|6|7|7")
		})
	}
}

// TestAddPrimaryKeyOverRows: ALTER TABLE … ADD PRIMARY KEY on a table with
// rows (pgbench -i, pg_restore in one pass) checks the key is unique and not
// null (23505, 23502; the table stays as it was), then writes the rows again
// keyed in one commit: reads see each row once, upserts replace by key,
// and inside a block ROLLBACK leaves the table keyless with its rows.
func TestAddPrimaryKeyOverRows(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, "CREATE SCHEMA k")
	mustRun(t, s, "CREATE TABLE k.t (id int, g text, v int, tags text[]) PARTITION BY LIST (g)")
	mustRun(t, s, "INSERT INTO k.t VALUES (1, 'a', 10, '{x}'), (2, 'a', 20, NULL), (3, 'b', 30, '{y,z}')")
	mustRun(t, s, "INSERT INTO k.t VALUES (4, 'b', 40, '{}')")
	mustRun(t, s, "CREATE TABLE k.dup (id int, v int)")
	mustRun(t, s, "INSERT INTO k.dup VALUES (1, 1), (2, 2), (1, 3)")
	if _, err := run(t, s, "ALTER TABLE k.dup ADD PRIMARY KEY (id)"); sqlerr.Code(err) != sqlerr.UniqueViolation {
		t.Fatalf("duplicate key: %v", err)
	}
	mustRun(t, s, "CREATE TABLE k.nul (id int, v int)")
	mustRun(t, s, "INSERT INTO k.nul VALUES (1, 1), (NULL, 2)")
	if _, err := run(t, s, "ALTER TABLE k.nul ADD PRIMARY KEY (id)"); sqlerr.Code(err) != sqlerr.NotNullViolation {
		t.Fatalf("NULL key: %v", err)
	}
	expectRows(t, s, "SELECT count(*) FROM k.dup", "3")
	expectRows(t, s, "SELECT count(*) FROM information_schema.table_constraints WHERE table_schema = 'k' AND constraint_type = 'PRIMARY KEY'", "0")

	mustRun(t, s, "BEGIN")
	mustRun(t, s, "ALTER TABLE k.t ADD PRIMARY KEY (id)")
	mustRun(t, s, "ROLLBACK")
	expectRows(t, s, "SELECT count(*) FROM information_schema.table_constraints WHERE table_schema = 'k' AND constraint_type = 'PRIMARY KEY'", "0")
	expectRows(t, s, "SELECT count(*) FROM k.t", "4")

	// pg_restore -1: the table, its rows and its key in one block.
	mustRun(t, s, "BEGIN")
	mustRun(t, s, "CREATE TABLE k.r (id int, v text)")
	mustRun(t, s, "INSERT INTO k.r VALUES (1, 'a'), (2, 'b')")
	mustRun(t, s, "INSERT INTO k.r VALUES (3, 'c')")
	mustRun(t, s, "ALTER TABLE ONLY k.r ADD CONSTRAINT r_pkey PRIMARY KEY (id)")
	mustRun(t, s, "INSERT INTO k.r VALUES (1, 'a2')")
	mustRun(t, s, "COMMIT")
	expectRows(t, s, "SELECT id, v FROM k.r ORDER BY id", "1|a2", "2|b", "3|c")

	mustRun(t, s, "ALTER TABLE k.t ADD PRIMARY KEY (id)")
	expectRows(t, s, "SELECT id, g, v, tags FROM k.t ORDER BY id", "1|a|10|[x]", "2|a|20|NULL", "3|b|30|[y z]", "4|b|40|[]")
	mustRun(t, s, "INSERT INTO k.t (id, g, v) VALUES (1, 'a', 11), (5, 'a', 50)")
	expectRows(t, s, "SELECT id, v FROM k.t WHERE id IN (1, 5) ORDER BY id", "1|11", "5|50")
	expectRows(t, s, "SELECT count(*) FROM k.t", "5")
	expectRows(t, s, "SELECT column_name FROM information_schema.key_column_usage WHERE table_schema = 'k' AND table_name = 't'", "id")
	mustRun(t, s, "ALTER TABLE k.t ADD PRIMARY KEY (id)") // the same key: nothing to do
	if _, err := run(t, s, "ALTER TABLE k.t ADD PRIMARY KEY (v)"); sqlerr.Code(err) != sqlerr.InvalidTableDefinition {
		t.Fatalf("a second key: %v", err)
	}
}
