package tests

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/lakesoul-go/lakesoul/layout"
	"github.com/lakesoul-go/lakesoul/objstore"
)

// TestCopyWritesOneRunPerBucket: a COPY larger than the ingest's batch
// (1 Mi rows) leaves one file per partition and bucket, not one per batch,
// and keys repeated within and across batches resolve to their last row,
// as the COPY's order says; an upsert COPY on top merges with it as usual.
func TestCopyWritesOneRunPerBucket(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	c := srv.connect(t)
	ctx := testCtx(t)
	mustExec(t, ctx, c, "DROP SCHEMA IF EXISTS runs CASCADE", "CREATE SCHEMA runs",
		"CREATE TABLE runs.t (id bigint PRIMARY KEY, v text, d text) PARTITION BY LIST (d) WITH (hash_bucket_num = 3)")
	// Rows i = 0 … 1.3 M, key i mod 700 000, in partitions a and b by the
	// key's parity: keys below 600 000 come twice (the second time 700 000
	// rows later, in the same batch or the next one).
	const rows, keys = 1_300_000, 700_000
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriterSize(pw, 256<<10)
		var line []byte
		for i := range rows {
			id := i % keys
			line = strconv.AppendInt(line[:0], int64(id), 10)
			line = fmt.Appendf(line, "\tr%d\t%c\n", i, "ab"[id%2])
			if _, err := w.Write(line); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		pw.CloseWithError(w.Flush())
	}()
	if _, err := c.PgConn().CopyFrom(ctx, pr, "COPY runs.t FROM STDIN"); err != nil {
		t.Fatalf("COPY: %v", err)
	}
	files := func() (int, int) {
		plan := strings.Join(queryStrings(t, ctx, c, "EXPLAIN SELECT * FROM runs.t"), "\n")
		var n, of int
		i := strings.Index(plan, "Files: ")
		if i < 0 {
			t.Fatalf("EXPLAIN:\n%s", plan)
		}
		if _, err := fmt.Sscanf(plan[i:], "Files: %d in the read partitions and buckets, of %d listed", &n, &of); err != nil {
			t.Fatalf("%v:\n%s", err, plan)
		}
		return n, of
	}
	if n, _ := files(); n != 6 {
		t.Errorf("the COPY left %d files, want one per partition and bucket (6)", n)
	}
	// The batches' runs are merged away before the commit returns.
	var path string
	if err := srv.catalogConn(t).QueryRow(ctx, "SELECT table_path FROM table_info WHERE table_namespace = 'runs' AND table_name = 't'").Scan(&path); err != nil {
		t.Fatal(err)
	}
	dir, err := objstore.LocalPath(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range filesUnder(t, dir) {
		if layout.IsRunFile(f) {
			t.Errorf("run %s left after the COPY", f)
		}
	}
	check := func(what string, wantV string) {
		t.Helper()
		got := queryStrings(t, ctx, c, "SELECT count(*), count(*) FILTER (WHERE v <> "+wantV+"), count(*) FILTER (WHERE d <> CASE WHEN id % 2 = 0 THEN 'a' ELSE 'b' END) FROM runs.t")
		if want := fmt.Sprintf("%d|0|0", keys); got[0] != want {
			t.Errorf("%s: count, wrong v, wrong d = %s, want %s", what, got[0], want)
		}
	}
	check("after the COPY", "'r' || CASE WHEN id < 600000 THEN id + 700000 ELSE id END")
	// A smaller upsert COPY: one more file per bucket it touches.
	var up strings.Builder
	for id := 0; id < 1000; id++ {
		fmt.Fprintf(&up, "%d\tu%d\t%c\n", id*7, id, "ab"[id*7%2])
	}
	if _, err := c.PgConn().CopyFrom(ctx, strings.NewReader(up.String()), "COPY runs.t FROM STDIN"); err != nil {
		t.Fatalf("upsert COPY: %v", err)
	}
	if n, _ := files(); n != 12 {
		t.Errorf("after an upsert COPY: %d files, want 12", n)
	}
	check("after the upsert", "CASE WHEN id % 7 = 0 AND id < 7000 THEN 'u' || (id / 7) WHEN id < 600000 THEN 'r' || (id + 700000) ELSE 'r' || id END")
}
