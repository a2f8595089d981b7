package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Pruning is proven by removing the files a pruned query must not touch: the
// pruned query still answers correctly, the unpruned one fails on them.
func TestPartitionAndBucketPruning(t *testing.T) {
	wh := filepath.Join(t.TempDir(), "wh")
	s := newSessionAt(t, wh)
	mustRun(t, s, `CREATE TABLE p (id bigint PRIMARY KEY, v text, d date) PARTITION BY LIST (d) WITH (hash_bucket_num = 4)`)
	var rows []string
	for i := 1; i <= 30; i++ {
		rows = append(rows, fmt.Sprintf("(%d, 'v%d', DATE '2026-01-0%d')", i, i, 1+i%3))
	}
	mustRun(t, s, "INSERT INTO p VALUES "+strings.Join(rows, ","))
	if err := os.RemoveAll(filepath.Join(wh, "default", "p", "d=2026-01-02")); err != nil {
		t.Fatal(err)
	}
	expectRows(t, s, "SELECT count(*) FROM p WHERE d = DATE '2026-01-01'", "10")
	expectRows(t, s, "SELECT count(*) FROM p WHERE d IN ('2026-01-01', '2026-01-03') AND v <> 'x'", "20")
	expectRows(t, s, "SELECT count(*) FROM p x WHERE x.d = '2026-01-03' AND x.id > 20", "3")
	if _, err := run(t, s, "SELECT count(*) FROM p"); err == nil {
		t.Fatal("unpruned query did not touch the removed partition: the test proves nothing")
	}

	mustRun(t, s, `CREATE TABLE k (id bigint PRIMARY KEY, v text) WITH (hash_bucket_num = 4)`)
	rows = rows[:0]
	for i := 1; i <= 40; i++ {
		rows = append(rows, fmt.Sprintf("(%d, 'v%d')", i, i))
	}
	mustRun(t, s, "INSERT INTO k VALUES "+strings.Join(rows, ","))
	// Keep only the bucket file of key 5.
	expectRows(t, s, "SELECT v FROM k WHERE id = 5", "v5")
	files, _ := filepath.Glob(filepath.Join(wh, "default", "k", "*.parquet"))
	bucketOf5 := ""
	for _, f := range files {
		// Remove a file and see whether id=5 still reads: the first file whose
		// removal breaks it holds key 5.
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		os.Remove(f)
		_, err = run(t, s, "SELECT v FROM k")
		if err == nil {
			t.Fatalf("removing %s did not break a full read", f)
		}
		got, err := run(t, s, "SELECT v FROM k WHERE id = 5")
		if err != nil || len(got) != 1 || got[0] != "v5" {
			bucketOf5 = f
		}
		if err := os.WriteFile(f, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if bucketOf5 == "" {
		t.Fatal("no file held key 5")
	}
	for _, f := range files {
		if f != bucketOf5 {
			os.Remove(f)
		}
	}
	expectRows(t, s, "SELECT v FROM k WHERE id = 5", "v5")
	expectRows(t, s, "SELECT count(*) FROM k WHERE id IN (5, 5)", "1")
}

// A text-stored uuid column compares as uuid, not as its text: a row filter
// or key filter with an upper-case literal still finds the row.
func TestUUIDTermsCompareAsUUID(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE u (id uuid PRIMARY KEY, uid uuid, n int)`)
	mustRun(t, s, `INSERT INTO u VALUES ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'b0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12', 1)`)
	expectRows(t, s, `SELECT n FROM u WHERE uid = 'B0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A12'`, "1")
	expectRows(t, s, `SELECT n FROM u WHERE id = 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'`, "1")
	expectRows(t, s, `SELECT count(*) FROM u WHERE uid <> 'B0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A12'`, "0")
}
