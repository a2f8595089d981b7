package engine

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/duckdb/duckdb-go/v2"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/pgjson"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/schema"
)

// Result columns in PostgreSQL's types. DuckDB's result types decide the
// columns (values.go), except where one DuckDB type stands for several
// PostgreSQL types: VARCHAR for text, varchar(n), char(n), json and jsonb
// (lake columns of those types are text in their files), JSON for json and
// jsonb, and VARCHAR for numeric results rendered as PostgreSQL's text
// (numericresult.go). There the type inferTypes found (pgtypes.go) decides, and jsonb
// values are rendered canonically. DuckDB's JSON values must reach the
// server as text (duckdb-go decodes them), so a query with JSON results is
// executed wrapped in casts to VARCHAR (jsonAsText).

// refineColumns applies the inferred result types out to cols and convs.
func refineColumns(cols []pgwire.Column, convs []valueConv, out []namedType) {
	if len(out) != len(cols) {
		return
	}
	for i := range cols {
		t := out[i].t
		if !t.known() {
			continue
		}
		c := &cols[i]
		switch {
		case c.TypeOID == schema.OIDText && (t.oid == schema.OIDVarchar || t.oid == schema.OIDBPChar):
			c.TypeOID, c.TypeModifier = t.oid, t.typmod
			if padsChar(*c) {
				convs[i] = charPadded(convs[i], int(c.TypeModifier-4))
			}
		case (c.TypeOID == schema.OIDText || c.TypeOID == schema.OIDJSON) && t.isJSON():
			c.TypeOID = t.oid
			if t.oid == schema.OIDJSONB {
				convs[i] = jsonbText(convs[i])
			}
		case c.TypeOID == schema.ArrayOID(schema.OIDText) && t.oid == schema.ArrayOID(schema.OIDVarchar):
			c.TypeOID = t.oid
		case c.TypeOID == schema.ArrayOID(schema.OIDJSON) && t.oid == schema.ArrayOID(schema.OIDJSONB):
			c.TypeOID = t.oid
			convs[i] = jsonbText(convs[i])
		case c.TypeOID == schema.OIDText && isEnumOID(t.oid): // enum.go
			c.TypeOID = t.oid
		case c.TypeOID == schema.OIDText && t.rowScale:
			// PostgreSQL's text of a numeric value (numericresult.go)
			c.TypeOID, c.TypeModifier = schema.OIDNumeric, -1
		case c.TypeOID == schema.OIDNumeric && t.isNumeric():
			c.TypeModifier = t.typmod
		case c.TypeOID == schema.ArrayOID(schema.OIDFloat4) && t.oid == schema.VectorOID():
			c.TypeOID, c.TypeModifier = t.oid, t.typmod
			convs[i] = toVector
		}
	}
}

// padsChar says whether result column c is character(n), whose values
// PostgreSQL shows blank-padded to n characters: the lake stores and
// computes them without trailing spaces (lakeWriteCast, and the cast in
// pgsemantics.go), results pad them (charPadded).
func padsChar(c pgwire.Column) bool { return c.TypeOID == schema.OIDBPChar && c.TypeModifier > 4 }

// charPadded is conv with its text values blank-padded to n characters.
func charPadded(conv valueConv, n int) valueConv {
	return func(v any) any {
		v = conv(v)
		if str, ok := v.(string); ok {
			if k := utf8.RuneCountInString(str); k < n {
				return str + strings.Repeat(" ", n-k)
			}
		}
		return v
	}
}

// jsonbText renders the JSON text conv yields (or its elements) as jsonb
// prints it.
func jsonbText(conv valueConv) valueConv {
	var canon func(v any) any
	canon = func(v any) any {
		switch x := v.(type) {
		case string:
			if c, err := pgjson.Canonical(x); err == nil {
				return c
			}
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = canon(e)
			}
			return out
		}
		return v
	}
	return func(v any) any { return canon(conv(v)) }
}

// jsonAsText wraps query so that result columns holding DuckDB's JSON
// (alone, in lists, structs or maps) come back as text; false when no
// column does.
func jsonAsText(query string, types []duckdb.TypeInfo) (string, bool) {
	var exprs, names []string
	wrapped := false
	for i, ti := range types {
		col := fmt.Sprintf("c%d", i)
		names = append(names, col)
		expr := "lakesoul_result." + col
		if _, _, _, isJSON := duckPGType(ti); isJSON {
			t, ok := duckTypeSQL(ti)
			if !ok {
				t = "VARCHAR"
			}
			expr = "CAST(" + expr + " AS " + t + ")"
			wrapped = true
		}
		exprs = append(exprs, expr)
	}
	if !wrapped {
		return "", false
	}
	return "SELECT " + strings.Join(exprs, ", ") + " FROM (" + query + ") AS lakesoul_result(" + strings.Join(names, ", ") + ")", true
}

// duckBaseTypes are the SQL names of DuckDB's simple types.
var duckBaseTypes = map[duckdb.Type]string{
	duckdb.TYPE_BOOLEAN: "BOOLEAN", duckdb.TYPE_TINYINT: "TINYINT", duckdb.TYPE_SMALLINT: "SMALLINT",
	duckdb.TYPE_INTEGER: "INTEGER", duckdb.TYPE_BIGINT: "BIGINT", duckdb.TYPE_UTINYINT: "UTINYINT",
	duckdb.TYPE_USMALLINT: "USMALLINT", duckdb.TYPE_UINTEGER: "UINTEGER", duckdb.TYPE_UBIGINT: "UBIGINT",
	duckdb.TYPE_HUGEINT: "HUGEINT", duckdb.TYPE_UHUGEINT: "UHUGEINT", duckdb.TYPE_FLOAT: "FLOAT",
	duckdb.TYPE_DOUBLE: "DOUBLE", duckdb.TYPE_VARCHAR: "VARCHAR", duckdb.TYPE_BLOB: "BLOB", duckdb.TYPE_DATE: "DATE",
	duckdb.TYPE_TIME: "TIME", duckdb.TYPE_TIMESTAMP: "TIMESTAMP", duckdb.TYPE_TIMESTAMP_S: "TIMESTAMP_S",
	duckdb.TYPE_TIMESTAMP_MS: "TIMESTAMP_MS", duckdb.TYPE_TIMESTAMP_NS: "TIMESTAMP_NS",
	duckdb.TYPE_TIMESTAMP_TZ: "TIMESTAMPTZ", duckdb.TYPE_INTERVAL: "INTERVAL", duckdb.TYPE_UUID: "UUID",
}

// duckTypeSQL spells ti for a cast, with JSON as VARCHAR; false for types
// it cannot spell (ENUM, UNION …).
func duckTypeSQL(ti duckdb.TypeInfo) (string, bool) {
	switch ti.InternalType() {
	case duckdb.TYPE_DECIMAL:
		d := ti.Details().(*duckdb.DecimalDetails)
		return fmt.Sprintf("DECIMAL(%d,%d)", d.Width, d.Scale), true
	case duckdb.TYPE_LIST:
		child, ok := duckTypeSQL(listChild(ti))
		return child + "[]", ok
	case duckdb.TYPE_ARRAY:
		d := ti.Details().(*duckdb.ArrayDetails)
		child, ok := duckTypeSQL(d.Child)
		return fmt.Sprintf("%s[%d]", child, d.Size), ok
	case duckdb.TYPE_STRUCT:
		var fields []string
		for _, e := range ti.Details().(*duckdb.StructDetails).Entries {
			t, ok := duckTypeSQL(e.Info())
			if !ok {
				return "", false
			}
			fields = append(fields, quoteIdent(e.Name())+" "+t)
		}
		return "STRUCT(" + strings.Join(fields, ", ") + ")", true
	case duckdb.TYPE_MAP:
		d := ti.Details().(*duckdb.MapDetails)
		k, ok1 := duckTypeSQL(d.Key)
		v, ok2 := duckTypeSQL(d.Value)
		return "MAP(" + k + ", " + v + ")", ok1 && ok2
	}
	name, ok := duckBaseTypes[ti.InternalType()]
	return name, ok
}

// lakeWriteCast is the DuckDB expression writing expr into lake column f:
// a cast to the column's type, through uuid or json for columns declared
// so (PostgreSQL refuses text that is no uuid or json; a uuid is stored in
// its canonical spelling, a jsonb value in jsonb's canonical text), and
// through PostgreSQL's assignment to varchar(n) and char(n)
// (lakesoul_char_assign: 22001 for a longer value unless the excess is
// spaces; a char(n) value is stored without trailing spaces, which char(n)
// does not tell apart). Every SQL write path casts its values here.
func lakeWriteCast(expr string, f arrow.Field) string {
	if dims := schema.VectorDims(f); dims > 0 {
		return vectorWriteCast(expr, dims)
	}
	oid, mod := schema.PGTypeOf(f)
	if _, text := f.Type.(*arrow.StringType); text {
		switch oid {
		case schema.OIDVarchar, schema.OIDBPChar:
			if mod >= 4 {
				return fmt.Sprintf("lakesoul_char_assign(CAST(%s AS VARCHAR), %d, '%s', %t)",
					expr, mod-4, pgTypeName(f), oid == schema.OIDBPChar)
			}
			if oid == schema.OIDBPChar { // bpchar without a length
				return "rtrim(CAST(" + expr + " AS VARCHAR), ' ')"
			}
		case schema.OIDUUID:
			return "CAST(CAST(" + expr + " AS UUID) AS VARCHAR)"
		case schema.OIDJSON:
			return "CAST(CAST(" + expr + " AS JSON) AS VARCHAR)"
		case schema.OIDJSONB:
			return "lakesoul_jsonb_canonical(CAST(" + expr + " AS VARCHAR))"
		}
	}
	return "CAST(" + expr + " AS " + schema.DuckDBType(f.Type) + ")"
}

// lakeStoreCast is lakeWriteCast for a value a statement carries over from
// the row it read instead of assigning it (the columns an UPDATE does not
// set, the rows a copy-on-write change keeps, the old row ON CONFLICT DO
// UPDATE keeps): the column's type without varchar(n)/char(n) assignment,
// which applies to assigned values only (assignedValue), so a value stored
// before the rule held, or by another LakeSoul writer, stays as it is.
func lakeStoreCast(expr string, f arrow.Field) string {
	if _, ok := charRuleOf(f); ok { // charassign.go
		return "CAST(" + expr + " AS VARCHAR)"
	}
	return lakeWriteCast(expr, f)
}

// assignedValue is val assigned to column f (declared, declaredField) as a
// statement's expression: varchar(n) and char(n) get lakeWriteCast's
// assignment (lakesoul_char_assign), other values are val. Statements whose
// rows are cast by lakeStoreCast wrap each value they assign with it.
func assignedValue(val *pg_query.Node, f arrow.Field) *pg_query.Node {
	r, ok := charRuleOf(f)
	if !ok {
		return val
	}
	v := makeCast(val, "varchar")
	if r.max < 0 {
		return makeCall("rtrim", v, pg_query.MakeAConstStrNode(" ", -1))
	}
	pad := &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{Val: &pg_query.A_Const_Boolval{Boolval: &pg_query.Boolean{Boolval: r.pad}}}}}
	return makeCall("lakesoul_char_assign", v, pg_query.MakeAConstIntNode(int64(r.max), -1), pg_query.MakeAConstStrNode(r.name, -1), pad)
}

// lakeFieldTypeName is the SQL type an untyped value written into column f
// takes: the declared uuid, json or jsonb, else the lake type.
func lakeFieldTypeName(f arrow.Field) string {
	if _, text := f.Type.(*arrow.StringType); text {
		switch oid, _ := schema.PGTypeOf(f); oid {
		case schema.OIDUUID:
			return "uuid"
		case schema.OIDJSON, schema.OIDJSONB:
			return "json"
		}
	}
	return lakeTypeName(f.Type)
}

// duckReadType is the DuckDB type a lake column is read as: UUID for a
// uuid column (as lakesoul_scan presents it, scan.go), else its lake type.
func duckReadType(f arrow.Field) string {
	if oid, _ := schema.PGTypeOf(f); oid == schema.OIDUUID {
		if _, text := f.Type.(*arrow.StringType); text {
			return "UUID"
		}
	}
	return schema.DuckDBType(f.Type)
}
