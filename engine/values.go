package engine

import (
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/schema"
)

// valueConv turns a value scanned from DuckDB into one pgwire encodes for the
// column's PostgreSQL type.
type valueConv func(any) any

// duckResultColumn maps a DuckDB result column to a PostgreSQL column and the
// conversion of its values.
func duckResultColumn(name string, ti duckdb.TypeInfo) (pgwire.Column, valueConv) {
	col := pgwire.Column{Name: name, TypeModifier: -1, TypeSize: -1}
	col.TypeOID, col.TypeModifier, col.TypeSize, _ = duckPGType(ti)
	return col, duckValueConv(ti)
}

// duckPGType is the PostgreSQL type of values of DuckDB type ti: OID,
// typmod and size; isJSON reports DuckDB's JSON type anywhere inside ti
// (its values must be read as text, see jsonAsText).
func duckPGType(ti duckdb.TypeInfo) (oid uint32, typmod int32, size int16, isJSON bool) {
	typmod, size = -1, -1
	switch ti.InternalType() {
	case duckdb.TYPE_BOOLEAN:
		return schema.OIDBool, -1, 1, false
	case duckdb.TYPE_TINYINT, duckdb.TYPE_UTINYINT, duckdb.TYPE_SMALLINT:
		return schema.OIDInt2, -1, 2, false
	case duckdb.TYPE_USMALLINT, duckdb.TYPE_INTEGER:
		return schema.OIDInt4, -1, 4, false
	case duckdb.TYPE_UINTEGER, duckdb.TYPE_BIGINT:
		return schema.OIDInt8, -1, 8, false
	case duckdb.TYPE_UBIGINT, duckdb.TYPE_HUGEINT, duckdb.TYPE_UHUGEINT, duckdb.TYPE_BIGNUM:
		return schema.OIDNumeric, -1, -1, false
	case duckdb.TYPE_FLOAT:
		return schema.OIDFloat4, -1, 4, false
	case duckdb.TYPE_DOUBLE:
		return schema.OIDFloat8, -1, 8, false
	case duckdb.TYPE_DECIMAL:
		if d, ok := ti.Details().(*duckdb.DecimalDetails); ok {
			typmod = int32(d.Width)<<16 | int32(d.Scale) + 4
		}
		return schema.OIDNumeric, typmod, -1, false
	case duckdb.TYPE_VARCHAR:
		if ti.Alias() == "JSON" {
			return schema.OIDJSON, -1, -1, true
		}
		return schema.OIDText, -1, -1, false
	case duckdb.TYPE_BLOB:
		return schema.OIDBytea, -1, -1, false
	case duckdb.TYPE_DATE:
		return schema.OIDDate, -1, 4, false
	case duckdb.TYPE_TIME:
		return schema.OIDTime, -1, 8, false
	case duckdb.TYPE_TIMESTAMP, duckdb.TYPE_TIMESTAMP_S, duckdb.TYPE_TIMESTAMP_MS, duckdb.TYPE_TIMESTAMP_NS:
		return schema.OIDTimestamp, -1, 8, false
	case duckdb.TYPE_TIMESTAMP_TZ:
		return schema.OIDTimestamptz, -1, 8, false
	case duckdb.TYPE_UUID:
		return schema.OIDUUID, -1, 16, false
	case duckdb.TYPE_INTERVAL:
		return schema.OIDInterval, -1, 16, false
	case duckdb.TYPE_LIST, duckdb.TYPE_ARRAY:
		child := listChild(ti)
		eoid, _, _, j := duckPGType(child)
		if e := schema.ElemOID(eoid); e != 0 {
			eoid = e // a list of lists is a multidimensional array
		}
		if a := schema.ArrayOID(eoid); a != 0 {
			return a, -1, -1, j
		}
		return schema.OIDText, -1, -1, j
	case duckdb.TYPE_STRUCT:
		for _, e := range ti.Details().(*duckdb.StructDetails).Entries {
			if _, _, _, j := duckPGType(e.Info()); j {
				isJSON = true
			}
		}
		return schema.OIDRecord, -1, -1, isJSON
	case duckdb.TYPE_MAP:
		d := ti.Details().(*duckdb.MapDetails)
		_, _, _, jk := duckPGType(d.Key)
		_, _, _, jv := duckPGType(d.Value)
		return schema.OIDText, -1, -1, jk || jv
	}
	return schema.OIDText, -1, -1, false // ENUM, BIT, TIME_TZ, UNION …: their text
}

// listChild is the element type of a LIST or ARRAY type.
func listChild(ti duckdb.TypeInfo) duckdb.TypeInfo {
	switch d := ti.Details().(type) {
	case *duckdb.ListDetails:
		return d.Child
	case *duckdb.ArrayDetails:
		return d.Child
	}
	return nil
}

// duckValueConv converts values of DuckDB type ti as scanned by duckdb-go
// into values pgwire encodes as duckPGType(ti): lists become []any of
// converted elements (pgwire's arrays), structs pgwire.Records.
func duckValueConv(ti duckdb.TypeInfo) valueConv {
	switch ti.InternalType() {
	case duckdb.TYPE_TINYINT, duckdb.TYPE_UTINYINT, duckdb.TYPE_SMALLINT:
		return toInt16
	case duckdb.TYPE_USMALLINT, duckdb.TYPE_INTEGER:
		return toInt32
	case duckdb.TYPE_UINTEGER, duckdb.TYPE_BIGINT:
		return toInt64
	case duckdb.TYPE_UBIGINT, duckdb.TYPE_HUGEINT, duckdb.TYPE_UHUGEINT, duckdb.TYPE_BIGNUM, duckdb.TYPE_DECIMAL:
		return toNumericText
	case duckdb.TYPE_VARCHAR, duckdb.TYPE_ENUM:
		return toText
	case duckdb.TYPE_TIME:
		return toTimeOfDay
	case duckdb.TYPE_UUID:
		return toUUID
	case duckdb.TYPE_INTERVAL:
		return toInterval
	case duckdb.TYPE_LIST, duckdb.TYPE_ARRAY:
		elem := duckValueConv(listChild(ti))
		return func(v any) any {
			l, ok := v.([]any)
			if !ok {
				return toText(v)
			}
			out := make([]any, len(l))
			for i, e := range l {
				if e != nil {
					out[i] = elem(e)
				}
			}
			return out
		}
	case duckdb.TYPE_STRUCT:
		entries := ti.Details().(*duckdb.StructDetails).Entries
		oids := make([]uint32, len(entries))
		convs := make([]valueConv, len(entries))
		for i, e := range entries {
			oids[i], _, _, _ = duckPGType(e.Info())
			convs[i] = duckValueConv(e.Info())
		}
		return func(v any) any {
			m, ok := v.(map[string]any)
			if !ok {
				return toText(v)
			}
			r := pgwire.Record{OIDs: oids, Values: make([]any, len(entries))}
			for i, e := range entries {
				if x := m[e.Name()]; x != nil {
					r.Values[i] = convs[i](x)
				}
			}
			return r
		}
	case duckdb.TYPE_MAP:
		return mapText
	case duckdb.TYPE_BOOLEAN, duckdb.TYPE_FLOAT, duckdb.TYPE_DOUBLE, duckdb.TYPE_BLOB, duckdb.TYPE_DATE,
		duckdb.TYPE_TIMESTAMP, duckdb.TYPE_TIMESTAMP_S, duckdb.TYPE_TIMESTAMP_MS, duckdb.TYPE_TIMESTAMP_NS,
		duckdb.TYPE_TIMESTAMP_TZ:
		return identity
	}
	return toText
}

// mapText renders a DuckDB MAP as DuckDB prints it ({k=v, …}); PostgreSQL
// has no such type.
func mapText(v any) any {
	m, ok := v.(duckdb.OrderedMap)
	if !ok {
		return toText(v)
	}
	var sb strings.Builder
	sb.WriteByte('{')
	vals := m.Values()
	for i, k := range m.Keys() {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "%v=%v", toText(k), toText(vals[i]))
	}
	sb.WriteByte('}')
	return sb.String()
}

func identity(v any) any { return v }

func toInt16(v any) any {
	switch x := v.(type) {
	case int8:
		return int16(x)
	case uint8:
		return int16(x)
	}
	return v
}

func toInt32(v any) any {
	if x, ok := v.(uint16); ok {
		return int32(x)
	}
	return v
}

func toInt64(v any) any {
	if x, ok := v.(uint32); ok {
		return int64(x)
	}
	return v
}

func toNumericText(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case duckdb.Decimal:
		return decimalText(x.Value, int(x.Scale))
	case *big.Int:
		return x.String()
	case uint64:
		return fmt.Sprint(x)
	}
	return fmt.Sprint(v)
}

func toText(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		return x
	case []byte:
		return string(x)
	}
	return fmt.Sprint(v)
}

func toTimeOfDay(v any) any {
	if t, ok := v.(time.Time); ok {
		return t.Format("15:04:05.999999")
	}
	return v
}

func toUUID(v any) any {
	switch x := v.(type) {
	case *duckdb.UUID:
		return [16]byte(*x)
	case duckdb.UUID:
		return [16]byte(x)
	case []byte:
		var u [16]byte
		copy(u[:], x)
		return u
	case string: // a uuid column read straight from its files (directscan.go)
		if u, err := uuid.Parse(x); err == nil {
			return [16]byte(u)
		}
	}
	return v
}

// toInterval converts a DuckDB interval to pgwire's.
func toInterval(v any) any {
	if iv, ok := v.(duckdb.Interval); ok {
		return pgtype.Interval{Months: iv.Months, Days: iv.Days, Microseconds: iv.Micros, Valid: true}
	}
	return v
}

// duckArg converts a decoded wire parameter into a value DuckDB binds.
func duckArg(v any) any {
	switch x := v.(type) {
	case [16]byte:
		return fmt.Sprintf("%x-%x-%x-%x-%x", x[0:4], x[4:6], x[6:8], x[8:10], x[10:16])
	case pgtype.Interval:
		if !x.Valid {
			return nil
		}
		return duckdb.Interval{Months: x.Months, Days: x.Days, Micros: x.Microseconds}
	}
	return v
}

// decimalText renders an unscaled decimal with exactly scale fractional
// digits, as PostgreSQL prints numeric(p,s) ("2.50", not "2.5").
func decimalText(v *big.Int, scale int) string {
	if v == nil {
		return "0"
	}
	digits := new(big.Int).Abs(v).String()
	if scale > 0 {
		if len(digits) <= scale {
			digits = strings.Repeat("0", scale-len(digits)+1) + digits
		}
		digits = digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
	}
	if v.Sign() < 0 {
		return "-" + digits
	}
	return digits
}
