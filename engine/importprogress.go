package engine

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lakesoul-go/lakesoul/pgwire"
)

// noticeInterval is how often a running import reports its progress.
const noticeInterval = 2 * time.Second

// importProgress is one running import's progress: what its NOTICE
// messages report and lakesoul.progress shows. The counters are written
// by the import's goroutines and read by any session's.
type importProgress struct {
	pid      uint32
	user     string
	relation string
	started  time.Time
	files    int
	total    int64 // bytes of the files, -1 when a size is unknown

	done       atomic.Int64 // files finished
	rows       atomic.Int64 // rows of finished files
	bytes      atomic.Int64 // bytes of finished files
	fileRows   atomic.Int64 // of the current file, so far
	fileBytes  atomic.Int64
	current    atomic.Pointer[string]
	lines      func() int64 // the current CSV file's line, on the import's goroutine only
	lastNotice time.Time    // the import's goroutine only
}

// importRegistry lists the engine's running imports.
type importRegistry struct {
	mu      sync.Mutex
	running map[*importProgress]struct{}
}

func (r *importRegistry) start(s *Session, relation string, files []importFile) *importProgress {
	p := &importProgress{pid: s.pid, user: s.user, relation: relation, started: time.Now(), files: len(files), lastNotice: time.Now()}
	for _, f := range files {
		if f.size < 0 {
			p.total = -1
			break
		}
		p.total += f.size
	}
	r.mu.Lock()
	if r.running == nil {
		r.running = map[*importProgress]struct{}{}
	}
	r.running[p] = struct{}{}
	r.mu.Unlock()
	return p
}

func (r *importRegistry) end(p *importProgress) {
	r.mu.Lock()
	delete(r.running, p)
	r.mu.Unlock()
}

// list returns the running imports.
func (r *importRegistry) list() []*importProgress {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*importProgress, 0, len(r.running))
	for p := range r.running {
		out = append(out, p)
	}
	return out
}

func (p *importProgress) startFile(path string) {
	p.current.Store(&path)
	p.fileRows.Store(0)
	p.fileBytes.Store(0)
}

// fileDone adds the current file's rows and bytes to the totals, reports
// it, and returns its bytes.
func (p *importProgress) fileDone(ctx context.Context, rows int64) int64 {
	b := p.fileBytes.Load()
	p.rows.Add(rows)
	p.bytes.Add(b)
	p.fileRows.Store(0)
	p.fileBytes.Store(0)
	p.done.Add(1)
	cur := p.current.Load()
	if cur != nil {
		p.notice(ctx, fmt.Sprintf("%s: %d rows", *cur, rows))
	}
	return b
}

// tick reports progress when noticeInterval passed since the last report.
func (p *importProgress) tick(ctx context.Context) {
	if p.lines != nil {
		p.fileRows.Store(p.lines()) // for lakesoul.progress, read elsewhere
	}
	if time.Since(p.lastNotice) >= noticeInterval {
		p.notice(ctx, "")
	}
}

// snapshot is the rows and bytes processed so far, on the import's
// goroutine (which alone may read the CSV reader's line).
func (p *importProgress) snapshot() (rows, bytes int64) {
	rows, bytes = p.progressCounts()
	if p.lines != nil {
		rows = p.rows.Load() + p.lines()
	}
	return rows, bytes
}

// progressCounts is the rows and bytes processed so far, from any
// goroutine: rows of finished files plus those of the current Parquet file
// (a CSV file's count as it finishes).
func (p *importProgress) progressCounts() (rows, bytes int64) {
	return p.rows.Load() + p.fileRows.Load(), p.bytes.Load() + p.fileBytes.Load()
}

// notice sends a NOTICE with the progress so far: files, rows, bytes and
// their rates since the import started.
func (p *importProgress) notice(ctx context.Context, what string) {
	p.lastNotice = time.Now()
	rows, bytes := p.snapshot()
	secs := max(time.Since(p.started).Seconds(), 1e-3)
	msg := fmt.Sprintf("import into %s: %d of %d files, %d rows, %s, %.0f rows/s, %s/s", p.relation,
		p.done.Load(), p.files, rows, formatBytes(float64(bytes)), float64(rows)/secs, formatBytes(float64(bytes)/secs))
	if what != "" {
		msg += " (" + what + ")"
	}
	_ = pgwire.SendNotice(ctx, pgwire.Notice{Message: msg})
}

// formatBytes renders a byte count with a binary unit.
func formatBytes(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f %s", b, units[i])
	}
	return fmt.Sprintf("%.1f %s", b, units[i])
}
