package engine

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/schema"
)

// Array and json parameters. DuckDB describes a parameter of a list type as its
// LIST type, which has no single PostgreSQL OID in DuckDB's answer, so the
// statement says which array type each one is: a parameter cast to an
// array type (a value assigned to an array column is, params.go) has that
// type, and the array of x op ANY($n) / ALL($n) is an array of x's type,
// as PostgreSQL resolves it. Clients that pick their encoding by the
// described type (pgx sends []int64 as binary int8[]) depend on this.

// castAnyArrayParams casts the untyped array parameter of x op ANY($n)
// and x op ALL($n) to the array type of x.
func castAnyArrayParams(stmt *pg_query.Node, ti *typeInfo, declared []uint32) error {
	var err error
	walk(stmt, func(n *pg_query.Node) {
		a := n.GetAExpr()
		if err != nil || a == nil || a.Kind != pg_query.A_Expr_Kind_AEXPR_OP_ANY && a.Kind != pg_query.A_Expr_Kind_AEXPR_OP_ALL {
			return
		}
		p := a.Rexpr.GetParamRef()
		if p == nil || int(p.Number) <= len(declared) && declared[p.Number-1] != 0 {
			return
		}
		if name := pgArrayTypes[schema.ArrayOID(ti.typeAt(a.Lexpr).oid)]; name != "" {
			err = castParam(a.Rexpr, name)
		}
	})
	return err
}

// describeCastParams reports parameters cast to an array type as of that
// type, and those cast to json (values for json and jsonb columns, which
// DuckDB describes as VARCHAR) as json, unless the client declared their
// types.
func describeCastParams(stmt *pg_query.Node, declared, params []uint32) {
	walk(stmt, func(n *pg_query.Node) {
		tc := n.GetTypeCast()
		if tc == nil || tc.Arg.GetParamRef() == nil {
			return
		}
		i := int(tc.Arg.GetParamRef().Number) - 1
		if i < 0 || i >= len(params) || i < len(declared) && declared[i] != 0 {
			return
		}
		switch oid := typeNameType(tc.TypeName).oid; {
		case pgArrayTypes[oid] != "":
			params[i] = oid
		case oid == schema.OIDJSON && params[i] == schema.OIDText:
			params[i] = oid
		}
	})
}
