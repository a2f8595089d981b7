package engine

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/schema"
)

// Parameters of json and jsonb type. DuckDB has one JSON type, stored and
// bound as text, so it describes a parameter compared with or assigned to
// a jsonb column as VARCHAR or JSON; PostgreSQL describes it as jsonb
// (3802), and clients pick their codec by that OID (asyncpg's jsonb codec,
// psycopg's Jsonb dumper). jsonContextParams reads, before the statement is
// rewritten for DuckDB (which spells every jsonb cast json), the json type
// each parameter's context gives it, as PostgreSQL's resolution does:
//
//   - a cast $n::jsonb, $n::json (assignments to json and jsonb columns in
//     INSERT, UPDATE, MERGE and ON CONFLICT are such casts: typeAssigned);
//   - the unknown operand of an operator whose other operand is jsonb and
//     for which PostgreSQL has a (jsonb, jsonb) form: comparisons, @>, <@
//     and ||, also in IS [NOT] DISTINCT FROM, NULLIF and IN lists.
//
// describeJSONParams then describes those parameters so, unless the client
// declared their types.

// jsonbSameTypeOperators are jsonb's operators taking jsonb on both sides.
var jsonbSameTypeOperators = map[string]bool{"@>": true, "<@": true, "||": true}

// jsonContextParams maps parameter indexes (0-based) to the json type
// (schema.OIDJSON or schema.OIDJSONB) their context gives them.
func jsonContextParams(stmt *pg_query.Node, ti *typeInfo) map[int]uint32 {
	out := map[int]uint32{}
	note := func(n *pg_query.Node, oid uint32) {
		if p := n.GetParamRef(); p != nil && p.Number > 0 {
			out[int(p.Number)-1] = oid
		}
	}
	walk(stmt, func(n *pg_query.Node) {
		switch {
		case n.GetTypeCast() != nil:
			tc := n.GetTypeCast()
			if oid := typeNameType(tc.TypeName).oid; oid == schema.OIDJSON || oid == schema.OIDJSONB {
				note(tc.Arg, oid)
			}
		case n.GetAExpr() != nil:
			a := n.GetAExpr()
			switch a.Kind {
			case pg_query.A_Expr_Kind_AEXPR_OP:
				if op := operatorName(a); !comparisons[op] && !jsonbSameTypeOperators[op] {
					return
				}
			case pg_query.A_Expr_Kind_AEXPR_DISTINCT, pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT,
				pg_query.A_Expr_Kind_AEXPR_NULLIF, pg_query.A_Expr_Kind_AEXPR_IN:
			default:
				return
			}
			if ti.typeAt(a.Lexpr).oid == schema.OIDJSONB {
				note(a.Rexpr, schema.OIDJSONB)
				for _, item := range a.Rexpr.GetList().GetItems() {
					note(item, schema.OIDJSONB)
				}
			}
			if ti.typeAt(a.Rexpr).oid == schema.OIDJSONB {
				note(a.Lexpr, schema.OIDJSONB)
			}
		}
	})
	return out
}

// describeJSONParams describes the parameters ctx gives a json type as that
// type where DuckDB described them as text or json and the client declared
// no type.
func describeJSONParams(ctx map[int]uint32, declared, params []uint32) {
	for i, oid := range ctx {
		if i >= len(params) || i < len(declared) && declared[i] != 0 {
			continue
		}
		if params[i] == schema.OIDText || params[i] == schema.OIDJSON || params[i] == schema.OIDJSONB {
			params[i] = oid
		}
	}
}

// duckJSONCasts spells the json and jsonb casts of expression n as DuckDB's
// JSON, for expressions deparsed for DuckDB without the rewrite of whole
// statements (pgRewriter.cast): ON CONFLICT DO UPDATE's SET and WHERE.
func duckJSONCasts(n *pg_query.Node) {
	walk(n, func(x *pg_query.Node) {
		if tc := x.GetTypeCast(); tc != nil {
			if t := typeNameType(tc.TypeName); t.isJSON() || schema.ElemOID(t.oid) == schema.OIDJSON || schema.ElemOID(t.oid) == schema.OIDJSONB {
				tc.TypeName = duckJSONTypeName(len(tc.TypeName.ArrayBounds) > 0)
			}
		}
	})
}

// conflictColumnTypes types the column references of an ON CONFLICT clause
// of table t — the row's (t.c, alias.c, c) and EXCLUDED.c alike name a
// column of t — for jsonContextParams.
func conflictColumnTypes(oc *pg_query.Node, t *catalog.Table) *typeInfo {
	ti := &typeInfo{of: map[*pg_query.Node]pgType{}}
	walk(oc, func(n *pg_query.Node) {
		cr := n.GetColumnRef()
		if cr == nil || len(cr.Fields) == 0 || len(cr.Fields) > 2 {
			return
		}
		if idx := t.Schema.FieldIndices(cr.Fields[len(cr.Fields)-1].GetString_().GetSval()); len(idx) > 0 {
			oid, mod := schema.PGTypeOf(t.Schema.Field(idx[0]))
			ti.of[n] = pgType{oid: oid, typmod: mod}
		}
	})
	return ti
}
