package engine

import (
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/duckdb/duckdb-go/v2"

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
	conv := identity
	switch ti.InternalType() {
	case duckdb.TYPE_BOOLEAN:
		col.TypeOID, col.TypeSize = schema.OIDBool, 1
	case duckdb.TYPE_TINYINT, duckdb.TYPE_UTINYINT, duckdb.TYPE_SMALLINT:
		col.TypeOID, col.TypeSize = schema.OIDInt2, 2
		conv = toInt16
	case duckdb.TYPE_USMALLINT, duckdb.TYPE_INTEGER:
		col.TypeOID, col.TypeSize = schema.OIDInt4, 4
		conv = toInt32
	case duckdb.TYPE_UINTEGER, duckdb.TYPE_BIGINT:
		col.TypeOID, col.TypeSize = schema.OIDInt8, 8
		conv = toInt64
	case duckdb.TYPE_UBIGINT, duckdb.TYPE_HUGEINT, duckdb.TYPE_UHUGEINT, duckdb.TYPE_BIGNUM:
		col.TypeOID = schema.OIDNumeric
		conv = toNumericText
	case duckdb.TYPE_FLOAT:
		col.TypeOID, col.TypeSize = schema.OIDFloat4, 4
	case duckdb.TYPE_DOUBLE:
		col.TypeOID, col.TypeSize = schema.OIDFloat8, 8
	case duckdb.TYPE_DECIMAL:
		col.TypeOID = schema.OIDNumeric
		if d, ok := ti.Details().(*duckdb.DecimalDetails); ok {
			col.TypeModifier = int32(d.Width)<<16 | int32(d.Scale) + 4
		}
		conv = toNumericText
	case duckdb.TYPE_VARCHAR, duckdb.TYPE_ENUM:
		col.TypeOID = schema.OIDText
		if ti.Alias() == "JSON" {
			col.TypeOID = schema.OIDJSON
		}
		conv = toText
	case duckdb.TYPE_BLOB:
		col.TypeOID = schema.OIDBytea
	case duckdb.TYPE_DATE:
		col.TypeOID, col.TypeSize = schema.OIDDate, 4
	case duckdb.TYPE_TIME:
		col.TypeOID, col.TypeSize = schema.OIDTime, 8
		conv = toTimeOfDay
	case duckdb.TYPE_TIMESTAMP, duckdb.TYPE_TIMESTAMP_S, duckdb.TYPE_TIMESTAMP_MS, duckdb.TYPE_TIMESTAMP_NS:
		col.TypeOID, col.TypeSize = schema.OIDTimestamp, 8
	case duckdb.TYPE_TIMESTAMP_TZ:
		col.TypeOID, col.TypeSize = schema.OIDTimestamptz, 8
	case duckdb.TYPE_UUID:
		col.TypeOID, col.TypeSize = schema.OIDUUID, 16
		conv = toUUID
	case duckdb.TYPE_INTERVAL:
		col.TypeOID = schema.OIDText
		conv = toText
	default:
		// Lists, structs, maps and the rest are shown as text until the wire
		// layer encodes PostgreSQL arrays.
		col.TypeOID = schema.OIDText
		conv = toText
	}
	return col, conv
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
	case duckdb.Interval:
		return formatInterval(x)
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
	}
	return v
}

// formatInterval renders an interval in PostgreSQL's "postgres" style.
func formatInterval(iv duckdb.Interval) string {
	out := ""
	if iv.Months != 0 {
		y, m := iv.Months/12, iv.Months%12
		if y != 0 {
			out += fmt.Sprintf("%d year%s ", y, plural(int64(y)))
		}
		if m != 0 {
			out += fmt.Sprintf("%d mon%s ", m, plural(int64(m)))
		}
	}
	if iv.Days != 0 {
		out += fmt.Sprintf("%d day%s ", iv.Days, plural(int64(iv.Days)))
	}
	if iv.Micros != 0 || out == "" {
		us := iv.Micros
		sign := ""
		if us < 0 {
			sign, us = "-", -us
		}
		h, m, s, frac := us/3600e6, (us/60e6)%60, (us/1e6)%60, us%1e6
		out += fmt.Sprintf("%s%02d:%02d:%02d", sign, h, m, s)
		if frac != 0 {
			out += fmt.Sprintf(".%06d", frac)
		}
	}
	return trimSpace(out)
}

func plural(n int64) string {
	if n == 1 || n == -1 {
		return ""
	}
	return "s"
}

func trimSpace(s string) string {
	for len(s) > 0 && s[len(s)-1] == ' ' {
		s = s[:len(s)-1]
	}
	return s
}

// duckArg converts a decoded wire parameter into a value DuckDB binds.
func duckArg(v any) any {
	switch x := v.(type) {
	case [16]byte:
		return fmt.Sprintf("%x-%x-%x-%x-%x", x[0:4], x[4:6], x[6:8], x[8:10], x[10:16])
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
