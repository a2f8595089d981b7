package engine_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// TestConstraintErrorsNameRelation: every constraint error — NOT NULL,
// a primary-key column left NULL, CHECK — from every statement that writes
// rows (INSERT … VALUES, INSERT … SELECT, INSERT with a column list,
// UPDATE, INSERT … ON CONFLICT DO UPDATE, MERGE's UPDATE and INSERT), on a
// keyed table in public and an append table in another schema, names the
// relation as PostgreSQL does ("Users", never "default.Users" or
// "s.Logs"), with PostgreSQL's words. Where the written row is whole, the
// detail is PostgreSQL's "Failing row contains (…)." (PostgreSQL 15's
// text for the same statements); rows the write does not hold whole (an
// UPDATE of some columns of a keyed table, an INSERT naming some columns)
// have none.
func TestConstraintErrorsNameRelation(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE SCHEMA s`)
	mustRun(t, s, `CREATE TABLE "Users" (id int PRIMARY KEY, name text NOT NULL, age int CHECK (age > 0), note text)`)
	mustRun(t, s, `CREATE TABLE s."Logs" (id int, name text NOT NULL, age int CHECK (age > 0), at timestamp, ok boolean, amt numeric(6,2))`)
	mustRun(t, s, `INSERT INTO "Users" VALUES (1, 'a', 5, 'n')`)
	mustRun(t, s, `INSERT INTO s."Logs" VALUES (1, 'a', 5, NULL, true, 1.5)`)
	const (
		nnUsers = `null value in column "name" of relation "Users" violates not-null constraint`
		nnLogs  = `null value in column "name" of relation "Logs" violates not-null constraint`
		ckUsers = `new row for relation "Users" violates check constraint "Users_age_check"`
		ckLogs  = `new row for relation "Logs" violates check constraint "Logs_age_check"`
	)
	for _, c := range []struct{ stmt, code, message, detail string }{
		{`INSERT INTO "Users" VALUES (2, NULL, 3, 'x')`, sqlerr.NotNullViolation, nnUsers, "Failing row contains (2, null, 3, x)."},
		{`INSERT INTO "Users" SELECT 2, NULL, 3, 'x'`, sqlerr.NotNullViolation, nnUsers, "Failing row contains (2, null, 3, x)."},
		{`INSERT INTO "Users" (id, age) VALUES (2, 3)`, sqlerr.NotNullViolation, nnUsers, ""},
		{`INSERT INTO "Users" (name) VALUES ('q')`, sqlerr.NotNullViolation, `null value in column "id" of relation "Users" violates not-null constraint`, ""},
		{`INSERT INTO "Users" VALUES (NULL, 'q', 1, 'x')`, sqlerr.NotNullViolation, `null value in column "id" of relation "Users" violates not-null constraint`, "Failing row contains (null, q, 1, x)."},
		{`UPDATE "Users" SET name = NULL WHERE id = 1`, sqlerr.NotNullViolation, nnUsers, ""},
		{`INSERT INTO "Users" VALUES (1, 'b', 1, 'x') ON CONFLICT (id) DO UPDATE SET name = NULL`, sqlerr.NotNullViolation, nnUsers, "Failing row contains (1, null, 5, n)."},
		{`MERGE INTO "Users" u USING (SELECT 1 AS id) src ON u.id = src.id WHEN MATCHED THEN UPDATE SET name = NULL`, sqlerr.NotNullViolation, nnUsers, "Failing row contains (1, null, 5, n)."},
		{`MERGE INTO "Users" u USING (SELECT 3 AS id) src ON u.id = src.id WHEN NOT MATCHED THEN INSERT VALUES (3, NULL, 1, 'x')`, sqlerr.NotNullViolation, nnUsers, "Failing row contains (3, null, 1, x)."},
		{`INSERT INTO "Users" VALUES (2, 'b', -1, 'x')`, sqlerr.CheckViolation, ckUsers, "Failing row contains (2, b, -1, x)."},
		{`UPDATE "Users" SET age = -5 WHERE id = 1`, sqlerr.CheckViolation, ckUsers, ""},
		{`INSERT INTO "Users" VALUES (1, 'b', 1, 'x') ON CONFLICT (id) DO UPDATE SET age = -1`, sqlerr.CheckViolation, ckUsers, "Failing row contains (1, a, -1, n)."},
		{`MERGE INTO "Users" u USING (SELECT 3 AS id) src ON u.id = src.id WHEN NOT MATCHED THEN INSERT VALUES (3, 'c', -1, 'x')`, sqlerr.CheckViolation, ckUsers, "Failing row contains (3, c, -1, x)."},
		{`INSERT INTO s."Logs" VALUES (2, NULL, 3, '2026-01-02 10:00:00.5', false, 2)`, sqlerr.NotNullViolation, nnLogs, "Failing row contains (2, null, 3, 2026-01-02 10:00:00.5, f, 2.00)."},
		{`INSERT INTO s."Logs" SELECT 5, NULL, 1`, sqlerr.NotNullViolation, nnLogs, "Failing row contains (5, null, 1, null, null, null)."},
		{`UPDATE s."Logs" SET name = NULL`, sqlerr.NotNullViolation, nnLogs, "Failing row contains (1, null, 5, null, t, 1.50)."},
		{`INSERT INTO s."Logs" VALUES (2, 'x', -3)`, sqlerr.CheckViolation, ckLogs, "Failing row contains (2, x, -3, null, null, null)."},
		{`UPDATE s."Logs" SET age = -1`, sqlerr.CheckViolation, ckLogs, "Failing row contains (1, a, -1, null, t, 1.50)."},
	} {
		_, err := run(t, s, c.stmt)
		var e *sqlerr.Error
		if !errors.As(err, &e) || e.Code != c.code || e.Message != c.message || e.Detail != c.detail {
			t.Errorf("%s:\n got  %v\n want %s %s | %s", c.stmt, describeErr(err), c.code, c.message, c.detail)
		}
	}
}

func describeErr(err error) string {
	var e *sqlerr.Error
	if !errors.As(err, &e) {
		return "<no sqlerr.Error> " + strings.TrimSpace(strings.Join([]string{sqlerr.Code(err), errString(err)}, " "))
	}
	return e.Code + " " + e.Message + " | " + e.Detail
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
