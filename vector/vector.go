// Package vector is the home of pgvector's vector type in the lake: its
// text and binary forms (as pgvector defines them), the distance kernels,
// and the IVF index built per partition × bucket (ivf*.go).
//
// Invariants: a Vector that Parse or DecodeBinary returns has between 1 and
// MaxDims components, none NaN or infinite; Format and AppendBinary are
// their exact inverses (Format prints the shortest digits that read back to
// the same float32).
package vector

import (
	"encoding/binary"
	"math"
	"strconv"
	"strings"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// MaxDims is the largest number of dimensions a vector may have, as in
// pgvector.
const MaxDims = 16000

// Vector is one vector value.
type Vector []float32

// DataException is pgvector's SQLSTATE for values a vector cannot hold.
const DataException = "22000"

func invalidText(s string) error {
	return sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type vector: %q", s)
}

// Check validates components read from any source: at least one, at most
// MaxDims, none NaN or infinite.
func Check(v []float32) error {
	if len(v) == 0 {
		return sqlerr.New(DataException, "vector must have at least 1 dimension")
	}
	if len(v) > MaxDims {
		return sqlerr.New(sqlerr.ProgramLimitExceeded, "vector cannot have more than %d dimensions", MaxDims)
	}
	for _, f := range v {
		if math.IsNaN(float64(f)) {
			return sqlerr.New(DataException, "NaN not allowed in vector")
		}
		if math.IsInf(float64(f), 0) {
			return sqlerr.New(DataException, "infinite value not allowed in vector")
		}
	}
	return nil
}

// CheckDims validates that v has the dimensions a vector(dims) column holds.
func CheckDims(v []float32, dims int) error {
	if len(v) != dims {
		return sqlerr.New(DataException, "expected %d dimensions, not %d", dims, len(v))
	}
	return nil
}

// Parse reads pgvector's text form: '[' components separated by commas ']',
// blanks allowed around each component and the brackets.
func Parse(s string) (Vector, error) {
	t := strings.TrimSpace(s)
	if len(t) < 2 || t[0] != '[' || t[len(t)-1] != ']' {
		return nil, invalidText(s)
	}
	body := strings.TrimSpace(t[1 : len(t)-1])
	if body == "" {
		return nil, Check(nil)
	}
	parts := strings.Split(body, ",")
	v := make(Vector, 0, len(parts))
	for _, p := range parts {
		p = strings.TrimSpace(p)
		f, err := strconv.ParseFloat(p, 32)
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return nil, sqlerr.New(sqlerr.NumericValueOutOfRange, "%q is out of range for type vector", p)
		} else if err != nil {
			return nil, invalidText(s)
		}
		v = append(v, float32(f))
	}
	if err := Check(v); err != nil {
		return nil, err
	}
	return v, nil
}

// AppendText appends v's text form.
func (v Vector) AppendText(buf []byte) []byte {
	buf = append(buf, '[')
	for i, f := range v {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendFloat32(buf, f)
	}
	return append(buf, ']')
}

// String is v's text form.
func (v Vector) String() string { return string(v.AppendText(nil)) }

// appendFloat32 prints f as float4 output does: shortest exact digits,
// exponent notation outside [1e-4, 1e6).
func appendFloat32(buf []byte, f float32) []byte {
	if f == 0 {
		if math.Signbit(float64(f)) {
			return append(buf, "-0"...)
		}
		return append(buf, '0')
	}
	e := strconv.FormatFloat(float64(f), 'e', -1, 32)
	exp, _ := strconv.Atoi(e[strings.LastIndexByte(e, 'e')+1:])
	if exp < -4 || exp >= 6 {
		return append(buf, e...)
	}
	return strconv.AppendFloat(buf, float64(f), 'f', -1, 32)
}

// AppendBinary appends pgvector's binary form: dimensions (int16), a
// reserved int16 (0), then each component as a big-endian float32.
func (v Vector) AppendBinary(buf []byte) []byte {
	buf = binary.BigEndian.AppendUint16(buf, uint16(len(v)))
	buf = binary.BigEndian.AppendUint16(buf, 0)
	for _, f := range v {
		buf = binary.BigEndian.AppendUint32(buf, math.Float32bits(f))
	}
	return buf
}

// invalidBinary is 22P03, invalid_binary_representation.
const invalidBinary = "22P03"

// DecodeBinary reads pgvector's binary form.
func DecodeBinary(src []byte) (Vector, error) {
	if len(src) < 4 {
		return nil, sqlerr.New(invalidBinary, "vector binary value is too short")
	}
	dims := int(binary.BigEndian.Uint16(src))
	if binary.BigEndian.Uint16(src[2:]) != 0 {
		return nil, sqlerr.New(invalidBinary, "expected unused to be 0")
	}
	if len(src) != 4+4*dims {
		return nil, sqlerr.New(invalidBinary, "vector binary value holds %d bytes for %d dimensions", len(src)-4, dims)
	}
	v := make(Vector, dims)
	for i := range v {
		v[i] = math.Float32frombits(binary.BigEndian.Uint32(src[4+4*i:]))
	}
	if err := Check(v); err != nil {
		return nil, err
	}
	return v, nil
}
