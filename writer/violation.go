package writer

import (
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Constraint errors name the relation as PostgreSQL does: by its name,
// unqualified (PostgreSQL's relation "Users", never LakeSoul's
// "default.Users"); every constraint error of the write path and of the
// engine is made here, so none can name it otherwise.

// NotNullViolation is 23502 for a null in column of t. When rec holds
// every column of t, the detail is PostgreSQL's "Failing row contains
// (…)." with row's values in the table's column order.
func NotNullViolation(t *catalog.Table, column string, rec arrow.RecordBatch, row int) *sqlerr.Error {
	e := sqlerr.New(sqlerr.NotNullViolation, "null value in column %q of relation %q violates not-null constraint", column, t.Name)
	e.Detail = FailingRow(t, rec, row)
	return e
}

// CheckViolation is 23514 for a row of t that breaks CHECK constraint
// name (detail as NotNullViolation's; "" without the row).
func CheckViolation(t *catalog.Table, name, detail string) *sqlerr.Error {
	e := sqlerr.New(sqlerr.CheckViolation, "new row for relation %q violates check constraint %q", t.Name, name)
	e.Detail = detail
	return e
}

// FailingRow is PostgreSQL's detail of a constraint error: "Failing row
// contains (1, null, x)." — the row's values as text in t's column order,
// null for NULL. It is "" when rec is nil or lacks a column of t (a partial
// upsert keeps columns it does not write, so their values are unknown
// here).
func FailingRow(t *catalog.Table, rec arrow.RecordBatch, row int) string {
	if rec == nil || row < 0 || row >= int(rec.NumRows()) {
		return ""
	}
	vals := make([]string, 0, t.Schema.NumFields())
	for _, f := range t.Schema.Fields() {
		idx := rec.Schema().FieldIndices(f.Name)
		if len(idx) == 0 {
			return ""
		}
		vals = append(vals, valueText(rec.Column(idx[0]), row))
	}
	return "Failing row contains (" + strings.Join(vals, ", ") + ")."
}

// valueText is a value as PostgreSQL's output function writes it in a
// row's text (timestamps with a zone in UTC).
func valueText(arr arrow.Array, i int) string {
	if arr.IsNull(i) {
		return "null"
	}
	switch a := arr.(type) {
	case *array.String:
		return a.Value(i)
	case *array.LargeString:
		return a.Value(i)
	case *array.Boolean:
		if a.Value(i) {
			return "t"
		}
		return "f"
	case *array.Int8:
		return strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Int16:
		return strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Int32:
		return strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Int64:
		return strconv.FormatInt(a.Value(i), 10)
	case *array.Float32:
		return strconv.FormatFloat(float64(a.Value(i)), 'g', -1, 32)
	case *array.Float64:
		return strconv.FormatFloat(a.Value(i), 'g', -1, 64)
	case *array.Decimal128:
		return a.Value(i).ToString(a.DataType().(*arrow.Decimal128Type).Scale)
	case *array.Date32:
		return a.Value(i).ToTime().Format("2006-01-02")
	case *array.Timestamp:
		tt := a.DataType().(*arrow.TimestampType)
		ts := a.Value(i).ToTime(tt.Unit).UTC()
		s := ts.Format("2006-01-02 15:04:05.999999")
		if tt.TimeZone != "" {
			s += "+00"
		}
		return s
	case *array.Binary:
		return `\x` + hex.EncodeToString(a.Value(i))
	case *array.List:
		start, end := a.ValueOffsets(i)
		elems := make([]string, 0, end-start)
		for j := int(start); j < int(end); j++ {
			v := valueText(a.ListValues(), j)
			if a.ListValues().IsNull(j) {
				v = "NULL"
			}
			elems = append(elems, v)
		}
		return "{" + strings.Join(elems, ",") + "}"
	}
	return arr.ValueStr(i)
}

// firstNull is the index of arr's first null (-1: none).
func firstNull(arr arrow.Array) int {
	for i := 0; i < arr.Len(); i++ {
		if arr.IsNull(i) {
			return i
		}
	}
	return -1
}
