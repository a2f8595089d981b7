package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// What one role may hold of what all roles share, so that one user cannot
// lock others out:
//   - sessions: as PostgreSQL's CONNECTION LIMIT (pg_roles.rolconnlimit), a
//     role has at most so many sessions at once, over pgwire and Flight SQL
//     together (FATAL / ResourceExhausted 53300 "too many connections for
//     role"); a role without a CONNECTION LIMIT gets the server's
//     Config.SessionsPerRole. Superusers and the admin have no such limit,
//     as in PostgreSQL.
//   - held catalog transactions (ddltx.go): each transaction block that ran
//     DDL holds a connection of the owner's pool until it ends; at most half
//     the pool may be held, a role may hold a quarter of that, and the last
//     one is kept for superusers and the admin (53300 beyond; an implicit
//     transaction, which never waits for its client, waits for a slot).
//   - idle time in a transaction block: idle_in_transaction_session_timeout
//     (a setting; Config.IdleInTransactionTimeout its default) ends a
//     session that waits that long for its client inside a block, its
//     transaction rolled back (FATAL 25P03 over pgwire, the client dropped
//     over Flight SQL), as in PostgreSQL.

// roleSessions counts the sessions of each role.
type roleSessions struct {
	mu sync.Mutex
	n  map[string]int
}

// acquire counts a session of role, or fails with 53300 when the role has
// limit sessions already (limit < 0: no limit).
func (r *roleSessions) acquire(role string, limit int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if limit >= 0 && r.n[role] >= limit {
		return sqlerr.New(sqlerr.TooManyConnections, "too many connections for role %q", role)
	}
	if r.n == nil {
		r.n = map[string]int{}
	}
	r.n[role]++
	return nil
}

// release uncounts a session of role.
func (r *roleSessions) release(role string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n[role]--; r.n[role] <= 0 {
		delete(r.n, role)
	}
}

// sessionLimit is the number of sessions role may have: rolconnlimit when
// set (>= 0), else the server's default; -1 for no limit.
func (e *Engine) sessionLimit(role string, super bool, connLimit int) int {
	switch {
	case super || role == e.catalogRole:
		return -1
	case connLimit >= 0:
		return connLimit
	case e.cfg.SessionsPerRole > 0:
		return e.cfg.SessionsPerRole
	}
	return -1
}

// heldSlots bounds the transaction blocks holding a catalog transaction,
// all together (total, of which the last is kept for administrators) and
// per role (perRole).
type heldSlots struct {
	mu      sync.Mutex
	total   int
	perRole int
	used    int
	byRole  map[string]int
	// freed is closed (and replaced) when a slot is released.
	freed chan struct{}
}

// newHeldSlots sizes the slots for an owner's pool of poolSize connections:
// half of them, a quarter of that per role (at least one each).
func newHeldSlots(poolSize int32) *heldSlots {
	total := max(1, int(poolSize)/2)
	return &heldSlots{total: total, perRole: max(1, total/4), byRole: map[string]int{}, freed: make(chan struct{})}
}

// acquire takes a slot for a block of role (admin: a superuser or the admin,
// who may take the last slot and has no per-role bound). When none is free
// it fails with 53300, or with wait set waits for one until ctx ends.
func (h *heldSlots) acquire(ctx context.Context, role string, admin, wait bool) error {
	for {
		freed, err := h.tryAcquire(role, admin)
		if err == nil || !wait {
			return err
		}
		select {
		case <-freed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// tryAcquire takes a slot, or returns the channel closed when a slot is
// next released and why it cannot.
func (h *heldSlots) tryAcquire(role string, admin bool) (<-chan struct{}, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	free := h.total - h.used
	switch {
	case free <= 0 || free == 1 && h.total > 1 && !admin:
		return h.freed, &sqlerr.Error{Code: sqlerr.TooManyConnections,
			Message: "too many transaction blocks hold catalog changes",
			Hint:    "commit or roll back transaction blocks that ran DDL, or run DDL outside a block"}
	case !admin && h.byRole[role] >= h.perRole:
		return h.freed, &sqlerr.Error{Code: sqlerr.TooManyConnections,
			Message: fmt.Sprintf("too many transaction blocks of role %q hold catalog changes", role),
			Detail:  fmt.Sprintf("A role may have %d transaction blocks that ran DDL open at once.", h.perRole),
			Hint:    "commit or roll back the role's other transaction blocks that ran DDL, or run DDL outside a block"}
	}
	h.used++
	h.byRole[role]++
	return nil, nil
}

// release gives back a slot acquire took for role.
func (h *heldSlots) release(role string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.used--
	if h.byRole[role]--; h.byRole[role] <= 0 {
		delete(h.byRole, role)
	}
	close(h.freed)
	h.freed = make(chan struct{})
}

// idleInTransactionSetting is the setting bounding a session's idle time
// in a transaction block.
const idleInTransactionSetting = "idle_in_transaction_session_timeout"

// IdleInTransactionTimeout is how long the session may wait for its client
// inside a transaction block (ok or failed) before it is ended:
// idle_in_transaction_session_timeout while in a block, else 0 (none).
// pgwire asks it after each ReadyForQuery (pgwire.SessionIdleTimeout);
// Flight SQL's client registry before it keeps an idle client.
func (s *Session) IdleInTransactionTimeout() time.Duration {
	if !s.inBlock && !s.failed {
		return 0
	}
	d, _ := parseDurationSetting(s.settings[idleInTransactionSetting].value)
	return d
}

// formatMillisSetting shows a duration as PostgreSQL shows a setting in
// milliseconds: 0, or the number in the largest unit that divides it.
func formatMillisSetting(d time.Duration) string {
	ms := d.Milliseconds()
	if ms <= 0 {
		return "0"
	}
	for _, u := range []struct {
		n    int64
		name string
	}{{86400000, "d"}, {3600000, "h"}, {60000, "min"}, {1000, "s"}} {
		if ms%u.n == 0 {
			return fmt.Sprintf("%d%s", ms/u.n, u.name)
		}
	}
	return fmt.Sprintf("%dms", ms)
}
