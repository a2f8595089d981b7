package cdc

import (
	"encoding/json"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakesoul-go/lakesoul/schema"
)

// Column is a source column as the source describes it: a PostgreSQL type
// OID and typmod (atttypmod), or a MySQL column type mapped onto the same
// OIDs (mysqlsource.go).
type Column struct {
	Name    string `json:"name"`
	TypeOID uint32 `json:"type"`
	TypeMod int32  `json:"typmod"`
	// Key is the column's place in the primary key (1, 2, …), 0 for other
	// columns.
	Key int `json:"key,omitempty"`
	// Num is the column's number at the source (PostgreSQL's attnum), 0
	// when unknown; a rename keeps it, a drop and an add do not.
	Num int `json:"num,omitempty"`
	// MySQL sources: the MySQL data type (information_schema's DATA_TYPE),
	// unsigned, and the labels of an enum or set.
	MySQL    string   `json:"mysql,omitempty"`
	Unsigned bool     `json:"unsigned,omitempty"`
	Labels   []string `json:"labels,omitempty"`
}

// columnsJSON is how a table's source columns are recorded in
// subscription_table.columns.
func columnsJSON(cols []Column) json.RawMessage {
	b, _ := json.Marshal(cols)
	return b
}

// Type mapping, source → lake (the lake keeps what Parquet and the reader
// hold exactly; everything else becomes text in the source's own text
// form, so nothing is lost):
//
//	smallint, integer, bigint        → int16, int32, int64
//	real, double precision           → float32, float64
//	boolean                          → boolean
//	text, varchar(n), char(n), name  → string (varchar(n)/bpchar(n) kept as pg_type)
//	uuid, json, jsonb                → string (kept as pg_type)
//	bytea                            → binary
//	date                             → date32
//	timestamp, timestamptz           → timestamp[us] (UTC for timestamptz)
//	numeric(p,s), p ≤ 38             → decimal128(p,s)
//	numeric without precision, > 38  → text
//	anything else (time, interval, arrays, inet, money, enums, …) → text
const (
	oidName = 19
	oidChar = 18
	oidOID  = 26
)

// sourceTypeNames are the PostgreSQL type names the lake keeps, by source
// type OID (numeric only with a precision, see lakeField).
var sourceTypeNames = map[uint32]string{
	schema.OIDBool: "bool", schema.OIDBytea: "bytea", schema.OIDInt2: "int2", schema.OIDInt4: "int4",
	schema.OIDInt8: "int8", schema.OIDFloat4: "float4", schema.OIDFloat8: "float8",
	schema.OIDText: "text", oidName: "text", oidChar: "text",
	schema.OIDVarchar: "varchar", schema.OIDBPChar: "bpchar", schema.OIDUUID: "uuid",
	schema.OIDJSON: "json", schema.OIDJSONB: "jsonb", schema.OIDDate: "date",
	schema.OIDTimestamp: "timestamp", schema.OIDTimestamptz: "timestamptz",
}

// lakeField is the lake column of a source column.
func lakeField(c Column) arrow.Field {
	name, mods := sourceTypeNames[c.TypeOID], []int32(nil)
	switch c.TypeOID {
	case schema.OIDVarchar, schema.OIDBPChar:
		if c.TypeMod >= 4 {
			mods = []int32{c.TypeMod - 4}
		}
	case schema.OIDNumeric:
		if c.TypeMod >= 4 {
			name = "numeric"
			m := c.TypeMod - 4
			mods = []int32{m >> 16, m & 0xffff}
		}
	}
	f := arrow.Field{Name: c.Name, Type: arrow.BinaryTypes.String, Nullable: c.Key == 0}
	if name == "" {
		return f
	}
	dt, pgType, err := schema.FromPGType(name, mods, false)
	if err != nil { // numeric beyond decimal128
		return f
	}
	f.Type = dt
	if pgType != "" {
		f.Metadata = arrow.NewMetadata([]string{schema.MetaPGType}, []string{pgType})
	}
	return f
}

// keyable reports whether a lake column can be part of a primary key.
func keyable(f arrow.Field) error {
	if f.Type.ID() == arrow.BINARY {
		return fmt.Errorf("primary-key column %q is bytea, which a lake primary key cannot be", f.Name)
	}
	return nil
}
