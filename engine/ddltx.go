package engine

import (
	"context"
	"errors"
	"slices"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// DDL in transaction blocks. Outside a block a DDL statement commits when it
// runs. Inside BEGIN … COMMIT the first DDL statement opens a held catalog
// transaction (catalog.Hold) and from then on every catalog call of the
// session runs in it: the block sees its own CREATE/ALTER/DROP (resolving
// names, reading and writing the new tables), other sessions see nothing of
// them until COMMIT, which commits the staged writes and the DDL in that one
// transaction. ROLLBACK, a failed block and a failed COMMIT roll it back.
// Files are deleted only after the transaction committed: DROP TABLE and
// DROP SCHEMA … CASCADE queue their table directories, and a table dropped
// in a block cannot be created again in the same block (its directory, which
// the new table would share, is deleted at COMMIT).
//
// Catalog queries (pg_catalog, information_schema, lakesoul.* relations)
// run on the user's own login (catalogtx.go), outside the held transaction:
// inside the block they do not see its uncommitted DDL.

// blockDDL is the held catalog transaction of a block that ran DDL.
type blockDDL struct {
	held *catalog.HeldTx
	// base is the session's catalog handle before the block held one.
	base *catalog.Catalog
	// dropped are the directories of tables the block dropped, deleted
	// after COMMIT.
	dropped []droppedDir
	// afterCommit run after COMMIT (vector index builds and file deletes).
	afterCommit []func()
	// ranDDL: the block changed the catalog in it (rather than only
	// locking rows in it, rmw.go), so its reads must see that.
	ranDDL bool
}

type droppedDir struct{ namespace, path string }

// holdCatalog opens the block's held catalog transaction, if it has none.
func (s *Session) holdCatalog(ctx context.Context) error {
	return s.holdCatalogWait(ctx, s.implicit)
}

// holdCatalogWait is holdCatalog waiting for a free slot when wait is set.
// Each held transaction holds a connection of the owner's pool, which every
// session shares: bounded in all and per role (sessionlimits.go). An
// implicit transaction ends within its query, never waiting for its client:
// it waits for a slot (implicittx.go) instead of failing; so do statements
// that lock rows (rmw.go, forupdate.go), as PostgreSQL's would wait for a
// lock — a session waiting for a slot holds no row lock, so the wait cannot
// close a cycle.
func (s *Session) holdCatalogWait(ctx context.Context, wait bool) error {
	if !s.inBlock || s.ddlTx != nil {
		return nil
	}
	if err := s.e.held.acquire(ctx, s.user, s.admin(), wait); err != nil {
		return err
	}
	cat, held, err := s.cat.Hold(ctx)
	if err != nil {
		s.e.held.release(s.user)
		return err
	}
	s.ddlTx = &blockDDL{held: held, base: s.cat}
	s.cat = cat
	return nil
}

// ddl is a DDL statement: fn runs in the block's held catalog transaction
// inside a block.
func (s *Session) ddl(tag string, fn func(ctx context.Context) error) *funcStmt {
	return &funcStmt{tag: tag, run: func(ctx context.Context, _ []any) (string, [][]any, error) {
		if err := s.holdCatalog(ctx); err != nil {
			return "", nil, err
		}
		if s.ddlTx != nil {
			s.ddlTx.ranDDL = true
		}
		if err := fn(ctx); err != nil {
			return "", nil, err
		}
		s.e.ddlGen.Add(1) // plans made before it check their tables (checkPlanTables)
		return tag, nil, nil
	}}
}

// dropTableDir deletes a dropped table's directory now, or after COMMIT
// inside a block.
func (s *Session) dropTableDir(ctx context.Context, ns, path string) {
	if s.ddlTx != nil {
		s.ddlTx.dropped = append(s.ddlTx.dropped, droppedDir{ns, path})
		return
	}
	s.removeTableDir(ctx, ns, path)
}

// checkNotDropped refuses to create a table in a directory the open block
// deletes at COMMIT.
func (s *Session) checkNotDropped(t *catalog.Table) error {
	if s.ddlTx != nil && slices.ContainsFunc(s.ddlTx.dropped, func(d droppedDir) bool { return d.path == t.Path }) {
		return sqlerr.Unsupported("creating a table dropped earlier in the same transaction block",
			"COMMIT the DROP first, or use another name")
	}
	return nil
}

// endBlockDDL ends the block's held catalog transaction: committed (its
// dropped directories are deleted afterwards) or rolled back. staged are the
// block's writes committed in it: their files are deleted when the COMMIT
// definitely failed, and kept when its outcome is unknown.
func (s *Session) endBlockDDL(ctx context.Context, commit bool, staged []stagedWrite) error {
	b := s.ddlTx
	if b == nil {
		return nil
	}
	s.ddlTx = nil
	s.cat = b.base
	defer s.e.held.release(s.user)
	// Plans checked while the block's DDL was invisible check again.
	defer s.e.ddlGen.Add(1)
	if !commit {
		b.held.Rollback(ctx)
		return nil
	}
	if err := b.held.Commit(ctx); err != nil {
		if !errors.Is(err, catalog.ErrCommitOutcomeUnknown) {
			for _, w := range staged {
				s.deleteFiles(ctx, w.parts)
			}
		}
		return err
	}
	for _, d := range b.dropped {
		s.removeTableDir(ctx, d.namespace, d.path)
	}
	for _, f := range b.afterCommit {
		f()
	}
	return nil
}

// afterDDL runs f once the DDL that calls it is committed: at once outside
// a transaction block, after COMMIT inside one (never after ROLLBACK).
func (s *Session) afterDDL(f func()) {
	if s.ddlTx != nil {
		s.ddlTx.afterCommit = append(s.ddlTx.afterCommit, f)
		return
	}
	f()
}
