package engine

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lakesoul-go/lakesoul/objstore"
)

// DuckDB's own configuration refuses every file and network location: a
// session's DuckDB connection, used directly (no engine check in between),
// can read none of the table's Parquet files, nothing planted in the
// warehouse or in the engine's temp directory, no system file, and can
// write, attach, install or reconfigure nothing. (Its spill directory is
// the one place DuckDB keeps open for itself; duckgate.go keeps user SQL
// from naming it.)
func TestDuckDBOpensNoFile(t *testing.T) {
	ctx := context.Background()
	s, exec := newInternalSession(t)
	exec("CREATE TABLE a (x int, v text); INSERT INTO a VALUES (1, 'secret')")
	wh, err := objstore.LocalPath(s.e.cfg.Warehouse)
	if err != nil {
		t.Fatal(err)
	}
	var parquet string
	filepath.WalkDir(wh, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".parquet") {
			parquet = p
		}
		return nil
	})
	if parquet == "" {
		t.Fatal("no data file written")
	}
	planted := map[string]string{
		"warehouse": filepath.Join(wh, "planted.csv"),
		"temp":      filepath.Join(s.e.scans.spill, "planted.csv"),
	}
	for _, p := range planted {
		if err := os.WriteFile(p, []byte("a,b\n1,planted\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lit := quoteLiteral
	for _, q := range []string{
		"SELECT * FROM read_parquet(" + lit(parquet) + ")",
		"SELECT * FROM parquet_metadata(" + lit(parquet) + ")",
		"SELECT * FROM read_blob(" + lit(parquet) + ")",
		"SELECT * FROM read_csv(" + lit(planted["warehouse"]) + ")",
		"SELECT * FROM read_text(" + lit(planted["temp"]) + ")",
		"SELECT * FROM glob(" + lit(wh+"/**") + ")",
		"SELECT * FROM glob(" + lit(s.e.scans.spill+"/*") + ")",
		"SELECT * FROM " + quoteIdent(parquet), // a replacement scan
		"SELECT * FROM read_text('/etc/passwd')",
		"SELECT * FROM read_text('http://127.0.0.1:9/x')",
		"COPY (SELECT 1) TO " + lit(filepath.Join(s.e.scans.spill, "out.csv")),
		"ATTACH " + lit(filepath.Join(s.e.scans.spill, "x.duckdb")),
		"INSTALL httpfs",
		"LOAD httpfs",
		"SET enable_external_access = true",
		"SET allowed_directories = ['/']",
		"SET temp_directory = '/tmp'",
	} {
		rows, err := s.duck.QueryContext(ctx, q)
		if err == nil {
			for rows.Next() {
			}
			err = rows.Err()
			rows.Close()
		}
		if err == nil {
			t.Errorf("DuckDB ran %s", q)
		}
	}
}
