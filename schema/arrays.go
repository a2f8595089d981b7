package schema

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// More PostgreSQL type OIDs: composite values and array types.
const (
	OIDRecord      = 2249
	OIDRecordArray = 2287
	OIDTimeTZ      = 1266
)

// arrayOIDs maps an element type's OID to its array type's OID.
var arrayOIDs = map[uint32]uint32{
	OIDBool: 1000, OIDBytea: 1001, OIDInt2: 1005, OIDInt4: 1007, OIDText: 1009, OIDBPChar: 1014,
	OIDVarchar: 1015, OIDInt8: 1016, OIDFloat4: 1021, OIDFloat8: 1022, OIDTimestamp: 1115, OIDDate: 1182,
	OIDTime: 1183, OIDTimestamptz: 1185, OIDInterval: 1187, OIDNumeric: 1231, OIDTimeTZ: 1270,
	OIDUUID: 2951, OIDJSON: 199, OIDJSONB: 3807, OIDRecord: OIDRecordArray,
}

// elemOIDs is arrayOIDs inverted.
var elemOIDs = func() map[uint32]uint32 {
	m := make(map[uint32]uint32, len(arrayOIDs))
	for e, a := range arrayOIDs {
		m[a] = e
	}
	return m
}()

// ArrayOID is the OID of the array type of elements of type elem; 0 when
// the server knows none.
func ArrayOID(elem uint32) uint32 { return arrayOIDs[elem] }

// ElemOID is the element type of array type oid; 0 when oid is not an
// array type the server knows.
func ElemOID(array uint32) uint32 { return elemOIDs[array] }

// Array columns (bigint[], integer[], smallint[], text[], varchar[],
// double precision[], real[], boolean[]) are Arrow lists with nullable elements of
// the element's lake type; in Spark's JSON an array of that type with
// containsNull. Only one-dimensional arrays are stored: PostgreSQL does not
// enforce the declared dimensions either, but a list of lists would be
// another type.

// arrayElemTypes are the element types an array column may have.
var arrayElemTypes = map[string]arrow.DataType{
	"int8": arrow.PrimitiveTypes.Int64, "bigint": arrow.PrimitiveTypes.Int64,
	"int4": arrow.PrimitiveTypes.Int32, "int": arrow.PrimitiveTypes.Int32, "integer": arrow.PrimitiveTypes.Int32,
	"int2": arrow.PrimitiveTypes.Int16, "smallint": arrow.PrimitiveTypes.Int16,
	"float8": arrow.PrimitiveTypes.Float64, "double precision": arrow.PrimitiveTypes.Float64,
	"float4": arrow.PrimitiveTypes.Float32, "real": arrow.PrimitiveTypes.Float32,
	"bool": arrow.FixedWidthTypes.Boolean, "boolean": arrow.FixedWidthTypes.Boolean,
	"text": arrow.BinaryTypes.String,
}

// arrayType is the lake type of an array column of element type name (with
// type modifiers mods), and the column's pg_type when its elements are shown
// as another type than their lake type's (varchar[]: strings shown as
// character varying, as PostgreSQL lists them).
func arrayType(name string, mods []int32) (arrow.DataType, string, error) {
	switch name {
	case "varchar", "character varying":
		if len(mods) > 0 {
			// The length would bind every element, which no write path checks.
			return nil, "", fmt.Errorf("arrays of varchar(n) are not supported for lake tables (varchar[] and text[] are)")
		}
		return arrow.ListOf(arrow.BinaryTypes.String), "varchar[]", nil
	}
	elem, ok := arrayElemTypes[name]
	if !ok {
		return nil, "", fmt.Errorf("arrays of type %s are not supported for lake tables (bigint[], integer[], smallint[], text[], varchar[], double precision[], real[] and boolean[] are)", name)
	}
	return arrow.ListOf(elem), "", nil
}

// sparkArrayType is the Arrow type of a Spark array that is no vector.
func sparkArrayType(arr sparkArray) (arrow.DataType, error) {
	elem, err := sparkToArrow(arr.ElementType)
	if err != nil {
		return nil, err
	}
	for _, t := range arrayElemTypes {
		if arrow.TypeEqual(t, elem) {
			return arrow.ListOf(elem), nil
		}
	}
	return nil, fmt.Errorf("unsupported array element type %q", arr.ElementType)
}

// IsArray reports whether f is an array column.
func IsArray(f arrow.Field) bool {
	_, ok := f.Type.(*arrow.ListType)
	return ok
}
