package engine

import (
	"context"
	"fmt"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/cdc"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// CREATE/ALTER/DROP SUBSCRIPTION, PostgreSQL's logical-replication
// statements, run whole-database CDC syncs (package cdc). Only superusers of
// the catalog (the admin) manage subscriptions: a subscription connects to
// another database with credentials the server keeps and writes lake tables
// in any namespace it is given, so it is not a workspace user's object;
// users see the subscriptions into their namespaces in lakesoul.subscriptions.
// Like PostgreSQL's, the statements cannot run inside a transaction block.

// planSubscription plans a subscription statement (its routes, routes.go).
func planSubscription(s *Session, _ context.Context, stmt *pg_query.Node, _ []uint32) (pgwire.Statement, error) {
	switch n := stmt.Node.(type) {
	case *pg_query.Node_CreateSubscriptionStmt:
		spec := cdc.CreateSpec{Name: n.CreateSubscriptionStmt.Subname, Connection: n.CreateSubscriptionStmt.Conninfo,
			Options: map[string]string{}}
		for _, p := range n.CreateSubscriptionStmt.Publication {
			spec.Publications = append(spec.Publications, p.GetString_().Sval)
		}
		for _, o := range n.CreateSubscriptionStmt.Options {
			d := o.GetDefElem()
			spec.Options[strings.ToLower(d.Defname)] = defElemValue(d)
		}
		return s.subscriptionStmt("CREATE SUBSCRIPTION", func(ctx context.Context, env *cdc.Env) error {
			return cdc.Create(ctx, env, spec)
		}), nil
	case *pg_query.Node_AlterSubscriptionStmt:
		a := n.AlterSubscriptionStmt
		var action string
		switch a.Kind {
		case pg_query.AlterSubscriptionType_ALTER_SUBSCRIPTION_ENABLED:
			action = "disable"
			for _, o := range a.Options {
				if d := o.GetDefElem(); d.Defname == "enabled" && defElemValue(d) == "true" {
					action = "enable"
				}
			}
		case pg_query.AlterSubscriptionType_ALTER_SUBSCRIPTION_REFRESH:
			action = "refresh"
		default:
			return nil, sqlerr.Unsupported("this ALTER SUBSCRIPTION", "ALTER SUBSCRIPTION name ENABLE | DISABLE | REFRESH PUBLICATION")
		}
		return s.subscriptionStmt("ALTER SUBSCRIPTION", func(ctx context.Context, env *cdc.Env) error {
			return cdc.Alter(ctx, env, a.Subname, action)
		}), nil
	case *pg_query.Node_DropSubscriptionStmt:
		d := n.DropSubscriptionStmt
		return s.subscriptionStmt("DROP SUBSCRIPTION", func(ctx context.Context, env *cdc.Env) error {
			return cdc.Drop(ctx, env, d.Subname, d.MissingOk)
		}), nil
	}
	return nil, fmt.Errorf("planSubscription: %T is not a subscription statement", stmt.Node)
}

// subscriptionStmt runs fn for a superuser outside a transaction block.
func (s *Session) subscriptionStmt(tag string, fn func(context.Context, *cdc.Env) error) pgwire.Statement {
	return &funcStmt{tag: tag, run: func(ctx context.Context, _ []any) (string, [][]any, error) {
		if err := s.preventTransactionBlock(ctx, tag); err != nil {
			return "", nil, err
		}
		super, err := s.cat.IsSuperuser(ctx)
		if err != nil {
			return "", nil, err
		}
		if !super {
			return "", nil, &sqlerr.Error{Code: sqlerr.InsufficientPrivilege, Message: "permission denied to " + strings.ToLower(tag),
				Hint: "Only superusers (the admin) manage subscriptions."}
		}
		env := &cdc.Env{Catalog: s.e.cat.As(""), Store: s.e.store, Warehouse: s.e.cfg.Warehouse, Logger: s.e.log}
		if err := fn(ctx, env); err != nil {
			return "", nil, err
		}
		return tag, nil, nil
	}}
}
