package engine

import (
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/duckdb/duckdb-go/v2"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/vector"
)

// pgvector's SQL over lake tables. In DuckDB a vector is a FLOAT[] list (a
// vector(n) column is read as FLOAT[n]); the engine re-spells pgvector's
// operators and input as macros:
//
//   - a <-> b, a <=> b, a <#> b become l2_distance(a, b),
//     cosine_distance(a, b) and lakesoul_negative_inner_product(a, b);
//     l2_distance, cosine_distance, inner_product, vector_dims, vector_norm
//     and l2_normalize are macros of those names. Distances are computed in
//     double precision and returned as float8; vectors of different
//     dimensions fail with 22000, as in pgvector; the cosine distance to a
//     zero vector is NaN.
//   - An untyped literal or parameter where a vector is expected, and any
//     cast to vector or vector(n), becomes lakesoul_vector_in(x): DuckDB
//     reads the text as FLOAT[], and NaN, infinite components or no
//     components fail with 22000 (malformed text with 22P02); vector(n) also
//     checks the dimensions.
//   - Such parameters are described to clients as type vector (the
//     catalog's OID), so pgvector clients send them in pgvector's binary
//     form, which pgwire decodes with vector.Codec.
var vectorMacros = []string{
	// Lengths are list_count (non-NULL elements; vectors have no NULLs):
	// DuckDB cannot type a prepared len() of a parameter.
	`CREATE MACRO lakesoul_vector_check(v) AS CASE WHEN list_count(v) = 0 THEN error('vector must have at least 1 dimension')
		WHEN list_count(v) > 16000 THEN error('vector cannot have more than 16000 dimensions')
		WHEN list_bool_or(list_transform(v, x -> x IS NULL)) THEN error('invalid input syntax for type vector')
		WHEN list_bool_or(list_transform(v, x -> isnan(x))) THEN error('NaN not allowed in vector')
		WHEN list_bool_or(list_transform(v, x -> isinf(x))) THEN error('infinite value not allowed in vector')
		ELSE CAST(v AS FLOAT[]) END`,
	`CREATE MACRO lakesoul_vector_in(s) AS lakesoul_vector_check(CAST(s AS FLOAT[]))`,
	`CREATE MACRO lakesoul_vector_typmod(v, n) AS CASE WHEN list_count(v) <> n
		THEN error('expected ' || n || ' dimensions, not ' || list_count(v)) ELSE v END`,
	`CREATE MACRO lakesoul_vector_pair(a, b) AS CASE WHEN list_count(a) <> list_count(b)
		THEN error('different vector dimensions ' || list_count(a) || ' and ' || list_count(b)) ELSE CAST(a AS DOUBLE[]) END`,
	`CREATE MACRO l2_distance(a, b) AS list_distance(lakesoul_vector_pair(a, b), CAST(b AS DOUBLE[]))`,
	`CREATE MACRO inner_product(a, b) AS list_inner_product(lakesoul_vector_pair(a, b), CAST(b AS DOUBLE[]))`,
	`CREATE MACRO lakesoul_negative_inner_product(a, b) AS -inner_product(a, b)`,
	`CREATE MACRO vector_norm(v) AS sqrt(list_inner_product(CAST(v AS DOUBLE[]), CAST(v AS DOUBLE[])))`,
	`CREATE MACRO cosine_distance(a, b) AS CASE WHEN vector_norm(a) = 0 OR vector_norm(b) = 0 THEN CAST('NaN' AS DOUBLE)
		ELSE 1 - greatest(-1.0, least(1.0, inner_product(a, b) / (vector_norm(a) * vector_norm(b)))) END`,
	`CREATE MACRO vector_dims(v) AS CAST(list_count(v) AS INTEGER)`,
	`CREATE MACRO l2_normalize(v) AS CASE WHEN vector_norm(v) = 0 THEN CAST(v AS FLOAT[])
		ELSE list_transform(CAST(v AS DOUBLE[]), x -> CAST(x / vector_norm(v) AS FLOAT)) END`,
}

// vectorErrors are the messages of vectorMacros' errors: 22000, as pgvector.
var vectorErrors = []string{
	"vector must have at least 1 dimension", "NaN not allowed in vector", "infinite value not allowed in vector",
	"different vector dimensions", "dimensions, not ",
}

func init() {
	duckMacros = append(duckMacros, vectorMacros...)
	for _, m := range vectorErrors {
		engineErrorCodes[m] = vector.DataException
	}
	engineErrorCodes["vector cannot have more than"] = "54000"
	for _, f := range []string{"l2_distance", "cosine_distance", "inner_product", "vector_norm"} {
		funcResultOIDs[f] = schema.OIDFloat8
	}
	funcResultOIDs["vector_dims"] = schema.OIDInt4
}

// vectorOperators are pgvector's distance operators and their macros.
var vectorOperators = map[string]string{
	"<->": "l2_distance", "<=>": "cosine_distance", "<#>": "lakesoul_negative_inner_product",
}

// vectorArgFunctions are the functions whose arguments are vectors.
var vectorArgFunctions = map[string]bool{
	"l2_distance": true, "cosine_distance": true, "inner_product": true, "vector_dims": true,
	"vector_norm": true, "l2_normalize": true,
}

// vectorInput wraps n in lakesoul_vector_in when it is a value a vector is
// read from (a string literal or a parameter, cast or not); column values
// and computed vectors stay as they are.
func vectorInput(n *pg_query.Node) *pg_query.Node {
	inner := n
	if tc := n.GetTypeCast(); tc != nil && typeNameString(tc.TypeName) != "vector" {
		inner = tc.Arg
	}
	if inner.GetParamRef() == nil && inner.GetAConst().GetSval() == nil {
		return n
	}
	if n.GetParamRef() != nil {
		n = makeCast(n, "text") // the text a client sent, or vector.Codec's text of its binary form
	}
	return makeCall("lakesoul_vector_in", n)
}

// usesVectors reports whether stmt uses pgvector's operators, functions or
// type: such a query without lake tables runs on DuckDB too, as the
// catalog may not have pgvector.
func usesVectors(stmt *pg_query.Node) bool {
	found := false
	walk(stmt, func(n *pg_query.Node) {
		switch {
		case n.GetAExpr() != nil && vectorOperators[operatorName(n.GetAExpr())] != "":
			found = true
		case n.GetFuncCall() != nil && vectorArgFunctions[funcName(n.GetFuncCall())]:
			found = true
		case n.GetTypeCast() != nil && typeNameString(n.GetTypeCast().TypeName) == "vector":
			found = true
		}
	})
	return found
}

// vectorOperator re-spells a distance operator; false when a is none.
func (rw *pgRewriter) vectorOperator(n *pg_query.Node, a *pg_query.A_Expr) bool {
	if a.Kind != pg_query.A_Expr_Kind_AEXPR_OP || a.Lexpr == nil {
		return false
	}
	fn, ok := vectorOperators[operatorName(a)]
	if !ok {
		return false
	}
	n.Node = makeCall(fn, vectorInput(a.Lexpr), vectorInput(a.Rexpr)).Node
	return true
}

// vectorFunction reads the untyped arguments of pgvector's functions as
// vectors.
func vectorFunction(fc *pg_query.FuncCall) {
	if !vectorArgFunctions[funcName(fc)] {
		return
	}
	for i, a := range fc.Args {
		fc.Args[i] = vectorInput(a)
	}
}

// vectorCast re-spells x::vector and x::vector(n); false for other casts.
func vectorCast(n *pg_query.Node, tc *pg_query.TypeCast) bool {
	if typeNameString(tc.TypeName) != "vector" || len(tc.TypeName.ArrayBounds) > 0 {
		return false
	}
	v := makeCall("lakesoul_vector_in", tc.Arg)
	if mods, err := typeMods(tc.TypeName); err == nil && len(mods) == 1 {
		v = makeCall("lakesoul_vector_typmod", v, pg_query.MakeAConstIntNode(int64(mods[0]), -1))
	}
	n.Node = v.Node
	return true
}

// vectorParamNumbers returns the parameters the statement reads as vectors
// (arguments of lakesoul_vector_in, cast or not).
func vectorParamNumbers(stmt *pg_query.Node) []int {
	var out []int
	walk(stmt, func(n *pg_query.Node) {
		fc := n.GetFuncCall()
		if fc == nil || funcName(fc) != "lakesoul_vector_in" || len(fc.Args) != 1 {
			return
		}
		a := fc.Args[0]
		for a.GetTypeCast() != nil {
			a = a.GetTypeCast().Arg
		}
		if p := a.GetParamRef(); p != nil {
			out = append(out, int(p.Number))
		}
	})
	return out
}

// describeVectorParams reports the statement's vector parameters as type
// vector, unless the client declared their types.
func describeVectorParams(stmt *pg_query.Node, declared, params []uint32) {
	oid := schema.VectorOID()
	if oid == 0 {
		return
	}
	for _, num := range vectorParamNumbers(stmt) {
		if i := num - 1; i < len(params) && (i >= len(declared) || declared[i] == 0) {
			params[i] = oid
		}
	}
}

// vectorWriteCast is the DuckDB expression writing expr into a vector(dims)
// column: checked as vector input, then of dims dimensions.
func vectorWriteCast(expr string, dims int) string {
	d := strconv.Itoa(dims)
	return "CAST(lakesoul_vector_typmod(lakesoul_vector_in(" + expr + "), " + d + ") AS FLOAT[" + d + "])"
}

// toVector converts a DuckDB list of floats to a vector.Vector.
func toVector(v any) any {
	l, ok := v.([]any)
	if !ok {
		return v
	}
	out := make(vector.Vector, len(l))
	for i, e := range l {
		switch f := e.(type) {
		case float32:
			out[i] = f
		case float64:
			out[i] = float32(f)
		}
	}
	return out
}

// vectorColumn is the DuckDB column of a vector(dims) lake column: FLOAT[dims].
func vectorColumn(dims int) (duckdb.TypeInfo, chunkSetter, error) {
	elem, err := duckdb.NewTypeInfo(duckdb.TYPE_FLOAT)
	if err != nil {
		return nil, nil, err
	}
	ti, err := duckdb.NewArrayInfo(elem, uint64(dims))
	if err != nil {
		return nil, nil, err
	}
	return ti, func(chunk duckdb.DataChunk, col, row int, arr arrow.Array, i int) error {
		if arr.IsNull(i) {
			return chunk.SetValue(col, row, nil)
		}
		l := arr.(*array.FixedSizeList)
		vals := l.ListValues().(*array.Float32).Float32Values()
		start := (l.Offset() + i) * dims
		out := make([]any, dims)
		for j := range out {
			out[j] = vals[start+j]
		}
		return chunk.SetValue(col, row, out)
	}, nil
}

// appendVector appends a DuckDB FLOAT[n] value to a vector column's
// builder; false when v is no list of n floats.
func appendVector(b *array.FixedSizeListBuilder, v any) bool {
	l, ok := v.([]any)
	vb, isFloat := b.ValueBuilder().(*array.Float32Builder)
	if !ok || !isFloat || len(l) != int(b.Type().(*arrow.FixedSizeListType).Len()) {
		return false
	}
	for _, e := range l {
		if _, ok := e.(float32); !ok {
			return false
		}
	}
	b.Append(true)
	for _, e := range l {
		vb.Append(e.(float32))
	}
	return true
}

// vectorCopyConv converts COPY fields of a vector(dims) column, in
// pgvector's text or binary form.
func vectorCopyConv(dims int, binary bool) fieldConv {
	return func(c *copyColumn, v []byte) error {
		var vec vector.Vector
		var err error
		if binary {
			vec, err = vector.DecodeBinary(v)
		} else {
			vec, err = vector.Parse(string(v))
		}
		if err == nil {
			err = vector.CheckDims(vec, dims)
		}
		if err != nil {
			return err
		}
		b := c.b.(*array.FixedSizeListBuilder)
		b.Append(true)
		b.ValueBuilder().(*array.Float32Builder).AppendValues(vec, nil)
		return nil
	}
}
