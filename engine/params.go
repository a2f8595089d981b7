package engine

import (
	"fmt"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/schema"
)

// Parameter typing. DuckDB infers a $n's type from its context and cannot
// prepare a statement where it cannot (e.g. VALUES ($1)). PostgreSQL clients
// expect the types they declared in Parse to hold, and INSERT parameters to take
// the target columns' types. Both are expressed to DuckDB as casts around the
// ParamRef, added before the statement is prepared.

// pgTypeNames are the PostgreSQL type names for declared parameter OIDs that
// DuckDB understands with the same meaning. numeric is absent on purpose: a
// bare numeric cast in DuckDB means DECIMAL(18,3).
var pgTypeNames = map[uint32]string{
	schema.OIDBool: "bool", schema.OIDBytea: "bytea", schema.OIDInt8: "int8", schema.OIDInt2: "int2",
	schema.OIDInt4: "int4", schema.OIDText: "text", schema.OIDVarchar: "varchar", schema.OIDFloat4: "float4",
	schema.OIDFloat8: "float8", schema.OIDDate: "date", schema.OIDTimestamp: "timestamp",
	schema.OIDTimestamptz: "timestamptz", schema.OIDUUID: "uuid",
}

// lakeTypeName is the SQL type name of a lake column type.
func lakeTypeName(dt arrow.DataType) string {
	switch t := dt.(type) {
	case *arrow.Int64Type:
		return "int8"
	case *arrow.Int32Type:
		return "int4"
	case *arrow.Int16Type, *arrow.Int8Type:
		return "int2"
	case *arrow.Float64Type:
		return "float8"
	case *arrow.Float32Type:
		return "float4"
	case *arrow.BooleanType:
		return "bool"
	case *arrow.BinaryType:
		return "bytea"
	case *arrow.Date32Type:
		return "date"
	case *arrow.TimestampType:
		if t.TimeZone != "" {
			return "timestamptz"
		}
		return "timestamp"
	case *arrow.Decimal128Type:
		return fmt.Sprintf("numeric(%d,%d)", t.Precision, t.Scale)
	case *arrow.ListType:
		return lakeTypeName(t.Elem()) + "[]"
	case *arrow.MonthDayNanoIntervalType:
		return "interval"
	}
	return "text"
}

var (
	typeNameMu    sync.Mutex
	typeNameCache = map[string]*pg_query.TypeName{}
)

// parsedTypeName returns the parse tree of a type name such as "numeric(10,2)".
func parsedTypeName(name string) (*pg_query.TypeName, error) {
	typeNameMu.Lock()
	defer typeNameMu.Unlock()
	if tn, ok := typeNameCache[name]; ok {
		return tn, nil
	}
	r, err := pg_query.Parse("SELECT NULL::" + name)
	if err != nil {
		return nil, err
	}
	tn := r.Stmts[0].Stmt.GetSelectStmt().TargetList[0].GetResTarget().Val.GetTypeCast().TypeName
	typeNameCache[name] = tn
	return tn, nil
}

// paramRefs returns the nodes holding $n references, by parameter number.
func paramRefs(stmt *pg_query.Node) map[int32][]*pg_query.Node {
	out := map[int32][]*pg_query.Node{}
	walk(stmt, func(n *pg_query.Node) {
		if p := n.GetParamRef(); p != nil {
			out[p.Number] = append(out[p.Number], n)
		}
	})
	return out
}

// castParam wraps a ParamRef node in a cast to typeName, in place.
func castParam(n *pg_query.Node, typeName string) error {
	tn, err := parsedTypeName(typeName)
	if err != nil {
		return err
	}
	ref := &pg_query.Node{Node: n.Node}
	n.Node = &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{Arg: ref, TypeName: tn, Location: -1}}
	return nil
}

// typeAssigned gives a value assigned to column f its type when the value is
// untyped — a bare $n or a string literal — as PostgreSQL resolves an
// unknown value by its assignment target (INSERT … VALUES, UPDATE SET,
// MERGE, ON CONFLICT DO UPDATE SET). Clients that send parameters without
// types (node-postgres, lib/pq, postgres.js) rely on this. Other
// expressions keep their own type and are cast when written.
func typeAssigned(val *pg_query.Node, f arrow.Field) error {
	if val == nil || (val.GetParamRef() == nil && val.GetAConst().GetSval() == nil) {
		return nil
	}
	if schema.VectorDims(f) > 0 {
		wrap(val, vectorInput) // vectorops.go
		return nil
	}
	if oid, _ := schema.PGTypeOf(f); oid == schema.OIDJSONB {
		return castParam(val, "jsonb") // described as jsonb (jsonparams.go)
	}
	return castParam(val, lakeFieldTypeName(f))
}

// castDeclaredParams casts every $n whose type the client declared.
func castDeclaredParams(stmt *pg_query.Node, declared []uint32) error {
	refs := paramRefs(stmt)
	for i, oid := range declared {
		name, ok := pgTypeNames[oid]
		if !ok {
			continue
		}
		for _, n := range refs[int32(i+1)] {
			if err := castParam(n, name); err != nil {
				return err
			}
		}
	}
	return nil
}

// untypedParams returns the numbers (1-based) of the parameters DuckDB
// described without a type.
func untypedParams(oids []uint32) []int {
	var out []int
	for i, oid := range oids {
		if oid == 0 {
			out = append(out, i+1)
		}
	}
	return out
}

// castUntypedParams casts the given parameter numbers to text, for DuckDB
// parameters whose type nothing determines (PostgreSQL resolves those as text).
func castUntypedParams(stmt *pg_query.Node, numbers []int) error {
	refs := paramRefs(stmt)
	for _, num := range numbers {
		for _, n := range refs[int32(num)] {
			if err := castParam(n, "text"); err != nil {
				return err
			}
		}
	}
	return nil
}

// pgArrayTypes maps PostgreSQL array type OIDs to the cast DuckDB understands.
var pgArrayTypes = map[uint32]string{
	1000: "bool[]", 1005: "int2[]", 1007: "int4[]", 1016: "int8[]", 1021: "float4[]", 1022: "float8[]",
	1009: "text[]", 1015: "varchar[]", 1182: "date[]", 1115: "timestamp[]", 1185: "timestamptz[]", 2951: "uuid[]",
}

func init() {
	for oid, name := range pgArrayTypes {
		pgTypeNames[oid] = name
	}
}

// pgArrayToDuckList rewrites a one-dimensional PostgreSQL array literal
// ({1,2,"a b",NULL}) as DuckDB list text ([1, 2, "a b", NULL]); its text
// is read as PostgreSQL reads it (parsePGArray).
func pgArrayToDuckList(s string) (string, error) {
	elems, err := parsePGArray(s) // arraycols.go
	if err != nil {
		return "", err
	}
	out := make([]string, len(elems))
	for i, e := range elems {
		switch {
		case e == nil:
			out[i] = "NULL"
		case !strings.Contains(*e, `"`):
			out[i] = `"` + *e + `"`
		default:
			out[i] = "'" + strings.ReplaceAll(*e, "'", "''") + "'"
		}
	}
	return "[" + strings.Join(out, ", ") + "]", nil
}
