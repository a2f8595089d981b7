package engine_test

import (
	"strings"
	"testing"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// TestTempFunctions: pg_temp PL/pgSQL functions as Sequelize's findOrCreate
// sends them (the function, the SELECT of its OUT parameters and the DROP
// in one simple query), handlers by condition name, SQLSTATE and OTHERS
// storing diagnostics, errors no handler catches, the session's rules for
// what the body writes, and 0A000 for every other PL/pgSQL form.
func TestTempFunctions(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE "Users" (id serial PRIMARY KEY, name varchar(255) NOT NULL, age integer)`)
	sequelize := `CREATE OR REPLACE FUNCTION pg_temp.testfunc(OUT response "Users", OUT sequelize_caught_exception text) RETURNS RECORD AS $func_0f3a$ BEGIN INSERT INTO "Users" ("id","name","age") VALUES (DEFAULT,'ann',30) RETURNING * INTO response; EXCEPTION WHEN unique_violation THEN GET STACKED DIAGNOSTICS sequelize_caught_exception = PG_EXCEPTION_DETAIL; END $func_0f3a$ LANGUAGE plpgsql; SELECT (testfunc.response)."id", (testfunc.response)."name", (testfunc.response)."age", testfunc.sequelize_caught_exception FROM pg_temp.testfunc(); DROP FUNCTION IF EXISTS pg_temp.testfunc();`
	mustRun(t, s, sequelize)
	mustRun(t, s, "BEGIN; "+sequelize+" COMMIT")
	expectRows(t, s, `SELECT id, name, age FROM "Users" ORDER BY id`, "1|ann|30", "2|ann|30")
	if _, err := run(t, s, "SELECT * FROM pg_temp.testfunc()"); err == nil {
		t.Fatal("the dropped function still runs")
	}

	// Handlers: by name, by SQLSTATE, OTHERS; the failed INSERT leaves
	// nothing.
	for _, cond := range []string{"not_null_violation", "SQLSTATE '23502'", "OTHERS", "unique_violation OR not_null_violation"} {
		mustRun(t, s, `CREATE OR REPLACE FUNCTION pg_temp.f(OUT r "Users", OUT code text, OUT msg text) RETURNS record AS $$
			BEGIN INSERT INTO "Users" (name) VALUES (NULL) RETURNING * INTO r;
			EXCEPTION WHEN `+cond+` THEN GET STACKED DIAGNOSTICS code = RETURNED_SQLSTATE, msg = MESSAGE_TEXT; END $$ LANGUAGE plpgsql`)
		expectRows(t, s, "SELECT (f.r).id, code FROM pg_temp.f() f", "NULL|23502")
		if got := mustRun(t, s, "SELECT f.msg FROM pg_temp.f() f"); len(got) != 1 || !strings.HasPrefix(got[0], `null value in column "name"`) {
			t.Errorf("MESSAGE_TEXT %q", got)
		}
	}
	expectRows(t, s, `SELECT count(*) FROM "Users"`, "2")
	// Not caught: the statement fails.
	mustRun(t, s, `CREATE OR REPLACE FUNCTION pg_temp.f(OUT r "Users", OUT msg text) RETURNS record AS $$
		BEGIN INSERT INTO "Users" (name) VALUES (NULL) RETURNING * INTO r;
		EXCEPTION WHEN unique_violation THEN GET STACKED DIAGNOSTICS msg = PG_EXCEPTION_DETAIL; END $$ LANGUAGE plpgsql`)
	if _, err := run(t, s, "SELECT (r).* FROM pg_temp.f()"); sqlerr.Code(err) != sqlerr.NotNullViolation {
		t.Errorf("an error no handler catches: %v, want 23502", err)
	}
	// Several statements, scalar INTO, (r).* and no handler.
	mustRun(t, s, `CREATE FUNCTION pg_temp.g(OUT r "Users", OUT n bigint) RETURNS record AS $$
		BEGIN INSERT INTO "Users" (name, age) VALUES ('bo', 7) RETURNING * INTO r; SELECT count(*) FROM "Users" INTO n; END $$ LANGUAGE plpgsql`)
	// The failed INSERTs took ids 3 to 11, as in PostgreSQL (nextval is not rolled back).
	expectRows(t, s, "SELECT (g.r).*, n FROM pg_temp.g()", "12|bo|7|3")
	if _, err := run(t, s, `CREATE FUNCTION pg_temp.g(OUT n bigint) RETURNS bigint AS $$ BEGIN SELECT 1 INTO n; END $$ LANGUAGE plpgsql`); sqlerr.Code(err) != sqlerr.DuplicateFunction {
		t.Errorf("CREATE FUNCTION of an existing name: %v, want 42723", err)
	}
	// The body writes as the session does: not in a read-only transaction.
	if _, err := run(t, s, "BEGIN READ ONLY; SELECT (r).id FROM pg_temp.g()"); sqlerr.Code(err) != sqlerr.ReadOnlySQLTransaction {
		t.Errorf("a writing function in a read-only transaction: %v, want 25006", err)
	}
	mustRun(t, s, "ROLLBACK")
	if _, err := run(t, s, "DROP FUNCTION pg_temp.missing()"); sqlerr.Code(err) != sqlerr.UndefinedFunction {
		t.Errorf("DROP FUNCTION of a missing function: %v, want 42883", err)
	}
	mustRun(t, s, "DROP FUNCTION IF EXISTS pg_temp.missing()")
	mustRun(t, s, "DISCARD ALL")
	if _, err := run(t, s, "SELECT n FROM pg_temp.g()"); err == nil {
		t.Error("DISCARD ALL left the function")
	}

	for _, bad := range []string{
		`CREATE FUNCTION f() RETURNS int AS $$ SELECT 1 $$ LANGUAGE sql`,
		`CREATE FUNCTION pg_temp.h(OUT n int) RETURNS int AS $$ SELECT 1 $$ LANGUAGE sql`,
		`CREATE FUNCTION pg_temp.h(a int, OUT n int) RETURNS int AS $$ BEGIN SELECT a INTO n; END $$ LANGUAGE plpgsql`,
		`CREATE FUNCTION pg_temp.h(OUT n int) RETURNS int AS $$ BEGIN IF true THEN n := 1; END IF; END $$ LANGUAGE plpgsql`,
		`CREATE FUNCTION pg_temp.h(OUT n int) RETURNS int AS $$ DECLARE x int; BEGIN SELECT 1 INTO x; END $$ LANGUAGE plpgsql`,
		`CREATE FUNCTION pg_temp.h(OUT n int) RETURNS int AS $$ BEGIN SELECT 1 INTO n; SELECT 2 INTO n; EXCEPTION WHEN OTHERS THEN n := 0; END $$ LANGUAGE plpgsql`,
		`CREATE FUNCTION pg_temp.h(OUT n int) RETURNS SETOF int AS $$ BEGIN SELECT 1 INTO n; END $$ LANGUAGE plpgsql`,
	} {
		if _, err := run(t, s, bad); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
			t.Errorf("%s: %v, want 0A000", bad, err)
		}
	}
}
