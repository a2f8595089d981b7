package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// runBench runs `lakesoul bench args...` in a temporary directory, logs the
// end of its stderr and returns its stdout's lines (JSON rows) and how it
// exited.
func runBench(t *testing.T, args ...string) ([]string, error) {
	t.Helper()
	cmd := exec.CommandContext(testCtx(t), lakesoulBin, append([]string{"bench"}, args...)...)
	cmd.Dir = t.TempDir()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if log := stderr.String(); len(log) > 4000 {
		t.Logf("stderr (end):\n%s", log[len(log)-4000:])
	} else {
		t.Logf("stderr:\n%s", log)
	}
	return strings.Split(strings.TrimSpace(stdout.String()), "\n"), err
}

// tpchTestSystems are `bench tpch`'s systems (its default --systems).
var tpchTestSystems = []string{"lakesoul-keyed", "lakesoul-append", "duckdb-parquet", "duckdb", "postgres"}

// TestBenchTPCH runs `lakesoul bench tpch --scale 0.01 --runs 1`: TPC-H's
// 22 queries over keyed and append lake tables on the real server, DuckDB's
// own tables, Parquet files DuckDB wrote and PostgreSQL 15. Every answer of
// every system must equal DuckDB's — the correctness check of the lake's
// SQL over TPC-H — and the run reports loads (with sizes), one row per
// query and system, and a geometric mean per system.
func TestBenchTPCH(t *testing.T) {
	requirePG(t)
	lines, err := runBench(t, "tpch", "--scale", "0.01", "--runs", "1")
	if err != nil {
		t.Errorf("bench tpch: %v", err)
	}
	type row struct {
		Phase       string             `json:"phase"`
		System      string             `json:"system"`
		Rows        int64              `json:"rows"`
		Seconds     float64            `json:"seconds"`
		AnswerOK    *bool              `json:"answer_ok"`
		Error       string             `json:"error"`
		Mismatch    string             `json:"mismatch"`
		TypesDiffer string             `json:"types_differ"`
		SizeMB      float64            `json:"size_mb"`
		Queries     int                `json:"queries"`
		Tables      map[string]float64 `json:"tables"`
		Ratio       *float64           `json:"ratio_to_duckdb-parquet"`
	}
	seen := map[string]int{}
	for _, line := range lines {
		var r row
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("not a JSON row: %q: %v", line, err)
		}
		seen[r.Phase+" "+r.System]++
		switch {
		case r.Error != "" || r.Mismatch != "":
			t.Errorf("%s %s: error %q, mismatch %q", r.Phase, r.System, r.Error, r.Mismatch)
		case r.TypesDiffer != "":
			// result columns of PostgreSQL's types (numeric results: issue 33)
			t.Errorf("%s %s: types differ from PostgreSQL's: %s", r.Phase, r.System, r.TypesDiffer)
		case r.Phase == "generate":
			// TPC-H at scale 0.01: 1,500 customers, 15,000 orders, 2,000
			// parts with 4 suppliers each, 100 suppliers.
			want := map[string]float64{"nation": 25, "region": 5, "customer": 1500, "orders": 15000, "part": 2000,
				"partsupp": 8000, "supplier": 100}
			for table, n := range want {
				if r.Tables[table] != n {
					t.Errorf("generate: %s has %v rows, want %v", table, r.Tables[table], n)
				}
			}
			if n := r.Tables["lineitem"]; n < 15000 || n > 7*15000 {
				t.Errorf("generate: lineitem has %v rows", n)
			}
		case r.Phase == "load":
			if r.Seconds <= 0 || r.SizeMB <= 0 || r.Rows == 0 {
				t.Errorf("load %s: %+v", r.System, r)
			}
		case r.Phase == "geomean":
			if r.Queries != 22 || r.Seconds <= 0 || r.Ratio == nil || *r.Ratio <= 0 {
				t.Errorf("geomean %s: %+v", r.System, r)
			}
		case strings.HasPrefix(r.Phase, "q"):
			if r.AnswerOK == nil || !*r.AnswerOK {
				t.Errorf("%s %s: answer not checked equal to duckdb's: %+v", r.Phase, r.System, r)
			}
		default:
			t.Errorf("unexpected row %q", line)
		}
	}
	var want []string
	for _, s := range tpchTestSystems {
		want = append(want, "load "+s, "geomean "+s)
		for q := 1; q <= 22; q++ {
			want = append(want, fmt.Sprintf("q%02d %s", q, s))
		}
	}
	want = append(want, "generate dbgen")
	for _, k := range want {
		if seen[k] != 1 {
			t.Errorf("%d rows %q, want 1", seen[k], k)
		}
	}
	if len(seen) != len(want) {
		t.Errorf("%d kinds of rows, want %d: %v", len(seen), len(want), seen)
	}
}
