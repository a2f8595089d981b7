package compaction_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/engine"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

type collector struct{ rows []string }

func (c *collector) WriteRow(vals []any) error {
	cells := make([]string, len(vals))
	for i, v := range vals {
		if v == nil {
			cells[i] = "NULL"
		} else {
			cells[i] = fmt.Sprint(v)
		}
	}
	c.rows = append(c.rows, strings.Join(cells, "|"))
	return nil
}

func sqlSession(t *testing.T) (pgwire.Session, *env) {
	t.Helper()
	e := newEnv(t)
	ctx := context.Background()
	eng, err := engine.New(ctx, engine.Config{Catalog: e.cat, Store: objstore.Local{},
		Warehouse: objstore.LocalURI(filepath.Join(e.wh, "wh")), Logger: slog.Default()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	var role string
	if err := e.cat.Pool().QueryRow(ctx, "SELECT current_user").Scan(&role); err != nil {
		t.Fatal(err)
	}
	s, err := eng.NewSession(ctx, map[string]string{"user": role, "database": engine.DatabaseName}, pgwire.Credential{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, e
}

func runSQL(t *testing.T, s pgwire.Session, text string) ([]string, error) {
	t.Helper()
	ctx := context.Background()
	stmts, err := s.Parse(ctx, text, nil)
	if err != nil {
		return nil, err
	}
	var c *collector
	for _, st := range stmts {
		p, err := st.Bind(ctx, nil)
		if err != nil {
			return nil, err
		}
		c = &collector{}
		_, _, err = p.Execute(ctx, 0, c)
		p.Close()
		if err != nil {
			return nil, err
		}
	}
	if c == nil {
		return nil, nil
	}
	return c.rows, nil
}

func mustSQL(t *testing.T, s pgwire.Session, text string) []string {
	t.Helper()
	rows, err := runSQL(t, s, text)
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return rows
}

// CALL lakesoul.compact compacts every partition (or one) of a table in the
// session; reads are unchanged, CDC deletes and merge operators included,
// and new_bucket_num re-buckets.
func TestCallCompact(t *testing.T) {
	s, e := sqlSession(t)
	mustSQL(t, s, `CREATE SCHEMA s`)
	mustSQL(t, s, `CREATE TABLE s.t (id bigint, v text, n bigint, op text, d date, PRIMARY KEY (id))
		PARTITION BY LIST (d) WITH (hash_bucket_num = 2, cdc_column = 'op', merge_op.n = 'SumAll')`)
	for i := 0; i < 4; i++ {
		mustSQL(t, s, fmt.Sprintf(`INSERT INTO s.t VALUES (1, 'a%d', 1, 'insert', '2026-01-01'), (%d, 'x', 1, 'insert', '2026-01-02')`, i, i+2))
	}
	mustSQL(t, s, `INSERT INTO s.t VALUES (3, NULL, 0, 'delete', '2026-01-02')`)
	mustSQL(t, s, `UPDATE s.t SET v = 'upd' WHERE id = 1`)
	q := `SELECT id, v, n, op, d FROM s.t ORDER BY d, id`
	before := mustSQL(t, s, q)

	got := mustSQL(t, s, `CALL lakesoul.compact('s.t', partition => 'd=2026-01-01')`)
	if len(got) != 1 || !strings.HasPrefix(got[0], "d=2026-01-01|compacted|") {
		t.Fatalf("CALL one partition: %v", got)
	}
	got = mustSQL(t, s, `CALL lakesoul.compact('s.t')`)
	if len(got) != 2 || !strings.HasPrefix(got[0], "d=2026-01-01|skipped|") || !strings.HasPrefix(got[1], "d=2026-01-02|compacted|") {
		t.Fatalf("CALL table: %v", got)
	}
	after := mustSQL(t, s, q)
	if strings.Join(stripOpCol(after), "\n") != strings.Join(stripOpCol(before), "\n") {
		t.Fatalf("reads changed:\n%v\n%v", before, after)
	}
	mustSQL(t, s, `INSERT INTO s.t VALUES (1, 'later', 5, 'insert', '2026-01-01')`)
	if r := mustSQL(t, s, `SELECT n FROM s.t WHERE id = 1`); len(r) != 1 || r[0] != "9" {
		t.Fatalf("SumAll over a compacted file: %v", r)
	}

	got = mustSQL(t, s, `CALL lakesoul.compact('s.t', new_bucket_num => 4)`)
	if len(got) != 2 {
		t.Fatalf("re-bucket: %v", got)
	}
	tbl, err := e.cat.TableByName(context.Background(), "s", "t")
	if err != nil || tbl.HashBucketNum != 4 {
		t.Fatalf("bucket num %d %v", tbl.HashBucketNum, err)
	}
	if r := mustSQL(t, s, `SELECT count(*), sum(n) FROM s.t`); r[0] != "4|12" {
		t.Fatalf("after re-bucketing: %v", r)
	}
	// Statistics views answer from the catalog.
	var files, base int64
	if err := e.cat.Pool().QueryRow(context.Background(),
		`SELECT file_counts, file_base_count FROM lakesoul.table_level_assets WHERE table_name = 't'`).Scan(&files, &base); err != nil {
		t.Fatal(err)
	}
	if files == 0 || files != base {
		t.Fatalf("assets: %d files, %d base", files, base)
	}
	if r := mustSQL(t, s, `SELECT table_name, partition_counts, file_counts = file_base_count FROM lakesoul.table_level_assets`); len(r) != 1 || r[0] != "t|2|true" {
		t.Fatalf("assets over pgwire: %v", r)
	}

	for _, c := range []struct{ sql, code string }{
		{`CALL lakesoul.compact('s.nope')`, sqlerr.UndefinedTable},
		{`CALL lakesoul.compact('s.t', partition => 'd=1999-01-01')`, sqlerr.UndefinedObject},
		{`CALL lakesoul.compact('s.t', partition => 'd=2026-01-01', new_bucket_num => 8)`, sqlerr.InvalidParameterValue},
	} {
		_, err := runSQL(t, s, c.sql)
		if sqlerr.Code(err) != c.code {
			t.Fatalf("%s: %v (want %s)", c.sql, err, c.code)
		}
	}
	mustSQL(t, s, "BEGIN")
	if _, err := runSQL(t, s, `CALL lakesoul.compact('s.t')`); sqlerr.Code(err) != "25001" {
		t.Fatalf("in a block: %v", err)
	}
	mustSQL(t, s, "ROLLBACK")
	_ = catalog.CompactionCommit
}

// stripOpCol drops the CDC op column (full compaction turns update into
// insert).
func stripOpCol(rows []string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		f := strings.Split(r, "|")
		out[i] = strings.Join(append(f[:3:3], f[4:]...), "|")
	}
	return out
}
