package engine

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// planGrantRole handles GRANT/REVOKE of workspace membership (GRANT ws1_users
// TO bob). It runs on the catalog as the session's role, so PostgreSQL decides
// who may grant what (the admin, or members WITH ADMIN OPTION). Only the
// workspace roles <ws>, <ws>_admins and <ws>_users may be granted.
func (s *Session) planGrantRole(n *pg_query.GrantRoleStmt) (pgwire.Statement, error) {
	for _, r := range n.GrantedRoles {
		name := r.GetAccessPriv().GetPrivName()
		if name == "" || strings.HasPrefix(name, "pg_") || strings.HasPrefix(name, "base_") || name == s.e.catalogRole {
			return nil, sqlerr.New(sqlerr.InsufficientPrivilege, "only workspace roles can be granted through LakeSoul")
		}
	}
	text, err := deparseNode(&pg_query.Node{Node: &pg_query.Node_GrantRoleStmt{GrantRoleStmt: n}})
	if err != nil {
		return nil, err
	}
	tag := "GRANT ROLE"
	if !n.IsGrant {
		tag = "REVOKE ROLE"
	}
	return ddl(tag, func(ctx context.Context) error {
		conn, tx, err := s.beginServerTx(ctx, pgx.ReadWrite)
		if err != nil {
			return err
		}
		defer conn.Release()
		defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit a no-op
		if _, err := tx.Exec(ctx, text); err != nil {
			return err
		}
		return tx.Commit(ctx)
	}), nil
}
