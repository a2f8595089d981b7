// Package bench implements `lakesoul bench <name>`: workloads that measure
// LakeSoul-Go next to its peers in the same run, printing one JSON object per
// measurement (DESIGN.md §6). Benchmarks register themselves by name.
package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"sync"
	"syscall"
)

// Row is one measurement.
type Row struct {
	Bench     string  `json:"bench"`
	Phase     string  `json:"phase"`
	System    string  `json:"system"`
	Rows      int64   `json:"rows"`
	Seconds   float64 `json:"seconds"`
	RowsPerS  float64 `json:"rows_per_s"`
	PeakRSSMB float64 `json:"peak_rss_mb"`
	// Extra holds benchmark-specific fields (writers, p99_ms, checksum …),
	// flattened into the JSON object.
	Extra map[string]any `json:"-"`
}

// MarshalJSON flattens Extra into the object.
func (r Row) MarshalJSON() ([]byte, error) {
	m := map[string]any{
		"bench": r.Bench, "phase": r.Phase, "system": r.System, "rows": r.Rows,
		"seconds": r.Seconds, "rows_per_s": r.RowsPerS, "peak_rss_mb": r.PeakRSSMB,
	}
	for k, v := range r.Extra {
		m[k] = v
	}
	return json.Marshal(m)
}

// Emitter prints rows as JSON lines; safe for concurrent use.
type Emitter struct {
	mu sync.Mutex
	w  io.Writer
	// observe, when set, sees every row after it is printed.
	observe func(Row)
}

// Observe makes f see every row the emitter prints (a progress display).
func (e *Emitter) Observe(f func(Row)) { e.observe = f }

// NewEmitter writes to w.
func NewEmitter(w io.Writer) *Emitter { return &Emitter{w: w} }

// Emit fills rows_per_s and peak_rss_mb when unset and prints r.
func (e *Emitter) Emit(r Row) {
	if r.RowsPerS == 0 && r.Seconds > 0 {
		r.RowsPerS = float64(r.Rows) / r.Seconds
	}
	if r.PeakRSSMB == 0 {
		r.PeakRSSMB = PeakRSSMB()
	}
	b, err := json.Marshal(r)
	if err != nil {
		b = []byte(fmt.Sprintf(`{"bench":%q,"error":%q}`, r.Bench, err.Error()))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	fmt.Fprintln(e.w, string(b))
	if e.observe != nil {
		e.observe(r)
	}
}

// PeakRSSMB is this process's peak resident set size in MiB.
func PeakRSSMB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Maxrss) / 1024 // Linux reports KiB
}

// Options are what every benchmark gets from the command line.
type Options struct {
	// Scale multiplies the workload's row counts (1 = the published size).
	Scale float64
	// CatalogURL is an existing catalog PostgreSQL; empty = a private one.
	CatalogURL string
	// Dir is a scratch directory the benchmark may fill and remove.
	Dir string
	// Args are the benchmark's own flags (e.g. --upserts 100).
	Args []string
	Out  *Emitter
	// Log receives progress lines (stderr).
	Log io.Writer
}

// Func runs one benchmark.
type Func func(ctx context.Context, o Options) error

var (
	regMu    sync.Mutex
	registry = map[string]Func{}
)

// Register adds a benchmark; call it from an init function.
func Register(name string, f Func) {
	regMu.Lock()
	defer regMu.Unlock()
	registry[name] = f
}

// Names lists the registered benchmarks.
func Names() []string {
	regMu.Lock()
	defer regMu.Unlock()
	var out []string
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Run runs the named benchmark.
func Run(ctx context.Context, name string, o Options) error {
	regMu.Lock()
	f, ok := registry[name]
	regMu.Unlock()
	if !ok {
		return fmt.Errorf("bench: unknown benchmark %q (known: %v)", name, Names())
	}
	return f(ctx, o)
}
