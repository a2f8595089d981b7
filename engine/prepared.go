package engine

import (
	"context"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Prepared statements are the connection's (pgwire keeps them); DEALLOCATE
// and DISCARD ALL reach them through the handle pgwire gives the session.

var _ pgwire.PreparedStatementUser = (*Session)(nil)

// UsePreparedStatements implements pgwire.PreparedStatementUser.
func (s *Session) UsePreparedStatements(p pgwire.PreparedStatements) { s.prepared = p }

// planDeallocate plans DEALLOCATE [PREPARE] name | ALL. An unknown name is
// 26000, as in PostgreSQL.
func (s *Session) planDeallocate(n *pg_query.DeallocateStmt) (pgwire.Statement, error) {
	return &funcStmt{tag: "DEALLOCATE", run: func(context.Context, []any) (string, [][]any, error) {
		if n.Isall {
			if s.prepared != nil {
				s.prepared.DeallocateAll()
			}
			return "DEALLOCATE ALL", nil, nil
		}
		if s.prepared == nil || !s.prepared.Deallocate(n.Name) {
			return "", nil, sqlerr.New(sqlerr.InvalidSQLStatementName, "prepared statement %q does not exist", n.Name)
		}
		return "DEALLOCATE", nil, nil
	}}, nil
}

// planDiscard plans DISCARD. DISCARD ALL closes every cursor, resets the
// settings and drops the prepared statements, and like PostgreSQL refuses to
// run inside a transaction block; the session caches no plans, sequences or
// temporary tables, so the other forms have nothing to discard.
func (s *Session) planDiscard(n *pg_query.DiscardStmt) (pgwire.Statement, error) {
	tag := map[pg_query.DiscardMode]string{
		pg_query.DiscardMode_DISCARD_ALL: "DISCARD ALL", pg_query.DiscardMode_DISCARD_PLANS: "DISCARD PLANS",
		pg_query.DiscardMode_DISCARD_SEQUENCES: "DISCARD SEQUENCES", pg_query.DiscardMode_DISCARD_TEMP: "DISCARD TEMP",
	}[n.Target]
	if tag == "" {
		return nil, sqlerr.Unsupported("this DISCARD", "DISCARD ALL | PLANS | SEQUENCES | TEMP")
	}
	return &funcStmt{tag: tag, run: func(context.Context, []any) (string, [][]any, error) {
		if n.Target != pg_query.DiscardMode_DISCARD_ALL {
			return tag, nil, nil
		}
		if s.inBlock {
			return "", nil, sqlerr.New(sqlerr.ActiveSQLTransaction, "DISCARD ALL cannot run inside a transaction block")
		}
		s.closeCursors(true)
		s.settings = s.defaultSettings(nil)
		if s.prepared != nil {
			s.prepared.DeallocateAll()
		}
		return tag, nil, nil
	}}, nil
}
