package tests

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestBadInput sends statements that must fail, each with a specific
// SQLSTATE, through the extended and the simple protocol. After each the
// connection still works (SELECT 1) and nothing was written: the table's
// rows, its data versions in the catalog and its files are unchanged.
func TestBadInput(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := srv.connect(t)
	cat := srv.catalogConn(t)

	mustExec(t, ctx, c,
		"CREATE SCHEMA bad",
		"CREATE TABLE bad.t (id bigint, k text, v double precision, d date, PRIMARY KEY (id)) PARTITION BY LIST (d)",
		"INSERT INTO bad.t VALUES (1, 'a', 1.5, '2026-01-01'), (2, 'b', 2.5, '2026-01-02')")
	wantData := []string{"1|a|1.5|2026-01-01", "2|b|2.5|2026-01-02"}
	tableDir := filepath.Join(srv.dataDir, "warehouse", "bad", "t")

	// versions counts the table's partition versions and commit records.
	versions := func() string {
		t.Helper()
		var parts, commits int64
		err := cat.QueryRow(ctx, `
			SELECT (SELECT count(*) FROM partition_info p WHERE p.table_id = ti.table_id),
			       (SELECT count(*) FROM data_commit_info dc WHERE dc.table_id = ti.table_id)
			  FROM table_info ti WHERE ti.table_namespace = 'bad' AND ti.table_name = 't'`).Scan(&parts, &commits)
		if err != nil {
			t.Fatalf("read data versions of bad.t from the catalog: %v", err)
		}
		return fmt.Sprintf("%d partition versions, %d commits", parts, commits)
	}
	wantVersions := versions()
	wantFiles := filesUnder(t, tableDir)
	if len(wantFiles) == 0 {
		t.Fatalf("no data files under %s", tableDir)
	}

	cases := []struct {
		sql  string
		code string
	}{
		{"SELEC 1", "42601"},
		{"SELECT * FROM bad.t WHERE", "42601"},
		{"SELECT * FROM bad.nope", "42P01"},
		{"SELECT * FROM nope_schema.t", "42P01"},
		{"INSERT INTO bad.nope VALUES (1)", "42P01"},
		{"SELECT t.id, n.x FROM bad.t t JOIN bad.nope n ON n.x = t.id", "42P01"},
		{"SELECT nope FROM bad.t", "42703"},
		{"SELECT * FROM bad.t WHERE nope = 1", "42703"},
		{"INSERT INTO bad.t (id, nope) VALUES (3, 1)", "42703"},
		{"INSERT INTO bad.t VALUES ('abc', 'x', 1.0, '2026-01-01')", "22P02"},
		{"INSERT INTO bad.t VALUES (3, 'x', 'not a number', '2026-01-01')", "22P02"},
		{"INSERT INTO bad.t VALUES (3, 'x', 1.0, '2026-01-01'), ('abc', 'y', 2.0, '2026-01-01')", "22P02"},
		{"INSERT INTO bad.t VALUES (3, 'x', 1.0, 'not a date')", "22007"},
		{"CREATE TABLE bad.t (a int)", "42P07"},
		{"CREATE SCHEMA bad", "42P06"},
		{"INSERT INTO bad.t VALUES (NULL, 'x', 1.0, '2026-01-01')", "23502"},
		{"INSERT INTO bad.t (k, v, d) VALUES ('x', 1.0, '2026-01-01')", "23502"},
		{"INSERT INTO bad.t VALUES (3, 'x', 1.0, '2026-01-01'), (NULL, 'y', 2.0, '2026-01-01')", "23502"},
		{"INSERT INTO bad.t SELECT NULL::bigint, 'x', 1.0, DATE '2026-01-01'", "23502"},
		{"DROP SCHEMA bad", "2BP01"},
		{"UPDATE bad.t SET id = 3 WHERE id = 1", "0A000"},
		{"UPDATE bad.t SET v = 1 RETURNING nope", "42703"},
		{"DELETE FROM bad.t WHERE id = 1 RETURNING nope", "42703"},
		{"INSERT INTO bad.t VALUES (1, 'a', 1.5, '2026-01-01') ON CONFLICT (k) DO NOTHING", "42P10"},
		{"MERGE INTO bad.t USING bad.t s ON bad.t.id = s.id WHEN MATCHED THEN DELETE", "0A000"},
		{"UPDATE bad.t SET v = 'not a number'", "22P02"},
	}
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		for _, tc := range cases {
			_, err := c.Exec(ctx, tc.sql, mode)
			if code := pgCode(err); code != tc.code {
				t.Errorf("%v: %s: SQLSTATE %q (%v), want %s", mode, tc.sql, code, err, tc.code)
			}
			var one int
			if err := c.QueryRow(ctx, "SELECT 1", mode).Scan(&one); err != nil || one != 1 {
				t.Fatalf("%v: SELECT 1 after %q: %d, %v", mode, tc.sql, one, err)
			}
			if got := queryStrings(t, ctx, c, "SELECT * FROM bad.t ORDER BY id"); !slices.Equal(got, wantData) {
				t.Errorf("%v: after %q: bad.t holds %q, want %q", mode, tc.sql, got, wantData)
			}
			if got := versions(); got != wantVersions {
				t.Errorf("%v: after %q: bad.t has %s, want %s (a failed statement committed)", mode, tc.sql, got, wantVersions)
			}
			if got := filesUnder(t, tableDir); !slices.Equal(got, wantFiles) {
				t.Errorf("%v: after %q: files under %s:\n got  %q\n want %q", mode, tc.sql, tableDir, got, wantFiles)
				wantFiles = got
			}
		}
	}

	// An error inside a transaction block: the block is aborted (25P02)
	// until ROLLBACK; then the session works again.
	mustExec(t, ctx, c, "BEGIN")
	if _, err := c.Exec(ctx, "SELECT * FROM bad.nope"); pgCode(err) != "42P01" {
		t.Errorf("in a block: SQLSTATE %q (%v), want 42P01", pgCode(err), err)
	}
	if _, err := c.Exec(ctx, "SELECT 1"); pgCode(err) != "25P02" {
		t.Errorf("after an error in a block: SQLSTATE %q (%v), want 25P02", pgCode(err), err)
	}
	mustExec(t, ctx, c, "ROLLBACK")
	wantRows(t, "after ROLLBACK", queryStrings(t, ctx, c, "SELECT count(*) FROM bad.t"), []string{"2"})

	// A batch (one Sync) whose second statement fails while executing: the
	// statements after it are skipped, and the connection works afterwards.
	// (Each INSERT commits when it runs, so the first one stays; that is
	// by design and not checked here.)
	mustExec(t, ctx, c, "CREATE TABLE bad.b (id bigint PRIMARY KEY)")
	b := &pgx.Batch{}
	b.Queue("INSERT INTO bad.b VALUES (1)")
	b.Queue("SELECT CAST($1::text AS bigint) FROM bad.b", "abc")
	b.Queue("INSERT INTO bad.b VALUES (2)")
	br := c.SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		t.Errorf("batch statement 1: %v", err)
	}
	if _, err := br.Exec(); pgCode(err) != "22P02" {
		t.Errorf("batch statement 2: SQLSTATE %q (%v), want 22P02", pgCode(err), err)
	}
	if _, err := br.Exec(); err == nil {
		t.Errorf("batch statement 3 ran after an error earlier in the batch")
	}
	br.Close()
	wantRows(t, "bad.b after the failed batch", queryStrings(t, ctx, c, "SELECT id FROM bad.b WHERE id = 2"), nil)

	// An unknown database in the startup message.
	pw, _ := srv.adminPassword()
	if conn, err := pgx.Connect(ctx, srv.dsn(adminRole, pw, "no_such_db")); err == nil {
		conn.Close(ctx)
		t.Error("connecting to database no_such_db succeeded")
	} else if code := pgCode(err); code != "3D000" {
		t.Errorf("connect to no_such_db: SQLSTATE %q (%v), want 3D000", code, err)
	}
	wantRows(t, "after a failed connection", queryStrings(t, ctx, c, "SELECT count(*) FROM bad.t"), []string{"2"})
}
