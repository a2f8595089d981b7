package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/pgtest"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// TestScrollCursors runs every FETCH and MOVE direction — NEXT, PRIOR,
// FIRST, LAST, ABSOLUTE ±k and 0, RELATIVE ±k and 0, FORWARD/BACKWARD n
// and ALL — from every position a cursor can reach, on a SCROLL cursor of
// a lake table and on one of the same rows in PostgreSQL itself, and
// compares the rows and command tags of each; a WITH HOLD SCROLL cursor
// outlives its transaction; a NO SCROLL cursor refuses going backward with
// PostgreSQL's 55000.
func TestScrollCursors(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	if err := catalog.MigrateUp(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	s := sessionOn(t, dsn, filepath.Join(t.TempDir(), "wh"))
	mustRun(t, s, "CREATE TABLE sc (id bigint PRIMARY KEY, v text); INSERT INTO sc SELECT i, 'v' || i FROM generate_series(1, 5) AS g(i)")
	for _, q := range []string{"CREATE TEMP TABLE sc (id bigint PRIMARY KEY, v text)", "INSERT INTO sc SELECT i, 'v' || i FROM generate_series(1, 5) AS g(i)"} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	pg := func(q string) string {
		rows, err := conn.Query(ctx, q, pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			t.Fatalf("PostgreSQL %s: %v", q, err)
		}
		var out []string
		for rows.Next() {
			var id int64
			var v string
			if err := rows.Scan(&id, &v); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%d|%s", id, v))
		}
		rows.Close()
		if rows.Err() != nil {
			t.Fatalf("PostgreSQL %s: %v", q, rows.Err())
		}
		return strings.Join(out, ",") + " " + rows.CommandTag().String()
	}
	lake := func(q string) string {
		stmts, err := s.Parse(ctx, q, nil)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		p, err := stmts[0].Bind(ctx, nil)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer p.Close()
		c := &rowCollector{}
		tag, _, err := p.Execute(ctx, 0, c)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return strings.Join(c.rows, ",") + " " + tag
	}
	moves := []string{"NEXT", "PRIOR", "FIRST", "LAST", "ABSOLUTE 3", "ABSOLUTE -2", "ABSOLUTE 0", "ABSOLUTE 9", "ABSOLUTE -9",
		"RELATIVE 2", "RELATIVE -1", "RELATIVE 0", "RELATIVE 9", "RELATIVE -9", "FORWARD 2", "BACKWARD 2", "FORWARD 0",
		"BACKWARD 0", "FORWARD -1", "BACKWARD -2", "FORWARD ALL", "BACKWARD ALL", "3", "ALL"}
	// From each position (before the first row, on rows 1…5, after the
	// last), each direction, as FETCH and as MOVE.
	starts := []string{"ABSOLUTE 0", "ABSOLUTE 1", "ABSOLUTE 2", "ABSOLUTE 3", "ABSOLUTE 4", "ABSOLUTE 5", "ABSOLUTE 6"}
	for _, verb := range []string{"FETCH", "MOVE"} {
		for _, start := range starts {
			for _, m := range moves {
				mustRun(t, s, "BEGIN; DECLARE c SCROLL CURSOR FOR SELECT id, v FROM sc ORDER BY id")
				if _, err := conn.Exec(ctx, "BEGIN; DECLARE c SCROLL CURSOR FOR SELECT id, v FROM sc ORDER BY id"); err != nil {
					t.Fatal(err)
				}
				steps := []string{"MOVE " + start + " FROM c", verb + " " + m + " FROM c", "FETCH RELATIVE 0 FROM c", "FETCH NEXT FROM c"}
				for _, q := range steps {
					if got, want := lake(q), pg(q); got != want {
						t.Errorf("from %s, %s %s, then %s: %q, PostgreSQL %q", start, verb, m, q, got, want)
					}
				}
				mustRun(t, s, "ROLLBACK")
				if _, err := conn.Exec(ctx, "ROLLBACK"); err != nil {
					t.Fatal(err)
				}
			}
		}
	}

	// WITH HOLD: materialised at DECLARE, scrolls after COMMIT too.
	mustRun(t, s, "BEGIN; DECLARE h SCROLL CURSOR WITH HOLD FOR SELECT id, v FROM sc ORDER BY id; COMMIT")
	expectRows(t, s, "FETCH LAST FROM h", "5|v5")
	expectRows(t, s, "FETCH BACKWARD 2 FROM h", "4|v4", "3|v3")
	expectRows(t, s, "FETCH ABSOLUTE 1 FROM h", "1|v1")
	mustRun(t, s, "CLOSE h")

	mustRun(t, s, "BEGIN; DECLARE f NO SCROLL CURSOR FOR SELECT id, v FROM sc ORDER BY id")
	for _, q := range []string{"FETCH PRIOR FROM f", "FETCH BACKWARD 1 FROM f", "MOVE ABSOLUTE 0 IN f", "FETCH LAST FROM f", "FETCH ABSOLUTE -1 FROM f"} {
		if _, err := run(t, s, q); sqlerr.Code(err) != "55000" {
			t.Errorf("%s of a NO SCROLL cursor: %v, want 55000", q, err)
		}
		mustRun(t, s, "ROLLBACK; BEGIN; DECLARE f NO SCROLL CURSOR FOR SELECT id, v FROM sc ORDER BY id")
	}
	mustRun(t, s, "ROLLBACK")
}
