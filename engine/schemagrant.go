package engine

import (
	"context"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// GRANT/REVOKE { CREATE | USAGE | ALL } ON SCHEMA s TO role | PUBLIC.
//
// Who may create, alter and drop a namespace's objects is the catalog's
// rule (lakesoul.may_create, migration 23): superusers, the members of the
// namespace's workspace, and for a namespace of domain public — the default
// namespace, which PostgreSQL's face calls public, as PostgreSQL 15's public
// schema — the roles granted CREATE on it. GRANT CREATE records such a
// grant (lakesoul.grant_namespace, which only a superuser or the catalog's
// owner may call: a schema's owner grants on it). USAGE of a namespace is
// seeing it, which every role has for domain public and a workspace's
// members for its namespaces: granting it there is accepted and changes
// nothing. Other privileges and objects are 0A000.

// planGrant plans a GRANT or REVOKE of privileges.
func (s *Session) planGrant(n *pg_query.GrantStmt) (pgwire.Statement, error) {
	verb := "GRANT"
	if !n.IsGrant {
		verb = "REVOKE"
	}
	hint := "GRANT/REVOKE CREATE ON SCHEMA s TO role; access to a workspace's objects is granted by GRANT <workspace role> TO user"
	if n.Objtype != pg_query.ObjectType_OBJECT_SCHEMA || n.Targtype != pg_query.GrantTargetType_ACL_TARGET_OBJECT {
		return nil, sqlerr.Unsupported(verb+" ON "+strings.TrimPrefix(n.Objtype.String(), "OBJECT_"), hint)
	}
	if n.GrantOption || n.Grantor != nil {
		return nil, sqlerr.Unsupported(verb+" … WITH GRANT OPTION / GRANTED BY", hint)
	}
	create := len(n.Privileges) == 0 // ALL [PRIVILEGES]
	for _, p := range n.Privileges {
		ap := p.GetAccessPriv()
		if len(ap.GetCols()) > 0 {
			return nil, sqlerr.New(sqlerr.InvalidGrantOperation, "column privileges are only valid for relations")
		}
		switch name := ap.GetPrivName(); name {
		case "create":
			create = true
		case "usage":
			if !n.IsGrant {
				return nil, sqlerr.Unsupported("REVOKE USAGE ON SCHEMA",
					"a namespace of domain public is read by every role, a workspace's by its members; keep private data in a workspace's namespace")
			}
		default:
			return nil, sqlerr.New(sqlerr.InvalidGrantOperation, "invalid privilege type %s for schema", strings.ToUpper(name))
		}
	}
	var grantees []string
	for _, g := range n.Grantees {
		rs := g.GetRoleSpec()
		switch rs.GetRoletype() {
		case pg_query.RoleSpecType_ROLESPEC_CSTRING:
			grantees = append(grantees, rs.Rolename)
		case pg_query.RoleSpecType_ROLESPEC_PUBLIC:
			grantees = append(grantees, "public")
		case pg_query.RoleSpecType_ROLESPEC_CURRENT_USER, pg_query.RoleSpecType_ROLESPEC_SESSION_USER,
			pg_query.RoleSpecType_ROLESPEC_CURRENT_ROLE:
			grantees = append(grantees, s.user)
		default:
			return nil, sqlerr.New(sqlerr.SyntaxError, "invalid grantee")
		}
	}
	var schemas []string
	for _, o := range n.Objects {
		schemas = append(schemas, o.GetString_().GetSval())
	}
	return s.ddl(verb, func(ctx context.Context) error {
		for _, ns := range schemas {
			if !create {
				// USAGE alone: the namespace must exist and be seen.
				if err := s.grantCreate(ctx, ns, "", n.IsGrant); err != nil {
					return err
				}
				continue
			}
			for _, g := range grantees {
				if err := s.grantCreate(ctx, ns, g, n.IsGrant); err != nil {
					return err
				}
			}
		}
		return nil
	}), nil
}

// grantCreate grants or revokes CREATE on namespace ns to grantee; ""
// only checks that ns exists for the caller (GRANT USAGE).
func (s *Session) grantCreate(ctx context.Context, ns, grantee string, grant bool) error {
	if grantee != "" {
		return s.cat.GrantCreate(ctx, ns, grantee, grant)
	}
	name := ns
	if name == "public" {
		name = catalog.DefaultNamespace
	}
	ok, err := s.cat.NamespaceExists(ctx, name)
	if err == nil && !ok {
		err = sqlerr.New(sqlerr.InvalidSchemaName, "schema %q does not exist", ns)
	}
	return err
}
