package engine_test

import (
	"testing"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Transaction characteristics are reported as asked and READ ONLY holds
// (issue 14, item 5).
func TestTransactionCharacteristics(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE pk (id int PRIMARY KEY, c text)`)
	expectRows(t, s, "SHOW transaction_isolation", "read committed")
	expectRows(t, s, "SHOW transaction_read_only", "off")
	mustRun(t, s, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
	expectRows(t, s, "SHOW transaction_isolation", "repeatable read")
	expectRows(t, s, "SELECT current_setting('transaction_read_only'), current_setting('transaction_isolation')", "on|repeatable read")
	for _, q := range []string{"INSERT INTO pk VALUES (1, 'a')", "UPDATE pk SET c = 'x'", "DELETE FROM pk", "CREATE TABLE q (a int)", "TRUNCATE pk"} {
		mustRun(t, s, "ROLLBACK")
		mustRun(t, s, "BEGIN READ ONLY")
		if _, err := run(t, s, q); sqlerr.Code(err) != sqlerr.ReadOnlySQLTransaction {
			t.Fatalf("%s in a read-only block: %v, want 25006", q, err)
		}
	}
	mustRun(t, s, "ROLLBACK")
	expectRows(t, s, "SHOW transaction_isolation", "read committed")
	mustRun(t, s, "BEGIN")
	mustRun(t, s, "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE")
	expectRows(t, s, "SHOW transaction_isolation", "serializable")
	mustRun(t, s, "COMMIT")
	expectRows(t, s, "SHOW transaction_isolation", "read committed")
	mustRun(t, s, "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL SERIALIZABLE")
	expectRows(t, s, "SHOW transaction_isolation", "serializable")
	expectRows(t, s, "SHOW default_transaction_isolation", "serializable")
	mustRun(t, s, "INSERT INTO pk VALUES (1, 'a')")
	mustRun(t, s, "SET default_transaction_read_only = on")
	if _, err := run(t, s, "UPDATE pk SET c = 'x'"); sqlerr.Code(err) != sqlerr.ReadOnlySQLTransaction {
		t.Fatalf("UPDATE with default_transaction_read_only: %v", err)
	}
	expectRows(t, s, "SELECT c FROM pk", "a")
	// current_setting agrees with SHOW, also over lake tables (DuckDB).
	mustRun(t, s, "SET search_path = s1, public")
	expectRows(t, s, "SHOW search_path", "s1, public")
	expectRows(t, s, "SELECT current_setting('search_path')", "s1, public")
	expectRows(t, s, "SELECT current_setting('search_path'), count(*) FROM public.pk", "s1, public|1")
}

// A block's isolation level and read-write mode are fixed by its first query,
// as in PostgreSQL (25001 afterwards); before it they may still change.
func TestTransactionCharacteristicsFixedByFirstQuery(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE pk (id int PRIMARY KEY, c text)`)
	mustRun(t, s, "BEGIN")
	mustRun(t, s, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ") // no query yet
	mustRun(t, s, "SHOW transaction_isolation")                      // SHOW is not a query
	expectRows(t, s, "SELECT count(*) FROM pk", "0")
	for _, q := range []string{"SET TRANSACTION ISOLATION LEVEL SERIALIZABLE", "SET transaction_isolation = 'read committed'"} {
		if _, err := run(t, s, q); sqlerr.Code(err) != sqlerr.ActiveSQLTransaction {
			t.Fatalf("%s after a query: %v, want 25001", q, err)
		}
		mustRun(t, s, "ROLLBACK")
		mustRun(t, s, "BEGIN ISOLATION LEVEL REPEATABLE READ")
		expectRows(t, s, "SELECT count(*) FROM pk", "0")
	}
	mustRun(t, s, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ") // the same level is fine
	mustRun(t, s, "SET TRANSACTION READ ONLY")                       // read-write → read-only is fine
	if _, err := run(t, s, "SET TRANSACTION READ WRITE"); sqlerr.Code(err) != sqlerr.ActiveSQLTransaction {
		t.Fatalf("READ WRITE after a query in a read-only block: %v, want 25001", err)
	}
	mustRun(t, s, "ROLLBACK")
	mustRun(t, s, "BEGIN READ ONLY")
	mustRun(t, s, "SET TRANSACTION READ WRITE") // before any query
	mustRun(t, s, "INSERT INTO pk VALUES (1, 'a')")
	mustRun(t, s, "COMMIT")
	expectRows(t, s, "SELECT c FROM pk", "a")
}

// On lake queries (DuckDB) current_setting knows the session's settings
// only: DuckDB's own (temp_directory names a server path) are unknown, as
// PostgreSQL answers for a parameter it does not have.
func TestCurrentSettingOnLakeQueries(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE cs (id int PRIMARY KEY)`)
	mustRun(t, s, `INSERT INTO cs VALUES (1)`)
	expectRows(t, s, "SELECT current_setting('TimeZone') IS NOT NULL, id FROM cs", "true|1")
	for _, name := range []string{"temp_directory", "memory_limit", "allowed_directories"} {
		if _, err := run(t, s, "SELECT current_setting('"+name+"'), id FROM cs"); sqlerr.Code(err) != sqlerr.UndefinedObject {
			t.Fatalf("current_setting(%q) on a lake query: %v, want 42704", name, err)
		}
		expectRows(t, s, "SELECT current_setting('"+name+"', true) IS NULL, id FROM cs", "true|1")
	}
	if _, err := run(t, s, "SELECT current_setting(id::text), id FROM cs"); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
		t.Fatalf("current_setting of a column: %v, want 0A000", err)
	}
}
