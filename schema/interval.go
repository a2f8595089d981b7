package schema

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Interval columns.
//
// A PostgreSQL interval is three fields — months (int32), days (int32) and
// microseconds (int64) — kept apart (interval '1 mon' is not '30 days',
// though they compare equal). No Parquet or Arrow form that LakeSoul's
// engines write holds them losslessly: Parquet's INTERVAL logical type is
// months, days and milliseconds, and arrow-go's pqarrow cannot write
// Arrow's month_day_nano at all. So a lake interval column is, in its
// files and in table_schema, a 16-byte fixed-size binary (Arrow Java:
// {"name":"fixedsizebinary","byteWidth":16}, field metadata
// pg_type=interval) holding PostgreSQL's own binary form of the value,
// interval_send's: microseconds as a big-endian int64, then days and
// months as big-endian int32s. Other engines read the column as those
// bytes; it is the form every PostgreSQL binary decoder reads.
//
// In memory (scans, writes, Flight) the column is Arrow's month_day_nano
// interval (IntervalType), which DuckDB, Flight clients and the result
// encoders know as an interval. Conversion happens only at the file
// boundary: FileSchema/IntervalFileArray when writing, IntervalArray
// (reader widening) when reading. A month_day_nano value holds its time
// part in nanoseconds, so intervals whose time part exceeds about 106,751
// days (±2^63 ns) do not fit; such a value is refused with 22008 when
// written (IntervalFromMicros), never wrapped.

// IntervalPGType is the pg_type metadata of an interval column.
const IntervalPGType = "interval"

// IntervalType is the in-memory lake type of an interval column.
var IntervalType = arrow.FixedWidthTypes.MonthDayNanoInterval

// IntervalFileType is the type an interval column has in data files and
// in table_schema: interval_send's 16 bytes.
var IntervalFileType = &arrow.FixedSizeBinaryType{ByteWidth: 16}

// IsInterval reports whether dt is the in-memory type of an interval column.
func IsInterval(dt arrow.DataType) bool { return dt.ID() == arrow.INTERVAL_MONTH_DAY_NANO }

// ErrIntervalRange is the error of an interval whose time part does not fit
// the in-memory form, in PostgreSQL's words.
var ErrIntervalRange = sqlerr.New(sqlerr.DatetimeFieldOverflow, "interval out of range")

// IntervalFromMicros is the in-memory value of PostgreSQL's (months, days,
// microseconds), or ErrIntervalRange when the microseconds do not fit as
// nanoseconds.
func IntervalFromMicros(months, days int32, micros int64) (arrow.MonthDayNanoInterval, error) {
	if micros > math.MaxInt64/1000 || micros < math.MinInt64/1000 {
		return arrow.MonthDayNanoInterval{}, ErrIntervalRange
	}
	return arrow.MonthDayNanoInterval{Months: months, Days: days, Nanoseconds: micros * 1000}, nil
}

// IntervalMicros is the microsecond field of an in-memory interval (its
// nanoseconds are always whole microseconds: every value comes from
// IntervalFromMicros or a file).
func IntervalMicros(v arrow.MonthDayNanoInterval) int64 { return v.Nanoseconds / 1000 }

// FileSchema is sch as its data files store it: interval columns as
// IntervalFileType. It returns sch itself when no column is an interval.
func FileSchema(sch *arrow.Schema) *arrow.Schema {
	var fields []arrow.Field
	for i, f := range sch.Fields() {
		if !IsInterval(f.Type) {
			continue
		}
		if fields == nil {
			fields = sch.Fields()
		}
		fields[i].Type = IntervalFileType
	}
	if fields == nil {
		return sch
	}
	md := sch.Metadata()
	return arrow.NewSchema(fields, &md)
}

// IntervalFileArray converts an interval column to its file form (a new
// array); any other array is returned retained.
func IntervalFileArray(mem memory.Allocator, arr arrow.Array) arrow.Array {
	iv, ok := arr.(*array.MonthDayNanoInterval)
	if !ok {
		arr.Retain()
		return arr
	}
	b := array.NewFixedSizeBinaryBuilder(mem, IntervalFileType)
	defer b.Release()
	b.Reserve(iv.Len())
	var buf [16]byte
	for i := range iv.Len() {
		if iv.IsNull(i) {
			b.AppendNull()
			continue
		}
		v := iv.Value(i)
		binary.BigEndian.PutUint64(buf[0:], uint64(IntervalMicros(v)))
		binary.BigEndian.PutUint32(buf[8:], uint32(v.Days))
		binary.BigEndian.PutUint32(buf[12:], uint32(v.Months))
		b.Append(buf[:])
	}
	return b.NewArray()
}

// IntervalArray converts an interval column read from a file
// (IntervalFileType) to its in-memory form.
func IntervalArray(mem memory.Allocator, arr *array.FixedSizeBinary) (arrow.Array, error) {
	if w := arr.DataType().(*arrow.FixedSizeBinaryType).ByteWidth; w != 16 {
		return nil, fmt.Errorf("an interval column holds 16-byte values, not %d-byte ones", w)
	}
	b := array.NewMonthDayNanoIntervalBuilder(mem)
	defer b.Release()
	b.Reserve(arr.Len())
	for i := range arr.Len() {
		if arr.IsNull(i) {
			b.AppendNull()
			continue
		}
		v := arr.Value(i)
		iv, err := IntervalFromMicros(int32(binary.BigEndian.Uint32(v[12:])), int32(binary.BigEndian.Uint32(v[8:])),
			int64(binary.BigEndian.Uint64(v[0:])))
		if err != nil {
			return nil, err
		}
		b.Append(iv)
	}
	return b.NewArray(), nil
}
