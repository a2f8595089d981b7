// Package schema translates table schemas between the three type systems a lake
// table lives in: LakeSoul's catalog (table_info.table_schema, Arrow Java's
// schema JSON or Spark's StructType JSON: tableschema.go), Arrow (files and
// the data plane) and PostgreSQL (what pgwire clients declare and see).
// DuckDB type names are derived here too.
//
// Invariant: every Arrow type this package returns is one the writer can store
// and the reader can read back unchanged; anything else is rejected at CREATE
// TABLE time with 0A000.
package schema

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// MetaPGType is the Arrow field metadata key (and Spark JSON metadata key)
// recording the PostgreSQL type a column was declared with, where the lake type
// alone would lose it (varchar(n), uuid, json).
const MetaPGType = "pg_type"

// MetaDefault is the field metadata key of a column's DEFAULT, PostgreSQL
// expression text; MetaIdentity marks an identity column ("always" or "by
// default"), whose default is nextval of its own sequence.
const (
	MetaDefault  = "pg_default"
	MetaIdentity = "pg_identity"
)

// InternalMetadata lists every field metadata key the server writes (all
// "pg_"): the catalog refuses a new or changed value of one from any login
// but the server's (catalog.internalKeyFunctions), so a default expression
// or a column's type is always one the server validated.
var InternalMetadata = []string{MetaPGType, MetaDefault, MetaIdentity, MetaFormerNames}

type sparkStruct struct {
	Type   string       `json:"type"`
	Fields []sparkField `json:"fields"`
}

type sparkField struct {
	Name string `json:"name"`
	// Type is a type name ("long") or, for arrays, Spark's array object.
	Type     json.RawMessage   `json:"type"`
	Nullable bool              `json:"nullable"`
	Metadata map[string]string `json:"metadata"`
}

var decimalRe = regexp.MustCompile(`^decimal\((\d+),\s*(\d+)\)$`)

// parseSparkSchema parses a table_schema value in Spark's StructType form.
func parseSparkSchema(s string) (*arrow.Schema, error) {
	var st sparkStruct
	if err := json.Unmarshal([]byte(s), &st); err != nil {
		return nil, fmt.Errorf("table schema: %w", err)
	}
	if st.Type != "struct" {
		return nil, fmt.Errorf("table schema: top-level type %q, want struct", st.Type)
	}
	fields := make([]arrow.Field, len(st.Fields))
	for i, f := range st.Fields {
		dt, err := sparkFieldType(f)
		if err != nil {
			return nil, fmt.Errorf("table schema: column %q: %w", f.Name, err)
		}
		fields[i] = arrow.Field{Name: f.Name, Type: dt, Nullable: f.Nullable}
		if len(f.Metadata) > 0 {
			keys := make([]string, 0, len(f.Metadata))
			vals := make([]string, 0, len(f.Metadata))
			for k, v := range f.Metadata {
				keys = append(keys, k)
				vals = append(vals, v)
			}
			fields[i].Metadata = sortedMetadata(keys, vals)
		}
	}
	return arrow.NewSchema(fields, nil), nil
}

// TimestampUTC is the Arrow type of a timestamptz column; Timestamp of a
// timestamp-without-time-zone column. Microseconds, as PostgreSQL stores them.
var (
	TimestampUTC = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	Timestamp    = &arrow.TimestampType{Unit: arrow.Microsecond}
)

func sparkToArrow(t string) (arrow.DataType, error) {
	switch t {
	case "long":
		return arrow.PrimitiveTypes.Int64, nil
	case "integer":
		return arrow.PrimitiveTypes.Int32, nil
	case "short":
		return arrow.PrimitiveTypes.Int16, nil
	case "byte":
		return arrow.PrimitiveTypes.Int8, nil
	case "double":
		return arrow.PrimitiveTypes.Float64, nil
	case "float":
		return arrow.PrimitiveTypes.Float32, nil
	case "boolean":
		return arrow.FixedWidthTypes.Boolean, nil
	case "string":
		return arrow.BinaryTypes.String, nil
	case "binary":
		return arrow.BinaryTypes.Binary, nil
	case "date":
		return arrow.FixedWidthTypes.Date32, nil
	case "timestamp":
		return TimestampUTC, nil
	case "timestamp_ntz":
		return Timestamp, nil
	}
	if m := decimalRe.FindStringSubmatch(t); m != nil {
		p, _ := strconv.Atoi(m[1])
		s, _ := strconv.Atoi(m[2])
		return &arrow.Decimal128Type{Precision: int32(p), Scale: int32(s)}, nil
	}
	return nil, fmt.Errorf("unsupported type %q", t)
}

// FromPGType maps a PostgreSQL type name as pg_query reports it (e.g. "int8",
// "varchar", "numeric", "timestamptz"; schema-qualified "pg_catalog." stripped)
// and its type modifiers to an Arrow type. pgType is the declared type to keep
// in field metadata ("" when the Arrow type says it all).
func FromPGType(name string, mods []int32, isArray bool) (dt arrow.DataType, pgType string, err error) {
	name = strings.TrimPrefix(strings.ToLower(name), "pg_catalog.")
	if dt, pgType, ok, err := enumFromPGType(name); ok {
		if isArray {
			return nil, "", fmt.Errorf("arrays of enum types are not supported for lake tables")
		}
		return dt, pgType, err
	}
	if isArray {
		return arrayType(name, mods)
	}
	switch name {
	case "int8", "bigint", "bigserial", "serial8":
		return arrow.PrimitiveTypes.Int64, "", nil
	case "int4", "int", "integer", "serial", "serial4":
		return arrow.PrimitiveTypes.Int32, "", nil
	case "int2", "smallint", "smallserial", "serial2":
		return arrow.PrimitiveTypes.Int16, "", nil
	case "float8", "double precision":
		return arrow.PrimitiveTypes.Float64, "", nil
	case "float4", "real":
		return arrow.PrimitiveTypes.Float32, "", nil
	case "bool", "boolean":
		return arrow.FixedWidthTypes.Boolean, "", nil
	case "text":
		return arrow.BinaryTypes.String, "", nil
	case "varchar", "bpchar", "char", "character varying", "character":
		t := map[string]string{"varchar": "varchar", "character varying": "varchar"}[name]
		if t == "" {
			t = "bpchar"
		}
		if len(mods) == 1 {
			return arrow.BinaryTypes.String, fmt.Sprintf("%s(%d)", t, mods[0]), nil
		}
		return arrow.BinaryTypes.String, t, nil
	case "uuid", "json", "jsonb":
		return arrow.BinaryTypes.String, name, nil
	case "vector":
		if len(mods) != 1 {
			return nil, "", fmt.Errorf("a vector column needs its dimensions, vector(n)")
		}
		dt, err := VectorType(int(mods[0]))
		if err != nil {
			return nil, "", err
		}
		return dt, fmt.Sprintf("vector(%d)", mods[0]), nil
	case "bytea":
		return arrow.BinaryTypes.Binary, "", nil
	case "date":
		return arrow.FixedWidthTypes.Date32, "", nil
	case "interval":
		if len(mods) > 0 {
			// A range or precision would bind every value, which no
			// write path applies.
			return nil, "", fmt.Errorf("interval columns with a field range or precision are not supported for lake tables (plain interval is)")
		}
		return IntervalType, IntervalPGType, nil
	case "timestamptz":
		return TimestampUTC, "", nil
	case "timestamp":
		return Timestamp, "", nil
	case "numeric", "decimal":
		p, s := int32(38), int32(18)
		if len(mods) >= 1 {
			p, s = mods[0], 0
		}
		if len(mods) >= 2 {
			s = mods[1]
		}
		if p < 1 || p > 38 || s < 0 || s > p {
			return nil, "", fmt.Errorf("numeric(%d,%d) is out of the supported range (precision 1..38, 0 <= scale <= precision)", p, s)
		}
		return &arrow.Decimal128Type{Precision: p, Scale: s}, "", nil
	}
	return nil, "", fmt.Errorf("type %s is not supported for lake tables", name)
}

// PG type OIDs used by the server.
const (
	OIDBool        = 16
	OIDBytea       = 17
	OIDInt8        = 20
	OIDInt2        = 21
	OIDInt4        = 23
	OIDText        = 25
	OIDJSON        = 114
	OIDFloat4      = 700
	OIDFloat8      = 701
	OIDBPChar      = 1042
	OIDVarchar     = 1043
	OIDDate        = 1082
	OIDTime        = 1083
	OIDTimestamp   = 1114
	OIDTimestamptz = 1184
	OIDInterval    = 1186
	OIDNumeric     = 1700
	OIDUUID        = 2950
	OIDJSONB       = 3802
)

// PGTypeOf returns the PostgreSQL type OID and typmod a column of field f is
// shown with.
func PGTypeOf(f arrow.Field) (oid uint32, typmod int32) {
	if pt, ok := f.Metadata.GetValue(MetaPGType); ok {
		base, mod := pt, int32(-1)
		if i := strings.IndexByte(pt, '('); i > 0 {
			base = pt[:i]
			if n, err := strconv.Atoi(strings.TrimSuffix(pt[i+1:], ")")); err == nil {
				mod = int32(n) + 4
			}
		}
		if elem, ok := strings.CutSuffix(pt, "[]"); ok {
			// An array column whose elements are shown as elem (varchar[]).
			eoid, _ := PGTypeOf(arrow.Field{Type: arrow.BinaryTypes.String,
				Metadata: arrow.NewMetadata([]string{MetaPGType}, []string{elem})})
			return ArrayOID(eoid), -1
		}
		switch base {
		case "varchar":
			return OIDVarchar, mod
		case "bpchar":
			return OIDBPChar, mod
		case "uuid":
			return OIDUUID, -1
		case "json":
			return OIDJSON, -1
		case "jsonb":
			return OIDJSONB, -1
		case "vector":
			return VectorOID(), mod - 4
		}
		if oid := enumOIDOf(pt); oid != 0 {
			return oid, -1
		}
	}
	if t, ok := f.Type.(*arrow.ListType); ok {
		eoid, _ := PGTypeOf(t.ElemField())
		return ArrayOID(eoid), -1
	}
	switch t := f.Type.(type) {
	case *arrow.Int64Type:
		return OIDInt8, -1
	case *arrow.Int32Type:
		return OIDInt4, -1
	case *arrow.Int16Type, *arrow.Int8Type:
		return OIDInt2, -1
	case *arrow.Float64Type:
		return OIDFloat8, -1
	case *arrow.Float32Type:
		return OIDFloat4, -1
	case *arrow.BooleanType:
		return OIDBool, -1
	case *arrow.StringType:
		return OIDText, -1
	case *arrow.BinaryType:
		return OIDBytea, -1
	case *arrow.Date32Type:
		return OIDDate, -1
	case *arrow.TimestampType:
		if t.TimeZone != "" {
			return OIDTimestamptz, -1
		}
		return OIDTimestamp, -1
	case *arrow.Decimal128Type:
		return OIDNumeric, (t.Precision<<16 | t.Scale) + 4
	case *arrow.MonthDayNanoIntervalType:
		return OIDInterval, -1
	}
	return OIDText, -1
}

// DuckDBType is the DuckDB SQL type of a lake column, used for casts and for
// declaring table-function columns.
func DuckDBType(dt arrow.DataType) string {
	switch t := dt.(type) {
	case *arrow.Int64Type:
		return "BIGINT"
	case *arrow.Int32Type:
		return "INTEGER"
	case *arrow.Int16Type:
		return "SMALLINT"
	case *arrow.Int8Type:
		return "TINYINT"
	case *arrow.Float64Type:
		return "DOUBLE"
	case *arrow.Float32Type:
		return "FLOAT"
	case *arrow.BooleanType:
		return "BOOLEAN"
	case *arrow.StringType:
		return "VARCHAR"
	case *arrow.BinaryType:
		return "BLOB"
	case *arrow.Date32Type:
		return "DATE"
	case *arrow.TimestampType:
		if t.TimeZone != "" {
			return "TIMESTAMPTZ"
		}
		return "TIMESTAMP"
	case *arrow.Decimal128Type:
		return fmt.Sprintf("DECIMAL(%d,%d)", t.Precision, t.Scale)
	case *arrow.MonthDayNanoIntervalType:
		return "INTERVAL"
	case *arrow.FixedSizeListType:
		return fmt.Sprintf("%s[%d]", DuckDBType(t.Elem()), t.Len())
	case *arrow.ListType:
		return DuckDBType(t.Elem()) + "[]"
	}
	return "VARCHAR"
}
