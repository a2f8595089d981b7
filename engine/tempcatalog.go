package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgtype"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/schema"
)

// CREATE TEMP TABLE t AS SELECT … over catalog relations only (vacuumlo:
// CREATE TEMP TABLE vacuum_l AS SELECT oid AS lo FROM
// pg_largeobject_metadata). Temporary tables live in the session's DuckDB
// and catalog relations in the catalog PostgreSQL, so no one query reads
// both: the catalog answers the SELECT, as the session's role, and its rows
// fill a temporary table made with their columns, which later statements
// read and change as any temporary table.

// catalogSourced reports whether query reads catalog relations and nothing
// else (no lake table, temporary table or time travel).
func catalogSourced(query *pg_query.Node) bool {
	k := classifyRelations(query)
	return k.catalog > 0 && len(k.lake) == 0 && k.timeTravel == 0
}

// planTempFromCatalog plans CREATE TEMP TABLE name AS query for a
// catalogSourced query.
func (s *Session) planTempFromCatalog(ctx context.Context, name string, query *pg_query.Node, skipData bool, paramOIDs []uint32) (pgwire.Statement, error) {
	src, err := s.planCatalogQuery(ctx, query, paramOIDs)
	if err != nil {
		return nil, err
	}
	cols, err := src.Describe(ctx)
	if err != nil {
		return nil, err
	}
	defs := make([]string, len(cols))
	marks := make([]string, len(cols))
	for i, c := range cols {
		defs[i] = quoteIdent(c.Name) + " " + duckTypeOfOID(c.TypeOID)
		marks[i] = "?"
	}
	create := fmt.Sprintf("CREATE TEMP TABLE %s (%s)", quoteIdent(name), strings.Join(defs, ", "))
	insert := fmt.Sprintf("INSERT INTO %s VALUES (%s)", quoteIdent(name), strings.Join(marks, ", "))
	return &funcStmt{tag: "SELECT", params: src.ParamOIDs(), run: func(ctx context.Context, params []any) (string, [][]any, error) {
		var rows rowsCollector
		if !skipData {
			p, err := src.Bind(ctx, params)
			if err != nil {
				return "", nil, err
			}
			_, _, err = p.Execute(ctx, 0, &rows)
			p.Close()
			if err != nil {
				return "", nil, err
			}
		}
		if _, err := s.duck.ExecContext(ctx, create); err != nil {
			return "", nil, err
		}
		s.addTemp(name, false)
		for _, r := range rows {
			vals := make([]any, len(r))
			for i, v := range r {
				vals[i] = duckValueOf(cols[i].TypeOID, v)
			}
			if _, err := s.duck.ExecContext(ctx, insert, vals...); err != nil {
				return "", nil, err
			}
		}
		return fmt.Sprintf("SELECT %d", len(rows)), nil, nil
	}}, nil
}

// duckTypeOfOID is the DuckDB type a catalog column of PostgreSQL type oid
// is kept as in a temporary table: the same type where DuckDB has it,
// else its text.
func duckTypeOfOID(oid uint32) string {
	switch oid {
	case schema.OIDBool:
		return "BOOLEAN"
	case schema.OIDInt2:
		return "SMALLINT"
	case schema.OIDInt4:
		return "INTEGER"
	case schema.OIDInt8:
		return "BIGINT"
	case pgtype.OIDOID, pgtype.XIDOID, pgtype.CIDOID:
		return "UINTEGER"
	case schema.OIDFloat4:
		return "FLOAT"
	case schema.OIDFloat8:
		return "DOUBLE"
	case schema.OIDDate:
		return "DATE"
	case schema.OIDTimestamp:
		return "TIMESTAMP"
	case schema.OIDTimestamptz:
		return "TIMESTAMPTZ"
	case schema.OIDBytea:
		return "BLOB"
	case schema.OIDUUID:
		return "UUID"
	}
	return "VARCHAR"
}

// duckValueOf is a catalog value as DuckDB binds it into a column of
// duckTypeOfOID(oid): text for the columns kept as text.
func duckValueOf(oid uint32, v any) any {
	if v == nil || duckTypeOfOID(oid) != "VARCHAR" {
		if u, ok := v.([16]byte); ok {
			return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
		}
		return v
	}
	if str, ok := v.(string); ok {
		return str
	}
	m := pgtype.NewMap()
	if b, err := m.Encode(oid, pgtype.TextFormatCode, v, nil); err == nil {
		return string(b)
	}
	return fmt.Sprint(v)
}
