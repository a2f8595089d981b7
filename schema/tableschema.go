package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// table_info.table_schema holds a table's schema as JSON in one of the two
// forms LakeSoul's engines write:
//
//   - Arrow Java's Schema.toJson form, {"fields":[{"name", "nullable",
//     "type":{"name":"int","bitWidth":64,"isSigned":true}, "children":[…],
//     "metadata":[{"key":…,"value":…}]}]}: what LakeSoul's current Spark,
//     Flink and Rust/Python clients write, and the only form its Rust
//     readers (the Python package, DataFusion, the Flight server) accept;
//   - Spark's StructType JSON, {"type":"struct","fields":[…]}: what older
//     LakeSoul Spark versions (and this server before) wrote; LakeSoul's JVM
//     readers still accept it.
//
// LakeSoul tells them apart by the first key (TableInfoDao.isArrowKindSchema:
// "fields" first); ParseTableSchema does the same. FormatTableSchema writes
// the Arrow Java form, so every LakeSoul engine reads what this server
// creates. The catalog's SQL (lakesoul_pg.schema_fields) reads both forms too.

// ParseTableSchema parses a table_schema value, in either form, into an
// Arrow schema of lake types. A column of a type this server cannot store or
// read (unsigned or unusual-width integers, times, intervals, structs, maps,
// timestamps not in microseconds …) is an error naming the column and type.
func ParseTableSchema(s string) (*arrow.Schema, error) {
	if isArrowJavaSchema(s) {
		return parseArrowJavaSchema(s)
	}
	return parseSparkSchema(s)
}

// FormatTableSchema renders an Arrow schema of lake types as table_schema
// JSON in Arrow Java's form, field metadata as key/value entries in key
// order (so equal schemas give equal text).
func FormatTableSchema(s *arrow.Schema) (string, error) {
	js := javaSchema{Fields: make([]javaField, s.NumFields())}
	for i, f := range s.Fields() {
		jf, err := toJavaField(f)
		if err != nil {
			return "", fmt.Errorf("column %q: %w", f.Name, err)
		}
		js.Fields[i] = jf
	}
	b, err := json.Marshal(js)
	return string(b), err
}

// isArrowJavaSchema is LakeSoul's test: the first key of the object is
// "fields" (Arrow Java) rather than "type" (Spark).
func isArrowJavaSchema(s string) bool {
	i := strings.IndexByte(s, '"')
	return i >= 0 && i+1 < len(s) && s[i+1] == 'f'
}

type javaSchema struct {
	Fields   []javaField  `json:"fields"`
	Metadata javaMetadata `json:"metadata,omitempty"`
}

type javaField struct {
	Name     string       `json:"name"`
	Nullable bool         `json:"nullable"`
	Type     javaType     `json:"type"`
	Children []javaField  `json:"children"`
	Metadata javaMetadata `json:"metadata"`
}

// javaType is an Arrow Java ArrowType: "name" and the properties of that
// kind of type. Precision is a string for floating point ("DOUBLE") and a
// number for decimals.
type javaType struct {
	Name      string          `json:"name"`
	BitWidth  *int            `json:"bitWidth,omitempty"`
	IsSigned  *bool           `json:"isSigned,omitempty"`
	Precision json.RawMessage `json:"precision,omitempty"`
	Scale     *int            `json:"scale,omitempty"`
	Unit      string          `json:"unit,omitempty"`
	Timezone  *string         `json:"timezone,omitempty"`
	ListSize  *int            `json:"listSize,omitempty"`
	ByteWidth *int            `json:"byteWidth,omitempty"`
}

type javaMetadataEntry struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// javaMetadata is field metadata: Arrow Java writes a list of key/value
// entries; LakeSoul's Rust reader also accepts an object, and so does this.
type javaMetadata []javaMetadataEntry

func (m *javaMetadata) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		var obj map[string]string
		if err := json.Unmarshal(b, &obj); err != nil {
			return err
		}
		*m = nil
		for k, v := range obj {
			*m = append(*m, javaMetadataEntry{Key: k, Value: v})
		}
		return nil
	}
	var entries []javaMetadataEntry
	if err := json.Unmarshal(b, &entries); err != nil {
		return err
	}
	*m = entries
	return nil
}

func (m javaMetadata) arrow() arrow.Metadata {
	if len(m) == 0 {
		return arrow.Metadata{}
	}
	keys, vals := make([]string, len(m)), make([]string, len(m))
	for i, e := range m {
		keys[i], vals[i] = e.Key, e.Value
	}
	return sortedMetadata(keys, vals)
}

func parseArrowJavaSchema(s string) (*arrow.Schema, error) {
	var js javaSchema
	if err := json.Unmarshal([]byte(s), &js); err != nil {
		return nil, fmt.Errorf("table schema: %w", err)
	}
	fields := make([]arrow.Field, len(js.Fields))
	for i, jf := range js.Fields {
		md := jf.Metadata.arrow()
		dt, err := fromJavaType(jf, md)
		if err != nil {
			return nil, fmt.Errorf("table schema: column %q: %w", jf.Name, err)
		}
		fields[i] = arrow.Field{Name: jf.Name, Type: dt, Nullable: jf.Nullable, Metadata: md}
	}
	return arrow.NewSchema(fields, nil), nil
}

func intPtr(v int) *int { return &v }

// javaTypeName is how an Arrow Java type reads in an error message.
func javaTypeName(t javaType) string {
	b, _ := json.Marshal(t)
	return string(b)
}

// fromJavaType is the lake type of an Arrow Java field (md: its metadata).
func fromJavaType(jf javaField, md arrow.Metadata) (arrow.DataType, error) {
	t := jf.Type
	unsupported := func() (arrow.DataType, error) {
		return nil, fmt.Errorf("unsupported type %s", javaTypeName(t))
	}
	bits := 0
	if t.BitWidth != nil {
		bits = *t.BitWidth
	}
	switch t.Name {
	case "int":
		if t.IsSigned != nil && !*t.IsSigned {
			return unsupported()
		}
		switch bits {
		case 64:
			return arrow.PrimitiveTypes.Int64, nil
		case 32:
			return arrow.PrimitiveTypes.Int32, nil
		case 16:
			return arrow.PrimitiveTypes.Int16, nil
		case 8:
			return arrow.PrimitiveTypes.Int8, nil
		}
	case "floatingpoint":
		var p string
		if json.Unmarshal(t.Precision, &p) == nil {
			switch strings.ToUpper(p) {
			case "DOUBLE":
				return arrow.PrimitiveTypes.Float64, nil
			case "SINGLE":
				return arrow.PrimitiveTypes.Float32, nil
			}
		}
	case "utf8", "largeutf8":
		return arrow.BinaryTypes.String, nil
	case "binary", "largebinary":
		return arrow.BinaryTypes.Binary, nil
	case "bool":
		return arrow.FixedWidthTypes.Boolean, nil
	case "date":
		if strings.EqualFold(t.Unit, "DAY") {
			return arrow.FixedWidthTypes.Date32, nil
		}
	case "timestamp":
		if !strings.EqualFold(t.Unit, "MICROSECOND") {
			return unsupported()
		}
		if t.Timezone != nil && *t.Timezone != "" {
			return TimestampUTC, nil
		}
		return Timestamp, nil
	case "decimal":
		var p int32
		if json.Unmarshal(t.Precision, &p) != nil || t.Scale == nil {
			return unsupported()
		}
		if t.BitWidth != nil && bits != 128 {
			return unsupported()
		}
		if p < 1 || p > 38 || *t.Scale < 0 || int32(*t.Scale) > p {
			return unsupported()
		}
		return &arrow.Decimal128Type{Precision: p, Scale: int32(*t.Scale)}, nil
	case "list", "largelist":
		if len(jf.Children) != 1 {
			return unsupported()
		}
		elem, err := fromJavaType(jf.Children[0], jf.Children[0].Metadata.arrow())
		if err != nil {
			return nil, err
		}
		for _, et := range arrayElemTypes {
			if arrow.TypeEqual(et, elem) {
				return arrow.ListOf(elem), nil
			}
		}
		return nil, fmt.Errorf("unsupported array element type %s", javaTypeName(jf.Children[0].Type))
	case "fixedsizebinary":
		// Only an interval column (interval.go) is a fixed-size binary.
		if pt, _ := md.GetValue(MetaPGType); pt == IntervalPGType && t.ByteWidth != nil && *t.ByteWidth == IntervalFileType.ByteWidth {
			return IntervalType, nil
		}
	case "fixedsizelist":
		pt, _ := md.GetValue(MetaPGType)
		if len(jf.Children) != 1 || t.ListSize == nil || jf.Children[0].Type.Name != "floatingpoint" ||
			string(jf.Children[0].Type.Precision) != `"SINGLE"` || pt != fmt.Sprintf("vector(%d)", *t.ListSize) {
			return unsupported()
		}
		return VectorType(*t.ListSize)
	}
	return unsupported()
}

// toJavaField is the Arrow Java field of a lake column.
func toJavaField(f arrow.Field) (javaField, error) {
	jf := javaField{Name: f.Name, Nullable: f.Nullable, Children: []javaField{}, Metadata: javaMetadata{}}
	keys, vals := f.Metadata.Keys(), f.Metadata.Values()
	md := sortedMetadata(keys, vals)
	for i, k := range md.Keys() {
		jf.Metadata = append(jf.Metadata, javaMetadataEntry{Key: k, Value: md.Values()[i]})
	}
	signed := true
	switch t := f.Type.(type) {
	case *arrow.Int64Type:
		jf.Type = javaType{Name: "int", BitWidth: intPtr(64), IsSigned: &signed}
	case *arrow.Int32Type:
		jf.Type = javaType{Name: "int", BitWidth: intPtr(32), IsSigned: &signed}
	case *arrow.Int16Type:
		jf.Type = javaType{Name: "int", BitWidth: intPtr(16), IsSigned: &signed}
	case *arrow.Int8Type:
		jf.Type = javaType{Name: "int", BitWidth: intPtr(8), IsSigned: &signed}
	case *arrow.Float64Type:
		jf.Type = javaType{Name: "floatingpoint", Precision: json.RawMessage(`"DOUBLE"`)}
	case *arrow.Float32Type:
		jf.Type = javaType{Name: "floatingpoint", Precision: json.RawMessage(`"SINGLE"`)}
	case *arrow.BooleanType:
		jf.Type = javaType{Name: "bool"}
	case *arrow.StringType:
		jf.Type = javaType{Name: "utf8"}
	case *arrow.BinaryType:
		jf.Type = javaType{Name: "binary"}
	case *arrow.Date32Type:
		jf.Type = javaType{Name: "date", Unit: "DAY"}
	case *arrow.TimestampType:
		if t.Unit != arrow.Microsecond {
			return jf, fmt.Errorf("unsupported type %s", t)
		}
		jf.Type = javaType{Name: "timestamp", Unit: "MICROSECOND"}
		if t.TimeZone != "" {
			tz := t.TimeZone
			jf.Type.Timezone = &tz
		}
	case *arrow.Decimal128Type:
		jf.Type = javaType{Name: "decimal", Precision: json.RawMessage(fmt.Sprint(t.Precision)),
			Scale: intPtr(int(t.Scale)), BitWidth: intPtr(128)}
	case *arrow.ListType:
		// Spark's Arrow conversion names a list's element field "element".
		elem := t.ElemField()
		elem.Name = "element"
		ef, err := toJavaField(elem)
		if err != nil {
			return jf, err
		}
		jf.Type = javaType{Name: "list"}
		jf.Children = []javaField{ef}
	case *arrow.MonthDayNanoIntervalType:
		// Stored as interval_send's 16 bytes (interval.go), marked by
		// its pg_type.
		if pt, _ := f.Metadata.GetValue(MetaPGType); pt != IntervalPGType {
			return jf, fmt.Errorf("an interval column needs pg_type %s in its metadata", IntervalPGType)
		}
		jf.Type = javaType{Name: "fixedsizebinary", ByteWidth: intPtr(IntervalFileType.ByteWidth)}
	case *arrow.FixedSizeListType:
		ef, err := toJavaField(t.ElemField())
		if err != nil {
			return jf, err
		}
		jf.Type = javaType{Name: "fixedsizelist", ListSize: intPtr(int(t.Len()))}
		jf.Children = []javaField{ef}
	default:
		return jf, fmt.Errorf("unsupported type %s", f.Type)
	}
	return jf, nil
}
