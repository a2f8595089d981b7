package engine

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/uuid"

	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Conversion of COPY FROM field bytes (text or binary representation) into
// Arrow builders, directly, without DuckDB: this is the bulk ingest path.

// fieldConv appends one non-NULL field to its column.
type fieldConv func(c *copyColumn, v []byte) error

// copyColumn accumulates one written column of a COPY batch. Text and bytea
// columns gather their bytes and offsets themselves, which costs a
// fraction of an Arrow builder's per-value bookkeeping on the bulk path;
// other types append to an Arrow builder (b).
//
// Text bytes go into fixed-size chunks, copied once into a buffer of the
// exact size when the batch ends: a single buffer grown by doubling copied
// the data over and over, touched fresh memory at every step and left up
// to half of its capacity unused. Chunks are reused across batches and
// COPYs (copyChunks). Values and offsets are stored by index into
// preallocated space, not appended: appending stores a slice header, a
// pointer, into the heap for every value, and each such store pays the
// garbage collector's write barrier while a collection runs.
type copyColumn struct {
	typ arrow.DataType
	b   array.Builder // nil for text and bytea
	// Text and bytea: the values' bytes are chunks followed by cur[:used];
	// value i ends at offsets[i+1], counted over all of them (n values so
	// far, offsets has room for more); nulls lists the NULL rows.
	chunks  []*[]byte
	cur     *[]byte // a full-length chunk
	used    int
	size    int
	offsets []int32
	n       int
	nulls   []int32
	// asciiBlock is set while the values come from a block of ASCII bytes
	// only, which are valid UTF-8 whatever the field boundaries: text
	// columns then skip validating each value (most COPY data is ASCII,
	// and checking a block at once costs a fraction of a call per value).
	asciiBlock bool
}

// copyChunkSize is the size of a text column's chunk; a larger value gets
// a chunk of its own.
const copyChunkSize = 256 << 10

var copyChunks = sync.Pool{New: func() any {
	b := make([]byte, copyChunkSize)
	return &b
}}

func newCopyColumn(mem memory.Allocator, typ arrow.DataType) *copyColumn {
	c := &copyColumn{typ: typ}
	if !varWidth(typ) {
		c.b = array.NewBuilder(mem, typ)
	}
	return c
}

// varWidth reports whether a copyColumn of typ gathers bytes itself.
func varWidth(typ arrow.DataType) bool {
	return typ.ID() == arrow.STRING || typ.ID() == arrow.BINARY
}

// errValueTooLarge (program_limit_exceeded): COPY keeps a row's bytes and a
// batch's text column under 2 GiB (32-bit offsets); batches end long before
// that unless one row is huge.
var errValueTooLarge = sqlerr.New("54000", "COPY row too large: more than 2 GiB of data")

// appendBytes appends a text or bytea value.
func (c *copyColumn) appendBytes(v []byte) error {
	if c.size+len(v) > math.MaxInt32 {
		return errValueTooLarge
	}
	if c.cur == nil || c.used+len(v) > len(*c.cur) {
		c.nextChunk(len(v))
	}
	copy((*c.cur)[c.used:], v)
	c.used += len(v)
	c.size += len(v)
	c.addOffset()
	return nil
}

// nextChunk ends the current chunk and starts one with room for n bytes.
func (c *copyColumn) nextChunk(n int) {
	if c.cur != nil {
		*c.cur = (*c.cur)[:c.used]
		c.chunks = append(c.chunks, c.cur)
	}
	if n > copyChunkSize {
		b := make([]byte, n)
		c.cur = &b
	} else {
		c.cur = copyChunks.Get().(*[]byte)
	}
	c.used = 0
}

// addOffset records the end of value n (offsets[0] is 0).
func (c *copyColumn) addOffset() {
	if c.n+1 >= len(c.offsets) {
		grown := make([]int32, max(2*len(c.offsets), copyBlockRows+1))
		copy(grown, c.offsets)
		c.offsets = grown
	}
	c.n++
	c.offsets[c.n] = int32(c.size)
}

func (c *copyColumn) appendNull() {
	if c.b != nil {
		c.b.AppendNull()
		return
	}
	c.nulls = append(c.nulls, int32(c.n))
	c.addOffset()
}

// finish returns the column's values as an array and empties the column.
// It allocates nothing for the next batch: reserve does, once the batch
// is handed over, so that a finished batch waiting for the writer and the
// next one's buffers are never alive at the same time.
func (c *copyColumn) finish() arrow.Array {
	if c.b != nil {
		return c.b.NewArray()
	}
	n := c.n
	var validity *memory.Buffer
	if len(c.nulls) > 0 {
		bits := make([]byte, bitutil.BytesForBits(int64(n)))
		bitutil.SetBitsTo(bits, 0, int64(n), true)
		for _, r := range c.nulls {
			bitutil.ClearBit(bits, int(r))
		}
		validity = memory.NewBufferBytes(bits)
	}
	data := make([]byte, 0, c.size)
	if c.cur != nil {
		*c.cur = (*c.cur)[:c.used]
		c.chunks = append(c.chunks, c.cur)
	}
	for _, ch := range c.chunks {
		data = append(data, *ch...)
		if cap(*ch) == copyChunkSize {
			*ch = (*ch)[:copyChunkSize]
			copyChunks.Put(ch)
		}
	}
	offsets := []int32{0} // no values
	if c.offsets != nil {
		offsets = c.offsets[:n+1]
	}
	d := array.NewData(c.typ, n, []*memory.Buffer{validity,
		memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets)), memory.NewBufferBytes(data)}, nil, len(c.nulls), 0)
	defer d.Release()
	a := array.MakeFromData(d)
	c.chunks, c.cur, c.used, c.size, c.offsets, c.n, c.nulls = c.chunks[:0], nil, 0, 0, nil, 0, nil
	return a
}

// reserve makes room for a batch of rows values like the previous one, so
// offsets and builders do not grow and copy value by value.
func (c *copyColumn) reserve(rows int) {
	if c.b != nil {
		c.b.Reserve(rows)
		return
	}
	c.offsets = make([]int32, rows+1)
}

// release frees the column's builder and returns its chunks to the pool.
func (c *copyColumn) release() {
	if c.b != nil {
		c.b.Release()
	}
	if c.cur != nil {
		c.chunks = append(c.chunks, c.cur)
	}
	for _, ch := range c.chunks {
		if cap(*ch) == copyChunkSize {
			*ch = (*ch)[:copyChunkSize]
			copyChunks.Put(ch)
		}
	}
	c.chunks, c.cur = nil, nil
}

// bstr views b as a string without copying; the string must not outlive b.
func bstr(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// pgTypeName is the PostgreSQL name of a lake column's type, for messages.
func pgTypeName(f arrow.Field) string {
	if pt, ok := f.Metadata.GetValue(schema.MetaPGType); ok {
		switch {
		case strings.HasSuffix(pt, "[]"): // varchar[]
			return pgTypeName(arrow.Field{Type: arrow.BinaryTypes.String,
				Metadata: arrow.NewMetadata([]string{schema.MetaPGType}, []string{strings.TrimSuffix(pt, "[]")})}) + "[]"
		case strings.HasPrefix(pt, "varchar"):
			return "character varying"
		case strings.HasPrefix(pt, "bpchar"):
			return "character"
		}
		return pt
	}
	switch t := f.Type.(type) {
	case *arrow.Int64Type:
		return "bigint"
	case *arrow.Int32Type:
		return "integer"
	case *arrow.Int16Type, *arrow.Int8Type:
		return "smallint"
	case *arrow.Float64Type:
		return "double precision"
	case *arrow.Float32Type:
		return "real"
	case *arrow.BooleanType:
		return "boolean"
	case *arrow.BinaryType:
		return "bytea"
	case *arrow.Date32Type:
		return "date"
	case *arrow.TimestampType:
		if t.TimeZone != "" {
			return "timestamp with time zone"
		}
		return "timestamp without time zone"
	case *arrow.Decimal128Type:
		return "numeric"
	case *arrow.ListType:
		return pgTypeName(t.ElemField()) + "[]"
	}
	return "text"
}

func invalidInput(f arrow.Field, v []byte) error {
	return sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type %s: %q", pgTypeName(f), truncateValue(v))
}

func outOfRange(f arrow.Field, v []byte) error {
	return sqlerr.New(sqlerr.NumericValueOutOfRange, "value %q is out of range for type %s", truncateValue(v), pgTypeName(f))
}

func truncateValue(v []byte) string {
	const max = 64
	if len(v) > max {
		return strings.ToValidUTF8(string(v[:max]), "?") + "..."
	}
	return strings.ToValidUTF8(string(v), "?")
}

func invalidUTF8() error {
	return sqlerr.New(sqlerr.CharacterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\"")
}

// textConv returns the converter of text-format fields for column f; loc
// is the session time zone for timestamptz input without an offset,
// intervalStyle the session's IntervalStyle (interval input depends on it).
func textConv(f arrow.Field, loc *time.Location, intervalStyle string) (fieldConv, error) {
	if dims := schema.VectorDims(f); dims > 0 {
		return vectorCopyConv(dims, false), nil // vectorops.go
	}
	if schema.IsArray(f) {
		return arrayCopyConv(f, false) // arraycols.go
	}
	switch t := f.Type.(type) {
	case *arrow.Int64Type, *arrow.Int32Type, *arrow.Int16Type, *arrow.Int8Type:
		bits := t.(arrow.FixedWidthDataType).BitWidth()
		return func(c *copyColumn, v []byte) error {
			b := c.b
			s := strings.TrimSpace(bstr(v))
			n, err := strconv.ParseInt(s, 10, bits)
			if err != nil {
				if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
					return outOfRange(f, v)
				}
				return invalidInput(f, v)
			}
			appendInt(b, n)
			return nil
		}, nil
	case *arrow.Float64Type, *arrow.Float32Type:
		bits := t.(arrow.FixedWidthDataType).BitWidth()
		return func(c *copyColumn, v []byte) error {
			b := c.b
			s := strings.TrimSpace(bstr(v))
			x, err := strconv.ParseFloat(s, bits)
			if err != nil {
				if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
					return outOfRange(f, v)
				}
				return invalidInput(f, v)
			}
			if bits == 32 {
				b.(*array.Float32Builder).Append(float32(x))
			} else {
				b.(*array.Float64Builder).Append(x)
			}
			return nil
		}, nil
	case *arrow.BooleanType:
		return func(c *copyColumn, v []byte) error {
			b := c.b
			x, ok := parseBool(bstr(v))
			if !ok {
				return invalidInput(f, v)
			}
			b.(*array.BooleanBuilder).Append(x)
			return nil
		}, nil
	case *arrow.StringType:
		return stringConv(f, false)
	case *arrow.BinaryType:
		return func(c *copyColumn, v []byte) error {
			out, err := parseByteaText(v)
			if err != nil {
				return invalidInput(f, v)
			}
			return c.appendBytes(out)
		}, nil
	case *arrow.Date32Type:
		return func(c *copyColumn, v []byte) error {
			b := c.b
			tm, ok := parseDateTime(strings.TrimSpace(bstr(v)), time.UTC, false)
			if !ok {
				return sqlerr.New(sqlerr.InvalidDatetimeFormat, "invalid input syntax for type date: %q", truncateValue(v))
			}
			b.(*array.Date32Builder).Append(arrow.Date32FromTime(tm))
			return nil
		}, nil
	case *arrow.TimestampType:
		zoned := t.TimeZone != ""
		toUnit := timestampFromTime(t.Unit)
		return func(c *copyColumn, v []byte) error {
			b := c.b
			tm, ok := parseDateTime(strings.TrimSpace(bstr(v)), loc, zoned)
			if !ok {
				return sqlerr.New(sqlerr.InvalidDatetimeFormat, "invalid input syntax for type %s: %q", pgTypeName(f), truncateValue(v))
			}
			b.(*array.TimestampBuilder).Append(toUnit(tm))
			return nil
		}, nil
	case *arrow.Decimal128Type:
		return func(c *copyColumn, v []byte) error {
			b := c.b
			n, err := parseDecimal(strings.TrimSpace(bstr(v)), t.Precision, t.Scale)
			if err != nil {
				if err == errDecimalOverflow {
					return &sqlerr.Error{Code: sqlerr.NumericValueOutOfRange, Message: "numeric field overflow",
						Detail: fmt.Sprintf("A field with precision %d, scale %d must round to an absolute value less than 10^%d.", t.Precision, t.Scale, t.Precision-t.Scale)}
				}
				return invalidInput(f, v)
			}
			b.(*array.Decimal128Builder).Append(n)
			return nil
		}, nil
	case *arrow.MonthDayNanoIntervalType:
		return func(c *copyColumn, v []byte) error {
			iv, err := pgwire.ParseInterval(bstr(v), intervalStyle)
			if err != nil {
				return err
			}
			return appendInterval(c.b, iv.Months, iv.Days, iv.Microseconds)
		}, nil
	}
	return nil, sqlerr.Unsupported(fmt.Sprintf("COPY into a column of type %s", f.Type), "columns of the lake's scalar types")
}

// appendInterval appends PostgreSQL's interval fields to an interval
// column (22008 when the time part does not fit, schema.IntervalFromMicros).
func appendInterval(b array.Builder, months, days int32, micros int64) error {
	iv, err := schema.IntervalFromMicros(months, days, micros)
	if err != nil {
		return err
	}
	b.(*array.MonthDayNanoIntervalBuilder).Append(iv)
	return nil
}

// stringConv converts text (and, in binary COPY, the binary form of text
// types, which is the same bytes) into a string column, checking UTF-8,
// uuid syntax and varchar/bpchar lengths as an assignment does (see
// lakeWriteCast).
func stringConv(f arrow.Field, binaryUUID bool) (fieldConv, error) {
	pt, _ := f.Metadata.GetValue(schema.MetaPGType)
	isUUID := pt == "uuid"
	rule, isChar := charRuleOf(f) // charassign.go
	return func(c *copyColumn, v []byte) error {
		if isUUID {
			if binaryUUID && len(v) == 16 {
				return c.appendBytes(uuidText(uuid.UUID(v)))
			}
			u, err := uuid.ParseBytes(v)
			if err != nil {
				return invalidInput(f, v)
			}
			return c.appendBytes(uuidText(u))
		}
		if !c.asciiBlock && !utf8.Valid(v) {
			return invalidUTF8()
		}
		if isChar {
			var err error
			if v, err = rule.assign(v); err != nil {
				return err
			}
		}
		return c.appendBytes(v)
	}, nil
}

// runePrefix is the length in bytes of the first n characters of UTF-8 b.
func runePrefix(b []byte, n int) int {
	i := 0
	for ; n > 0 && i < len(b); n-- {
		_, size := utf8.DecodeRune(b[i:])
		i += size
	}
	return i
}

// isASCII reports whether b holds only bytes below 0x80, 8 at a time.
func isASCII(b []byte) bool {
	var acc uint64
	for len(b) >= 8 {
		acc |= binary.LittleEndian.Uint64(b)
		b = b[8:]
	}
	for _, c := range b {
		acc |= uint64(c)
	}
	return acc&0x8080808080808080 == 0
}

// uuidText is u in its canonical text form (36 bytes), without allocating.
func uuidText(u uuid.UUID) []byte {
	var buf [36]byte
	hex.Encode(buf[0:8], u[0:4])
	buf[8] = '-'
	hex.Encode(buf[9:13], u[4:6])
	buf[13] = '-'
	hex.Encode(buf[14:18], u[6:8])
	buf[18] = '-'
	hex.Encode(buf[19:23], u[8:10])
	buf[23] = '-'
	hex.Encode(buf[24:], u[10:])
	return buf[:]
}

func appendInt(b array.Builder, n int64) {
	switch bb := b.(type) {
	case *array.Int64Builder:
		bb.Append(n)
	case *array.Int32Builder:
		bb.Append(int32(n))
	case *array.Int16Builder:
		bb.Append(int16(n))
	case *array.Int8Builder:
		bb.Append(int8(n))
	}
}

// parseBool accepts PostgreSQL's boolean input spellings.
func parseBool(s string) (bool, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	switch s {
	case "t", "true", "y", "yes", "on", "1":
		return true, true
	case "f", "false", "n", "no", "off", "0":
		return false, true
	}
	if len(s) >= 2 {
		for _, w := range []string{"true", "yes"} {
			if strings.HasPrefix(w, s) {
				return true, true
			}
		}
		for _, w := range []string{"false", "off"} {
			if strings.HasPrefix(w, s) && s != "of" {
				return false, true
			}
		}
		if s == "of" {
			return false, false
		}
		if strings.HasPrefix("no", s) {
			return false, true
		}
	}
	return false, false
}

// parseByteaText reads bytea text input: hex (\x…) or escape format.
func parseByteaText(v []byte) ([]byte, error) {
	if len(v) >= 2 && v[0] == '\\' && v[1] == 'x' {
		h := strings.Map(func(r rune) rune {
			if r == ' ' || r == '\t' || r == '\n' || r == '\r' {
				return -1
			}
			return r
		}, string(v[2:]))
		return hex.DecodeString(h)
	}
	out := make([]byte, 0, len(v))
	for i := 0; i < len(v); i++ {
		if v[i] != '\\' {
			out = append(out, v[i])
			continue
		}
		switch {
		case i+1 < len(v) && v[i+1] == '\\':
			out = append(out, '\\')
			i++
		case i+3 < len(v)+0 && isOctal(v[i+1]) && isOctal(v[i+2]) && isOctal(v[i+3]) && v[i+1] <= '3':
			out = append(out, (v[i+1]-'0')<<6|(v[i+2]-'0')<<3|(v[i+3]-'0'))
			i += 3
		default:
			return nil, fmt.Errorf("invalid bytea escape")
		}
	}
	return out, nil
}

func isOctal(b byte) bool { return b >= '0' && b <= '7' }

// timestampFromTime converts a time to an Arrow timestamp of unit u.
func timestampFromTime(u arrow.TimeUnit) func(time.Time) arrow.Timestamp {
	switch u {
	case arrow.Second:
		return func(t time.Time) arrow.Timestamp { return arrow.Timestamp(t.Unix()) }
	case arrow.Millisecond:
		return func(t time.Time) arrow.Timestamp { return arrow.Timestamp(t.UnixMilli()) }
	case arrow.Nanosecond:
		return func(t time.Time) arrow.Timestamp { return arrow.Timestamp(t.UnixNano()) }
	}
	return func(t time.Time) arrow.Timestamp { return arrow.Timestamp(t.UnixMicro()) }
}

// parseDateTime reads ISO date/time input: "YYYY-MM-DD", optionally
// followed by " " or "T" and "HH:MM[:SS[.ffffff]]", optionally followed by a
// zone ("Z", "+hh", "+hh:mm", "+hhmm", "+hh:mm:ss", with or without a space
// before it). A zone is applied only when zoned (timestamptz); otherwise the
// wall clock is taken as written, as PostgreSQL does for date and timestamp.
// Input without a zone is in loc for timestamptz.
func parseDateTime(s string, loc *time.Location, zoned bool) (time.Time, bool) {
	if len(s) < 10 || s[4] != '-' || s[7] != '-' {
		return time.Time{}, false
	}
	y, ok1 := atoiN(s[0:4])
	mo, ok2 := atoiN(s[5:7])
	d, ok3 := atoiN(s[8:10])
	if !ok1 || !ok2 || !ok3 || mo < 1 || mo > 12 || d < 1 || d > 31 {
		return time.Time{}, false
	}
	rest := s[10:]
	var h, mi, sec, nsec int
	if rest != "" && (rest[0] == ' ' || rest[0] == 'T') && len(rest) >= 6 && rest[3] == ':' {
		var ok bool
		if h, ok = atoiN(rest[1:3]); !ok {
			return time.Time{}, false
		}
		if mi, ok = atoiN(rest[4:6]); !ok {
			return time.Time{}, false
		}
		rest = rest[6:]
		if len(rest) >= 3 && rest[0] == ':' {
			if sec, ok = atoiN(rest[1:3]); !ok {
				return time.Time{}, false
			}
			rest = rest[3:]
			if len(rest) > 1 && rest[0] == '.' {
				j := 1
				for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
					j++
				}
				frac := rest[1:j]
				// Round to microseconds, as PostgreSQL does.
				for len(frac) < 7 {
					frac += "0"
				}
				n, _ := strconv.Atoi(frac[:7])
				n = (n + 5) / 10
				nsec = n * 1000
				rest = rest[j:]
			}
		}
		if h > 24 || mi > 59 || sec > 60 || (h == 24 && (mi != 0 || sec != 0 || nsec != 0)) {
			return time.Time{}, false
		}
	}
	rest = strings.TrimLeft(rest, " ")
	zone := loc
	if rest != "" {
		off, ok := parseOffset(rest)
		if !ok {
			return time.Time{}, false
		}
		if zoned {
			zone = time.FixedZone("", off)
		}
	}
	if !zoned {
		zone = time.UTC
	}
	t := time.Date(y, time.Month(mo), d, h, mi, sec, nsec, zone)
	if t.Day() != d && !(h == 24) {
		return time.Time{}, false // e.g. February 30
	}
	return t, true
}

// parseOffset reads a UTC offset: Z, ±hh, ±hhmm, ±hh:mm, ±hh:mm:ss.
func parseOffset(s string) (int, bool) {
	if s == "Z" || s == "z" || strings.EqualFold(s, "UTC") {
		return 0, true
	}
	if len(s) < 3 || (s[0] != '+' && s[0] != '-') {
		return 0, false
	}
	sign := 1
	if s[0] == '-' {
		sign = -1
	}
	p := strings.ReplaceAll(s[1:], ":", "")
	var h, m, sec int
	var ok bool
	switch len(p) {
	case 1, 2:
		h, ok = atoiN(p)
	case 4:
		if h, ok = atoiN(p[:2]); ok {
			m, ok = atoiN(p[2:])
		}
	case 6:
		if h, ok = atoiN(p[:2]); ok {
			if m, ok = atoiN(p[2:4]); ok {
				sec, ok = atoiN(p[4:])
			}
		}
	}
	if !ok || h > 15 || m > 59 || sec > 59 {
		return 0, false
	}
	return sign * (h*3600 + m*60 + sec), true
}

func atoiN(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

var errDecimalOverflow = fmt.Errorf("numeric field overflow")

// parseDecimal reads numeric text ("-12.345", "1e3") into a decimal of the
// given precision and scale, rounding half away from zero as PostgreSQL does.
func parseDecimal(s string, prec, scale int32) (decimal128.Num, error) {
	if s == "" {
		return decimal128.Num{}, fmt.Errorf("empty")
	}
	neg := false
	switch s[0] {
	case '-':
		neg = true
		s = s[1:]
	case '+':
		s = s[1:]
	}
	exp := 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil || e > 1000 || e < -1000 {
			return decimal128.Num{}, fmt.Errorf("bad exponent")
		}
		exp, s = e, s[:i]
	}
	intPart, frac, _ := strings.Cut(s, ".")
	if intPart == "" && frac == "" {
		return decimal128.Num{}, fmt.Errorf("no digits")
	}
	digits := intPart + frac
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return decimal128.Num{}, fmt.Errorf("not a number")
		}
	}
	// value = digits × 10^(exp − len(frac)); we want value × 10^scale.
	shift := int(scale) + exp - len(frac)
	var round bool
	if shift < 0 {
		cut := len(digits) + shift
		if cut < 0 {
			digits, round = "0", false
		} else {
			round = digits[cut] >= '5'
			digits = digits[:cut]
		}
		shift = 0
	}
	digits = strings.TrimLeft(digits, "0")
	if len(digits)+shift > int(prec) {
		// May still fit after rounding? No: more integer digits than allowed.
		return decimal128.Num{}, errDecimalOverflow
	}
	var n decimal128.Num
	if len(digits)+shift <= 18 {
		v, _ := strconv.ParseInt(digits+strings.Repeat("0", shift), 10, 64)
		if digits == "" {
			v = 0
		}
		n = decimal128.FromI64(v)
	} else {
		bi, ok := new(big.Int).SetString(digits+strings.Repeat("0", shift), 10)
		if !ok {
			return decimal128.Num{}, fmt.Errorf("not a number")
		}
		n = decimal128.FromBigInt(bi)
	}
	if round {
		n = n.Add(decimal128.FromU64(1))
	}
	if !n.FitsInPrecision(prec) {
		return decimal128.Num{}, errDecimalOverflow
	}
	if neg {
		n = n.Negate()
	}
	return n, nil
}

// PostgreSQL's binary epoch is 2000-01-01.
const (
	pgEpochDays   = 10957
	pgEpochMicros = 946684800000000
)

// binaryConv returns the converter of binary-format fields for column f.
// Integer and float columns accept any width the client chose.
func binaryConv(f arrow.Field) (fieldConv, error) {
	bad := func(v []byte) error {
		return sqlerr.New("22P03", "incorrect binary data format for type %s (%d bytes)", pgTypeName(f), len(v))
	}
	if dims := schema.VectorDims(f); dims > 0 {
		return vectorCopyConv(dims, true), nil // vectorops.go
	}
	if schema.IsArray(f) {
		return arrayCopyConv(f, true) // arraycols.go
	}
	switch t := f.Type.(type) {
	case *arrow.Int64Type, *arrow.Int32Type, *arrow.Int16Type, *arrow.Int8Type:
		bits := t.(arrow.FixedWidthDataType).BitWidth()
		lo, hi := int64(-1)<<(bits-1), int64(1)<<(bits-1)-1
		return func(c *copyColumn, v []byte) error {
			b := c.b
			var n int64
			switch len(v) {
			case 8:
				n = int64(binary.BigEndian.Uint64(v))
			case 4:
				n = int64(int32(binary.BigEndian.Uint32(v)))
			case 2:
				n = int64(int16(binary.BigEndian.Uint16(v)))
			default:
				return bad(v)
			}
			if n < lo || n > hi {
				return sqlerr.New(sqlerr.NumericValueOutOfRange, "%s out of range", pgTypeName(f))
			}
			appendInt(b, n)
			return nil
		}, nil
	case *arrow.Float64Type, *arrow.Float32Type:
		return func(c *copyColumn, v []byte) error {
			b := c.b
			var x float64
			switch len(v) {
			case 8:
				x = math.Float64frombits(binary.BigEndian.Uint64(v))
			case 4:
				x = float64(math.Float32frombits(binary.BigEndian.Uint32(v)))
			default:
				return bad(v)
			}
			if fb, ok := b.(*array.Float32Builder); ok {
				fb.Append(float32(x))
			} else {
				b.(*array.Float64Builder).Append(x)
			}
			return nil
		}, nil
	case *arrow.BooleanType:
		return func(c *copyColumn, v []byte) error {
			b := c.b
			if len(v) != 1 {
				return bad(v)
			}
			b.(*array.BooleanBuilder).Append(v[0] != 0)
			return nil
		}, nil
	case *arrow.StringType:
		return stringConv(f, true)
	case *arrow.BinaryType:
		return func(c *copyColumn, v []byte) error {
			return c.appendBytes(v)
		}, nil
	case *arrow.Date32Type:
		return func(c *copyColumn, v []byte) error {
			b := c.b
			if len(v) != 4 {
				return bad(v)
			}
			d := int32(binary.BigEndian.Uint32(v))
			if d == math.MaxInt32 || d == math.MinInt32 {
				return sqlerr.Unsupported("infinite dates", "finite dates")
			}
			b.(*array.Date32Builder).Append(arrow.Date32(d + pgEpochDays))
			return nil
		}, nil
	case *arrow.TimestampType:
		toUnit := timestampFromTime(t.Unit)
		return func(c *copyColumn, v []byte) error {
			b := c.b
			if len(v) != 8 {
				return bad(v)
			}
			us := int64(binary.BigEndian.Uint64(v))
			if us == math.MaxInt64 || us == math.MinInt64 {
				return sqlerr.Unsupported("infinite timestamps", "finite timestamps")
			}
			b.(*array.TimestampBuilder).Append(toUnit(time.UnixMicro(us + pgEpochMicros)))
			return nil
		}, nil
	case *arrow.Decimal128Type:
		return func(c *copyColumn, v []byte) error {
			b := c.b
			n, err := decodeBinaryNumeric(v, t.Precision, t.Scale)
			if err != nil {
				if err == errDecimalOverflow {
					return sqlerr.New(sqlerr.NumericValueOutOfRange, "numeric field overflow")
				}
				return bad(v)
			}
			b.(*array.Decimal128Builder).Append(n)
			return nil
		}, nil
	case *arrow.MonthDayNanoIntervalType:
		// interval_send: microseconds (int64), days, months (int32).
		return func(c *copyColumn, v []byte) error {
			if len(v) != 16 {
				return bad(v)
			}
			return appendInterval(c.b, int32(binary.BigEndian.Uint32(v[12:])), int32(binary.BigEndian.Uint32(v[8:])),
				int64(binary.BigEndian.Uint64(v)))
		}, nil
	}
	return nil, sqlerr.Unsupported(fmt.Sprintf("COPY into a column of type %s", f.Type), "columns of the lake's scalar types")
}

// decodeBinaryNumeric reads PostgreSQL's binary numeric (ndigits, weight,
// sign, dscale, base-10000 digits) into a decimal of the given scale,
// rounding half away from zero.
func decodeBinaryNumeric(v []byte, prec, scale int32) (decimal128.Num, error) {
	if len(v) < 8 {
		return decimal128.Num{}, fmt.Errorf("short numeric")
	}
	ndigits := int(binary.BigEndian.Uint16(v[0:]))
	weight := int(int16(binary.BigEndian.Uint16(v[2:])))
	sign := binary.BigEndian.Uint16(v[4:])
	if len(v) != 8+2*ndigits {
		return decimal128.Num{}, fmt.Errorf("bad numeric length")
	}
	if sign != 0 && sign != 0x4000 {
		return decimal128.Num{}, fmt.Errorf("NaN or infinity")
	}
	var sb strings.Builder
	for i := 0; i < ndigits; i++ {
		d := binary.BigEndian.Uint16(v[8+2*i:])
		if d > 9999 {
			return decimal128.Num{}, fmt.Errorf("bad digit")
		}
		fmt.Fprintf(&sb, "%04d", d)
	}
	// The digit string's value is digits × 10000^(weight − ndigits + 1).
	text := sb.String()
	if text == "" {
		text = "0"
	}
	text += "e" + strconv.Itoa(4*(weight-ndigits+1))
	if sign == 0x4000 {
		text = "-" + text
	}
	return parseDecimal(text, prec, scale)
}
