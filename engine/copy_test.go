package engine_test

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// sliceRows is a CopyRowReader over prepared rows (nil field = NULL); each
// row is one line.
type sliceRows struct {
	rows [][][]byte
	i    int
}

func (r *sliceRows) ReadRow() ([][]byte, error) {
	if r.i >= len(r.rows) {
		return nil, io.EOF
	}
	r.i++
	return r.rows[r.i-1], nil
}

func (r *sliceRows) Line() int64 { return int64(r.i) }

func copyIn(t *testing.T, s pgwire.Session, sql string, rows [][][]byte) (string, error) {
	t.Helper()
	ctx := context.Background()
	stmts, err := s.Parse(ctx, sql, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := stmts[0].Bind(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	return p.(pgwire.CopyInPortal).CopyIn(ctx, &sliceRows{rows: rows})
}

func row(fields ...string) [][]byte {
	out := make([][]byte, len(fields))
	for i, f := range fields {
		if f != "\\N" {
			out[i] = []byte(f)
		}
	}
	return out
}

// TestCopyAcrossBatches copies more data than one ingest batch holds, so
// the rows are converted in many blocks and written as several batches:
// every row lands, and a key written in an early and a late batch keeps
// its last value. Empty strings stay empty strings, NULLs stay NULL.
func TestCopyAcrossBatches(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE SCHEMA cb; CREATE TABLE cb.t (id bigint PRIMARY KEY, pad text, v text) WITH (hash_bucket_num = 3)`)
	pad := strings.Repeat("p", 4000) // about 10 k rows per 32 MiB batch
	const n = 25000
	var rows [][][]byte
	for i := range n {
		v := fmt.Sprint("first-", i)
		switch i % 10 {
		case 1:
			v = ""
		case 2:
			v = "\\N"
		}
		rows = append(rows, row(fmt.Sprint(i), pad, v))
	}
	for i := 0; i < n; i += 1000 { // rewritten at the end: the last batch wins
		rows = append(rows, row(fmt.Sprint(i), "", fmt.Sprint("last-", i)))
	}
	tag, err := copyIn(t, s, "COPY cb.t FROM STDIN", rows)
	if err != nil || tag != fmt.Sprintf("COPY %d", len(rows)) {
		t.Fatalf("COPY: %q, %v", tag, err)
	}
	expectRows(t, s, `SELECT count(*), count(v), count(*) FILTER (WHERE v = ''), count(*) FILTER (WHERE v LIKE 'last-%'),
		sum(length(pad)) FROM cb.t`,
		fmt.Sprintf("%d|%d|%d|%d|%d", n, n-n/10, n/10, n/1000, (n-n/1000)*len(pad)))
	expectRows(t, s, "SELECT id, v FROM cb.t WHERE id IN (0, 1, 2, 3, 1000) ORDER BY id",
		"0|last-0", "1|", "2|NULL", "3|first-3", "1000|last-1000")
}

// TestCopyFirstBadRowWins: whichever half of the pipeline sees a bad row,
// the error is the first bad row in data order, and nothing is committed.
func TestCopyFirstBadRowWins(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE SCHEMA cf; CREATE TABLE cf.t (id bigint PRIMARY KEY, v int)`)
	good := func(n int) [][][]byte {
		var out [][][]byte
		for i := range n {
			out = append(out, row(fmt.Sprint(i), "1"))
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		rows     [][][]byte
		code     string
		lineWant string
	}{
		// A bad value converted before a later row with a wrong field count.
		{"value before count", append(append(good(5000), row("5000", "x")), append(good(10), row("1"))...), "22P02", "line 5001"},
		// A wrong field count before a later bad value.
		{"count before value", append(append(good(3), row("1")), row("4", "x")), "22P04", "line 4"},
		// A bad value in the very last row.
		{"last row", append(good(9000), row("9000", "99999999999")), "22003", "line 9001"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := copyIn(t, s, "COPY cf.t FROM STDIN", tc.rows)
			if sqlerr.Code(err) != tc.code || !strings.Contains(sqlerr.From(err).Where, tc.lineWant+",") && !strings.HasSuffix(sqlerr.From(err).Where, tc.lineWant) {
				t.Fatalf("error %v (where %q), want %s at %s", err, sqlerr.From(err).Where, tc.code, tc.lineWant)
			}
			expectRows(t, s, "SELECT count(*) FROM cf.t", "0")
		})
	}
}

// cancelRows is sliceRows that cancels its context after cancelAt rows
// and goes on producing rows.
type cancelRows struct {
	sliceRows
	cancelAt int
	cancel   context.CancelFunc
}

func (r *cancelRows) ReadRow() ([][]byte, error) {
	if r.i == r.cancelAt {
		r.cancel()
	}
	return r.sliceRows.ReadRow()
}

// TestCopyCanceled cancels a COPY in its third batch: it fails with
// 57014, its files are gone, and the session goes on.
func TestCopyCanceled(t *testing.T) {
	wh := filepath.Join(t.TempDir(), "wh")
	s := newSessionAt(t, wh)
	mustRun(t, s, `CREATE SCHEMA cc; CREATE TABLE cc.t (id bigint PRIMARY KEY, pad text) WITH (hash_bucket_num = 2)`)
	pad := strings.Repeat("p", 4000)
	var rows [][][]byte
	for i := range 40000 {
		rows = append(rows, row(fmt.Sprint(i), pad))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stmts, err := s.Parse(ctx, "COPY cc.t FROM STDIN", nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := stmts[0].Bind(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.(pgwire.CopyInPortal).CopyIn(ctx, &cancelRows{sliceRows: sliceRows{rows: rows}, cancelAt: 20000, cancel: cancel})
	p.Close()
	if sqlerr.Code(err) != sqlerr.QueryCanceled {
		t.Fatalf("canceled COPY: %v, want 57014", err)
	}
	expectRows(t, s, "SELECT count(*) FROM cc.t", "0")
	var files []string
	filepath.WalkDir(wh, func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".parquet") {
			files = append(files, path)
		}
		return nil
	})
	if len(files) > 0 {
		t.Errorf("files of the canceled COPY are left: %v", files)
	}
	if tag, err := copyIn(t, s, "COPY cc.t FROM STDIN", rows[:10]); err != nil || tag != "COPY 10" {
		t.Fatalf("COPY after the canceled one: %q, %v", tag, err)
	}
	expectRows(t, s, "SELECT count(*) FROM cc.t", "10")
}

// TestCopyTextEncoding: ASCII blocks skip per-value UTF-8 checks, so this
// checks both ways a block goes: multi-byte text is kept, and invalid
// UTF-8 (here a lone continuation byte and a truncated sequence, in a
// block that is otherwise valid) fails with 22021 at its line.
func TestCopyTextEncoding(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE SCHEMA ce; CREATE TABLE ce.t (id bigint PRIMARY KEY, v text, w varchar(3))`)
	if tag, err := copyIn(t, s, "COPY ce.t FROM STDIN", [][][]byte{row("1", "plain", "abc"), row("2", "ünïcødé", "äöü")}); err != nil || tag != "COPY 2" {
		t.Fatalf("valid UTF-8: %q, %v", tag, err)
	}
	expectRows(t, s, "SELECT v, w FROM ce.t ORDER BY id", "plain|abc", "ünïcødé|äöü")
	for _, bad := range []string{"\x80", "ok\xc3"} {
		_, err := copyIn(t, s, "COPY ce.t FROM STDIN", [][][]byte{row("3", "fine", "x"), row("4", bad, "y")})
		if sqlerr.Code(err) != "22021" || !strings.Contains(sqlerr.From(err).Where, "line 2,") {
			t.Errorf("invalid UTF-8 %q: %v (where %q), want 22021 at line 2", bad, err, sqlerr.From(err).Where)
		}
	}
	expectRows(t, s, "SELECT count(*) FROM ce.t", "2")
}
