package tests

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestImportProgress: while an import runs, lakesoul.progress shows it to
// other sessions (pg_stat_progress_copy's columns): its table, files and
// rows so far. The source is a named pipe the test writes, so the import
// is held mid-file for as long as the test looks.
func TestImportProgress(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := srv.connect(t)
	watcher := srv.connect(t)
	mustExec(t, ctx, c, "CREATE SCHEMA impprog", "CREATE TABLE impprog.t (id bigint, k text, v double precision)")
	pipe := filepath.Join(importDir(t), "rows.csv")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Exec(ctx, fmt.Sprintf("CALL lakesoul.import('impprog.t', 'file://%s', format => 'csv')", pipe))
		done <- err
	}()
	w, err := os.OpenFile(pipe, os.O_WRONLY, 0) // waits for the import to open it
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close() // a failing test still lets the import end
	var b strings.Builder
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(&b, "%d,k%d,%d.5\n", i, i, i)
	}
	if _, err := w.WriteString(b.String()); err != nil {
		t.Fatal(err)
	}
	// The import has read the 1000 rows and waits for more.
	const q = "SELECT relation, command, files_processed, files_total, tuples_processed, bytes_processed, current_file LIKE '%rows.csv' FROM lakesoul.progress WHERE relation = 'impprog.t'"
	want := fmt.Sprintf("impprog.t|IMPORT|0|1|1000|%d|true", b.Len())
	var got []string
	for {
		got = queryStrings(t, ctx, watcher, q)
		if len(got) == 1 && got[0] == want {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the import ended early: %v (progress %q)", err, got)
		case <-ctx.Done():
			t.Fatalf("lakesoul.progress = %q, want %q", got, want)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if _, err := w.WriteString("1001,last,1\n"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if err := <-done; err != nil {
		t.Fatalf("import: %v", err)
	}
	if n := countRows(t, ctx, c, "impprog.t"); n != 1001 {
		t.Errorf("rows = %d", n)
	}
	wantRows(t, "lakesoul.progress after", queryStrings(t, ctx, watcher, q), nil)
}

// TestImportMemoryBound: CALL lakesoul.import of 10 M CSV rows keeps the
// server's peak RSS within COPY's bound (copyMemoryLimit): it reads its
// files in bounded batches. The file is a named pipe the test writes as the
// server reads, so the input is never anywhere whole.
func TestImportMemoryBound(t *testing.T) {
	t.Parallel()
	requirePG(t)
	const rows = 10_000_000
	srv, err := startServer(filepath.Join(testBaseDir(t), "data"), "impmem-Secret1")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.stopT(t)
	pid := srv.cmd.Process.Pid
	ctx := testCtx(t)
	c := srv.connect(t)
	mustExec(t, ctx, c, "CREATE SCHEMA impmem", "CREATE TABLE impmem.t (id bigint PRIMARY KEY, v text) WITH (hash_bucket_num = 4)")
	pipe := filepath.Join(importDir(t), "big.csv")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Fatal(err)
	}
	wrote := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(pipe, os.O_WRONLY, 0) // waits for the import to open it
		if err != nil {
			wrote <- err
			return
		}
		w := bufio.NewWriterSize(f, 256<<10)
		var line []byte
		for i := range rows {
			id := int64(i) * 7919 % rows
			line = strconv.AppendInt(line[:0], id, 10)
			line = fmt.Appendf(line, ",value-%012d\n", id)
			if _, err := w.Write(line); err != nil {
				f.Close()
				wrote <- err
				return
			}
		}
		err = w.Flush()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		wrote <- err
	}()
	before := peakRSS(t, pid)
	var n int64
	rs, err := c.Query(ctx, fmt.Sprintf("CALL lakesoul.import('impmem.t', 'file://%s', format => 'csv')", pipe))
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	for rs.Next() { // one row per file: file, rows, bytes
		var file string
		var r, b int64
		if err := rs.Scan(&file, &r, &b); err != nil {
			t.Fatal(err)
		}
		n += r
	}
	if err := rs.Err(); err != nil {
		t.Fatalf("import: %v", err)
	}
	if err := <-wrote; err != nil {
		t.Fatalf("writing the pipe: %v", err)
	}
	if n != rows {
		t.Fatalf("imported %d rows, want %d", n, rows)
	}
	peak := peakRSS(t, pid)
	t.Logf("server peak RSS: %d MiB before the import, %d MiB after it", before>>20, peak>>20)
	if peak > copyMemoryLimit {
		t.Errorf("server peak RSS %d MiB exceeds %d MiB during a %d-row import", peak>>20, copyMemoryLimit>>20, rows)
	}
	if got := countRows(t, ctx, c, "impmem.t"); got != rows {
		t.Errorf("count(*) = %d, want %d", got, rows)
	}
}
