package catalog

import "context"

// GrantCreate grants (grant) or revokes CREATE on a namespace to a role
// ("public" for PUBLIC), as the handle's role: only superusers and the
// catalog's owner may (sqlfuncs/170_namespace_rights.sql,
// lakesoul.grant_namespace). The roles that may create in a namespace create,
// alter and drop its objects (lakesoul.may_create).
func (c *Catalog) GrantCreate(ctx context.Context, namespace, grantee string, grant bool) error {
	return c.run(ctx, func(q querier) error {
		_, err := q.Exec(ctx, "SELECT lakesoul.grant_namespace($1, $2, $3)", namespace, grantee, grant)
		return err
	})
}
