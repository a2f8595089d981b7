package engine

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// pg_typeof of a lake table's column is the column's PostgreSQL type, as
// format_type names it (text[], character varying[], bigint), not DuckDB's
// name for the type DuckDB reads it as (varchar[]): the call becomes that
// name. Other arguments keep DuckDB's answer.

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

// pgTypeof replaces pg_typeof(col) of a lake column whose type the typer
// took from the table's schema by the type's name.
func (rw *pgRewriter) pgTypeof(n *pg_query.Node, fc *pg_query.FuncCall) {
	if fc.Args[0].GetColumnRef() == nil {
		return
	}
	name, ok := rw.s.e.typeNames[rw.ti.typeAt(fc.Args[0]).oid]
	if !ok {
		return
	}
	n.Node = pg_query.MakeAConstStrNode(name, fc.Location).Node
}
