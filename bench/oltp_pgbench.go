package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/internal/safego"
)

// pgbenchTx is one transaction of pgbench's per-transaction log: when it
// ended (µs since the epoch) and how long it took (µs).
type pgbenchTx struct {
	endUS, latUS int64
}

// pgbenchRun is what one pgbench run did: its successful transactions and
// the ones its log marks failed or skipped.
type pgbenchRun struct {
	tx     []pgbenchTx
	failed int
}

// runPgbench runs pgbench with args against sys, logging every transaction
// (-l) under a fresh directory in logDir, and reads the logs back.
func runPgbench(ctx context.Context, pgbench string, sys oltpSystem, logDir string, args []string) (pgbenchRun, error) {
	if err := os.RemoveAll(logDir); err != nil {
		return pgbenchRun{}, err
	}
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return pgbenchRun{}, err
	}
	defer os.RemoveAll(logDir)
	args = append(args, "-l", "--log-prefix", filepath.Join(logDir, "tx"),
		"-h", sys.host, "-p", sys.port, "-U", sys.user, sys.db)
	cmd := exec.CommandContext(ctx, pgbench, args...)
	cmd.Env = append(os.Environ(), "PGPASSWORD="+sys.pass, "PGSSLMODE=disable")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return pgbenchRun{}, fmt.Errorf("pgbench %s: %w\n%s", strings.Join(args, " "), err, tail(out, 2000))
	}
	logs, err := filepath.Glob(filepath.Join(logDir, "tx.*"))
	if err != nil {
		return pgbenchRun{}, err
	}
	var run pgbenchRun
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			return pgbenchRun{}, err
		}
		if err := run.parseLog(b); err != nil {
			return pgbenchRun{}, fmt.Errorf("%s: %w", l, err)
		}
	}
	return run, nil
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// parseLog adds the lines of one pgbench transaction log: `client_id
// transaction_no time script_no time_epoch time_us [schedule_lag]
// [retries]`, time being the latency in µs, or "failed" / "skipped".
func (r *pgbenchRun) parseLog(b []byte) error {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) < 6 {
			return fmt.Errorf("pgbench log line %q: want at least 6 fields", sc.Text())
		}
		if f[2] == "failed" || f[2] == "skipped" {
			r.failed++
			continue
		}
		lat, err1 := strconv.ParseInt(f[2], 10, 64)
		sec, err2 := strconv.ParseInt(f[4], 10, 64)
		us, err3 := strconv.ParseInt(f[5], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return fmt.Errorf("pgbench log line %q: not numbers", sc.Text())
		}
		r.tx = append(r.tx, pgbenchTx{endUS: sec*1e6 + us, latUS: lat})
	}
	return sc.Err()
}

// oltpStats summarises a run: over all of it, from the first transaction's
// start to the last one's end, and per window — that span cut into equal
// stretches, each transaction counted in the one it ended in.
type oltpStats struct {
	seconds, tps, p50, p99          float64
	windowTPS, windowP50, windowP99 []float64
}

func (r pgbenchRun) windows(n int) oltpStats {
	var st oltpStats
	if len(r.tx) == 0 {
		return st
	}
	first, last := int64(math.MaxInt64), int64(math.MinInt64)
	for _, t := range r.tx {
		first = min(first, t.endUS-t.latUS)
		last = max(last, t.endUS)
	}
	span := max(last-first, 1)
	st.seconds = float64(span) / 1e6
	st.tps = float64(len(r.tx)) / st.seconds
	lat := make([][]float64, n)
	var all []float64
	for _, t := range r.tx {
		w := min(int((t.endUS-first)*int64(n)/span), n-1)
		ms := float64(t.latUS) / 1000
		lat[w] = append(lat[w], ms)
		all = append(all, ms)
	}
	st.p50, st.p99 = percentile(all, 0.50), percentile(all, 0.99)
	for _, l := range lat {
		st.windowTPS = append(st.windowTPS, round(float64(len(l))/(st.seconds/float64(n))))
		st.windowP50 = append(st.windowP50, round(percentile(l, 0.50)))
		st.windowP99 = append(st.windowP99, round(percentile(l, 0.99)))
	}
	return st
}

// postmasterPID is the pid of the PostgreSQL server at url when it runs on
// this machine (the parent of a backend), else 0.
func postmasterPID(ctx context.Context, url string) int {
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		return 0
	}
	defer c.Close(ctx)
	var backend int
	if err := c.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		return 0
	}
	ppid, ok := parentPID(backend)
	if !ok {
		return 0
	}
	return ppid
}

// parentPID reads a process's parent from /proc.
func parentPID(pid int) (int, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// pid (comm) state ppid …; comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}

// pssSampler records the peak of a process tree's summed proportional set
// size (shared memory counted once across the tree) while it runs.
type pssSampler struct {
	stopc chan struct{}
	g     safego.Group
	mu    sync.Mutex
	peak  float64
}

// startPSSSampler samples the postmaster pid and its children every second
// (nothing when pid is 0).
func startPSSSampler(pid int) *pssSampler {
	s := &pssSampler{stopc: make(chan struct{})}
	if pid == 0 {
		return s
	}
	s.g.Start(func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			mb := treePSSMB(pid)
			s.mu.Lock()
			s.peak = max(s.peak, mb)
			s.mu.Unlock()
			select {
			case <-s.stopc:
				return
			case <-tick.C:
			}
		}
	})
	return s
}

// stop ends the sampling and returns the peak in MiB.
func (s *pssSampler) stop() float64 {
	close(s.stopc)
	s.g.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}

// treePSSMB sums the Pss of root and its direct children (a postmaster's
// backends and auxiliary processes) in MiB.
func treePSSMB(root int) float64 {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	var kb float64
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pid != root {
			if ppid, ok := parentPID(pid); !ok || ppid != root {
				continue
			}
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
		if err != nil {
			continue
		}
		for _, l := range bytes.Split(b, []byte("\n")) {
			if v, ok := bytes.CutPrefix(l, []byte("Pss:")); ok {
				if x, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(string(v)), "kB")), 64); err == nil {
					kb += x
				}
				break
			}
		}
	}
	return kb / 1024
}
