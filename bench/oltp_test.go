package bench

import (
	"slices"
	"testing"
)

// TestPgbenchLogWindows: pgbench's per-transaction log lines (latency µs,
// end time in seconds and µs) make tps and latency percentiles over the
// whole run and per window, each transaction counted in the window it ended
// in; failed and skipped transactions are counted apart.
func TestPgbenchLogWindows(t *testing.T) {
	var r pgbenchRun
	// The run spans 1000.000000 (the first start) to 1004.000000: two
	// windows of 2 s. Three transactions end in the first, one in the
	// second.
	log := "0 1 500000 0 1000 500000\n" +
		"1 1 1000000 0 1001 500000\n" +
		"0 2 2000 0 1001 900000\n" +
		"1 2 failed 0 1002 0\n" +
		"0 3 skipped 0 1002 0 10\n" +
		"0 4 3000 0 1004 0 0 0\n"
	if err := r.parseLog([]byte(log)); err != nil {
		t.Fatal(err)
	}
	if r.failed != 2 || len(r.tx) != 4 {
		t.Fatalf("failed %d, transactions %d", r.failed, len(r.tx))
	}
	st := r.windows(2)
	if st.seconds != 4 || st.tps != 1 {
		t.Errorf("seconds %v, tps %v", st.seconds, st.tps)
	}
	if !slices.Equal(st.windowTPS, []float64{1.5, 0.5}) {
		t.Errorf("window tps %v", st.windowTPS)
	}
	if !slices.Equal(st.windowP50, []float64{500, 3}) || !slices.Equal(st.windowP99, []float64{1000, 3}) {
		t.Errorf("window p50 %v, p99 %v", st.windowP50, st.windowP99)
	}
	if st.p50 != 3 || st.p99 != 1000 {
		t.Errorf("p50 %v, p99 %v", st.p50, st.p99)
	}
	if err := r.parseLog([]byte("0 1 x 0 1000 0\n")); err == nil {
		t.Error("a line without numbers parsed")
	}
}
