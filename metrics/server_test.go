package metrics

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestListenLoopbackByDefault: an address without a host listens on
// loopback only; a named host is listened on as given.
func TestListenLoopbackByDefault(t *testing.T) {
	for addr, loopback := range map[string]bool{":0": true, "127.0.0.1:0": true, "0.0.0.0:0": false} {
		s, err := Listen(addr, Sources{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ip := s.Addr().(*net.TCPAddr).IP
		if ip.IsLoopback() != loopback {
			t.Errorf("Listen(%q) listens on %s, want loopback %v", addr, s.Addr(), loopback)
		}
		if err := s.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTableLabelsOnlyWhenAsked: the per-table series name tables only with
// Sources.TableLabels; without it /metrics names no table and serves the
// largest value alone.
func TestTableLabelsOnlyWhenAsked(t *testing.T) {
	stats := CatalogStats{UncompactedVersions: map[string]int64{"secret_ns.payroll": 7, "other.t": 3}}
	for _, labels := range []bool{false, true} {
		s, err := Listen(":0", Sources{TableLabels: labels, Catalog: func(context.Context) (CatalogStats, error) { return stats, nil }}, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Get("http://" + s.Addr().String() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		body := string(b)
		if named := strings.Contains(body, "payroll") || strings.Contains(body, "secret_ns"); named != labels {
			t.Errorf("TableLabels %v: /metrics names the tables: %v", labels, named)
		}
		if labels != strings.Contains(body, `lakesoul_table_uncompacted_versions{table="secret_ns.payroll"} 7`) {
			t.Errorf("TableLabels %v: per-table series wrong:\n%s", labels, body)
		}
		if !strings.Contains(body, "lakesoul_table_uncompacted_versions_max 7") {
			t.Errorf("TableLabels %v: no lakesoul_table_uncompacted_versions_max 7:\n%s", labels, body)
		}
		if err := s.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}
