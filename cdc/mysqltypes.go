package cdc

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/lakesoul-go/lakesoul/schema"
)

// MySQL columns are described with the same Column as PostgreSQL ones:
// the PostgreSQL type that holds them (below), and MySQL's own type in
// MySQL, for the value conversions.
//
//	tinyint, smallint, mediumint, int, bigint → smallint … bigint (one size up when unsigned;
//	                                            bigint unsigned → numeric(20,0))
//	decimal(p,s)                            → numeric(p,s)
//	float, double                           → real, double precision
//	char(n), varchar(n)                     → varchar(n)
//	tinytext … longtext, json               → text
//	binary, varbinary, tinyblob … longblob  → bytea
//	date, datetime, timestamp               → date, timestamp, timestamptz (UTC)
//	year                                    → smallint
//	bit(n)                                  → bigint
//	enum, set, time and others              → text (enum/set as their labels)

// mysqlColumn maps a MySQL column type: dataType as information_schema's
// DATA_TYPE (lower case), columnType as COLUMN_TYPE ("int(10) unsigned",
// "enum('a','b')"), precision/scale/length as declared (-1: none).
func mysqlColumn(name, dataType, columnType string, precision, scale, length int) Column {
	c := Column{Name: name, TypeOID: schema.OIDText, TypeMod: -1, MySQL: dataType}
	unsigned := strings.Contains(strings.ToLower(columnType), "unsigned")
	c.Unsigned = unsigned
	switch dataType {
	case "tinyint":
		c.TypeOID = schema.OIDInt2
	case "smallint":
		c.TypeOID = schema.OIDInt2
		if unsigned {
			c.TypeOID = schema.OIDInt4
		}
	case "mediumint":
		c.TypeOID = schema.OIDInt4
	case "int", "integer":
		c.TypeOID = schema.OIDInt4
		if unsigned {
			c.TypeOID = schema.OIDInt8
		}
	case "bigint":
		c.TypeOID = schema.OIDInt8
		if unsigned {
			c.TypeOID, c.TypeMod = schema.OIDNumeric, (20<<16)+4
		}
	case "decimal", "numeric":
		if precision < 1 {
			precision = 10
		}
		c.TypeOID, c.TypeMod = schema.OIDNumeric, int32(precision<<16|max(scale, 0))+4
	case "float":
		c.TypeOID = schema.OIDFloat4
	case "double", "real":
		c.TypeOID = schema.OIDFloat8
	case "char", "varchar":
		c.TypeOID = schema.OIDVarchar
		if length > 0 {
			c.TypeMod = int32(length) + 4
		}
	case "binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob":
		c.TypeOID = schema.OIDBytea
	case "date":
		c.TypeOID = schema.OIDDate
	case "datetime":
		c.TypeOID = schema.OIDTimestamp
	case "timestamp":
		c.TypeOID = schema.OIDTimestamptz
	case "year":
		c.TypeOID = schema.OIDInt2
	case "bit":
		c.TypeOID = schema.OIDInt8
	case "enum", "set":
		c.Labels = enumLabels(columnType)
	}
	return c
}

// enumLabels parses the labels of enum('a','b”c') / set(…).
func enumLabels(columnType string) []string {
	i := strings.IndexByte(columnType, '(')
	if i < 0 {
		return nil
	}
	var out []string
	s := columnType[i+1:]
	for len(s) > 0 && s[0] == '\'' {
		var b strings.Builder
		j := 1
		for j < len(s) {
			if s[j] == '\'' {
				if j+1 < len(s) && s[j+1] == '\'' {
					b.WriteByte('\'')
					j += 2
					continue
				}
				break
			}
			if s[j] == '\\' && j+1 < len(s) {
				j++
			}
			b.WriteByte(s[j])
			j++
		}
		out = append(out, b.String())
		s = strings.TrimLeft(s[min(j+1, len(s)):], ", ")
	}
	return out
}

// mysqlText renders a MySQL value in the text form appendText reads for
// the column's lake type. fromBinlog: the value is the binary log's
// rendering (enum and set as numbers) rather than a query's.
func mysqlText(c Column, raw []byte, fromBinlog bool) ([]byte, error) {
	switch c.MySQL {
	case "binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob":
		out := make([]byte, 2+hex.EncodedLen(len(raw)))
		out[0], out[1] = '\\', 'x'
		hex.Encode(out[2:], raw)
		return out, nil
	case "bit":
		var n uint64
		for _, b := range raw {
			n = n<<8 | uint64(b)
		}
		return strconv.AppendInt(nil, int64(n), 10), nil
	case "enum":
		if !fromBinlog {
			return raw, nil
		}
		i, err := strconv.Atoi(string(raw))
		if err != nil || i < 0 || i > len(c.Labels) {
			return nil, fmt.Errorf("enum value %q out of range", raw)
		}
		if i == 0 {
			return []byte{}, nil // MySQL's '' for invalid values
		}
		return []byte(c.Labels[i-1]), nil
	case "set":
		if !fromBinlog {
			return raw, nil
		}
		bits, err := strconv.ParseUint(string(raw), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("set value %q: %w", raw, err)
		}
		var labels []string
		for i, l := range c.Labels {
			if bits&(1<<i) != 0 {
				labels = append(labels, l)
			}
		}
		return []byte(strings.Join(labels, ",")), nil
	case "date", "datetime", "timestamp":
		if strings.HasPrefix(string(raw), "0000-00-00") {
			return nil, fmt.Errorf("zero date %q cannot be stored", raw)
		}
	}
	return raw, nil
}
