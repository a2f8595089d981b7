package schema

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
)

// Vector columns (pgvector's vector(n)) are Arrow fixed-size lists of n
// float32, non-null elements, with pg_type "vector(n)"; in Spark's JSON an
// array of float without nulls.

// MaxVectorDims is the largest dimension of a vector column, as pgvector's.
const MaxVectorDims = 16000

// VectorType is the lake type of a vector(dims) column.
func VectorType(dims int) (arrow.DataType, error) {
	if dims < 1 {
		return nil, fmt.Errorf("dimensions for type vector must be at least 1")
	}
	if dims > MaxVectorDims {
		return nil, fmt.Errorf("dimensions for type vector cannot exceed %d", MaxVectorDims)
	}
	return arrow.FixedSizeListOfNonNullable(int32(dims), arrow.PrimitiveTypes.Float32), nil
}

// VectorDims returns the dimensions of a vector column, or 0 when f is not one.
func VectorDims(f arrow.Field) int {
	t, ok := f.Type.(*arrow.FixedSizeListType)
	if !ok || t.Elem().ID() != arrow.FLOAT32 {
		return 0
	}
	pt, _ := f.Metadata.GetValue(MetaPGType)
	if !strings.HasPrefix(pt, "vector(") {
		return 0
	}
	return int(t.Len())
}

// vectorOID is the catalog's OID of type vector (migration 15 creates it
// where pgvector is not installed). One process serves catalogs migrated
// alike; the server sets it when it opens its catalog.
var vectorOID atomic.Uint32

// SetVectorOID records the catalog's OID of type vector.
func SetVectorOID(oid uint32) { vectorOID.Store(oid) }

// VectorOID is the catalog's OID of type vector (0 before SetVectorOID).
func VectorOID() uint32 { return vectorOID.Load() }

type sparkArray struct {
	Type         string `json:"type"`
	ElementType  string `json:"elementType"`
	ContainsNull bool   `json:"containsNull"`
}

// sparkFieldType is the Arrow type of a Spark field: a named type, or an
// array of float that the field's pg_type declares a vector.
func sparkFieldType(f sparkField) (arrow.DataType, error) {
	var name string
	if err := json.Unmarshal(f.Type, &name); err == nil {
		return sparkToArrow(name)
	}
	var arr sparkArray
	if err := json.Unmarshal(f.Type, &arr); err != nil || arr.Type != "array" {
		return nil, fmt.Errorf("unsupported type %s", f.Type)
	}
	pt := f.Metadata[MetaPGType]
	if !strings.HasPrefix(pt, "vector(") {
		return sparkArrayType(arr)
	}
	if arr.ElementType != "float" || arr.ContainsNull || !strings.HasPrefix(pt, "vector(") {
		return nil, fmt.Errorf("unsupported type %s", f.Type)
	}
	dims, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(pt, "vector("), ")"))
	if err != nil {
		return nil, fmt.Errorf("pg_type %q: %w", pt, err)
	}
	return VectorType(dims)
}
