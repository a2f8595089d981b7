package tests

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// copyMemoryLimit is issue 4's bound: a 10 M-row COPY completes in it.
const copyMemoryLimit = 512 << 20

// TestCopyMemoryBound streams 10 M rows into a primary-key table with one
// COPY over pgwire and checks that the server process never held more
// than 512 MiB resident (VmHWM, its peak RSS) while ingesting them: the
// writer works in bounded batches, whatever the COPY's size.
func TestCopyMemoryBound(t *testing.T) {
	t.Parallel()
	requirePG(t)
	const rows = 10_000_000
	// A server of its own: the peak is of this COPY alone.
	srv, err := startServer(filepath.Join(testBaseDir(t), "data"), "mem-Secret1")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.stopT(t)
	pid := srv.cmd.Process.Pid
	ctx := testCtx(t)
	c := srv.connect(t)
	mustExec(t, ctx, c, "CREATE SCHEMA copymem",
		"CREATE TABLE copymem.t (id bigint PRIMARY KEY, v text) WITH (hash_bucket_num = 4)")
	before := peakRSS(t, pid)

	// The client generates rows as the server reads them, so neither side
	// ever has the whole input; ids are a permutation of 0..rows-1 (7919 is
	// prime, so coprime to 10^7), which makes every batch's sort real work.
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriterSize(pw, 256<<10)
		var line []byte
		for i := range rows {
			id := int64(i) * 7919 % rows
			line = strconv.AppendInt(line[:0], id, 10)
			line = append(line, '\t')
			line = fmt.Appendf(line, "value-%012d-%011x\n", id, uint64(i)*0x9e3779b97f4a7c15>>20)
			if _, err := w.Write(line); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		pw.CloseWithError(w.Flush())
	}()
	tag, err := c.PgConn().CopyFrom(ctx, pr, "COPY copymem.t FROM STDIN")
	pr.Close()
	if err != nil {
		t.Fatalf("COPY: %v", err)
	}
	if tag.RowsAffected() != rows {
		t.Fatalf("COPY tag %q, want %d rows", tag, rows)
	}
	peak := peakRSS(t, pid)
	t.Logf("server peak RSS: %d MiB before the COPY, %d MiB after it", before>>20, peak>>20)
	if peak > copyMemoryLimit {
		t.Errorf("server peak RSS %d MiB exceeds %d MiB during a %d-row COPY", peak>>20, copyMemoryLimit>>20, rows)
	}

	var n int64
	if err := c.QueryRow(ctx, "SELECT count(*) FROM copymem.t").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != rows {
		t.Errorf("count(*) = %d, want %d", n, rows)
	}
	var one string
	if err := c.QueryRow(ctx, "SELECT v FROM copymem.t WHERE id = 7919").Scan(&one); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("value-%012d-%011x", 7919, uint64(1)*0x9e3779b97f4a7c15>>20); one != want {
		t.Errorf("row 7919: v = %q, want %q", one, want)
	}
}

// peakRSS reads a process's peak resident set size (VmHWM) in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("peak RSS needs /proc: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM %q: %v", v, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}
