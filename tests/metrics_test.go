package tests

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/lakesoul-go/lakesoul/internal/pgtest"
	"github.com/lakesoul-go/lakesoul/objstore/s3test"
	"github.com/lakesoul-go/lakesoul/pgcluster"
)

// scrape reads /metrics of addr and parses the text exposition format.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse the exposition: %v", err)
	}
	return fams
}

// metricValue is the value of the series of family name whose labels
// include want (a counter, gauge, or a histogram's count); 0 when absent.
func metricValue(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	f := fams[name]
	if f == nil {
		return 0
	}
	var sum float64
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		}
	}
	return sum
}

// scrapeText is /metrics of addr as served.
func scrapeText(t *testing.T, addr string) string {
	t.Helper()
	code, body := httpStatus(t, "http://"+addr+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("scrape: %d", code)
	}
	return body
}

// nonLoopbackIP is an IPv4 address of this machine other than loopback, or
// "" when it has none.
func nonLoopbackIP() string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	return ""
}

func httpStatus(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestMetrics: `serve --metrics-listen :PORT` serves Prometheus metrics,
// on loopback only, that move when statements run — statements by kind and
// SQLSTATE with latency histograms, rows and bytes written and read,
// commits, sessions by state, the most versions a table has waiting for
// compaction (naming no table: that takes --metrics-table-labels), Go
// runtime — and /healthz and /readyz on the same listener.
func TestMetrics(t *testing.T) {
	t.Parallel()
	requirePG(t)
	base := testBaseDir(t)
	maddr, port, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := startServer(filepath.Join(base, "data"), "metrics-pw", "--metrics-listen", fmt.Sprintf(":%d", port))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.stopT(t)
	ctx := testCtx(t)
	c := srv.connect(t)
	if !strings.Contains(srv.logTail(1<<20), "metrics serving\" listen="+maddr) {
		t.Errorf("the metrics listener is not on %s:\n%s", maddr, srv.logTail(4000))
	}
	if ip := nonLoopbackIP(); ip != "" {
		if conn, err := net.DialTimeout("tcp", net.JoinHostPort(ip, fmt.Sprint(port)), 2*time.Second); err == nil {
			conn.Close()
			t.Errorf("the metrics listener answers on %s", ip)
		}
	}

	for _, path := range []string{"/healthz", "/readyz"} {
		if code, body := httpStatus(t, "http://"+maddr+path); code != http.StatusOK {
			t.Errorf("%s: %d %s", path, code, body)
		}
	}
	before := scrape(t, maddr)
	mustExec(t, ctx, c, "CREATE SCHEMA m", "CREATE TABLE m.t (id bigint, v text, PRIMARY KEY (id)) WITH (hash_bucket_num = 2)",
		"INSERT INTO m.t SELECT i, 'v' || i FROM generate_series(1, 100) AS s(i)",
		"INSERT INTO m.t VALUES (1, 'again')", "INSERT INTO m.t VALUES (2, 'again')")
	if n := countRows(t, ctx, c, "m.t"); n != 100 {
		t.Fatalf("rows = %d", n)
	}
	if _, err := c.Exec(ctx, "SELECT 1/0"); pgCode(err) != "22012" {
		t.Fatalf("1/0: %v", err)
	}
	// A conflict: a block's copy-on-write DELETE commits after another
	// session truncated the partition (a TRUNCATE waits for no row lock;
	// another DELETE would wait for the block's).
	other := srv.connect(t)
	mustExec(t, ctx, c, "CREATE TABLE m.a (id bigint, v text)", "INSERT INTO m.a VALUES (1, 'a'), (2, 'b')",
		"BEGIN", "DELETE FROM m.a WHERE id = 1")
	mustExec(t, ctx, other, "TRUNCATE m.a")
	if _, err := c.Exec(ctx, "COMMIT"); pgCode(err) != "40001" {
		t.Fatalf("COMMIT after a concurrent rewrite: %v, want 40001", err)
	}
	after := scrape(t, maddr)

	moved := func(name string, labels map[string]string, atLeast float64) {
		t.Helper()
		if d := metricValue(after, name, labels) - metricValue(before, name, labels); d < atLeast {
			t.Errorf("%s%v moved by %v, want >= %v", name, labels, d, atLeast)
		}
	}
	moved("lakesoul_statements_total", map[string]string{"kind": "INSERT", "sqlstate": "00000"}, 3)
	moved("lakesoul_statements_total", map[string]string{"kind": "SELECT", "sqlstate": "22012"}, 1)
	moved("lakesoul_statement_duration_seconds", map[string]string{"kind": "INSERT"}, 3)
	moved("lakesoul_statement_duration_seconds", map[string]string{"kind": "CREATE TABLE"}, 1)
	moved("lakesoul_rows_written_total", nil, 102)
	moved("lakesoul_written_bytes_total", nil, 1)
	moved("lakesoul_rows_read_total", nil, 100)
	moved("lakesoul_read_bytes_total", map[string]string{"store": "file"}, 1)
	moved("lakesoul_commits_total", map[string]string{"outcome": "committed"}, 3)
	moved("lakesoul_commits_total", map[string]string{"outcome": "conflict"}, 1)
	moved("lakesoul_statements_total", map[string]string{"kind": "COMMIT", "sqlstate": "40001"}, 1)
	if v := metricValue(after, "lakesoul_sessions", map[string]string{"state": "idle"}); v < 1 {
		t.Errorf("idle sessions = %v", v)
	}
	if v := metricValue(after, "lakesoul_connections_total", nil); v < 1 {
		t.Errorf("connections = %v", v)
	}
	// Three commits to the one partition: versions 0, 1, 2, none compacted.
	if v := metricValue(after, "lakesoul_table_uncompacted_versions_max", nil); v != 2 {
		t.Errorf("most uncompacted versions = %v, want 2 (m.t's)", v)
	}
	if text := scrapeText(t, maddr); after["lakesoul_table_uncompacted_versions"] != nil || strings.Contains(text, "m.t") || strings.Contains(text, "m.a") {
		t.Errorf("/metrics names tables without --metrics-table-labels:\n%s", text)
	}
	for _, name := range []string{"lakesoul_catalog_up", "lakesoul_compaction_queue_jobs", "go_goroutines", "go_memstats_heap_alloc_bytes"} {
		if after[name] == nil {
			t.Errorf("no %s in the exposition", name)
		}
	}
	if v := metricValue(after, "lakesoul_catalog_up", nil); v != 1 {
		t.Errorf("lakesoul_catalog_up = %v", v)
	}

	// The eleventh commit of a partition queues a compaction job; once the
	// worker ran it, the job's duration is observed and the table's
	// versions waiting for compaction drop.
	for i := 0; i <= 10; i++ {
		mustExec(t, ctx, c, fmt.Sprintf("INSERT INTO m.t VALUES (%d, 'c%d')", 1000+i, i))
	}
	waitCompactions(t, c, "m.t", 1)
	compacted := map[string]string{"outcome": "compacted"}
	for {
		now := scrape(t, maddr)
		if metricValue(now, "lakesoul_compaction_job_duration_seconds", compacted)-metricValue(after, "lakesoul_compaction_job_duration_seconds", compacted) >= 1 {
			if v := metricValue(now, "lakesoul_table_uncompacted_versions_max", nil); v >= 13 {
				t.Errorf("most uncompacted versions after m.t's compaction = %v", v)
			}
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("lakesoul_compaction_job_duration_seconds{outcome=compacted} did not move after a compaction")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestMetricsListenInUse: a metrics address already taken makes serve fail
// at start with the address named.
func TestMetricsListenInUse(t *testing.T) {
	t.Parallel()
	requirePG(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	addr := l.Addr().String()
	pgAddr, _, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, lakesoulBin, "serve", "--data-dir", filepath.Join(testBaseDir(t), "data"),
		"--listen", pgAddr, "--admin-password", "x", "--metrics-listen", addr)
	cmd.Env = serverEnv()
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("serve succeeded with the metrics address in use:\n%s", out)
	}
	if !strings.Contains(string(out), "metrics listener "+addr) || !strings.Contains(string(out), "address already in use") {
		t.Errorf("error does not name the address:\n%s", out)
	}
}

// TestMetricsS3: with an S3 warehouse, the object store's counters move:
// requests and bytes both ways, disk-cache misses then hits on a second
// read of the same file, data bytes read from s3, and errors and retries
// while the S3 server is down (the INSERT then fails, nothing else does);
// with --metrics-table-labels the tables' versions waiting for compaction
// are served by table name.
func TestMetricsS3(t *testing.T) {
	requirePG(t)
	s3srv := s3test.Fake(t)
	maddr, _, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	srv := startS3Server(t, filepath.Join(testBaseDir(t), "data"), s3srv, "--metrics-listen", maddr, "--metrics-table-labels")
	defer srv.stopT(t)
	ctx := testCtx(t)
	c := srv.connect(t)
	before := scrape(t, maddr)
	mustExec(t, ctx, c, "CREATE SCHEMA ms3", "CREATE TABLE ms3.t (id bigint PRIMARY KEY, a text, b text) WITH (hash_bucket_num = 1)",
		"INSERT INTO ms3.t SELECT i, md5(i::text), md5((-i)::text) FROM generate_series(1, 50000) AS g(i)",
		"CREATE TABLE ms3.v (id bigint)", "INSERT INTO ms3.v VALUES (1)", "INSERT INTO ms3.v VALUES (2)")
	const q = "SELECT count(*), count(DISTINCT a), sum(length(b))::bigint FROM ms3.t"
	wantRows(t, "first read", queryStrings(t, ctx, c, q), []string{"50000|50000|1600000"})
	mid := scrape(t, maddr)
	wantRows(t, "second read", queryStrings(t, ctx, c, q), []string{"50000|50000|1600000"})
	warm := scrape(t, maddr)
	s3srv.SetDown(true)
	_, err = c.Exec(ctx, "INSERT INTO ms3.t VALUES (0, 'x', 'y')")
	s3srv.SetDown(false)
	if err == nil {
		t.Fatal("INSERT succeeded with S3 down")
	}
	after := scrape(t, maddr)

	moved := func(from, to map[string]*dto.MetricFamily, name string, labels map[string]string) {
		t.Helper()
		if d := metricValue(to, name, labels) - metricValue(from, name, labels); d < 1 {
			t.Errorf("%s%v moved by %v", name, labels, d)
		}
	}
	moved(before, mid, "lakesoul_objstore_requests_total", nil)
	moved(before, mid, "lakesoul_objstore_written_bytes_total", nil)
	moved(before, mid, "lakesoul_objstore_read_bytes_total", nil)
	moved(before, mid, "lakesoul_cache_misses_total", nil)
	moved(before, mid, "lakesoul_cache_miss_bytes_total", nil)
	moved(before, mid, "lakesoul_read_bytes_total", map[string]string{"store": "s3"})
	moved(mid, warm, "lakesoul_cache_hits_total", nil)
	moved(mid, warm, "lakesoul_cache_hit_bytes_total", nil)
	moved(warm, after, "lakesoul_objstore_retries_total", nil)
	moved(warm, after, "lakesoul_objstore_errors_total", nil)
	if v := metricValue(after, "lakesoul_cache_capacity_bytes", nil); v != 64<<20 {
		t.Errorf("lakesoul_cache_capacity_bytes = %v, want --cache-size 64MiB", v)
	}
	if v := metricValue(after, "lakesoul_cache_bytes", nil); v < 1 {
		t.Errorf("lakesoul_cache_bytes = %v", v)
	}
	// --metrics-table-labels: per-table series, by name.
	if v := metricValue(after, "lakesoul_table_uncompacted_versions", map[string]string{"table": "ms3.v"}); v != 1 {
		t.Errorf("uncompacted versions of ms3.v = %v, want 1", v)
	}
	wantRows(t, "after S3 came back", queryStrings(t, ctx, c, "SELECT count(*) FROM ms3.t"), []string{"50000"})
}

// TestReadyz: /readyz and `lakesoul healthcheck` (the image's HEALTHCHECK)
// say not ready, with the reason, while the catalog's migrations are behind
// the binary's and while the catalog is down, and ready again once it is
// back; /healthz (healthcheck --live) stays 200 throughout.
func TestReadyz(t *testing.T) {
	t.Parallel()
	requirePG(t)
	ctx := testCtx(t)
	cluster := pgtest.Cluster(t)
	if err := cluster.CreateDatabase(ctx, "ready"); err != nil {
		t.Fatal(err)
	}
	maddr, _, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := startServer(filepath.Join(testBaseDir(t), "data"), "ready-Secret1", "--catalog-url", cluster.ConnString("ready"),
		"--compaction-workers", "0", "--metrics-listen", maddr)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.stopT(t)
	healthcheck := func(args ...string) (bool, string) {
		out, err := exec.CommandContext(ctx, lakesoulBin, append([]string{"healthcheck", "--metrics-listen", maddr}, args...)...).CombinedOutput()
		return err == nil, string(out)
	}
	want := func(what string, ready bool, reason string) {
		t.Helper()
		code, body := httpStatus(t, "http://"+maddr+"/readyz")
		ok, out := healthcheck()
		if (code == http.StatusOK) != ready || ok != ready || !strings.Contains(body, reason) || !strings.Contains(out, reason) {
			t.Errorf("%s: /readyz %d %q, healthcheck %v %q; want ready=%v naming %q", what, code, body, ok, out, ready, reason)
		}
		if code, _ := httpStatus(t, "http://"+maddr+"/healthz"); code != http.StatusOK {
			t.Errorf("%s: /healthz %d", what, code)
		}
		if ok, out := healthcheck("--live"); !ok {
			t.Errorf("%s: healthcheck --live: %s", what, out)
		}
	}
	want("started", true, "ready")

	cat, err := pgx.Connect(ctx, cluster.ConnString("ready"))
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close(context.Background())
	mustExec(t, ctx, cat, "UPDATE public.lakesoul_go_migrations SET version = version - 1")
	want("migrations behind", false, "lakesoul migrate up")
	mustExec(t, ctx, cat, "UPDATE public.lakesoul_go_migrations SET version = version + 1")
	want("migrations current", true, "ready")
	cat.Close(ctx)

	if err := cluster.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	want("catalog down", false, "not ready: catalog")
	back, err := pgcluster.Open(ctx, cluster.Options())
	if err != nil {
		t.Fatal(err)
	}
	defer back.Stop(context.Background())
	for { // the pool reconnects on its own
		if code, _ := httpStatus(t, "http://"+maddr+"/readyz"); code == http.StatusOK {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("/readyz never recovered after the catalog came back")
		case <-time.After(100 * time.Millisecond):
		}
	}
	want("catalog back", true, "ready")
}
