package vector

import (
	"database/sql/driver"
	"fmt"

	"github.com/jackc/pgx/v5/pgtype"
)

// Codec is the pgx codec of the vector type, so a pgwire server encodes
// result values (Vector) and decodes binary parameters in pgvector's forms.
type Codec struct{}

// FormatSupported: text and binary.
func (Codec) FormatSupported(format int16) bool {
	return format == pgtype.TextFormatCode || format == pgtype.BinaryFormatCode
}

// PreferredFormat is binary.
func (Codec) PreferredFormat() int16 { return pgtype.BinaryFormatCode }

type encodePlan struct{ binary bool }

func (p encodePlan) Encode(value any, buf []byte) ([]byte, error) {
	var v Vector
	switch x := value.(type) {
	case Vector:
		v = x
	case []float32:
		v = x
	case string:
		var err error
		if v, err = Parse(x); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("vector: cannot encode %T", value)
	}
	if v == nil {
		return nil, nil
	}
	if p.binary {
		return v.AppendBinary(buf), nil
	}
	return v.AppendText(buf), nil
}

// PlanEncode encodes Vector, []float32 and vector text.
func (Codec) PlanEncode(_ *pgtype.Map, _ uint32, format int16, value any) pgtype.EncodePlan {
	switch value.(type) {
	case Vector, []float32, string:
		return encodePlan{binary: format == pgtype.BinaryFormatCode}
	}
	return nil
}

type scanPlan struct{ binary bool }

func (p scanPlan) Scan(src []byte, target any) error {
	dst, ok := target.(*Vector)
	if !ok {
		return fmt.Errorf("vector: cannot scan into %T", target)
	}
	if src == nil {
		*dst = nil
		return nil
	}
	v, err := decode(p.binary, src)
	*dst = v
	return err
}

// PlanScan scans into *Vector.
func (Codec) PlanScan(_ *pgtype.Map, _ uint32, format int16, target any) pgtype.ScanPlan {
	if _, ok := target.(*Vector); ok {
		return scanPlan{binary: format == pgtype.BinaryFormatCode}
	}
	return nil
}

func decode(binary bool, src []byte) (Vector, error) {
	if binary {
		return DecodeBinary(src)
	}
	return Parse(string(src))
}

// DecodeDatabaseSQLValue yields the text form.
func (c Codec) DecodeDatabaseSQLValue(_ *pgtype.Map, _ uint32, format int16, src []byte) (driver.Value, error) {
	if src == nil {
		return nil, nil
	}
	v, err := decode(format == pgtype.BinaryFormatCode, src)
	if err != nil {
		return nil, err
	}
	return v.String(), nil
}

// DecodeValue yields a Vector.
func (Codec) DecodeValue(_ *pgtype.Map, _ uint32, format int16, src []byte) (any, error) {
	if src == nil {
		return nil, nil
	}
	return decode(format == pgtype.BinaryFormatCode, src)
}
