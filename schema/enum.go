package schema

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// Enum columns (CREATE TYPE … AS ENUM) are string columns in the lake: their
// files hold the labels as Parquet strings, so any reader sees the values.
// The field's pg_type is "enum:<type oid>"; the labels, and their order,
// live in the catalog (lakesoul.enum_type, lakesoul.enum_label) and reach
// the engine with the table (catalog.Table.Enums).

// enumPrefix starts the pg_type of an enum column.
const enumPrefix = "enum:"

// EnumPGType is the pg_type of a column of the enum type with OID oid.
func EnumPGType(oid uint32) string { return enumPrefix + strconv.FormatUint(uint64(oid), 10) }

// EnumOID is the enum type OID of column f, or 0 when f is no enum column.
func EnumOID(f arrow.Field) uint32 {
	if f.Type.ID() != arrow.STRING {
		return 0
	}
	pt, _ := f.Metadata.GetValue(MetaPGType)
	return enumOIDOf(pt)
}

func enumOIDOf(pgType string) uint32 {
	s, ok := strings.CutPrefix(pgType, enumPrefix)
	if !ok {
		return 0
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0
	}
	return uint32(n)
}

// enumFromPGType is the lake type of a column declared "enum:<oid>" (the
// engine names resolved enum types so).
func enumFromPGType(name string) (arrow.DataType, string, bool, error) {
	if !strings.HasPrefix(name, enumPrefix) {
		return nil, "", false, nil
	}
	oid := enumOIDOf(name)
	if oid == 0 {
		return nil, "", true, fmt.Errorf("malformed enum type %q", name)
	}
	return arrow.BinaryTypes.String, EnumPGType(oid), true, nil
}
