package engine

import (
	"context"
	"fmt"

	"golang.org/x/sync/semaphore"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Parsing costs memory in proportion to the statement text, and much of it:
// pg_query builds the tree in C, packs it as protobuf and Go unpacks it, so
// a 16 MiB `IN (1,1,…)` list peaks at about 2 GiB and a 16 MiB multi-row
// INSERT at about 600 MiB. The parse budget bounds the text being parsed at
// once, so that however many sessions send large statements together, the
// parse phase stays within a share of the memory limit: a statement waits
// for budget (its context can cancel the wait), and one larger than the
// whole budget is refused with 54000.
const (
	// parseBudgetShare is the fraction of Config.MemoryLimit that text in
	// parsing may take (its peak is a hundred times that).
	parseBudgetShare = 256
	// minParseBudget lets a 16 MiB statement parse under any limit;
	// unlimitedParseBudget applies without a memory limit.
	minParseBudget       = 16 << 20
	unlimitedParseBudget = 64 << 20
)

// parseBudget is the weighted semaphore over bytes of statement text.
type parseBudget struct {
	size int64
	sem  *semaphore.Weighted
}

func newParseBudget(memoryLimit int64) *parseBudget {
	size := int64(unlimitedParseBudget)
	if memoryLimit > 0 {
		size = max(memoryLimit/parseBudgetShare, minParseBudget)
	}
	return &parseBudget{size: size, sem: semaphore.NewWeighted(size)}
}

// acquire takes budget for parsing text of n bytes; release gives it back.
func (b *parseBudget) acquire(ctx context.Context, n int) (release func(), err error) {
	w := max(int64(n), 1)
	if w > b.size {
		return nil, &sqlerr.Error{Code: sqlerr.ProgramLimitExceeded,
			Message: fmt.Sprintf("statement text of %d bytes exceeds the %d bytes the server parses at once", n, b.size),
			Hint:    "Split the statement (many rows: use COPY), or raise the server's --memory-limit."}
	}
	if err := b.sem.Acquire(ctx, w); err != nil {
		return nil, fmt.Errorf("engine: wait to parse: %w", err)
	}
	return func() { b.sem.Release(w) }, nil
}
