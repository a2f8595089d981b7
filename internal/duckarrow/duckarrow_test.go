package duckarrow_test

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/duckdb/duckdb-go/v2"

	"github.com/lakesoul-go/lakesoul/internal/duckarrow"
)

// testSchema has a column of every type the engine hands over in bulk.
var testSchema = arrow.NewSchema([]arrow.Field{
	{Name: "i8", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
	{Name: "i16", Type: arrow.PrimitiveTypes.Int16, Nullable: true},
	{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "i64", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
	{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
	{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
	{Name: "tstz", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
	{Name: "dec", Type: &arrow.Decimal128Type{Precision: 18, Scale: 3}, Nullable: true},
	{Name: "dec38", Type: &arrow.Decimal128Type{Precision: 38, Scale: 2}, Nullable: true},
}, nil)

// testBatch builds n rows; row i is NULL in every column when i%7 == 3.
func testBatch(n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, testSchema)
	defer b.Release()
	for i := range n {
		if i%7 == 3 {
			for f := range b.Fields() {
				b.Field(f).AppendNull()
			}
			continue
		}
		b.Field(0).(*array.Int8Builder).Append(int8(i))
		b.Field(1).(*array.Int16Builder).Append(int16(i))
		b.Field(2).(*array.Int32Builder).Append(int32(i))
		b.Field(3).(*array.Int64Builder).Append(int64(i) * 1000003)
		b.Field(4).(*array.Float32Builder).Append(float32(i) / 2)
		b.Field(5).(*array.Float64Builder).Append(float64(i) / 4)
		b.Field(6).(*array.BooleanBuilder).Append(i%2 == 0)
		b.Field(7).(*array.StringBuilder).Append(fmt.Sprintf("row %d %s", i, strings.Repeat("x", i%20)))
		b.Field(8).(*array.BinaryBuilder).Append([]byte{byte(i), 0, byte(i >> 8)})
		b.Field(9).(*array.Date32Builder).Append(arrow.Date32(i))
		b.Field(10).(*array.TimestampBuilder).Append(arrow.Timestamp(int64(i) * 1_000_001))
		b.Field(11).(*array.TimestampBuilder).Append(arrow.Timestamp(int64(i) * 3_000_001))
		b.Field(12).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(i)*12345 - 7))
		b.Field(13).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(i) * -99))
	}
	return b.NewRecordBatch()
}

// bulkSource is a table function serving one batch in slices, each slice
// a chunk filled by duckarrow.Fill.
type bulkSource struct {
	conn  duckarrow.Conn
	rec   arrow.RecordBatch
	slice int
	next  atomic.Int64
	infos []duckdb.ColumnInfo
}

func (s *bulkSource) ColumnInfos() []duckdb.ColumnInfo     { return s.infos }
func (s *bulkSource) Cardinality() *duckdb.CardinalityInfo { return nil }
func (s *bulkSource) Init() duckdb.ParallelTableSourceInfo {
	return duckdb.ParallelTableSourceInfo{MaxThreads: 2}
}
func (s *bulkSource) NewLocalState() any { return nil }

func (s *bulkSource) FillChunk(_ any, chunk duckdb.DataChunk) error {
	start := int(s.next.Add(1)-1) * s.slice
	if start >= int(s.rec.NumRows()) {
		return chunk.SetSize(0)
	}
	end := min(start+s.slice, int(s.rec.NumRows()))
	// Only projected columns are handed over, as the engine does.
	var cols []arrow.Array
	var fields []arrow.Field
	var dst []int
	for c := range int(s.rec.NumCols()) {
		if _, err := chunk.GetVector(c); err == nil {
			cols = append(cols, array.NewSlice(s.rec.Column(c), int64(start), int64(end)))
			fields = append(fields, s.rec.Schema().Field(c))
			dst = append(dst, c)
		}
	}
	sub := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(end-start))
	for _, c := range cols {
		c.Release()
	}
	defer sub.Release()
	sch, err := duckarrow.NewSchema(s.conn, sub.Schema())
	if err != nil {
		return err
	}
	defer sch.Close()
	if err := duckarrow.Fill(s.conn, sch, sub, &chunk, dst); err != nil {
		return err
	}
	return chunk.SetSize(end - start)
}

func duckTypeOf(t *testing.T, dt arrow.DataType) duckdb.TypeInfo {
	t.Helper()
	var ti duckdb.TypeInfo
	var err error
	switch x := dt.(type) {
	case *arrow.Int8Type:
		ti, err = duckdb.NewTypeInfo(duckdb.TYPE_TINYINT)
	case *arrow.Int16Type:
		ti, err = duckdb.NewTypeInfo(duckdb.TYPE_SMALLINT)
	case *arrow.Int32Type:
		ti, err = duckdb.NewTypeInfo(duckdb.TYPE_INTEGER)
	case *arrow.Int64Type:
		ti, err = duckdb.NewTypeInfo(duckdb.TYPE_BIGINT)
	case *arrow.Float32Type:
		ti, err = duckdb.NewTypeInfo(duckdb.TYPE_FLOAT)
	case *arrow.Float64Type:
		ti, err = duckdb.NewTypeInfo(duckdb.TYPE_DOUBLE)
	case *arrow.BooleanType:
		ti, err = duckdb.NewTypeInfo(duckdb.TYPE_BOOLEAN)
	case *arrow.StringType:
		ti, err = duckdb.NewTypeInfo(duckdb.TYPE_VARCHAR)
	case *arrow.BinaryType:
		ti, err = duckdb.NewTypeInfo(duckdb.TYPE_BLOB)
	case *arrow.Date32Type:
		ti, err = duckdb.NewTypeInfo(duckdb.TYPE_DATE)
	case *arrow.TimestampType:
		if x.TimeZone != "" {
			ti, err = duckdb.NewTypeInfo(duckdb.TYPE_TIMESTAMP_TZ)
		} else {
			ti, err = duckdb.NewTypeInfo(duckdb.TYPE_TIMESTAMP)
		}
	case *arrow.Decimal128Type:
		ti, err = duckdb.NewDecimalInfo(uint8(x.Precision), uint8(x.Scale))
	default:
		t.Fatalf("no DuckDB type for %s", dt)
	}
	if err != nil {
		t.Fatal(err)
	}
	return ti
}

func openDB(t *testing.T) (*sql.DB, *sql.Conn, *sql.Conn) {
	t.Helper()
	if err := duckarrow.Available(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	conv, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conv.Close() })
	q, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return db, conv, q
}

// A chunk filled in bulk holds exactly the batch's values, NULLs and
// slice offsets included, whatever columns the query projects, and
// outlives the Go references to the batch (DuckDB holds it).
func TestFillMatchesValues(t *testing.T) {
	_, conv, q := openDB(t)
	ctx := context.Background()
	c, err := duckarrow.ConnOf(conv)
	if err != nil {
		t.Fatal(err)
	}
	const rows = 5000
	rec := testBatch(rows)
	defer rec.Release()
	var infos []duckdb.ColumnInfo
	for _, f := range testSchema.Fields() {
		infos = append(infos, duckdb.ColumnInfo{Name: f.Name, T: duckTypeOf(t, f.Type)})
	}
	fn := duckdb.ParallelChunkTableFunction{
		BindArguments: func(map[string]any, ...any) (duckdb.ParallelChunkTableSource, error) {
			return &bulkSource{conn: c, rec: rec, slice: 1000 + 37, infos: infos}, nil
		},
	}
	if err := duckdb.RegisterTableUDF(q, "bulk", fn); err != nil {
		t.Fatal(err)
	}
	// Aggregates over every column, and each row checked against the
	// values its i32 determines.
	check := `SELECT count(*) FILTER (WHERE i8 IS DISTINCT FROM CAST(i32 % 128 AS TINYINT) AND i32 < 128),
		count(*) FILTER (WHERE i32 IS NULL), sum(i64), sum(f32), sum(f64), count(*) FILTER (WHERE b),
		sum(length(s)), sum(octet_length(bin)), max(d) - DATE '1970-01-01', epoch_us(max(ts)), epoch_us(max(tstz)),
		CAST(sum(dec) * 1000 AS BIGINT), CAST(sum(dec38) * 100 AS BIGINT),
		count(*) FILTER (WHERE s <> 'row ' || i32 || ' ' || repeat('x', i32 % 20)),
		count(*) FILTER (WHERE d <> DATE '1970-01-01' + i32 OR i16 <> i32 OR ts <> make_timestamp(i32::BIGINT * 1000001)), count(*)
		FROM bulk()`
	vals := make([]any, 16)
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := q.QueryRowContext(ctx, check).Scan(ptrs...); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range vals {
		got = append(got, fmt.Sprint(v))
	}
	var nulls, trues, slen, blen, sumI64, sumDec, sumDec38 int64
	var sumF32, sumF64 float64
	last := 0
	for i := range rows {
		if i%7 == 3 {
			nulls++
			continue
		}
		last = i
		sumI64 += int64(i) * 1000003
		sumF32 += float64(float32(i) / 2)
		sumF64 += float64(i) / 4
		if i%2 == 0 {
			trues++
		}
		slen += int64(len(fmt.Sprintf("row %d %s", i, strings.Repeat("x", i%20))))
		blen += 3
		sumDec += int64(i)*12345 - 7
		sumDec38 += int64(i) * -99
	}
	want := []string{"0", fmt.Sprint(nulls), fmt.Sprint(sumI64), fmt.Sprint(sumF32), fmt.Sprint(sumF64), fmt.Sprint(trues),
		fmt.Sprint(slen), fmt.Sprint(blen), fmt.Sprint(last), fmt.Sprint(int64(last) * 1_000_001), fmt.Sprint(int64(last) * 3_000_001),
		fmt.Sprint(sumDec), fmt.Sprint(sumDec38), "0", "0", fmt.Sprint(rows)}
	for i, w := range want {
		if got[i] != w {
			t.Errorf("column %d: got %s, want %s", i, got[i], w)
		}
	}

	// Projection: a query naming two columns fills only those.
	var n int64
	var s string
	if err := q.QueryRowContext(ctx, "SELECT count(*), max(s) FROM bulk() WHERE i64 > 4000012000").Scan(&n, &s); err != nil {
		t.Fatal(err)
	}
	if n == 0 || !strings.HasPrefix(s, "row ") {
		t.Errorf("projected scan: %d %q", n, s)
	}
	// Strings outlive the chunk: an ORDER BY materialises them after
	// every chunk was handed over and Go dropped its references.
	rows2, err := q.QueryContext(ctx, "SELECT s FROM bulk() WHERE s IS NOT NULL ORDER BY i32 DESC LIMIT 3")
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var top []string
	for rows2.Next() {
		var v string
		if err := rows2.Scan(&v); err != nil {
			t.Fatal(err)
		}
		top = append(top, v)
	}
	rows2.Close()
	if len(top) != 3 || !strings.HasPrefix(top[0], fmt.Sprintf("row %d ", last)) {
		t.Errorf("ordered strings: %q", top)
	}
}
