package tests

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestBenchOLTP runs `lakesoul bench oltp` tiny: pgbench's select-only and
// simple-update scripts and the upsert script, prepared and simple, 1 and 3
// clients, against lakesoul serve and PostgreSQL. Every configuration must
// report on both systems, with transactions, tps and latencies per window,
// no failed transaction, and for lakesoul the ratio to PostgreSQL, the
// server's peak RSS and the live files of pgbench_accounts per bucket.
func TestBenchOLTP(t *testing.T) {
	requirePG(t)
	lines, err := runBench(t, "oltp", "--clients", "1,3", "--duration", "2", "--windows", "2")
	if err != nil {
		t.Fatalf("bench oltp: %v", err)
	}
	type row struct {
		Bench        string    `json:"bench"`
		Phase        string    `json:"phase"`
		System       string    `json:"system"`
		Mode         string    `json:"mode"`
		Clients      int       `json:"clients"`
		Rows         int64     `json:"rows"`
		Seconds      float64   `json:"seconds"`
		TPS          float64   `json:"tps"`
		P50          float64   `json:"p50_ms"`
		P99          float64   `json:"p99_ms"`
		PeakRSSMB    float64   `json:"peak_rss_mb"`
		Failed       *int      `json:"failed"`
		WindowTPS    []float64 `json:"window_tps"`
		WindowP99    []float64 `json:"window_p99_ms"`
		Ratio        *float64  `json:"ratio_to_postgres"`
		Files        int       `json:"files"`
		FilesPerBkt  int       `json:"files_per_bucket_max"`
		CatalogPSSMB float64   `json:"catalog_peak_pss_mb"`
	}
	seen := map[string]int{}
	for _, line := range lines {
		var r row
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("not a JSON row: %q: %v", line, err)
		}
		seen[fmt.Sprintf("%s %s %s %d", r.Phase, r.System, r.Mode, r.Clients)]++
		if r.Bench != "oltp" || r.Rows == 0 || r.Seconds < 1 || r.TPS <= 0 || r.P50 <= 0 || r.P99 < r.P50 ||
			r.Failed == nil || *r.Failed != 0 || len(r.WindowTPS) != 2 || len(r.WindowP99) != 2 || r.PeakRSSMB <= 0 {
			t.Errorf("row %s", line)
		}
		if r.System == "lakesoul" && (r.Ratio == nil || *r.Ratio <= 0 || r.Files < 4 || r.FilesPerBkt < 1 || r.CatalogPSSMB <= 0) {
			t.Errorf("lakesoul row without ratio, files or catalog memory: %s", line)
		}
	}
	for _, script := range []string{"select-only", "simple-update", "upsert"} {
		for _, sys := range []string{"postgres", "lakesoul"} {
			for _, mode := range []string{"prepared", "simple"} {
				for _, c := range []int{1, 3} {
					if k := fmt.Sprintf("%s %s %s %d", script, sys, mode, c); seen[k] != 1 {
						t.Errorf("%d rows %q, want 1", seen[k], k)
					}
				}
			}
		}
	}
	if len(seen) != 24 {
		t.Errorf("%d kinds of rows, want 24: %v", len(seen), seen)
	}
}
