package tests

import (
	"context"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
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

// TestMetrics: `serve --metrics-listen` serves Prometheus metrics that move
// when statements run — statements by kind and SQLSTATE with latency
// histograms, rows and bytes written and read, commits, sessions by state,
// per-table versions waiting for compaction, Go runtime — and /healthz and
// /readyz on the same listener.
func TestMetrics(t *testing.T) {
	t.Parallel()
	requirePG(t)
	base := testBaseDir(t)
	maddr, _, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := startServer(filepath.Join(base, "data"), "metrics-pw", "--metrics-listen", maddr)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.stopT(t)
	ctx := testCtx(t)
	c := srv.connect(t)

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
	moved("lakesoul_commits_total", map[string]string{"outcome": "committed"}, 3)
	if v := metricValue(after, "lakesoul_sessions", map[string]string{"state": "idle"}); v < 1 {
		t.Errorf("idle sessions = %v", v)
	}
	if v := metricValue(after, "lakesoul_connections_total", nil); v < 1 {
		t.Errorf("connections = %v", v)
	}
	// Three commits to the one partition: versions 0, 1, 2, none compacted.
	if v := metricValue(after, "lakesoul_table_uncompacted_versions", map[string]string{"table": "m.t"}); v != 2 {
		t.Errorf("uncompacted versions of m.t = %v, want 2", v)
	}
	for _, name := range []string{"lakesoul_catalog_up", "lakesoul_compaction_queue_jobs", "go_goroutines", "go_memstats_heap_alloc_bytes"} {
		if after[name] == nil {
			t.Errorf("no %s in the exposition", name)
		}
	}
	if v := metricValue(after, "lakesoul_catalog_up", nil); v != 1 {
		t.Errorf("lakesoul_catalog_up = %v", v)
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
