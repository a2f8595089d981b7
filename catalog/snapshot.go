package catalog

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// InSnapshot runs fn with a handle whose calls all read one snapshot of the
// catalog: a REPEATABLE READ, READ ONLY transaction as the handle's role.
// A statement that reads several tables takes their file lists through it,
// so it never sees one table after a commit and another before it — a
// commit of several tables (lakesoul.commit_many: a transaction block, a CDC
// batch) is visible to it whole or not at all. The handle must not be used
// after fn returns, nor for writes.
func (c *Catalog) InSnapshot(ctx context.Context, fn func(*Catalog) error) error {
	if c.snap != nil || c.pinned != nil {
		// Already one transaction: a held one (held.go) must also see its
		// own uncommitted DDL, which a new snapshot would not.
		return fn(c)
	}
	var tx pgx.Tx
	err := onFreshConn(ctx, c.pool, func() (err error) {
		tx, err = c.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
		return err
	})
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read-only
	if c.role != "" {
		if _, err := tx.Exec(ctx, "SELECT set_config('role', $1, true)", c.role); err != nil {
			return fmt.Errorf("switch to role %s: %w", c.role, err)
		}
	}
	h := *c
	h.snap = tx
	if err := fn(&h); err != nil {
		return err
	}
	return tx.Commit(ctx)
}
