package listen

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// visibilityTTL is how long an answer of lakesoul.domain_visible_to is
// used: a role revoked from a workspace stops receiving its notices at the
// latest this much later.
const visibilityTTL = 5 * time.Second

type visKey struct{ role, domain string }

type visEntry struct {
	ok bool
	at time.Time
}

// visibility answers whether a role sees a workspace, from the catalog,
// remembering answers for visibilityTTL. It fails closed: a catalog error
// is "does not see".
type visibility struct {
	pool  *pgxpool.Pool
	mu    sync.Mutex
	known map[visKey]visEntry
}

func (v *visibility) sees(ctx context.Context, role, domain string) bool {
	k := visKey{role, domain}
	now := time.Now()
	v.mu.Lock()
	e, ok := v.known[k]
	v.mu.Unlock()
	if ok && now.Sub(e.at) < visibilityTTL {
		return e.ok
	}
	qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var seen bool
	if err := v.pool.QueryRow(qctx, "SELECT lakesoul.domain_visible_to($1, $2)", role, domain).Scan(&seen); err != nil {
		return false
	}
	v.mu.Lock()
	if len(v.known) > 10000 {
		clear(v.known)
	}
	v.known[k] = visEntry{ok: seen, at: now}
	v.mu.Unlock()
	return seen
}
