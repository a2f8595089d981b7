package engine

import (
	"context"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// LOCK TABLE in the modes that only keep a table from being dropped or
// altered while it is read (ACCESS SHARE, ROW SHARE: pg_dump locks every
// table it dumps) is accepted inside a transaction block and does nothing
// more than check that the tables exist: a lake read is already a snapshot
// of committed versions, and DROP TABLE leaves the files a running read
// uses. Stronger modes, which would have to block writers, are refused.
const (
	lockAccessShare = 1 // AccessShareLock, lockdefs.h
	lockRowShare    = 2 // RowShareLock
)

func (s *Session) planLock(ctx context.Context, n *pg_query.LockStmt) (pgwire.Statement, error) {
	if n.Mode != lockAccessShare && n.Mode != lockRowShare {
		return nil, sqlerr.Unsupported("LOCK TABLE in a mode stronger than ROW SHARE",
			"lock rows with SELECT … FOR UPDATE (primary-key tables); UPDATE, DELETE, ON CONFLICT and MERGE already re-check their rows at commit")
	}
	if err := s.requireTransactionBlock("LOCK TABLE"); err != nil {
		return nil, err
	}
	for _, r := range n.Relations {
		rv := r.GetRangeVar()
		if rv == nil {
			continue
		}
		if _, err := s.lookupTable(ctx, rv.Schemaname, rv.Relname); err != nil {
			return nil, err
		}
	}
	return &funcStmt{tag: "LOCK TABLE", run: func(context.Context, []any) (string, [][]any, error) {
		return "LOCK TABLE", nil, nil
	}}, nil
}
