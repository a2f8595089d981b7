package engine

import (
	"context"

	"github.com/lakesoul-go/lakesoul/catalog"
)

// The snapshot of a REPEATABLE READ or SERIALIZABLE transaction block. As in
// PostgreSQL, every statement of such a block reads the lake as it was at
// the block's first statement (plus the block's own writes): the file lists
// of all its reads come from one catalog snapshot, a REPEATABLE READ
// transaction the block holds open from its first read to its end
// (catalog.HoldSnapshot). A read-modify-write statement then checks its rows
// against everything committed since that snapshot (rmw.go), so a row
// another transaction changed after it fails with 40001 instead of being
// overwritten. READ COMMITTED blocks read the newest commits at each
// statement and hold nothing.
//
// A block that ran DDL reads through its held catalog transaction instead,
// which sees the block's own uncommitted DDL (ddltx.go); from its first DDL
// statement on it reads committed data as of each statement.

// blockSnapshot is a block's held catalog snapshot.
type blockSnapshot struct {
	cat *catalog.Catalog
	tx  *catalog.SnapshotTx
}

// readCatalog is the catalog handle a statement lists the files it reads
// through: the block's snapshot in a REPEATABLE READ or SERIALIZABLE block
// (taken now if this is the block's first read), else the session's handle.
func (s *Session) readCatalog(ctx context.Context) (*catalog.Catalog, error) {
	if !s.inBlock || s.readCommitted() || s.ddlTx != nil && s.ddlTx.ranDDL {
		return s.cat, nil
	}
	if s.snap != nil {
		return s.snap.cat, nil
	}
	base := s.cat
	if s.ddlTx != nil {
		base = s.ddlTx.base // pinned only to lock rows (rmw.go)
	}
	// A held connection of the owner's pool, counted as a held transaction
	// (sessionlimits.go); waited for, as a statement waits for a lock.
	if err := s.e.held.acquire(ctx, s.user, s.admin(), true); err != nil {
		return nil, err
	}
	cat, tx, err := base.HoldSnapshot(ctx)
	if err != nil {
		s.e.held.release(s.user)
		return nil, err
	}
	s.snap = &blockSnapshot{cat: cat, tx: tx}
	return cat, nil
}

// endSnapshot ends the block's snapshot, if it holds one.
func (s *Session) endSnapshot(ctx context.Context) {
	if s.snap != nil {
		s.snap.tx.Close(ctx)
		s.snap = nil
		s.e.held.release(s.user)
	}
}
