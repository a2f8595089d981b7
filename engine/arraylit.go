package engine

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/schema"
)

// Array literals. PostgreSQL reads '{1,2,NULL}' cast to (or assigned to, or
// compared with) an array type as the array's text form; DuckDB's cast from
// text reads its own list syntax. Such a literal becomes an ARRAY[…] of its
// elements as string constants (NULL for NULL), cast to the array type, so
// that DuckDB converts each element as it converts text to the element type
// ('x' to bigint fails with 22P02, as in PostgreSQL).

// arrayLiteralType is the DuckDB cast of a literal of array type oid; ""
// when oid is no array type whose literals are rewritten.
func arrayLiteralType(oid uint32) string {
	if schema.ElemOID(oid) == 0 || schema.ElemOID(oid) == schema.OIDJSON || schema.ElemOID(oid) == schema.OIDJSONB {
		return ""
	}
	return pgArrayTypes[oid]
}

// arrayLiteralElems replaces the string constant sv with ARRAY[…] of its
// elements; the caller casts it. It fails with 22P02 when sv is no array
// text.
func arrayLiteralElems(sv string) (*pg_query.Node, error) {
	elems, err := parsePGArray(sv) // arraycols.go
	if err != nil {
		return nil, err
	}
	items := make([]*pg_query.Node, len(elems))
	for i, e := range elems {
		if e == nil {
			items[i] = &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{Isnull: true, Location: -1}}}
		} else {
			items[i] = pg_query.MakeAConstStrNode(*e, -1)
		}
	}
	return &pg_query.Node{Node: &pg_query.Node_AArrayExpr{AArrayExpr: &pg_query.A_ArrayExpr{Elements: items, Location: -1}}}, nil
}

// arrayLiteral rewrites n, a string constant of array type oid, as
// CAST(ARRAY[…] AS type); false when n is no such constant.
func arrayLiteral(n *pg_query.Node, oid uint32) (bool, error) {
	name := arrayLiteralType(oid)
	sv := n.GetAConst().GetSval()
	if name == "" || sv == nil {
		return false, nil
	}
	arr, err := arrayLiteralElems(sv.Sval)
	if err != nil {
		return false, err
	}
	n.Node = makeCast(arr, name).Node
	return true, nil
}
