package reader

import (
	"context"
	"sync"

	"github.com/lakesoul-go/lakesoul/internal/safego"
)

// footerReaders is how many footers FileRows reads at once.
const footerReaders = 8

// footerReadBudget is how many footers missing from Meta FileRows reads;
// the rows of further files are estimated from their sizes.
const footerReadBudget = 64

// FileRows is the number of rows stored in the scan's files, from their
// footers (through Meta, which the scan then finds filled; several read at
// once). For an append table it is the number of rows an unfiltered scan
// returns; for a primary-key table an upper bound (a key upserted in n
// files counts n times, a CDC delete counts). Of files whose footer Meta
// lacks, at most footerReadBudget are read: the others' rows are estimated
// by their size at the bytes per row of the files read (a scan that stops
// early — LIMIT — need not have fetched thousands of footers), and exact
// is false. A footer that does not parse fails as the scan would
// (footerError).
func (s *Scan) FileRows(ctx context.Context) (rows int64, exact bool, err error) {
	type counted struct {
		fo   *fileOpen
		rows int64
		read bool
	}
	var files []*counted
	for _, p := range s.Partitions {
		for _, f := range p.Files {
			if err := checkInTable(s.Table, f.Path); err != nil {
				return 0, false, err
			}
			files = append(files, &counted{fo: &fileOpen{ctx: ctx, store: s.Store, f: f}})
		}
	}
	budget := footerReadBudget
	// Footers are read footerReaders at a time; the first error wins.
	var (
		g    safego.Group
		sem  = make(chan struct{}, footerReaders)
		mu   sync.Mutex
		ferr error
	)
	for _, c := range files {
		if n, ok := s.cachedRows(c.fo); ok {
			c.rows, c.read = n, true
			continue
		}
		if budget == 0 {
			continue
		}
		budget--
		c.read = true
		sem <- struct{}{}
		g.Start(func() {
			defer func() { <-sem }()
			defer c.fo.close()
			fm, err := s.footer(c.fo)
			if err == nil {
				c.rows = fm.md.NumRows
			} else {
				mu.Lock()
				if ferr == nil {
					ferr = err
				}
				mu.Unlock()
			}
		})
	}
	g.Wait()
	if ferr != nil {
		return 0, false, ferr
	}
	var knownRows, knownBytes int64
	exact = true
	for _, c := range files {
		if c.read {
			rows += c.rows
			knownRows += c.rows
			knownBytes += c.fo.f.Size
		} else {
			exact = false
		}
	}
	if !exact && knownBytes > 0 {
		for _, c := range files {
			if !c.read {
				rows += int64(float64(c.fo.f.Size) * float64(knownRows) / float64(knownBytes))
			}
		}
	}
	return rows, exact, nil
}

// cachedRows is the row count of fo's footer when Meta holds it.
func (s *Scan) cachedRows(fo *fileOpen) (int64, bool) {
	if s.Meta == nil || fo.f.Size <= 0 {
		return 0, false
	}
	if fm := s.Meta.get(fileKey{path: fo.f.Path, size: fo.f.Size}); fm != nil {
		return fm.md.NumRows, true
	}
	return 0, false
}
