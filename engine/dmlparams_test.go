package engine_test

import (
	"context"
	"slices"
	"testing"

	"github.com/lakesoul-go/lakesoul/schema"
)

// Untyped parameters of UPDATE, DELETE, MERGE and ON CONFLICT take their
// target column's type, as in PostgreSQL, and bind (issue 14, item 1).
func TestDMLParameters(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE pk (id int PRIMARY KEY, c text, n int)`)
	mustRun(t, s, `CREATE TABLE ap (id int, c text)`)
	mustRun(t, s, `INSERT INTO pk VALUES (1,'a',1),(2,'b',2)`)
	mustRun(t, s, `INSERT INTO ap VALUES (1,'a'),(2,'b'),(3,'c')`)
	for q, want := range map[string][]uint32{
		"UPDATE pk SET c = $1 WHERE id = $2": {schema.OIDText, schema.OIDInt4},
		"UPDATE pk SET n = $1":               {schema.OIDInt4},
		"UPDATE ap SET c = $1 WHERE id = $2": {schema.OIDText, schema.OIDInt4},
		"MERGE INTO pk t USING (SELECT 6 AS id) src ON t.id = src.id WHEN NOT MATCHED THEN INSERT (id, c, n) VALUES (src.id, $1, $2)": {schema.OIDText, schema.OIDInt4},
		"INSERT INTO pk VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE SET n = $4":                                                    {schema.OIDInt4, schema.OIDText, schema.OIDInt4, schema.OIDInt4},
		"SELECT $1 AS x FROM pk": {schema.OIDText},
	} {
		st, err := s.Parse(context.Background(), q, nil)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if got := st[0].ParamOIDs(); !slices.Equal(got, want) {
			t.Errorf("%s: parameter types %v, want %v", q, got, want)
		}
	}
	wantTag(t, s, "UPDATE pk SET c = 'x' WHERE id = 1", "UPDATE 1")
	mustRun(t, s, "UPDATE pk SET c = $1 WHERE id = $2", "y", int32(1))
	mustRun(t, s, "UPDATE pk SET n = $1", int32(7))
	mustRun(t, s, "UPDATE ap SET c = $1 WHERE id = $2", "x", int32(1))
	mustRun(t, s, "UPDATE ap SET c = $1 || c", "y")
	mustRun(t, s, "DELETE FROM ap WHERE id = $1", int32(3))
	mustRun(t, s, "INSERT INTO pk VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE SET c = excluded.c || $4", int32(2), "q", int32(0), "!")
	mustRun(t, s, "MERGE INTO pk t USING (SELECT 6 AS id) src ON t.id = src.id WHEN NOT MATCHED THEN INSERT (id, c, n) VALUES (src.id, $1, $2)", "m", int32(5))
	expectRows(t, s, "SELECT * FROM pk ORDER BY id", "1|y|7", "2|q!|7", "6|m|5")
	expectRows(t, s, "SELECT * FROM ap ORDER BY id", "1|yx", "2|yb")
}

// UPDATE … FROM updates each target row once and counts target rows
// (issue 14, item 5).
func TestUpdateFromCountsTargetRows(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE pk (id int PRIMARY KEY, c text)`)
	mustRun(t, s, `CREATE TABLE src (id int, v text)`)
	mustRun(t, s, `INSERT INTO pk VALUES (1,'a'),(2,'b')`)
	mustRun(t, s, `INSERT INTO src VALUES (1,'x'),(1,'x'),(1,'x'),(1,'x')`)
	wantTag(t, s, "UPDATE pk SET c = src.v FROM src WHERE pk.id = src.id", "UPDATE 1")
	expectRows(t, s, "SELECT * FROM pk ORDER BY id", "1|x", "2|b")
}

// Parameters sent without a type take their type from the operand they are
// combined with, as PostgreSQL resolves unknown operands (gorm's
// Expr("age + ?"), pgbench -M prepared's "abalance + $1"); so do untyped
// string literals in arithmetic.
func TestUntypedOperandsTakeTheOtherType(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE acc (id bigint PRIMARY KEY, age int, bal numeric(10,2), r double precision, d date)`)
	mustRun(t, s, `INSERT INTO acc VALUES (1, 10, 1.50, 0.5, '2026-01-02'), (2, NULL, 2.00, 1.5, '2026-01-03')`)
	for q, want := range map[string][]uint32{
		"UPDATE acc SET age = age + $1 WHERE id = $2":            {schema.OIDInt4, schema.OIDInt8},
		"SELECT $1 * 2 FROM acc":                                 {schema.OIDInt4},
		"SELECT COALESCE(age, 0) + $1 FROM acc":                  {schema.OIDInt4},
		"SELECT bal - $1, r / $2, d - $3 FROM acc WHERE id = $4": {schema.OIDNumeric, schema.OIDFloat8, schema.OIDDate, schema.OIDInt8},
	} {
		st, err := s.Parse(context.Background(), q, nil)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if got := st[0].ParamOIDs(); !slices.Equal(got, want) {
			t.Errorf("%s: parameter types %v, want %v", q, got, want)
		}
	}
	mustRun(t, s, "UPDATE acc SET age = age + $1 WHERE id = $2", int32(5), int64(1))
	mustRun(t, s, "UPDATE acc SET age = COALESCE(age, 0) + $1 WHERE id = $2", int32(7), int64(2))
	expectRows(t, s, "SELECT id, age, age + '1', bal + '1.5', r * '2' FROM acc ORDER BY id", "1|15|16|3.00|1", "2|7|8|3.50|3")
}
