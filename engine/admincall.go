package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Administration calls: SELECT lakesoul.create_workspace('ws'),
// SELECT lakesoul.create_user('u', 'pw', 'ws' [, admin => true]),
// SELECT * FROM lakesoul.create_access_key(), SELECT lakesoul.revoke_access_key('id').
//
// They change the catalog, so they cannot run in the read-only transaction
// user queries get. Instead the server writes the statement itself — the
// function and its arguments as bind parameters (callargs.go) — and runs it
// in a read-write transaction on the user's own login, where PostgreSQL
// decides whether the user may (only administrators create roles). A
// statement that calls one of them in any other shape is refused: user-written
// SQL never runs in a read-write catalog transaction.
//
// create_user's password never reaches the catalog: it is replaced by its
// SCRAM-SHA-256 verifier, which PostgreSQL stores as given, so neither a
// failing call's log line nor the function's dynamic SQL can show it.

// adminFunctions are the lakesoul functions that change the catalog.
var adminFunctions = map[string]bool{"create_workspace": true, "create_user": true, "create_access_key": true, "revoke_access_key": true}

// adminCallOf reports whether stmt calls an administration function, and
// returns the call when the statement is one of the two shapes that may:
// SELECT lakesoul.f(…) [AS name] or SELECT * FROM lakesoul.f(…) [AS alias].
func adminCallOf(stmt *pg_query.Node) (*pg_query.FuncCall, bool) {
	calls := false
	walk(stmt, func(n *pg_query.Node) {
		if fc := n.GetFuncCall(); fc != nil && adminFunctionName(fc) != "" {
			calls = true
		}
	})
	if !calls {
		return nil, false
	}
	sel := stmt.GetSelectStmt()
	if sel == nil || sel.WhereClause != nil || sel.GroupClause != nil || sel.HavingClause != nil || sel.WithClause != nil ||
		len(sel.SortClause) > 0 || sel.LimitCount != nil || sel.LimitOffset != nil || len(sel.ValuesLists) > 0 ||
		sel.Op > pg_query.SetOperation_SETOP_NONE || len(sel.DistinctClause) > 0 ||
		len(sel.TargetList) != 1 || len(sel.LockingClause) > 0 {
		return &pg_query.FuncCall{}, true
	}
	rt := sel.TargetList[0].GetResTarget()
	switch len(sel.FromClause) {
	case 0:
		if fc := rt.GetVal().GetFuncCall(); fc != nil && adminFunctionName(fc) != "" {
			return fc, true
		}
	case 1:
		if cr := rt.GetVal().GetColumnRef(); cr == nil || len(cr.Fields) != 1 || cr.Fields[0].GetAStar() == nil {
			break
		}
		rf := sel.FromClause[0].GetRangeFunction()
		if rf == nil || len(rf.Functions) != 1 || rf.Ordinality || rf.IsRowsfrom || len(rf.Coldeflist) > 0 {
			break
		}
		items := rf.Functions[0].GetList().GetItems()
		if len(items) > 0 {
			if fc := items[0].GetFuncCall(); fc != nil && adminFunctionName(fc) != "" {
				return fc, true
			}
		}
	}
	return &pg_query.FuncCall{}, true
}

// adminFunctionName returns the administration function fc calls, or "".
func adminFunctionName(fc *pg_query.FuncCall) string {
	if len(fc.Funcname) != 2 || fc.Funcname[0].GetString_().GetSval() != "lakesoul" {
		return ""
	}
	name := fc.Funcname[1].GetString_().GetSval()
	if !adminFunctions[name] {
		return ""
	}
	return name
}

func (s *Session) planAdminCall(ctx context.Context, stmt *pg_query.Node, fc *pg_query.FuncCall, paramOIDs []uint32) (pgwire.Statement, error) {
	name := adminFunctionName(fc)
	if name == "" || fc.AggStar || fc.AggDistinct || fc.FuncVariadic || fc.Over != nil || len(fc.AggOrder) > 0 || fc.AggFilter != nil {
		e := sqlerr.New(sqlerr.FeatureNotSupported, "administration functions must be called on their own")
		e.Hint = "SELECT lakesoul.create_user(…) or SELECT * FROM lakesoul.create_access_key(), as a statement by itself"
		return nil, e
	}
	format := "SELECT lakesoul." + name + "(%s)"
	sel := stmt.GetSelectStmt()
	if len(sel.FromClause) == 1 {
		format = "SELECT * FROM lakesoul." + name + "(%s)"
		if a := sel.FromClause[0].GetRangeFunction().Alias; a != nil {
			format += " AS " + pgx.Identifier{a.Aliasname}.Sanitize()
		}
	} else if alias := sel.TargetList[0].GetResTarget().Name; alias != "" {
		format += " AS " + pgx.Identifier{alias}.Sanitize()
	}
	args, err := s.bindArgs(ctx, fc.Args, 1, paramOIDs)
	if err != nil {
		return nil, err
	}
	query := fmt.Sprintf(format, args.list)
	var cols []pgwire.Column
	err = s.withUserTx(ctx, func(tx pgx.Tx) error {
		sd, err := tx.Conn().PgConn().Prepare(ctx, "", query, args.oids)
		if err != nil {
			return err
		}
		args.setResolved(sd.ParamOIDs)
		for _, f := range sd.Fields {
			cols = append(cols, pgwire.Column{Name: f.Name, TypeOID: f.DataTypeOID, TypeSize: f.DataTypeSize, TypeModifier: f.TypeModifier})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	password := -1 // the server parameter holding create_user's password
	if name == "create_user" {
		password = passwordArgument(fc.Args)
	}
	return &funcStmt{tag: "SELECT", cols: cols, params: args.clientParamOIDs(), run: func(ctx context.Context, clientArgs []any) (string, [][]any, error) {
		values, err := s.argValues(ctx, args, clientArgs)
		if err != nil {
			return "", nil, err
		}
		if password >= 0 && values[password] != nil && !strings.HasPrefix(string(values[password]), "SCRAM-SHA-256$") {
			v, err := pgwire.NewSCRAMVerifier(string(values[password]))
			if err != nil {
				return "", nil, err
			}
			values[password] = []byte(v)
		}
		rows, err := s.runAdminCall(ctx, query, args.oids, values)
		if err != nil {
			return "", nil, err
		}
		return fmt.Sprintf("SELECT %d", len(rows)), rows, nil
	}}, nil
}

// passwordArgument returns the index of create_user's password among its
// arguments (the second, or the one named p_password), or -1.
func passwordArgument(args []*pg_query.Node) int {
	for i, a := range args {
		if na := a.GetNamedArgExpr(); na != nil {
			if na.Name == "p_password" {
				return i
			}
			continue
		}
		if i == 1 {
			return i
		}
	}
	return -1
}

// runAdminCall runs an administration call in a read-write transaction on
// the user's login.
func (s *Session) runAdminCall(ctx context.Context, query string, oids []uint32, values [][]byte) ([][]any, error) {
	conn, tx, err := s.beginUserTx(ctx, pgx.ReadWrite)
	if err != nil {
		return nil, err
	}
	defer conn.Release()
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit a no-op
	return execCommit(ctx, tx, query, oids, values)
}
