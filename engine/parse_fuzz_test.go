package engine_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/lakesoul-go/lakesoul/pgwire"
)

// FuzzParse feeds arbitrary statement text to Session.Parse (statement
// routing and planning) and describes what it returns. Nothing may panic;
// errors are fine. The seeds run as a normal test; `go test -fuzz FuzzParse
// ./engine/` explores further.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"SELECT 1", "SELECT * FROM fz.t WHERE id = $1", "INSERT INTO fz.t VALUES (1, 'a')",
		"COPY fz.t FROM STDIN WITH (FORMAT csv, HEADER, DELIMITER ';', NULL 'x')", "COPY (SELECT * FROM fz.t) TO STDOUT (FORMAT binary)",
		"COPY fz.t TO '/tmp/x'", "DECLARE c CURSOR WITH HOLD FOR SELECT * FROM fz.t", "FETCH BACKWARD 3 FROM c", "CLOSE ALL",
		"BEGIN; SAVEPOINT a; ROLLBACK TO a; COMMIT", "SET TIME ZONE 'Mars/Olympus'", "SHOW ALL", "RESET ALL",
		"SELECT * FROM pg_catalog.pg_class c JOIN fz.t ON true", "UPDATE fz.t SET v = v || 'x' WHERE id > 0",
		"DELETE FROM fz.t", "MERGE INTO fz.t USING fz.t s ON s.id = t.id WHEN MATCHED THEN DELETE", "CREATE TABLE fz.u (LIKE fz.t)",
		"SELECT $1, $2::int, $3::text[]", "WITH x AS (SELECT 1) SELECT * FROM x, fz.t", "EXPLAIN SELECT * FROM fz.t", ";;;", "",
		"SELECT * FROM fz.t t1 NATURAL JOIN fz.t t2 WHERE 1=0", "VALUES (1), (2)", "TABLE fz.t", "LISTEN x", "PREPARE p AS SELECT 1",
		// PostgreSQL semantics re-spelled for DuckDB (pgsemantics.go).
		"SELECT format('%s %1$s %-*s|%I|%L', v, id, 3, v) FROM fz.t", "SELECT id / 0, id % (id - 1), mod(id, 0), round(id::float8, 2) FROM fz.t",
		"SELECT v::jsonb -> 'a' #>> '{b,1}', v::jsonb @> '{}', v::jsonb ? 'x', v::jsonb || '[1]', v::jsonb - 0 FROM fz.t",
		"SELECT g FROM fz.t, generate_series(1, id) g", "SELECT fz.t.id, lakesoul.fz.t.v, fz.t.* FROM fz.t",
		"SELECT * FROM (VALUES ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'), (gen_random_uuid())) v(u), fz.t",
		"SELECT timestamptz '2026-05-17 10:00+00', ROW(id, v), ARRAY[ROW(id)], extract(epoch FROM now()), round(avg(id), 2) FROM fz.t GROUP BY id, v",
	} {
		f.Add(seed)
	}
	s := fuzzSession(f)
	ctx := context.Background()
	for _, q := range []string{"CREATE SCHEMA fz", "CREATE TABLE fz.t (id bigint PRIMARY KEY, v text)"} {
		stmts, err := s.Parse(ctx, q, nil)
		if err != nil {
			f.Fatal(err)
		}
		p, err := stmts[0].Bind(ctx, nil)
		if err != nil {
			f.Fatal(err)
		}
		if _, _, err := p.Execute(ctx, 0, nopRows{}); err != nil {
			f.Fatal(err)
		}
		p.Close()
	}
	f.Fuzz(func(t *testing.T, sql string) {
		stmts, err := s.Parse(ctx, sql, nil)
		if err != nil {
			// A failed statement may leave an open block failed: end it.
			if st, err := s.Parse(ctx, "ROLLBACK", nil); err == nil {
				if p, err := st[0].Bind(ctx, nil); err == nil {
					p.Execute(ctx, 0, nopRows{})
					p.Close()
				}
			}
			return
		}
		for _, st := range stmts {
			st.Describe(ctx)
			st.ParamOIDs()
		}
	})
}

type nopRows struct{}

func (nopRows) WriteRow([]any) error { return nil }

// fuzzSession is newSession for any testing.TB.
func fuzzSession(tb testing.TB) pgwire.Session {
	tb.Helper()
	return newSessionAt(tb, filepath.Join(tb.TempDir(), "wh"))
}
