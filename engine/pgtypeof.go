package engine

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// pg_typeof of an expression the typer types is the PostgreSQL type it
// infers (the type the result columns are described with), as format_type
// names it (text[], character varying[], double precision, numeric), not
// DuckDB's name for the type DuckDB computes it in (varchar[], double,
// decimal(18,2)): the call becomes that name. An expression the typer
// cannot type keeps DuckDB's answer.

// loadTypeNames reads format_type's name of every type of pg_catalog from
// the catalog.
func loadTypeNames(ctx context.Context, pool *pgxpool.Pool) (map[uint32]string, error) {
	rows, err := pool.Query(ctx, "SELECT oid, format_type(oid, NULL) FROM pg_catalog.pg_type WHERE typnamespace = 'pg_catalog'::regnamespace")
	if err != nil {
		return nil, fmt.Errorf("read the catalog's type names: %w", err)
	}
	defer rows.Close()
	names := map[uint32]string{}
	for rows.Next() {
		var oid uint32
		var name string
		if err := rows.Scan(&oid, &name); err != nil {
			return nil, err
		}
		names[oid] = name
	}
	return names, rows.Err()
}

// pgTypeof replaces pg_typeof(expr) by the name of the type the typer
// inferred for expr.
func (rw *pgRewriter) pgTypeof(n *pg_query.Node, fc *pg_query.FuncCall) {
	arg := fc.Args[0]
	name, ok := rw.s.e.typeNames[rw.ti.typeAt(arg).oid]
	if !ok {
		return
	}
	if arg.GetColumnRef() != nil {
		n.Node = pg_query.MakeAConstStrNode(name, fc.Location).Node
		return
	}
	// The argument is still evaluated, as PostgreSQL evaluates it: an
	// aggregate in it keeps the query an aggregate (one row), and its
	// errors stay errors.
	isNull := &pg_query.Node{Node: &pg_query.Node_NullTest{NullTest: &pg_query.NullTest{
		Arg: arg, Nulltesttype: pg_query.NullTestType_IS_NULL, Location: -1}}}
	ce := pg_query.MakeCaseExprNode(nil, []*pg_query.Node{
		pg_query.MakeCaseWhenNode(isNull, pg_query.MakeAConstStrNode(name, -1), -1)}, fc.Location)
	ce.GetCaseExpr().Defresult = pg_query.MakeAConstStrNode(name, -1)
	n.Node = ce.Node
}
