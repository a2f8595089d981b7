package engine

import (
	"context"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/lakesoul-go/lakesoul/internal/arrowutil"
	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/reader"
	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Arrow results. A statement's result reaches a columnar front door (Flight
// SQL) as Arrow record batches of ArrowSchema(cols), where cols are the
// columns pgwire would describe: the same plan, the same values. A direct
// scan (directscan.go) hands over the merge's own arrays, projected and with
// the losing rows taken out, whenever the table column already has the
// column's Arrow type; every other result is built from the values its
// portal produces for pgwire, in batches of arrowBatchRows rows.

// arrowBatchRows bounds the rows of one record batch built from rows, and
// arrowBatchBytes its values' size (about: fixed-width values count 8
// bytes): wide rows make batches of fewer rows, so that one batch stays
// far below the 4 MiB a gRPC client takes in one message by default.
const (
	arrowBatchRows  = 16 << 10
	arrowBatchBytes = 1 << 20
)

// ArrowSchema is the Arrow schema of a result with columns cols. Each field
// carries the column's PostgreSQL type OID in its metadata (MetaPGTypeOID).
func ArrowSchema(cols []pgwire.Column) *arrow.Schema {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.Name, Type: arrowTypeOf(c.TypeOID, c.TypeModifier), Nullable: true,
			Metadata: arrow.NewMetadata([]string{MetaPGTypeOID}, []string{fmt.Sprint(c.TypeOID)})}
	}
	return arrow.NewSchema(fields, nil)
}

// MetaPGTypeOID is the field metadata key holding a result column's
// PostgreSQL type OID.
const MetaPGTypeOID = "lakesoul.pg_type_oid"

// arrowTypeOf is the Arrow type of values of PostgreSQL type oid with typmod.
// Types without a faithful Arrow counterpart (records, numeric without a
// declared precision, …) are strings in PostgreSQL's text form.
func arrowTypeOf(oid uint32, typmod int32) arrow.DataType {
	switch oid {
	case schema.OIDBool:
		return arrow.FixedWidthTypes.Boolean
	case schema.OIDInt2:
		return arrow.PrimitiveTypes.Int16
	case schema.OIDInt4:
		return arrow.PrimitiveTypes.Int32
	case schema.OIDInt8:
		return arrow.PrimitiveTypes.Int64
	case schema.OIDFloat4:
		return arrow.PrimitiveTypes.Float32
	case schema.OIDFloat8:
		return arrow.PrimitiveTypes.Float64
	case schema.OIDBytea:
		return arrow.BinaryTypes.Binary
	case schema.OIDDate:
		return arrow.FixedWidthTypes.Date32
	case schema.OIDTime:
		return arrow.FixedWidthTypes.Time64us
	case schema.OIDTimestamp:
		return schema.Timestamp
	case schema.OIDTimestamptz:
		return schema.TimestampUTC
	case schema.OIDInterval:
		return arrow.FixedWidthTypes.MonthDayNanoInterval
	case schema.OIDNumeric:
		if typmod >= 4 {
			p, s := (typmod-4)>>16, (typmod-4)&0xffff
			if p >= 1 && p <= 38 && s <= p {
				return &arrow.Decimal128Type{Precision: p, Scale: s}
			}
		}
		return arrow.BinaryTypes.String
	}
	if elem := schema.ElemOID(oid); elem != 0 && elem != schema.OIDRecord {
		return arrow.ListOf(arrowTypeOf(elem, -1))
	}
	return arrow.BinaryTypes.String
}

// ExecuteArrow binds st with params, runs it to its end and hands its result
// to emit as record batches of ArrowSchema(cols), where cols is what
// st.Describe reports (emit is not called for statements without rows). The
// batches are released after emit returns. It returns the command tag, as
// pgwire would send it ("SELECT 3", "INSERT 0 5").
func (s *Session) ExecuteArrow(ctx context.Context, st pgwire.Statement, params []any, emit func(arrow.RecordBatch) error) (_ string, err error) {
	defer safego.RecoverTo(s.panicked(&err))
	cols, err := st.Describe(ctx)
	if err != nil {
		return "", err
	}
	portal, err := st.Bind(ctx, params)
	if err != nil {
		return "", err
	}
	defer portal.Close()
	switch portal.(type) {
	case pgwire.CopyInPortal, pgwire.CopyOutPortal:
		return "", sqlerr.New(sqlerr.FeatureNotSupported, "COPY is not available over Flight SQL (use bulk ingest or a query)")
	}
	sc := ArrowSchema(cols)
	if tp, ok := portal.(*trackedPortal); ok {
		if dp, ok := tp.Portal.(*directPortal); ok && dp.arrowNative(sc) && !slices.ContainsFunc(cols, padsChar) {
			// (character(n) values are padded on the way out: resultcols.go.)
			ctx, stop := s.statementContext(ctx)
			tag, err := dp.executeArrow(ctx, sc, emit)
			s.statementEnded(ctx)
			return tag, s.fail(stop(err))
		}
	}
	rb, err := newArrowRows(sc, emit)
	if err != nil {
		return "", err
	}
	defer rb.release()
	tag, _, err := portal.Execute(ctx, 0, rb)
	if err == nil {
		err = rb.flush()
	}
	return tag, err
}

// arrowNative reports whether every output column of the scan has, in the
// table, the Arrow type sc gives it, so the merge's arrays serve as they are.
func (p *directPortal) arrowNative(sc *arrow.Schema) bool {
	if len(p.d.types) != sc.NumFields() {
		return false
	}
	for i, t := range p.d.types {
		if !arrow.TypeEqual(t, sc.Field(i).Type) {
			return false
		}
	}
	return true
}

// arrowCoalesceRows and arrowCoalesceBytes bound the Arrow result batches
// of a direct scan, which are built up to whichever comes first. A merge of
// many files hands out batches of at most one file batch (1024 rows with
// more than a few files, fewer once the losers are out): tiny batches for
// a columnar client, which pays per batch. Larger ones cost memory, though:
// a Flight stream keeps several batches in flight, and gRPC clients refuse
// messages over 4 MiB unless told otherwise. Measured on `lakesoul bench
// ccf --scale 0.4`, batches of up to 2 MiB read no faster than 512 KiB ones
// and raised the 4-reader Flight read's peak RSS from 550 to 1000 MB.
const (
	arrowCoalesceRows  = 64 << 10
	arrowCoalesceBytes = 512 << 10
)

// executeArrow streams the direct scan's merged batches as record batches
// of sc: the output columns of their selected rows, OFFSET and LIMIT
// applied, gathered into batches of up to arrowCoalesceRows rows (fewer
// when the LIMIT is nearer) with buffers from the scans' pool.
func (p *directPortal) executeArrow(ctx context.Context, sc *arrow.Schema, emit func(arrow.RecordBatch) error) (string, error) {
	if err := p.start(ctx); err != nil {
		return "", err
	}
	stop := context.AfterFunc(ctx, safego.Guard(p.cancel))
	defer stop()
	co := arrowCoalescer{mem: p.q.s.e.scans.mem, sc: sc, cols: p.d.cols}
	defer co.release()
	send := func() error {
		rec, err := co.flush()
		if err != nil || rec == nil {
			return err
		}
		p.count += rec.NumRows()
		err = emit(rec)
		rec.Release()
		return err
	}
	for {
		want := int64(arrowCoalesceRows)
		if p.d.limit >= 0 {
			if p.count+int64(co.rows) >= p.d.limit {
				p.cancel()
				break
			}
			want = min(want, p.d.limit-p.count)
		}
		b, ok := <-p.batches
		if !ok {
			break
		}
		// OFFSET: the first rows are skipped; LIMIT: the rows past it.
		from := int(min(p.d.offset-p.skipped, int64(b.Len())))
		p.skipped += int64(from)
		to := b.Len()
		if p.d.limit >= 0 {
			to = int(min(int64(to), int64(from)+p.d.limit-p.count-int64(co.rows)))
		}
		if from >= to {
			b.Release()
			continue
		}
		co.add(sliceSelected(b, from, to))
		if int64(co.rows) >= want || co.bytes >= arrowCoalesceBytes {
			if err := send(); err != nil {
				return "", err
			}
		}
	}
	if err := p.failure(ctx); err != nil {
		return "", err
	}
	if ctx.Err() != nil {
		return "", sqlerr.ErrCanceled
	}
	if err := send(); err != nil {
		return "", err
	}
	return fmt.Sprintf("SELECT %d", p.count), nil
}

// sliceSelected narrows b to its selected rows [from, to).
func sliceSelected(b reader.Selected, from, to int) reader.Selected {
	if from == 0 && to == b.Len() {
		return b
	}
	if b.Sel == nil {
		sel := make([]int, to-from)
		for i := range sel {
			sel[i] = from + i
		}
		b.Sel = sel
		return b
	}
	b.Sel = b.Sel[from:to]
	return b
}

// arrowCoalescer gathers merged batches' selected rows into record batches.
type arrowCoalescer struct {
	mem  memory.Allocator
	sc   *arrow.Schema
	cols []int // the batch column of each output column
	// pending are the batches (retained) whose rows the next record holds;
	// bytes estimates the size of those rows' output columns.
	pending []reader.Selected
	rows    int
	bytes   int
}

// add takes over b.
func (c *arrowCoalescer) add(b reader.Selected) {
	c.pending = append(c.pending, b)
	c.rows += b.Len()
	if n := int(b.NumRows()); n > 0 {
		size := 0
		for _, col := range c.cols {
			for _, buf := range b.Column(col).Data().Buffers() {
				if buf != nil {
					size += buf.Len()
				}
			}
		}
		c.bytes += size / n * b.Len()
	}
}

// flush returns the pending rows as one record batch (nil when there are
// none) and lets go of the batches.
func (c *arrowCoalescer) flush() (arrow.RecordBatch, error) {
	if c.rows == 0 {
		c.release()
		return nil, nil
	}
	defer c.release()
	arrs := make([]arrow.Array, len(c.cols))
	defer func() {
		for _, a := range arrs {
			if a != nil {
				a.Release()
			}
		}
	}()
	segs := make([]arrowutil.Segment, len(c.pending))
	for j, col := range c.cols {
		for k, b := range c.pending {
			segs[k] = arrowutil.Segment{Arr: b.Column(col), Rows: b.Sel}
		}
		if len(segs) == 1 && segs[0].Rows == nil {
			segs[0].Arr.Retain()
			arrs[j] = segs[0].Arr
			continue
		}
		a, err := arrowutil.TakeConcat(c.mem, c.sc.Field(j).Type, segs)
		if err != nil {
			return nil, err
		}
		arrs[j] = a
	}
	return array.NewRecordBatch(c.sc, arrs, int64(c.rows)), nil
}

// release lets go of the pending batches.
func (c *arrowCoalescer) release() {
	for _, b := range c.pending {
		b.Release()
	}
	c.pending, c.rows, c.bytes = c.pending[:0], 0, 0
}

// arrowRows is a pgwire.RowWriter building record batches from the values
// a portal writes for pgwire.
type arrowRows struct {
	sc      *arrow.Schema
	b       *array.RecordBuilder
	appends []valueAppender
	rows    int
	bytes   int // the size of the rows' values (valueSize)
	emit    func(arrow.RecordBatch) error
}

// valueAppender appends one non-null value, as a portal writes it for
// pgwire, to a builder.
type valueAppender func(b array.Builder, v any) error

func newArrowRows(sc *arrow.Schema, emit func(arrow.RecordBatch) error) (*arrowRows, error) {
	r := &arrowRows{sc: sc, b: array.NewRecordBuilder(memory.DefaultAllocator, sc), emit: emit}
	for _, f := range sc.Fields() {
		r.appends = append(r.appends, appenderFor(f.Type))
	}
	return r, nil
}

func (r *arrowRows) WriteRow(values []any) error {
	for i, v := range values {
		fb := r.b.Field(i)
		if v == nil {
			fb.AppendNull()
			continue
		}
		if err := r.appends[i](fb, v); err != nil {
			return fmt.Errorf("result column %q: %w", r.sc.Field(i).Name, err)
		}
		r.bytes += valueSize(v)
	}
	r.rows++
	if r.rows >= arrowBatchRows || r.bytes >= arrowBatchBytes {
		return r.flush()
	}
	return nil
}

// valueSize estimates what a value adds to a batch: its length for text
// and bytes, its elements' sizes for arrays, 8 for anything else.
func valueSize(v any) int {
	switch x := v.(type) {
	case string:
		return len(x) + 4
	case []byte:
		return len(x) + 4
	case []any:
		n := 8
		for _, e := range x {
			n += valueSize(e)
		}
		return n
	case pgwire.Record:
		n := 8
		for _, e := range x.Values {
			n += valueSize(e)
		}
		return n
	}
	return 8
}

// flush emits the rows built so far as one batch.
func (r *arrowRows) flush() error {
	if r.rows == 0 {
		return nil
	}
	rec := r.b.NewRecordBatch()
	defer rec.Release()
	r.rows, r.bytes = 0, 0
	return r.emit(rec)
}

func (r *arrowRows) release() { r.b.Release() }

// appenderFor appends values to builders of type dt (arrowTypeOf's types).
func appenderFor(dt arrow.DataType) valueAppender {
	switch t := dt.(type) {
	case *arrow.BooleanType:
		return func(b array.Builder, v any) error {
			x, ok := v.(bool)
			if !ok {
				return valueTypeError(v, dt)
			}
			b.(*array.BooleanBuilder).Append(x)
			return nil
		}
	case *arrow.Int16Type:
		return intAppender(dt, func(b array.Builder, x int64) { b.(*array.Int16Builder).Append(int16(x)) })
	case *arrow.Int32Type:
		return intAppender(dt, func(b array.Builder, x int64) { b.(*array.Int32Builder).Append(int32(x)) })
	case *arrow.Int64Type:
		return intAppender(dt, func(b array.Builder, x int64) { b.(*array.Int64Builder).Append(x) })
	case *arrow.Float32Type:
		return floatAppender(dt, func(b array.Builder, x float64) { b.(*array.Float32Builder).Append(float32(x)) })
	case *arrow.Float64Type:
		return floatAppender(dt, func(b array.Builder, x float64) { b.(*array.Float64Builder).Append(x) })
	case *arrow.BinaryType:
		return func(b array.Builder, v any) error {
			switch x := v.(type) {
			case []byte:
				b.(*array.BinaryBuilder).Append(x)
			case string:
				b.(*array.BinaryBuilder).AppendString(x)
			default:
				return valueTypeError(v, dt)
			}
			return nil
		}
	case *arrow.Date32Type:
		return func(b array.Builder, v any) error {
			x, ok := v.(time.Time)
			if !ok {
				return valueTypeError(v, dt)
			}
			b.(*array.Date32Builder).Append(arrow.Date32FromTime(x))
			return nil
		}
	case *arrow.Time64Type:
		return func(b array.Builder, v any) error {
			s, ok := v.(string)
			if !ok {
				return valueTypeError(v, dt)
			}
			tod, err := time.Parse("15:04:05.999999", s)
			if err != nil {
				return err
			}
			midnight := time.Date(tod.Year(), tod.Month(), tod.Day(), 0, 0, 0, 0, time.UTC)
			b.(*array.Time64Builder).Append(arrow.Time64(tod.Sub(midnight).Microseconds()))
			return nil
		}
	case *arrow.TimestampType:
		return func(b array.Builder, v any) error {
			x, ok := v.(time.Time)
			if !ok {
				return valueTypeError(v, dt)
			}
			b.(*array.TimestampBuilder).Append(arrow.Timestamp(x.UnixMicro()))
			return nil
		}
	case *arrow.MonthDayNanoIntervalType:
		return func(b array.Builder, v any) error {
			x, ok := v.(pgtype.Interval)
			if !ok {
				return valueTypeError(v, dt)
			}
			b.(*array.MonthDayNanoIntervalBuilder).Append(arrow.MonthDayNanoInterval{
				Months: x.Months, Days: x.Days, Nanoseconds: x.Microseconds * 1000})
			return nil
		}
	case *arrow.Decimal128Type:
		return func(b array.Builder, v any) error {
			n, err := decimalValue(v, t.Precision, t.Scale)
			if err != nil {
				return err
			}
			b.(*array.Decimal128Builder).Append(n)
			return nil
		}
	case *arrow.ListType:
		elem := appenderFor(t.Elem())
		return func(b array.Builder, v any) error {
			l, ok := v.([]any)
			if !ok {
				return valueTypeError(v, dt)
			}
			lb := b.(*array.ListBuilder)
			lb.Append(true)
			vb := lb.ValueBuilder()
			for _, e := range l {
				if e == nil {
					vb.AppendNull()
					continue
				}
				if err := elem(vb, e); err != nil {
					return err
				}
			}
			return nil
		}
	}
	return func(b array.Builder, v any) error {
		b.(*array.StringBuilder).Append(valueText(v))
		return nil
	}
}

func intAppender(dt arrow.DataType, put func(array.Builder, int64)) valueAppender {
	return func(b array.Builder, v any) error {
		switch x := v.(type) {
		case int64:
			put(b, x)
		case int32:
			put(b, int64(x))
		case int16:
			put(b, int64(x))
		case int8:
			put(b, int64(x))
		default:
			return valueTypeError(v, dt)
		}
		return nil
	}
}

// floatAppender is intAppender for float4 and float8 builders: put receives
// the value widened to float64 (a float32 widens exactly).
func floatAppender(dt arrow.DataType, put func(array.Builder, float64)) valueAppender {
	return func(b array.Builder, v any) error {
		switch x := v.(type) {
		case float64:
			put(b, x)
		case float32:
			put(b, float64(x))
		default:
			return valueTypeError(v, dt)
		}
		return nil
	}
}

// decimalValue converts a numeric result value (its text, pgtype.Numeric)
// into a decimal of the given precision and scale.
func decimalValue(v any, prec, scale int32) (decimal128.Num, error) {
	switch x := v.(type) {
	case string:
		return decimal128.FromString(x, prec, scale)
	case pgtype.Numeric:
		if !x.Valid || x.NaN || x.InfinityModifier != pgtype.Finite {
			return decimal128.Num{}, fmt.Errorf("numeric value %v has no decimal form", x)
		}
		n := new(big.Int).Set(x.Int)
		if d := int(x.Exp) + int(scale); d >= 0 {
			n.Mul(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d)), nil))
		} else {
			n.Quo(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-d)), nil))
		}
		return decimal128.FromBigInt(n), nil
	}
	return decimal128.Num{}, valueTypeError(v, &arrow.Decimal128Type{Precision: prec, Scale: scale})
}

// valueText is the text of a value whose column has no Arrow type of its
// own: strings as they are, uuids canonical, records in PostgreSQL's
// composite notation of their elements' text.
func valueText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case [16]byte:
		return uuid.UUID(x).String()
	case pgwire.Record:
		parts := make([]string, len(x.Values))
		for i, e := range x.Values {
			if e != nil {
				parts[i] = valueText(e)
				if strings.ContainsAny(parts[i], `,()" \`) || parts[i] == "" {
					parts[i] = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(parts[i]) + `"`
				}
			}
		}
		return "(" + strings.Join(parts, ",") + ")"
	}
	return fmt.Sprint(v)
}

func valueTypeError(v any, dt arrow.DataType) error {
	return fmt.Errorf("value of Go type %T for Arrow type %s", v, dt)
}
