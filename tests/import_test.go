package tests

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// importRow is a row of the import tests' tables (id bigint, k text, v
// double precision); a nil pointer is NULL.
type importRow struct {
	id int64
	k  *string
	v  *float64
}

func str(s string) *string   { return &s }
func num(f float64) *float64 { return &f }
func importRows(from, to int64, tag string) []importRow {
	var out []importRow
	for i := from; i <= to; i++ {
		r := importRow{id: i, k: str(fmt.Sprintf("%s-%d", tag, i)), v: num(float64(i) / 4)}
		if i%7 == 0 {
			r.k = nil
		}
		if i%11 == 0 {
			r.v = nil
		}
		out = append(out, r)
	}
	return out
}

// writeCSV writes rows as CSV with a header (columns in the order given).
func writeCSV(t *testing.T, path string, header bool, rows []importRow) []byte {
	t.Helper()
	var b bytes.Buffer
	if header {
		b.WriteString("v,id,k\n") // not the table's order: the header decides
	}
	line := func(id, k, v string) string { return id + "," + k + "," + v + "\n" }
	if header {
		line = func(id, k, v string) string { return v + "," + id + "," + k + "\n" }
	}
	for _, r := range rows {
		v, k := "", ""
		if r.v != nil {
			v = fmt.Sprint(*r.v)
		}
		if r.k != nil {
			k = `"` + strings.ReplaceAll(*r.k, `"`, `""`) + `"`
		}
		b.WriteString(line(fmt.Sprint(r.id), k, v))
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// writeParquet writes rows as a Parquet file (several row groups).
func writeParquet(t *testing.T, path string, rows []importRow) {
	t.Helper()
	sch := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "k", Type: arrow.BinaryTypes.String, Nullable: true}, {Name: "v", Type: arrow.PrimitiveTypes.Float64, Nullable: true}}, nil)
	bld := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer bld.Release()
	for _, r := range rows {
		bld.Field(0).(*array.Int64Builder).Append(r.id)
		if r.k == nil {
			bld.Field(1).AppendNull()
		} else {
			bld.Field(1).(*array.StringBuilder).Append(*r.k)
		}
		if r.v == nil {
			bld.Field(2).AppendNull()
		} else {
			bld.Field(2).(*array.Float64Builder).Append(*r.v)
		}
	}
	rec := bld.NewRecordBatch()
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(sch, f, nil, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	for off := int64(0); off < rec.NumRows(); off += 500 {
		part := rec.NewSlice(off, min(off+500, rec.NumRows()))
		if err := w.WriteBuffered(part); err != nil {
			t.Fatal(err)
		}
		part.Release()
		w.NewBufferedRowGroup()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// copyCSV runs COPY table FROM STDIN (FORMAT csv [, HEADER]) with data.
func copyCSV(t *testing.T, ctx context.Context, c *pgx.Conn, table string, header bool, data []byte) {
	t.Helper()
	opts := "FORMAT csv"
	if header {
		opts += ", HEADER"
	}
	cols := ""
	if header {
		cols = " (v, id, k)"
	}
	if _, err := c.PgConn().CopyFrom(ctx, bytes.NewReader(data), "COPY "+table+cols+" FROM STDIN WITH ("+opts+")"); err != nil {
		t.Fatalf("COPY %s: %v", table, err)
	}
}

// importDir makes a directory with the importing server's access.
func importDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(testBaseDir(t), "import")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestImport: CALL lakesoul.import of a directory of CSV files and of
// Parquet files gives the table COPY of the same rows gives it, into a
// primary-key table (later files upsert earlier ones) and an append table;
// it reports progress in NOTICEs and commits once.
func TestImport(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	var notices []string
	c := connectAs(t, srv, adminRole, sharedPassword, "importer", &notices)
	ref := srv.connect(t)
	dir := importDir(t)
	for _, sub := range []string{"csv", "pq"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Three files each; later files update keys of earlier ones.
	batches := [][]importRow{importRows(1, 3000, "a"), importRows(2000, 4000, "b"), importRows(1, 10, "c")}
	var csvData [][]byte
	for i, rows := range batches {
		csvData = append(csvData, writeCSV(t, filepath.Join(dir, "csv", fmt.Sprintf("part-%d.csv", i)), true, rows))
		writeParquet(t, filepath.Join(dir, "pq", fmt.Sprintf("part-%d.parquet", i)), rows)
	}
	os.WriteFile(filepath.Join(dir, "pq", "_SUCCESS"), nil, 0o644)
	mustExec(t, ctx, c, "CREATE SCHEMA imp")
	for _, tbl := range []string{"pk_csv", "pk_pq", "pk_copy"} {
		mustExec(t, ctx, c, "CREATE TABLE imp."+tbl+" (id bigint, k text, v double precision, PRIMARY KEY (id)) WITH (hash_bucket_num = 2)")
	}
	for _, tbl := range []string{"app_csv", "app_pq", "app_copy"} {
		mustExec(t, ctx, c, "CREATE TABLE imp."+tbl+" (id bigint, k text, v double precision)")
	}
	for _, data := range csvData {
		copyCSV(t, ctx, ref, "imp.pk_copy", true, data)
		copyCSV(t, ctx, ref, "imp.app_copy", true, data)
	}
	for _, tbl := range []string{"pk", "app"} {
		got := queryStrings(t, ctx, c, fmt.Sprintf("CALL lakesoul.import('imp.%s_csv', 'file://%s/csv/', format => 'csv', header => true)", tbl, dir))
		if len(got) != 3 || !strings.HasSuffix(got[0], "part-0.csv|3000|"+fmt.Sprint(len(csvData[0]))) {
			t.Errorf("import result rows: %q", got)
		}
		queryStrings(t, ctx, c, fmt.Sprintf("CALL lakesoul.import('imp.%s_pq', 'file://%s/pq/*.parquet', format => 'parquet')", tbl, dir))
		want := queryStrings(t, ctx, c, "SELECT * FROM imp."+tbl+"_copy ORDER BY id, k, v")
		for _, src := range []string{"csv", "pq"} {
			wantRows(t, "imp."+tbl+"_"+src+" = COPY", queryStrings(t, ctx, c, "SELECT * FROM imp."+tbl+"_"+src+" ORDER BY id, k, v"), want)
			// One commit for the whole import.
			wantRows(t, "versions of imp."+tbl+"_"+src, queryStrings(t, ctx, c,
				"SELECT count(*) FROM lakesoul.history('imp."+tbl+"_"+src+"')"), []string{"1"})
		}
	}
	if n := countRows(t, ctx, c, "imp.pk_pq"); n != 4000 {
		t.Errorf("pk rows = %d, want 4000", n)
	}
	if n := countRows(t, ctx, c, "imp.app_pq"); n != 3000+2001+10 {
		t.Errorf("append rows = %d", n)
	}
	joined := strings.Join(notices, "\n")
	for _, want := range []string{"NOTICE 00000 import into imp.pk_csv: 1 of 3 files, 3000 rows", "part-0.csv: 3000 rows", "rows/s", "(committed)"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no notice with %q in:\n%s", want, joined)
		}
	}

	// A table's columns the files lack keep their values (PK) as COPY's
	// column lists do; the delimiter option; a single file.
	if err := os.WriteFile(filepath.Join(dir, "semi.txt"), []byte("5;five\n6;six\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustExec(t, ctx, c, "CREATE TABLE imp.semi (id bigint, k text, PRIMARY KEY (id))")
	queryStrings(t, ctx, c, fmt.Sprintf("CALL lakesoul.import('imp.semi', 'file://%s/semi.txt', format => 'csv', delimiter => ';')", dir))
	wantRows(t, "semicolon file", queryStrings(t, ctx, c, "SELECT * FROM imp.semi ORDER BY id"), []string{"5|five", "6|six"})
}

// TestImportBadInput: a malformed file fails the import with an error that
// names the file (22P02 for a bad CSV value, XX001 for a file that is not
// Parquet) and commits nothing; a path outside what the role may read is
// 42501; a location with dot segments is 22023.
func TestImportBadInput(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := srv.connect(t)
	dir := importDir(t)
	mustExec(t, ctx, c, "CREATE SCHEMA impbad", "CREATE TABLE impbad.t (id bigint, k text, v double precision)",
		"INSERT INTO impbad.t VALUES (0, 'before', 0)")
	os.MkdirAll(filepath.Join(dir, "csv"), 0o755)
	os.MkdirAll(filepath.Join(dir, "pq"), 0o755)
	writeCSV(t, filepath.Join(dir, "csv", "a.csv"), false, importRows(1, 100, "a"))
	bad := filepath.Join(dir, "csv", "b.csv")
	if err := os.WriteFile(bad, []byte("1,x,1.5\nnot-a-number,y,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeParquet(t, filepath.Join(dir, "pq", "a.parquet"), importRows(1, 100, "a"))
	notParquet := filepath.Join(dir, "pq", "b.parquet")
	if err := os.WriteFile(notParquet, []byte("this is not a parquet file, it only says so"), 0o644); err != nil {
		t.Fatal(err)
	}
	check := func(what, call, code, file string) {
		t.Helper()
		_, err := c.Exec(ctx, call)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != code {
			t.Errorf("%s: %v, want %s", what, err, code)
			return
		}
		if file != "" && !strings.Contains(pe.Message+pe.Where, file) {
			t.Errorf("%s: the error does not name %s: %q / %q", what, file, pe.Message, pe.Where)
		}
	}
	check("bad CSV value", fmt.Sprintf("CALL lakesoul.import('impbad.t', 'file://%s/csv', format => 'csv')", dir), "22P02", bad)
	check("not Parquet", fmt.Sprintf("CALL lakesoul.import('impbad.t', 'file://%s/pq', format => 'parquet')", dir), "XX001", notParquet)
	wantRows(t, "nothing committed", queryStrings(t, ctx, c, "SELECT id, k FROM impbad.t"), []string{"0|before"})
	wantRows(t, "no version", queryStrings(t, ctx, c, "SELECT count(*) FROM lakesoul.history('impbad.t')"), []string{"1"})
	check("dot segments", fmt.Sprintf("CALL lakesoul.import('impbad.t', 'file://%s/csv/../pq', format => 'parquet')", dir), "22023", "")
	check("missing", fmt.Sprintf("CALL lakesoul.import('impbad.t', 'file://%s/nothing-here', format => 'csv')", dir), "58P01", "")

	// A user: server files are not theirs to read; their namespace's
	// warehouse directory is.
	mustExec(t, ctx, c, "SELECT lakesoul.create_workspace('impws')", "SELECT lakesoul.create_workspace('impws2')",
		"SELECT lakesoul.create_user('imp_user', 'imp-pw', 'impws', admin => true)",
		"SET lakesoul.workspace = 'impws2'", "CREATE SCHEMA impother", "CREATE TABLE impother.t (id bigint, k text, v double precision)",
		"INSERT INTO impother.t VALUES (1, 'secret', 1)", "RESET lakesoul.workspace")
	u := connectAs(t, srv, "imp_user", "imp-pw", "imp-user", nil)
	mustExec(t, ctx, u, "CREATE SCHEMA impu", "CREATE TABLE impu.t (id bigint, k text, v double precision)")
	check2 := func(what, call, code string) {
		t.Helper()
		if _, err := u.Exec(ctx, call); pgCode(err) != code {
			t.Errorf("%s: %v, want %s", what, err, code)
		}
	}
	check2("user imports a server file", fmt.Sprintf("CALL lakesoul.import('impu.t', 'file://%s/pq/a.parquet', format => 'parquet')", dir), "42501")
	check2("user imports /etc", "CALL lakesoul.import('impu.t', 'file:///etc/passwd', format => 'csv')", "42501")
	check2("user imports another namespace's directory", fmt.Sprintf("CALL lakesoul.import('impu.t', 'file://%s/warehouse/impother/', format => 'parquet')", srv.dataDir), "42501")
	staging := filepath.Join(srv.dataDir, "warehouse", "impu", "staging")
	if err := os.MkdirAll(staging, 0o755); err != nil {
		t.Fatal(err)
	}
	writeParquet(t, filepath.Join(staging, "x.parquet"), importRows(1, 5, "u"))
	if _, err := u.Exec(ctx, fmt.Sprintf("CALL lakesoul.import('impu.t', 'file://%s/', format => 'parquet')", staging)); err != nil {
		t.Errorf("user imports from their namespace's directory: %v", err)
	}
	if n := countRows(t, ctx, u, "impu.t"); n != 5 {
		t.Errorf("user's import: %d rows", n)
	}
}

// TestImportRegister: register => true commits Parquet files that lie in
// the table's directory as they are; files elsewhere are refused (import
// without register copies them).
func TestImportRegister(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := srv.connect(t)
	mustExec(t, ctx, c, "CREATE SCHEMA impreg", "CREATE TABLE impreg.t (id bigint, k text, v double precision)",
		"CREATE TABLE impreg.pk (id bigint, k text, v double precision, PRIMARY KEY (id))")
	var tablePath string
	if err := c.QueryRow(ctx, "SELECT table_path FROM lakesoul.tables WHERE table_schema = 'impreg' AND table_name = 't'").Scan(&tablePath); err != nil {
		t.Fatal(err)
	}
	local := strings.TrimPrefix(tablePath, "file://")
	if err := os.MkdirAll(filepath.Join(local, "landed"), 0o755); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(local, "landed", "a.parquet")
	writeParquet(t, in, importRows(1, 50, "r"))
	outside := filepath.Join(importDir(t), "b.parquet")
	writeParquet(t, outside, importRows(1, 50, "r"))
	if _, err := c.Exec(ctx, fmt.Sprintf("CALL lakesoul.import('impreg.t', 'file://%s', register => true)", outside)); pgCode(err) != "22023" {
		t.Errorf("register outside the table directory: %v, want 22023", err)
	}
	if _, err := c.Exec(ctx, fmt.Sprintf("CALL lakesoul.import('impreg.pk', 'file://%s', register => true)", in)); pgCode(err) != "22023" {
		t.Errorf("register into a PK table: %v, want 22023", err)
	}
	got := queryStrings(t, ctx, c, fmt.Sprintf("CALL lakesoul.import('impreg.t', 'file://%s/landed/', format => 'parquet', register => true)", local))
	if len(got) != 1 || !strings.Contains(got[0], "a.parquet|50|") {
		t.Errorf("register: %q", got)
	}
	wantRows(t, "registered rows", queryStrings(t, ctx, c, "SELECT count(*), sum(id)::bigint FROM impreg.t"), []string{"50|1275"})
	// The file is the table's, unchanged and not copied.
	if files := filesUnder(t, local); len(files) != 1 || files[0] != filepath.Join("landed", "a.parquet") {
		t.Errorf("table directory holds %q", files)
	}
}

// TestImportCLI: `lakesoul import` has a server import files and prints
// what it imported; with stderr not a terminal it shows no progress line
// (no control characters in the output).
func TestImportCLI(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := srv.connect(t)
	dir := importDir(t)
	writeParquet(t, filepath.Join(dir, "a.parquet"), importRows(1, 20, "cli"))
	mustExec(t, ctx, c, "CREATE SCHEMA impcli", "CREATE TABLE impcli.t (id bigint, k text, v double precision)")
	cmd := exec.CommandContext(ctx, lakesoulBin, "import", "--url", srv.dsn(adminRole, sharedPassword, database), "impcli.t", "file://"+dir+"/", "--format", "parquet")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("lakesoul import: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "a.parquet\t20 rows") || !strings.Contains(stdout.String(), "imported 20 rows from 1 files into impcli.t") {
		t.Errorf("output:\n%s", stdout.String())
	}
	if strings.ContainsRune(stdout.String()+stderr.String(), '\x1b') || strings.ContainsRune(stdout.String()+stderr.String(), '\r') {
		t.Errorf("control characters without a terminal: %q %q", stdout.String(), stderr.String())
	}
	if n := countRows(t, ctx, c, "impcli.t"); n != 20 {
		t.Errorf("rows = %d", n)
	}
	cmd = exec.CommandContext(ctx, lakesoulBin, "import", "--url", srv.dsn(adminRole, sharedPassword, database), "impcli.t", "file:///nonexistent/x.csv")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "58P01") {
		t.Errorf("import of a missing file: %v\n%s", err, out)
	}
}
