package bench

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// The ccf "point" phase: primary-key lookups of random keys through pgwire
// with a bind parameter, as every driver sends them, warm (after a warm-up
// of the same kind), of keys that exist and of keys that do not; next to
// DuckDB answering the same lookups inside DuckDB — its dedup query over
// the same live files with the key in the WHERE, its Parquet metadata cache
// on, timed by DuckDB's own profiler so the Go wrapper is not measured.
// Each system's answers are compared with the other's for the keys both
// looked up.

// pointQuery is lakesoul's lookup.
var pointQuery = "SELECT " + strings.Join(ccfColumns, ", ") + " FROM ccf.t WHERE uuid = $1"

// pointKeys draws n keys of the workload: existing ones (key numbers below
// the final key count) or absent ones (uuids of numbers beyond it, which
// fall inside every file's key range as existing ones do).
func pointKeys(w ccfWorkload, n int, present bool, seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	keys := w.finalKeys()
	out := make([]string, n)
	for i := range out {
		k := rng.IntN(keys)
		if !present {
			k += keys
		}
		out[i] = ccfMakeRow(k, 0).uuid
	}
	return out
}

// pointStats are the latencies of a run of lookups.
type pointStats struct {
	lat   []time.Duration
	found int
}

func (p pointStats) row(bench, system string, present bool, rss float64) Row {
	sorted := slices.Clone(p.lat)
	slices.Sort(sorted)
	q := func(f float64) float64 {
		if len(sorted) == 0 {
			return 0
		}
		return float64(sorted[min(len(sorted)-1, int(f*float64(len(sorted))))].Microseconds()) / 1000
	}
	var total time.Duration
	for _, l := range p.lat {
		total += l
	}
	keys := "present"
	if !present {
		keys = "absent"
	}
	return Row{Bench: bench, Phase: "point", System: system, Rows: int64(len(p.lat)), Seconds: total.Seconds(),
		PeakRSSMB: rss, Extra: map[string]any{"keys": keys, "p50_ms": q(0.5), "p99_ms": q(0.99), "found": p.found}}
}

// pointOptions are the point phase's flags.
type pointOptions struct {
	lookups int
	profile string // CPU profile of lakesoul's measured lookups
}

// ccfPointLake runs lakesoul's lookups over lake (a pgx connection to the
// server, statements prepared once) and returns its answers, for the
// DuckDB peer to match.
func ccfPointLake(ctx context.Context, o Options, name string, lake *pgx.Conn, w ccfWorkload, po pointOptions) (map[string]string, error) {
	answers := map[string]string{}
	lookups := po.lookups
	stopProfile := func() {}
	defer func() { stopProfile() }()
	for _, present := range []bool{true, false} {
		// Warm-up: the same kind of lookups, other keys.
		for _, k := range pointKeys(w, max(50, lookups/10), present, 1) {
			if _, err := lakeLookup(ctx, lake, k); err != nil {
				return nil, err
			}
		}
		resetPeakRSS()
		if present {
			var err error
			if stopProfile, err = startCPUProfile(po.profile); err != nil {
				return nil, err
			}
		}
		var st pointStats
		for _, k := range pointKeys(w, lookups, present, 2) {
			start := time.Now()
			row, err := lakeLookup(ctx, lake, k)
			st.lat = append(st.lat, time.Since(start))
			if err != nil {
				return nil, err
			}
			if row != "" {
				st.found++
			}
			answers[k] = row
		}
		o.Out.Emit(st.row(name, "lakesoul", present, peakRSSSinceReset()))
		stopProfile()
		stopProfile = func() {}
	}
	return answers, nil
}

// lakeLookup returns the row of key as text ("" when absent).
func lakeLookup(ctx context.Context, c *pgx.Conn, key string) (string, error) {
	rows, err := c.Query(ctx, pointQuery, key)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	return oneRow(rows)
}

// oneRow renders the only row of rows ("" for none).
func oneRow(rows ccfRows) (string, error) {
	var out []string
	var f [8]string
	var req int64
	for rows.Next() {
		if err := rows.Scan(&f[0], &f[1], &f[2], &req, &f[4], &f[5], &f[6], &f[7]); err != nil {
			return "", err
		}
		f[3] = strconv.FormatInt(req, 10)
		out = append(out, strings.Join(f[:], "|"))
	}
	if len(out) > 1 {
		return "", fmt.Errorf("lookup returned %d rows", len(out))
	}
	return strings.Join(out, ""), rows.Err()
}

// ccfPointDuckDB answers lookups with DuckDB's dedup over the live files,
// the key in the WHERE, timed by DuckDB's profiler ("latency" of its JSON
// profile), and checks its answers against lakesoul's.
func ccfPointDuckDB(ctx context.Context, o Options, name string, files []string, w ccfWorkload, lookups int, answers map[string]string) error {
	duck, err := openDuckPeer(ctx, o.Dir, "point")
	if err != nil {
		return err
	}
	defer duck.Close()
	query := duckDedupSQL(files, "p.uuid = $1")
	lookup := func(key string) (string, time.Duration, error) {
		var row string
		lat, err := duck.query(ctx, func(rows *sql.Rows) error {
			var err error
			row, err = oneRow(rows)
			return err
		}, query, key)
		return row, lat, err
	}
	for _, present := range []bool{true, false} {
		resetPeakRSS()
		for _, k := range pointKeys(w, 2, present, 1) { // warm-up
			if _, _, err := lookup(k); err != nil {
				return err
			}
		}
		var st pointStats
		mismatches := 0
		for _, k := range pointKeys(w, lookups, present, 2) {
			row, lat, err := lookup(k)
			if err != nil {
				return err
			}
			st.lat = append(st.lat, lat)
			if row != "" {
				st.found++
			}
			if want, ok := answers[k]; ok && want != row {
				mismatches++
			}
		}
		r := st.row(name, "duckdb", present, peakRSSSinceReset())
		r.Extra["answers_match"] = mismatches == 0
		o.Out.Emit(r)
	}
	return nil
}

// profileLatency reads the query latency DuckDB's JSON profile recorded.
func profileLatency(path string) (time.Duration, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	var p struct {
		Latency *float64 `json:"latency"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return 0, fmt.Errorf("duckdb profile: %w", err)
	}
	if p.Latency == nil {
		return 0, errors.New("duckdb profile without latency")
	}
	return time.Duration(*p.Latency * float64(time.Second)), nil
}

// resetPeakRSS restarts the kernel's record of this process's peak RSS
// (VmHWM), so a phase reports its own peak.
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSSSinceReset is VmHWM in MiB (0 where /proc is not there).
func peakRSSSinceReset() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(l, []byte("VmHWM:")); ok {
			kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(string(v)), "kB")), 64)
			if err == nil {
				return kb / 1024
			}
		}
	}
	return 0
}
