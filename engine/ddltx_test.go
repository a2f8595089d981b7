package engine_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// DDL inside a transaction block commits with the block or not at all
// (issue 14, item 4): ROLLBACK undoes CREATE and DROP, the block sees its own
// DDL, and a dropped table's files are deleted only after COMMIT.
func TestDDLInTransactionBlock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "wh")
	s := newSessionAt(t, dir)
	mustRun(t, s, "CREATE SCHEMA s")
	mustRun(t, s, "CREATE TABLE s.x (id int PRIMARY KEY, v text)")
	mustRun(t, s, "INSERT INTO s.x VALUES (1, 'a')")

	// DROP TABLE rolled back: the table and its rows stay.
	mustRun(t, s, "BEGIN")
	mustRun(t, s, "DROP TABLE s.x")
	if _, err := run(t, s, "SELECT * FROM s.x"); sqlerr.Code(err) != sqlerr.UndefinedTable {
		t.Fatalf("dropped table inside the block: %v, want 42P01", err)
	}
	mustRun(t, s, "ROLLBACK")
	expectRows(t, s, "SELECT id, v FROM s.x", "1|a")

	// CREATE TABLE rolled back, with rows written into it in the block.
	mustRun(t, s, "BEGIN")
	mustRun(t, s, "CREATE TABLE s.y (id int PRIMARY KEY, v text)")
	mustRun(t, s, "INSERT INTO s.y VALUES (1, 'in block')")
	expectRows(t, s, "SELECT v FROM s.y", "in block")
	mustRun(t, s, "ROLLBACK")
	if _, err := run(t, s, "SELECT * FROM s.y"); sqlerr.Code(err) != sqlerr.UndefinedTable {
		t.Fatalf("table created in a rolled-back block: %v, want 42P01", err)
	}

	// CREATE + INSERT + ALTER committed together.
	mustRun(t, s, "BEGIN")
	mustRun(t, s, "CREATE TABLE s.z (id int PRIMARY KEY, v text)")
	mustRun(t, s, "INSERT INTO s.z VALUES (1, 'one')")
	mustRun(t, s, "ALTER TABLE s.z ADD COLUMN w int")
	mustRun(t, s, "INSERT INTO s.z VALUES (2, 'two', 2)")
	mustRun(t, s, "COMMIT")
	expectRows(t, s, "SELECT id, v, w FROM s.z ORDER BY id", "1|one|NULL", "2|two|2")

	// A failed statement fails the block; COMMIT then rolls the DDL back.
	mustRun(t, s, "BEGIN")
	mustRun(t, s, "CREATE TABLE s.f (id int)")
	if _, err := run(t, s, "CREATE TABLE s.z (id int)"); sqlerr.Code(err) != sqlerr.DuplicateTable {
		t.Fatalf("duplicate CREATE TABLE in a block: %v", err)
	}
	if tag := execTag(t, s, "COMMIT"); tag != "ROLLBACK" {
		t.Fatalf("COMMIT of a failed block: %q", tag)
	}
	if _, err := run(t, s, "SELECT * FROM s.f"); sqlerr.Code(err) != sqlerr.UndefinedTable {
		t.Fatalf("table of a failed block: %v, want 42P01", err)
	}

	// DROP committed: files go after COMMIT, and not before.
	tableDir := filepath.Join(dir, "s", "x")
	if _, err := os.Stat(tableDir); err != nil {
		t.Fatalf("table directory: %v", err)
	}
	mustRun(t, s, "BEGIN")
	mustRun(t, s, "DROP TABLE s.x")
	if _, err := os.Stat(tableDir); err != nil {
		t.Fatalf("DROP TABLE deleted the files before COMMIT: %v", err)
	}
	if _, err := run(t, s, "CREATE TABLE s.x (id int)"); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
		t.Fatalf("re-creating a table dropped in the block: %v, want 0A000", err)
	}
	mustRun(t, s, "ROLLBACK")
	expectRows(t, s, "SELECT id, v FROM s.x", "1|a")
	mustRun(t, s, "BEGIN")
	mustRun(t, s, "DROP TABLE s.x")
	mustRun(t, s, "COMMIT")
	if _, err := os.Stat(tableDir); !os.IsNotExist(err) {
		t.Fatalf("table directory after DROP committed: %v", err)
	}
	// Role grants commit on the user's login: refused in a block, not half done.
	mustRun(t, s, "BEGIN")
	if _, err := run(t, s, "GRANT ws1_users TO CURRENT_USER"); sqlerr.Code(err) != sqlerr.ActiveSQLTransaction {
		t.Fatalf("GRANT in a block: %v, want 25001", err)
	}
	mustRun(t, s, "ROLLBACK")
	// CREATE SCHEMA in a block.
	mustRun(t, s, "BEGIN")
	mustRun(t, s, "CREATE SCHEMA s2")
	mustRun(t, s, "CREATE TABLE s2.t (a int)")
	mustRun(t, s, "ROLLBACK")
	if _, err := run(t, s, "CREATE TABLE s2.t (a int)"); err == nil {
		t.Fatal("schema created in a rolled-back block exists")
	}
}
