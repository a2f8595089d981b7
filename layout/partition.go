package layout

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// Partition descriptions.
//
// Source: LakeSoul rust/lakesoul-io constant.rs (sentinels, date/timestamp
// formats, "-5") and helpers (format_scalar_value, into_scalar_value,
// columnar_values_to_partition_desc, partition_desc_to_scalar_values,
// columnar_values_to_sub_path), plus parse_table_info_partitions for the
// table_info.partitions string.
//
// A partition desc is `col1=v1,col2=v2` over the range-partition columns in
// table order, each value rendered by FormatValue; a table without range
// columns has the single partition NonPartitioned. The data files of a
// partition live under PartitionDir(desc) (`col1=v1/col2=v2`, each column
// and value escaped, paths.go) below the table path.

// Sentinels and fixed descs (constant.rs).
const (
	// NonPartitioned is the partition_desc of a table without range columns
	// (DEFAULT_PARTITION_DESC).
	NonPartitioned = "-5"
	// NullValue stands for a null range value.
	NullValue = "__L@KE$OUL_NULL__"
	// EmptyStringValue stands for the empty string.
	EmptyStringValue = "__L@KE$OUL_EMPTY_STRING__"
	// EscapedEq replaces '=' inside string values.
	EscapedEq = "__L@KE$OUL_EQ__"
	// EscapedComma replaces ',' inside string values.
	EscapedComma = "__L@KE$OUL_COMMA__"
)

// KV is one `key=value` pair of a partition desc. Value is the encoded text
// (as written by FormatValue); decode it with ParseValue.
type KV struct {
	Key   string
	Value string
}

// FormatPartitions renders table_info.partitions: the range columns and the
// primary-key (hash) columns, each comma-joined, separated by ';'
// (e.g. "date,region;id", ";id", "date;", ";").
func FormatPartitions(rangeCols, pkCols []string) string {
	return strings.Join(rangeCols, ",") + ";" + strings.Join(pkCols, ",")
}

// ParsePartitions is the inverse of FormatPartitions. Like LakeSoul's
// parse_table_info_partitions it requires the ';' and skips empty names
// (so ";" yields two nil slices); a second ';' is an error.
// Invariant: ParsePartitions(FormatPartitions(r, p)) == (r, p) for lists of
// non-empty names without ',' or ';'.
func ParsePartitions(s string) (rangeCols, pkCols []string, err error) {
	r, p, ok := strings.Cut(s, ";")
	if !ok {
		return nil, nil, fmt.Errorf("layout: partitions %q: missing ';'", s)
	}
	if strings.Contains(p, ";") {
		return nil, nil, fmt.Errorf("layout: partitions %q: more than one ';'", s)
	}
	return splitNames(r), splitNames(p), nil
}

func splitNames(s string) []string {
	var out []string
	for _, n := range strings.Split(s, ",") {
		if n != "" {
			out = append(out, n)
		}
	}
	return out
}

var (
	valueEscaper   = strings.NewReplacer("=", EscapedEq, ",", EscapedComma)
	valueUnescaper = strings.NewReplacer(EscapedEq, "=", EscapedComma, ",")
)

// FormatValue renders row i of arr as partition-value text:
//   - null → NullValue (any type);
//   - string/large_string: "" → EmptyStringValue, otherwise the text with
//     '=' → EscapedEq and ',' → EscapedComma;
//   - binary/large_binary/fixed_size_binary → lowercase hex;
//   - date32 → YYYY-MM-DD;
//   - timestamp (any time zone; rendered as UTC) → YYYY-MM-DDTHH:MM:SS plus
//     a fraction of 3/6/9 digits for ms/us/ns (none for s);
//   - decimal128 → the unscaled integer;
//   - ints → decimal; bool → true/false; floats → shortest round-trip text
//     without exponent (Rust's Display: 1e20 → "100000000000000000000"),
//     with "inf", "-inf", "NaN".
//
// Years outside 0000..9999 follow chrono's %Y ("-0001", "+10000").
//
// Deviations from the Rust writer, all deliberate:
//   - LakeSoul's format_scalar_value escapes with
//     `s.replace(',', EQ).replace(',', COMMA)`: it turns ',' into the EQ
//     sentinel and never escapes '='. We escape both correctly; ParseValue
//     decodes both sentinels, so our values read back in LakeSoul as the
//     original text.
//   - Rust's format_scalar_value falls back to DataFusion's Display for
//     typed nulls of most types ("NULL"); we always write NullValue, the
//     text into_scalar_value decodes as null.
//   - Rust panics on pre-1970 timestamps with a fraction; we floor.
//
// Invariant: ParseValue(FormatValue(arr, i), arr.DataType()) returns the
// value at i, except for strings that themselves contain a sentinel text.
func FormatValue(arr arrow.Array, i int) (string, error) {
	if i < 0 || i >= arr.Len() {
		return "", fmt.Errorf("layout: row %d out of range [0,%d)", i, arr.Len())
	}
	if arr.IsNull(i) {
		if !formattableType(arr.DataType()) {
			return "", fmt.Errorf("layout: unsupported partition value type %s", arr.DataType())
		}
		return NullValue, nil
	}
	switch a := arr.(type) {
	case *array.String:
		return formatString(a.Value(i)), nil
	case *array.LargeString:
		return formatString(a.Value(i)), nil
	case *array.Binary:
		return hex.EncodeToString(a.Value(i)), nil
	case *array.LargeBinary:
		return hex.EncodeToString(a.Value(i)), nil
	case *array.FixedSizeBinary:
		return hex.EncodeToString(a.Value(i)), nil
	case *array.Boolean:
		return strconv.FormatBool(a.Value(i)), nil
	case *array.Int8:
		return strconv.FormatInt(int64(a.Value(i)), 10), nil
	case *array.Int16:
		return strconv.FormatInt(int64(a.Value(i)), 10), nil
	case *array.Int32:
		return strconv.FormatInt(int64(a.Value(i)), 10), nil
	case *array.Int64:
		return strconv.FormatInt(a.Value(i), 10), nil
	case *array.Uint8:
		return strconv.FormatUint(uint64(a.Value(i)), 10), nil
	case *array.Uint16:
		return strconv.FormatUint(uint64(a.Value(i)), 10), nil
	case *array.Uint32:
		return strconv.FormatUint(uint64(a.Value(i)), 10), nil
	case *array.Uint64:
		return strconv.FormatUint(a.Value(i), 10), nil
	case *array.Float32:
		return formatFloat(float64(a.Value(i)), 32), nil
	case *array.Float64:
		return formatFloat(a.Value(i), 64), nil
	case *array.Date32:
		return formatDate(int64(a.Value(i))), nil
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		return formatTimestamp(int64(a.Value(i)), unit)
	case *array.Decimal128:
		return a.Value(i).BigInt().String(), nil
	}
	return "", fmt.Errorf("layout: unsupported partition value type %s", arr.DataType())
}

func formattableType(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY, arrow.FIXED_SIZE_BINARY,
		arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT32, arrow.FLOAT64, arrow.DATE32, arrow.TIMESTAMP, arrow.DECIMAL128:
		return true
	}
	return false
}

func formatString(s string) string {
	if s == "" {
		return EmptyStringValue
	}
	return valueEscaper.Replace(s)
}

func formatFloat(f float64, bitSize int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'f', -1, bitSize)
}

// Proleptic Gregorian calendar conversions (days relative to 1970-01-01),
// exact for the whole int64 day range used here.
func civilFromDays(z int64) (y int64, m, d int) {
	z += 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = int(doy - (153*mp+2)/5 + 1)
	if mp < 10 {
		m = int(mp + 3)
	} else {
		m = int(mp - 9)
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

func daysFromCivil(y int64, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mm := int64(m)
	if mm > 2 {
		mm -= 3
	} else {
		mm += 9
	}
	doy := (153*mm+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

func daysIn(y int64, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// appendYear renders y like chrono's %Y.
func appendYear(b []byte, y int64) []byte {
	switch {
	case y < 0:
		b = append(b, '-')
		y = -y
	case y > 9999:
		b = append(b, '+')
	}
	s := strconv.FormatInt(y, 10)
	for i := len(s); i < 4; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

func append2(b []byte, v int) []byte {
	return append(b, byte('0'+v/10), byte('0'+v%10))
}

func appendDate(b []byte, days int64) []byte {
	y, m, d := civilFromDays(days)
	b = appendYear(b, y)
	b = append(b, '-')
	b = append2(b, m)
	b = append(b, '-')
	return append2(b, d)
}

func formatDate(days int64) string {
	return string(appendDate(make([]byte, 0, 10), days))
}

func unitScale(u arrow.TimeUnit) (perSec int64, digits int) {
	switch u {
	case arrow.Millisecond:
		return 1e3, 3
	case arrow.Microsecond:
		return 1e6, 6
	case arrow.Nanosecond:
		return 1e9, 9
	}
	return 1, 0
}

// floorDiv returns floor(a/b) and the non-negative remainder for b > 0.
func floorDiv(a, b int64) (int64, int64) {
	q, r := a/b, a%b
	if r < 0 {
		q--
		r += b
	}
	return q, r
}

func formatTimestamp(v int64, unit arrow.TimeUnit) (string, error) {
	perSec, digits := unitScale(unit)
	secs, frac := floorDiv(v, perSec)
	days, sod := floorDiv(secs, 86400)
	if y, _, _ := civilFromDays(days); y < -262143 || y > 262142 {
		// chrono's range; the Rust writer panics beyond it.
		return "", fmt.Errorf("layout: timestamp %d (%s) out of range", v, unit)
	}
	b := make([]byte, 0, 32)
	b = appendDate(b, days)
	b = append(b, 'T')
	b = append2(b, int(sod/3600))
	b = append(b, ':')
	b = append2(b, int(sod/60%60))
	b = append(b, ':')
	b = append2(b, int(sod%60))
	if digits > 0 {
		b = append(b, '.')
		s := strconv.FormatInt(frac, 10)
		for i := len(s); i < digits; i++ {
			b = append(b, '0')
		}
		b = append(b, s...)
	}
	return string(b), nil
}

// FormatDesc joins range columns and their FormatValue texts into a
// partition desc `col1=v1,col2=v2`; with no columns it returns
// NonPartitioned. It panics if the slices differ in length.
func FormatDesc(cols, values []string) string {
	if len(cols) != len(values) {
		panic(fmt.Sprintf("layout: FormatDesc: %d columns but %d values", len(cols), len(values)))
	}
	if len(cols) == 0 {
		return NonPartitioned
	}
	var b strings.Builder
	for i, c := range cols {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(c)
		b.WriteByte('=')
		b.WriteString(values[i])
	}
	return b.String()
}

// ParseDesc splits a partition desc into its pairs, in order. NonPartitioned
// yields no pairs. Every ','-separated segment must be `key=value` with a
// non-empty key, and keys must be distinct. The value is everything after
// the first '=' (as LakeSoul's split_once does), so descs written by the
// Rust writer, which leaves '=' in string values unescaped, still parse.
func ParseDesc(desc string) ([]KV, error) {
	if desc == NonPartitioned {
		return nil, nil
	}
	segs := strings.Split(desc, ",")
	kvs := make([]KV, 0, len(segs))
	for _, seg := range segs {
		k, v, ok := strings.Cut(seg, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("layout: invalid partition desc %q: segment %q is not key=value", desc, seg)
		}
		for _, kv := range kvs {
			if kv.Key == k {
				return nil, fmt.Errorf("layout: invalid partition desc %q: duplicate key %q", desc, k)
			}
		}
		kvs = append(kvs, KV{Key: k, Value: v})
	}
	return kvs, nil
}

// ErrUnsupportedType is wrapped by ParseValue for types it cannot decode.
var ErrUnsupportedType = errors.New("unsupported partition value type")

// ParseValue decodes partition-value text (the inverse of FormatValue, as
// LakeSoul's into_scalar_value) into a Go value of dt:
//
//	int8/16/32/64, uint8/16/32/64 → the same Go type
//	float32 → float32, float64 → float64   (also "inf", "-inf", "NaN")
//	bool → bool                            (strconv.ParseBool forms)
//	string, large_string → string          (sentinels decoded)
//	binary, large_binary, fixed_size_binary → []byte (hex, any case)
//	date32 → arrow.Date32                  (YYYY-MM-DD)
//	timestamp → arrow.Timestamp in dt's unit: either the raw integer or
//	            YYYY-MM-DD{T| }HH:MM:SS[.fraction] in UTC; fraction digits
//	            beyond the unit are truncated
//	decimal128 → decimal128.Num            (unscaled integer, ≤ precision digits)
//
// NullValue yields (nil, nil) for every supported type.
func ParseValue(text string, dt arrow.DataType) (any, error) {
	if !formattableType(dt) {
		return nil, fmt.Errorf("layout: %w %s", ErrUnsupportedType, dt)
	}
	if text == NullValue {
		return nil, nil
	}
	v, err := parseValue(text, dt)
	if err != nil {
		return nil, fmt.Errorf("layout: partition value %q as %s: %w", text, dt, err)
	}
	return v, nil
}

func parseValue(text string, dt arrow.DataType) (any, error) {
	switch dt.ID() {
	case arrow.STRING, arrow.LARGE_STRING:
		if text == EmptyStringValue {
			return "", nil
		}
		return valueUnescaper.Replace(text), nil
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.FIXED_SIZE_BINARY:
		b, err := hex.DecodeString(text)
		if err != nil {
			return nil, err
		}
		if fs, ok := dt.(*arrow.FixedSizeBinaryType); ok && len(b) != fs.ByteWidth {
			return nil, fmt.Errorf("got %d bytes, want %d", len(b), fs.ByteWidth)
		}
		return b, nil
	case arrow.BOOL:
		return strconv.ParseBool(text)
	case arrow.INT8:
		v, err := strconv.ParseInt(text, 10, 8)
		return int8(v), err
	case arrow.INT16:
		v, err := strconv.ParseInt(text, 10, 16)
		return int16(v), err
	case arrow.INT32:
		v, err := strconv.ParseInt(text, 10, 32)
		return int32(v), err
	case arrow.INT64:
		return strconv.ParseInt(text, 10, 64)
	case arrow.UINT8:
		v, err := strconv.ParseUint(text, 10, 8)
		return uint8(v), err
	case arrow.UINT16:
		v, err := strconv.ParseUint(text, 10, 16)
		return uint16(v), err
	case arrow.UINT32:
		v, err := strconv.ParseUint(text, 10, 32)
		return uint32(v), err
	case arrow.UINT64:
		return strconv.ParseUint(text, 10, 64)
	case arrow.FLOAT32:
		v, err := strconv.ParseFloat(text, 32)
		return float32(v), err
	case arrow.FLOAT64:
		return strconv.ParseFloat(text, 64)
	case arrow.DATE32:
		days, rest, err := parseDate(text)
		if err != nil {
			return nil, err
		}
		if rest != "" {
			return nil, fmt.Errorf("trailing text %q", rest)
		}
		if days < math.MinInt32 || days > math.MaxInt32 {
			return nil, errors.New("date out of range")
		}
		return arrow.Date32(days), nil
	case arrow.TIMESTAMP:
		return parseTimestamp(text, dt.(*arrow.TimestampType).Unit)
	case arrow.DECIMAL128:
		return parseDecimal128(text, dt.(*arrow.Decimal128Type).Precision)
	}
	return nil, ErrUnsupportedType
}

// digits consumes 1..max ASCII digits from the front of s.
func digits(s string, max int) (v int64, n int) {
	for n < len(s) && n < max && s[n] >= '0' && s[n] <= '9' {
		v = v*10 + int64(s[n]-'0')
		n++
	}
	return v, n
}

// parseDate parses [+-]Y-M-D (chrono %Y-%m-%d: a year of 1+ digits, month
// and day of 1-2 digits) and returns the epoch day and the unparsed rest.
func parseDate(s string) (int64, string, error) {
	bad := fmt.Errorf("invalid date %q", s)
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	y, n := digits(s, 9)
	if n == 0 || n >= len(s) || s[n] != '-' {
		return 0, "", bad
	}
	if neg {
		y = -y
	}
	s = s[n+1:]
	m, n := digits(s, 2)
	if n == 0 || n >= len(s) || s[n] != '-' {
		return 0, "", bad
	}
	s = s[n+1:]
	d, n := digits(s, 2)
	if n == 0 || m < 1 || m > 12 || d < 1 || int(d) > daysIn(y, int(m)) {
		return 0, "", bad
	}
	return daysFromCivil(y, int(m), int(d)), s[n:], nil
}

func parseTimestamp(text string, unit arrow.TimeUnit) (arrow.Timestamp, error) {
	// The raw stored integer is accepted first, as in into_scalar_value.
	if v, err := strconv.ParseInt(text, 10, 64); err == nil {
		return arrow.Timestamp(v), nil
	}
	bad := fmt.Errorf("invalid timestamp %q", text)
	days, s, err := parseDate(text)
	if err != nil {
		return 0, bad
	}
	if s == "" || (s[0] != 'T' && s[0] != ' ') {
		return 0, bad
	}
	s = s[1:]
	var hms [3]int64
	for k := range hms {
		if k > 0 {
			if s == "" || s[0] != ':' {
				return 0, bad
			}
			s = s[1:]
		}
		v, n := digits(s, 2)
		if n != 2 {
			return 0, bad
		}
		hms[k] = v
		s = s[n:]
	}
	if hms[0] > 23 || hms[1] > 59 || hms[2] > 59 {
		return 0, bad
	}
	var nanos int64
	if s != "" {
		if s[0] != '.' {
			return 0, bad
		}
		v, n := digits(s[1:], 9)
		if n == 0 || n+1 != len(s) {
			return 0, bad
		}
		for i := n; i < 9; i++ {
			v *= 10
		}
		nanos = v
	}
	perSec, _ := unitScale(unit)
	secs := days*86400 + hms[0]*3600 + hms[1]*60 + hms[2] // |secs| < 2^55: no overflow
	sub := nanos / (1e9 / perSec)
	v := new(big.Int).Mul(big.NewInt(secs), big.NewInt(perSec))
	v.Add(v, big.NewInt(sub))
	if !v.IsInt64() {
		return 0, fmt.Errorf("timestamp %q out of range for unit %s", text, unit)
	}
	return arrow.Timestamp(v.Int64()), nil
}

func parseDecimal128(text string, precision int32) (decimal128.Num, error) {
	v, ok := new(big.Int).SetString(text, 10)
	if !ok {
		return decimal128.Num{}, fmt.Errorf("invalid decimal %q", text)
	}
	if v.BitLen() > 127 { // also keeps FromBigInt from panicking
		return decimal128.Num{}, fmt.Errorf("decimal %q out of 128-bit range", text)
	}
	if nd := len(new(big.Int).Abs(v).String()); v.Sign() != 0 && int32(nd) > precision {
		return decimal128.Num{}, fmt.Errorf("decimal %q exceeds precision %d", text, precision)
	}
	return decimal128.FromBigInt(v), nil
}
