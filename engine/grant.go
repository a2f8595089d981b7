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
// TO bob [WITH ADMIN OPTION]). The server writes the statement from the role
// names and runs it on the user's own catalog login (catalogtx.go), so
// PostgreSQL decides who may grant what (the admin, or members WITH ADMIN
// OPTION). Only the workspace roles <ws>, <ws>_admins and <ws>_users may be
// granted.
func (s *Session) planGrantRole(n *pg_query.GrantRoleStmt) (pgwire.Statement, error) {
	var roles, grantees []string
	for _, r := range n.GrantedRoles {
		name := r.GetAccessPriv().GetPrivName()
		if name == "" || strings.HasPrefix(name, "pg_") || strings.HasPrefix(name, "base_") || name == s.e.catalogRole {
			return nil, sqlerr.New(sqlerr.InsufficientPrivilege, "only workspace roles can be granted through LakeSoul")
		}
		roles = append(roles, pgx.Identifier{name}.Sanitize())
	}
	for _, g := range n.GranteeRoles {
		rs := g.GetRoleSpec()
		switch {
		case rs == nil:
			return nil, sqlerr.New(sqlerr.SyntaxError, "invalid grantee")
		case rs.Roletype == pg_query.RoleSpecType_ROLESPEC_CSTRING:
			grantees = append(grantees, pgx.Identifier{rs.Rolename}.Sanitize())
		case rs.Roletype == pg_query.RoleSpecType_ROLESPEC_CURRENT_USER, rs.Roletype == pg_query.RoleSpecType_ROLESPEC_SESSION_USER:
			grantees = append(grantees, pgx.Identifier{s.user}.Sanitize())
		default:
			return nil, sqlerr.Unsupported("PUBLIC or CURRENT_ROLE as a grantee", "GRANT <workspace role> TO <user>")
		}
	}
	if n.Grantor != nil {
		return nil, sqlerr.Unsupported("GRANTED BY", "GRANT <workspace role> TO <user>")
	}
	admin := false
	for _, o := range n.Opt {
		d := o.GetDefElem()
		if d == nil || d.Defname != "admin" {
			return nil, sqlerr.Unsupported("GRANT options other than ADMIN OPTION", "GRANT <workspace role> TO <user> [WITH ADMIN OPTION]")
		}
		v, ok := stringValue(d.Arg)
		admin = d.Arg == nil || (ok && (v == "true" || v == "on"))
	}
	text, tag := "GRANT "+strings.Join(roles, ", ")+" TO "+strings.Join(grantees, ", "), "GRANT ROLE"
	if admin {
		text += " WITH ADMIN OPTION"
	}
	if !n.IsGrant {
		tag = "REVOKE ROLE"
		text = "REVOKE " + strings.Join(roles, ", ") + " FROM " + strings.Join(grantees, ", ")
		if admin {
			text = "REVOKE ADMIN OPTION FOR " + strings.Join(roles, ", ") + " FROM " + strings.Join(grantees, ", ")
		}
		if n.Behavior == pg_query.DropBehavior_DROP_CASCADE {
			text += " CASCADE"
		}
	}
	return &funcStmt{tag: tag, run: func(ctx context.Context, _ []any) (string, [][]any, error) {
		// Role grants commit on the user's own login, not with the
		// block's catalog transaction (ddltx.go): refused inside a block
		// rather than committed half.
		if err := s.preventTransactionBlock(ctx, tag); err != nil {
			return "", nil, err
		}
		return tag, nil, s.grantRoles(ctx, text)
	}}, nil
}

// grantRoles runs a GRANT/REVOKE of roles the server wrote on the user's
// own login, where PostgreSQL decides whether the user may.
func (s *Session) grantRoles(ctx context.Context, text string) error {
	conn, tx, err := s.beginUserTx(ctx, pgx.ReadWrite)
	if err != nil {
		return err
	}
	defer conn.Release()
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit a no-op
	if _, err := tx.Exec(ctx, text); err != nil {
		return err
	}
	return tx.Commit(ctx)
}
