package engine_test

import (
	"testing"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Nothing of DuckDB's own state is a user's: its settings (which name
// server paths), catalog and session answer neither in queries over lake
// tables nor in what DuckDB stores for a temporary table.
// TestDuckGateRefusesDuckDBFunctions (tests/) enumerates every function.
func TestDuckDBStateIsNotUsers(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE t (id bigint PRIMARY KEY, v text); INSERT INTO t VALUES (1, 'a')`)
	for q, code := range map[string]string{
		`CREATE TEMP TABLE td (x text DEFAULT current_setting('temp_directory'))`:                                        sqlerr.FeatureNotSupported,
		`CREATE TEMP TABLE tc (x text CHECK (x <> current_setting('temp_directory')))`:                                   sqlerr.FeatureNotSupported,
		`CREATE TEMP TABLE ts AS SELECT current_setting('temp_directory') AS x`:                                          sqlerr.UndefinedObject,
		`SELECT current_setting('temp_directory'), id FROM t`:                                                            sqlerr.UndefinedObject,
		`SELECT current_database(), id FROM t`:                                                                           sqlerr.FeatureNotSupported,
		`SELECT pg_get_viewdef('x'), id FROM t`:                                                                          sqlerr.FeatureNotSupported,
		`SELECT getvariable('x'), id FROM t`:                                                                             sqlerr.UndefinedFunction,
		`SELECT * FROM t, duckdb_settings() d`:                                                                           sqlerr.UndefinedFunction,
		`SELECT * FROM t, pragma_version() d`:                                                                            sqlerr.UndefinedFunction,
		`SELECT * FROM t, "DUCKDB_SETTINGS"() d`:                                                                         sqlerr.UndefinedFunction,
		`SELECT * FROM t, system.main.duckdb_settings() d`:                                                               sqlerr.UndefinedFunction,
		`SELECT t.v.current_setting() FROM t`:                                                                            sqlerr.UndefinedFunction,
		`SELECT * FROM t, duckdb_settings d`:                                                                             sqlerr.UndefinedTable,
		`SELECT * FROM t WHERE v IN (SELECT name FROM duckdb_settings())`:                                                sqlerr.UndefinedFunction,
		`INSERT INTO t VALUES (1, 'b') ON CONFLICT (id) DO UPDATE SET v = (SELECT value FROM duckdb_settings() LIMIT 1)`: sqlerr.UndefinedFunction,
	} {
		rows, err := run(t, s, q)
		if got := sqlerr.Code(err); got != code {
			t.Errorf("%s: got %v (%v, rows %q), want %s", q, got, err, rows, code)
		}
	}
	// The session's user and database are the engine's answers, not DuckDB's.
	who := mustRun(t, s, "SELECT current_user")[0] // the catalog's answer
	expectRows(t, s, "SELECT current_user, session_user, current_role, user, current_catalog, id FROM t",
		who+"|"+who+"|"+who+"|"+who+"|lakesoul|1")
	if _, err := run(t, s, "SELECT current_schema, id FROM t"); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
		t.Errorf("current_schema over a lake table: %v, want 0A000", err)
	}
	mustRun(t, s, `CREATE TEMP TABLE tu (id int, who text DEFAULT current_user)`)
	mustRun(t, s, `INSERT INTO tu (id) VALUES (1)`)
	expectRows(t, s, `SELECT who FROM tu`, who)
	// Temporary tables still take PostgreSQL's defaults and checks.
	mustRun(t, s, `CREATE TEMP TABLE tt (id int CHECK (id > 0), v text DEFAULT upper('x'), n int DEFAULT length('abc'))`)
	mustRun(t, s, `INSERT INTO tt (id) VALUES (1)`)
	expectRows(t, s, `SELECT id, v, n FROM tt`, "1|X|3")
}
