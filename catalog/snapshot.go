package catalog

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
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

// SnapshotTx is a catalog snapshot held across calls: a REPEATABLE READ,
// READ ONLY transaction on one connection, as the handle's role. A
// REPEATABLE READ or SERIALIZABLE transaction block reads every table
// through one, taken at its first statement, as PostgreSQL's transaction
// snapshot is.
type SnapshotTx struct {
	conn *pgxpool.Conn
	tx   pgx.Tx
}

// HoldSnapshot begins a held snapshot and returns a handle whose calls read
// it. The handle must be used by one goroutine at a time and only for reads;
// Close ends the snapshot.
func (c *Catalog) HoldSnapshot(ctx context.Context) (*Catalog, *SnapshotTx, error) {
	if c.pinned != nil || c.snap != nil {
		return nil, nil, fmt.Errorf("catalog: a snapshot of a handle that is in a transaction")
	}
	conn, err := c.pool.Acquire(ctx)
	if err != nil {
		return nil, nil, err
	}
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		conn.Release()
		return nil, nil, err
	}
	if c.role != "" {
		if _, err := tx.Exec(ctx, "SELECT set_config('role', $1, true)", c.role); err != nil {
			_ = tx.Rollback(context.WithoutCancel(ctx))
			conn.Release()
			return nil, nil, fmt.Errorf("switch to role %s: %w", c.role, err)
		}
	}
	// The snapshot is taken by the transaction's first query, now.
	if _, err := tx.Exec(ctx, "SELECT 1"); err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		conn.Release()
		return nil, nil, err
	}
	h := *c
	h.snap = tx
	return &h, &SnapshotTx{conn: conn, tx: tx}, nil
}

// Close ends the held snapshot.
func (s *SnapshotTx) Close(ctx context.Context) {
	_ = s.tx.Rollback(context.WithoutCancel(ctx))
	s.conn.Release()
}
