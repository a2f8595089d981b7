package tests

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// resultMemoryLimit bounds the server's peak RSS while it sends results
// of 1.5 GB: --memory-limit 1GiB gives DuckDB 512 MiB and the Go heap 512
// MiB, and neither may hold the result.
const resultMemoryLimit = 512 << 20

// TestResultMemoryBound sends a 1.5 GB result (1.5 M rows of 1 KB) three
// ways and checks the server's peak RSS (VmHWM, reset between phases)
// stays under 512 MiB each time: COPY (query) TO STDOUT streams rows as
// DuckDB produces them; a cursor's FETCH makes DuckDB produce only the
// rows fetched; a WITH HOLD cursor is materialised at COMMIT into a file,
// not memory, and no catalog transaction stays open after the COMMIT.
func TestResultMemoryBound(t *testing.T) {
	t.Parallel()
	requirePG(t)
	srv, err := startServer(filepath.Join(testBaseDir(t), "data"), "res-Secret1", "--memory-limit", "1GiB")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.stopT(t)
	pid := srv.cmd.Process.Pid
	ctx := testCtx(t)
	c := srv.connect(t)
	mustExec(t, ctx, c, "CREATE SCHEMA resmem", "CREATE TABLE resmem.one (id bigint PRIMARY KEY)", "INSERT INTO resmem.one VALUES (1)")
	const rows = 1_500_000
	query := fmt.Sprintf("SELECT s.g, repeat('x', 1000) AS pad FROM resmem.one, generate_series(1, %d) AS s(g)", rows)
	phase := func(name string, run func()) {
		t.Helper()
		resetPeakRSS(t, pid)
		start := time.Now()
		run()
		peak := peakRSS(t, pid)
		t.Logf("%s: %s, server peak RSS %d MiB", name, time.Since(start).Round(time.Millisecond), peak>>20)
		if peak > resultMemoryLimit {
			t.Errorf("%s: server peak RSS %d MiB exceeds %d MiB for a 1.5 GB result", name, peak>>20, resultMemoryLimit>>20)
		}
	}

	phase("COPY TO STDOUT", func() {
		w := &countingWriter{}
		tag, err := c.PgConn().CopyTo(ctx, w, "COPY ("+query+") TO STDOUT")
		if err != nil {
			t.Fatalf("COPY TO: %v", err)
		}
		if tag.RowsAffected() != rows || w.n < rows*1000 {
			t.Fatalf("COPY TO: %q, %d bytes", tag, w.n)
		}
	})

	phase("DECLARE, FETCH", func() {
		mustExec(t, ctx, c, "BEGIN", "DECLARE c CURSOR FOR "+query)
		wantRows(t, "FETCH 1", queryStrings(t, ctx, c, "FETCH 1 FROM c")[:1], []string{"1|" + strings.Repeat("x", 1000)})
		if got := queryStrings(t, ctx, c, "FETCH 1000 FROM c"); len(got) != 1000 || !strings.HasPrefix(got[999], "1001|") {
			t.Fatalf("FETCH 1000: %d rows", len(got))
		}
		mustExec(t, ctx, c, "COMMIT")
	})

	cat := srv.catalogConn(t)
	phase("DECLARE WITH HOLD, COMMIT", func() {
		mustExec(t, ctx, c, "BEGIN", "DECLARE h CURSOR WITH HOLD FOR "+query,
			"DECLARE k CURSOR WITH HOLD FOR SELECT relname FROM pg_class ORDER BY relname")
		wantRows(t, "FETCH 1", queryStrings(t, ctx, c, "FETCH 1 FROM h")[:1], []string{"1|" + strings.Repeat("x", 1000)})
		if got := queryStrings(t, ctx, c, "FETCH 1 FROM k"); len(got) != 1 {
			t.Fatalf("FETCH from the catalog cursor: %v", got)
		}
		mustExec(t, ctx, c, "COMMIT")
	})
	// Nothing of the cursors' transaction holds back the catalog's vacuum.
	var pinned []string
	rs, err := cat.Query(ctx, `SELECT pid::text || ' ' || coalesce(state, '') || ' ' || query FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_xmin IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	for rs.Next() {
		var s string
		if err := rs.Scan(&s); err != nil {
			t.Fatal(err)
		}
		pinned = append(pinned, s)
	}
	if rs.Err() != nil || len(pinned) > 0 {
		t.Errorf("after COMMIT, catalog backends hold a snapshot: %q %v", pinned, rs.Err())
	}
	if got := queryStrings(t, ctx, c, "FETCH 2 FROM h"); len(got) != 2 || !strings.HasPrefix(got[1], "3|") {
		t.Errorf("held cursor after COMMIT: %d rows", len(got))
	}
	if got := queryStrings(t, ctx, c, "FETCH 1 FROM k"); len(got) != 1 {
		t.Errorf("held catalog cursor after COMMIT: %v", got)
	}
	mustExec(t, ctx, c, "CLOSE ALL")
}

// countingWriter counts and drops what is written to it.
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

// resetPeakRSS resets a process's VmHWM to its current RSS.
func resetPeakRSS(t *testing.T, pid int) {
	t.Helper()
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		t.Skipf("resetting the peak RSS needs /proc/PID/clear_refs: %v", err)
	}
}

// TestVectorBuildShutdown: a server stops within seconds while a vector
// index build of 2000 dimensions runs (a build used to run to its end,
// minutes for large tables, before the server could exit).
func TestVectorBuildShutdown(t *testing.T) {
	t.Parallel()
	requirePG(t)
	srv, err := startServer(filepath.Join(testBaseDir(t), "data"), "vec-Secret1")
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			srv.kill()
		}
	}()
	ctx := testCtx(t)
	c := srv.connect(t)
	mustExec(t, ctx, c, "CREATE SCHEMA vb", "CREATE TABLE vb.t (id bigint PRIMARY KEY, emb vector(2000)) WITH (hash_bucket_num = 1)")
	rng := rand.New(rand.NewPCG(7, 8))
	var data strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&data, "%d\t[", i)
		for j := range 2000 {
			if j > 0 {
				data.WriteByte(',')
			}
			fmt.Fprintf(&data, "%.2f", rng.NormFloat64())
		}
		data.WriteString("]\n")
	}
	if _, err := c.PgConn().CopyFrom(ctx, strings.NewReader(data.String()), "COPY vb.t FROM STDIN"); err != nil {
		t.Fatal(err)
	}
	mustExec(t, ctx, c, "CREATE INDEX vb_idx ON vb.t USING ivfflat (emb vector_l2_ops) WITH (lists = 16)")
	built := time.Now()
	deadline := time.Now().Add(time.Minute)
	for {
		got := queryStrings(t, ctx, c, "SELECT query FROM pg_stat_activity WHERE backend_type = 'vector index build'")
		if len(got) == 1 && strings.Contains(got[0], "vb_idx") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no build in pg_stat_activity: %q", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("the build runs %s after CREATE INDEX", time.Since(built).Round(time.Millisecond))
	c.Close(ctx)
	start := time.Now()
	stopped = true
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("the server took %s to stop during a vector index build", d)
	}
}
