package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Issue 31 item 6: a statement that reads no relation took a catalog
// backend to 5.5 GB. Such statements now run on the server's DuckDB, whose
// functions that build large values work under a budget, and the catalog
// bounds the statements that still reach it (those reading catalog
// relations): its backends' memory, its result rows. The test runs the
// issue's statement and variants (a value's size from an argument, values
// doubled level by level, many rows of large values) as a workspace user,
// and checks that they are refused with 54000/53200 or answered, that no
// catalog backend grew, that the server stayed within its memory limit,
// and that the catalog kept serving another session throughout; then that
// statements still on the catalog get its limits.
func TestNoRelationStatementsSpareTheCatalog(t *testing.T) {
	t.Parallel()
	requirePG(t)
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("measuring processes' memory needs /proc")
	}
	const memoryLimit = 1 << 30
	srv, err := startServer(filepath.Join(testBaseDir(t), "data"), "nolake-Secret1",
		"--memory-limit", "1GiB", "--catalog-backend-memory", "256MiB", "--catalog-statement-timeout", "2s")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.stopT(t)
	ctx := testCtx(t)
	admin := srv.connect(t)
	mustExec(t, ctx, admin, "SELECT lakesoul.create_workspace('nolakews')",
		"SELECT lakesoul.create_user('nolake_user', 'user-pw', 'nolakews')")
	user := connectAs(t, srv, "nolake_user", "user-pw", "nolake", nil)
	// The catalog as its owner sees it, open before the statements: a
	// backend killed for memory would restart the cluster and end it.
	cat := srv.catalogConn(t)
	mustExec(t, ctx, user, "SELECT count(*) FROM pg_class") // the user's catalog login exists
	catalogPeaks := func() map[int]int64 {
		out := map[int]int64{}
		for _, pid := range postgresProcessesIn(srv.pgDir()) {
			if v, ok := readPeakRSS(pid); ok {
				out[pid] = v
			}
		}
		return out
	}
	before := catalogPeaks()

	refused := []string{
		`SELECT repeat('a', 400000000) || repeat('b', 400000000)`,
		`SELECT length(repeat('a', 400000000) || repeat('b', 400000000))`,
		`SELECT md5(repeat('a', 400000000))`,
		`SELECT lpad('', 1000000000, 'ab')`,
		`SELECT concat(repeat('a', 300000000), repeat('b', 300000000))`,
		`SELECT replace(repeat('a', 20000), 'a', repeat('b', 20000))`,
		`SELECT repeat('x', 30000000 + g * 0) FROM generate_series(1, 100) g`,
		`SELECT length(v) FROM (SELECT repeat('x', 1000000 + g) AS v FROM generate_series(1, 100000) g) s`,
		doublingQuery(12),
	}
	for _, q := range refused {
		_, err := textResult(ctx, user, q)
		if code := pgCode(err); code != "54000" && code != "53200" {
			t.Errorf("%.80s: want 54000 or 53200, got %v", q, err)
		}
	}
	// Large work that needs no large value is answered, on DuckDB too.
	got, err := textResult(ctx, user, `SELECT count(*), sum(g) FROM generate_series(1, 20000000) g`)
	if err != nil || !strings.Contains(got, "20000000|200000010000000") {
		t.Errorf("count over 20 M generated rows: %q, %v", got, err)
	}

	after := catalogPeaks()
	var most int64
	for pid, peak := range after {
		most = max(most, peak-before[pid])
		if grown := peak - before[pid]; grown > 64<<20 {
			t.Errorf("catalog process %d grew by %d MiB (peak %d MiB) while statements without relations ran", pid, grown>>20, peak>>20)
		}
	}

	// A statement that reads a catalog relation still runs on the catalog:
	// its backend may not take more than --catalog-backend-memory, and the
	// statement fails with PostgreSQL's 53200.
	_, err = textResult(ctx, user, `SELECT repeat('a', 400000000) || repeat('b', 400000000) FROM pg_class LIMIT 1`)
	if pgCode(err) != "53200" {
		t.Errorf("catalog statement building 800 MB: want 53200, got %v", err)
	}
	for pid, peak := range catalogPeaks() {
		if peak > 256<<20+256<<20 { // the data limit and the shared memory it touched
			t.Errorf("catalog process %d peaked at %d MiB, beyond its 256 MiB data limit", pid, peak>>20)
		}
	}
	// And a row beyond the server's row size never reaches the server.
	_, err = textResult(ctx, user, `SELECT repeat('a', 70000000) FROM pg_class LIMIT 1`)
	if code := pgCode(err); code != "54000" && code != "53200" {
		t.Errorf("catalog row of 70 MB: want 54000 or 53200, got %v", err)
	}

	// What a user's catalog statement may take is bounded whatever the
	// session asks for: statement_timeout capped, work_mem PostgreSQL's
	// default, spill files bounded.
	mustExec(t, ctx, user, "SET statement_timeout = '1h'")
	settings, err := textResult(ctx, user, `SELECT name, setting FROM pg_settings
		WHERE name IN ('statement_timeout', 'work_mem', 'temp_file_limit') ORDER BY name`)
	if want := "statement_timeout|2000\ntemp_file_limit|1048576\nwork_mem|4096\n"; err != nil || !strings.HasSuffix(settings, want) {
		t.Errorf("a user's catalog settings:\n%s(%v), want\n%s", settings, err, want)
	}
	start := time.Now()
	if _, err := textResult(ctx, user, "SELECT pg_sleep(30) FROM pg_class LIMIT 1"); pgCode(err) != "57014" || time.Since(start) > 20*time.Second {
		t.Errorf("a 30 s catalog statement under a 2 s cap: %v after %v, want 57014", err, time.Since(start))
	}

	var one int
	if err := cat.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
		t.Errorf("the catalog's owner connection did not survive: %v", err)
	}
	if _, err := textResult(ctx, admin, "SELECT count(*) FROM pg_class"); err != nil {
		t.Errorf("another session's catalog query: %v", err)
	}
	if _, err := textResult(ctx, user, "SELECT count(*) FROM pg_class"); err != nil {
		t.Errorf("the user's next catalog query: %v", err)
	}
	t.Logf("catalog processes grew by at most %d MiB", most>>20)
	peak := peakRSS(t, srv.cmd.Process.Pid)
	t.Logf("server peak RSS %d MiB", peak>>20)
	if peak > memoryLimit {
		t.Errorf("server peak RSS %d MiB beyond its %d MiB memory limit", peak>>20, memoryLimit>>20)
	}
}

// readPeakRSS reads a process's peak resident set size (VmHWM) in bytes;
// false when the process is gone or /proc is not there.
func readPeakRSS(pid int) (int64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}

// doublingQuery doubles a 1 MB value levels times, one CTE per level.
func doublingQuery(levels int) string {
	var b strings.Builder
	b.WriteString("WITH l0 AS (SELECT repeat('x', 1000000) AS v)")
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&b, ", l%d AS (SELECT v || v AS v FROM l%d)", i, i-1)
	}
	fmt.Fprintf(&b, " SELECT length(v) FROM l%d", levels)
	return b.String()
}
