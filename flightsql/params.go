package flightsql

import (
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/lakesoul-go/lakesoul/schema"
)

// maxParamRows bounds the parameter rows one DoPut may bind.
const maxParamRows = 1 << 16

// paramRows reads the parameter batches of a DoPut into rows of values as
// pgwire hands a statement its parameters: one value per parameter, of the
// Go type its PostgreSQL type oids[i] decodes to, nil for NULL.
func paramRows(rdr flight.MessageReader, oids []uint32) ([][]any, error) {
	if rdr == nil {
		return nil, nil
	}
	var out [][]any
	for rdr.Next() {
		rec := rdr.RecordBatch()
		if int(rec.NumCols()) != len(oids) {
			return nil, status.Errorf(codes.InvalidArgument, "statement has %d parameters, the batch %d columns", len(oids), rec.NumCols())
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			if len(out) >= maxParamRows {
				return nil, status.Errorf(codes.InvalidArgument, "more than %d parameter rows", maxParamRows)
			}
			row := make([]any, len(oids))
			for j, col := range rec.Columns() {
				v, err := paramValue(col, i, oids[j])
				if err != nil {
					return nil, status.Errorf(codes.InvalidArgument, "parameter $%d: %v", j+1, err)
				}
				row[j] = v
			}
			out = append(out, row)
		}
	}
	if err := rdr.Err(); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "parameters: %v", err)
	}
	return out, nil
}

// paramValue is value i of arr as a parameter of type oid.
func paramValue(arr arrow.Array, i int, oid uint32) (any, error) {
	if arr.IsNull(i) {
		return nil, nil
	}
	if u, ok := arr.(*array.DenseUnion); ok { // the driver's parameters
		child := u.Field(u.ChildID(i))
		return paramValue(child, int(u.ValueOffset(i)), oid)
	}
	var v any
	switch a := arr.(type) {
	case *array.Boolean:
		v = a.Value(i)
	case *array.Int8:
		v = int64(a.Value(i))
	case *array.Int16:
		v = int64(a.Value(i))
	case *array.Int32:
		v = int64(a.Value(i))
	case *array.Int64:
		v = a.Value(i)
	case *array.Uint8:
		v = int64(a.Value(i))
	case *array.Uint16:
		v = int64(a.Value(i))
	case *array.Uint32:
		v = int64(a.Value(i))
	case *array.Float32:
		v = float64(a.Value(i))
	case *array.Float64:
		v = a.Value(i)
	case *array.String:
		v = a.Value(i)
	case *array.LargeString:
		v = a.Value(i)
	case *array.Binary:
		v = a.Value(i)
	case *array.Date32:
		v = a.Value(i).ToTime()
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		v = a.Value(i).ToTime(unit).UTC()
	case *array.Decimal128:
		v = a.Value(i).ToString(a.DataType().(*arrow.Decimal128Type).Scale)
	default:
		return nil, fmt.Errorf("Arrow type %s is not supported as a parameter", arr.DataType())
	}
	return coerceParam(v, oid), nil
}

// coerceParam gives v the Go type of parameter type oid where they differ
// only in width or spelling (an int64 for an int4, a number for text).
func coerceParam(v any, oid uint32) any {
	switch oid {
	case schema.OIDInt2, schema.OIDInt4, schema.OIDInt8:
		if f, ok := v.(float64); ok && f == float64(int64(f)) {
			v = int64(f)
		}
		if n, ok := v.(int64); ok {
			switch oid {
			case schema.OIDInt2:
				return int16(n)
			case schema.OIDInt4:
				return int32(n)
			}
			return n
		}
	case schema.OIDFloat4, schema.OIDFloat8:
		if n, ok := v.(int64); ok {
			return float64(n)
		}
	case schema.OIDText, schema.OIDVarchar, schema.OIDBPChar, 0:
		switch x := v.(type) {
		case string:
			return x
		case time.Time:
			return x.Format(time.RFC3339Nano)
		case []byte:
			return x
		}
		return fmt.Sprint(v)
	}
	return v
}
