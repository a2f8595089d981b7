package pgjson

import (
	"encoding/binary"
)

// SortKey is v's place in jsonb's total order as bytes: for jsonb values a
// and b, bytes.Compare(SortKey(a), SortKey(b)) is the sign of PostgreSQL's
// jsonb comparison (=, <, ORDER BY), and the keys are equal exactly when
// the values are equal as jsonb — keys in any order, duplicate keys the
// last one, numbers by value (1.0 = 1), white space ignored.
//
// PostgreSQL's order, which the key follows: an object sorts after an
// array, an array after a boolean, a boolean after a number, a number after
// a string, a string after null; objects with more pairs sort later, then
// pair by pair in jsonb's key order (shorter keys first), key then value;
// arrays with more elements sort later, then element by element. A scalar
// at the top is a one-element pseudo-array that sorts before a real array
// of one element (and after an empty one). Strings compare by their UTF-8
// bytes (the C collation; PostgreSQL uses the database's collation).
//
// Every value's encoding is prefix-free, so a sequence of them compares as
// the sequence of values does.
func SortKey(v *Value) []byte {
	var b []byte
	if v.Kind != Array && v.Kind != Object {
		// The raw-scalar pseudo-array: one element, flagged before a real
		// array's flag.
		b = append(b, tagArray)
		b = binary.BigEndian.AppendUint32(b, 1)
		b = append(b, 0)
		return appendSortKey(b, v)
	}
	return appendSortKey(b, v)
}

// Type tags in PostgreSQL's order of jsonb value types.
const (
	tagNull byte = 1 + iota
	tagString
	tagNumber
	tagBool
	tagArray
	tagObject
)

func appendSortKey(b []byte, v *Value) []byte {
	switch v.Kind {
	case Null:
		return append(b, tagNull)
	case String:
		return appendStringKey(append(b, tagString), v.Str)
	case Bool:
		if v.Str == "true" {
			return append(b, tagBool, 1)
		}
		return append(b, tagBool, 0)
	case Number:
		return appendNumberKey(append(b, tagNumber), v.Raw)
	case Array:
		b = append(b, tagArray)
		b = binary.BigEndian.AppendUint32(b, uint32(len(v.Elems)))
		b = append(b, 1)
		for _, e := range v.Elems {
			b = appendSortKey(b, e)
		}
		return b
	}
	keys, vals := v.members()
	b = append(b, tagObject)
	b = binary.BigEndian.AppendUint32(b, uint32(len(keys)))
	for i, k := range keys {
		b = appendStringKey(b, k)
		b = appendSortKey(b, vals[i])
	}
	return b
}

// appendStringKey appends s with 0x00 escaped as 0x00 0xFF and ended by
// 0x00 0x00: prefix-free, and ordered as the bytes of s.
func appendStringKey(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		b = append(b, s[i])
		if s[i] == 0 {
			b = append(b, 0xFF)
		}
	}
	return append(b, 0, 0)
}

// appendNumberKey appends a JSON number ordered by value: a class byte
// (negative, zero, positive), then for non-zero values the decimal
// exponent (biased, big-endian) and the significant digits ended by 0x00 —
// all inverted for negative values, where a larger magnitude is smaller.
func appendNumberKey(b []byte, raw string) []byte {
	d, err := parseDecimal(raw)
	if err != nil || d.digits == "" {
		return append(b, 2) // zero (a stored jsonb number always parses)
	}
	start := len(b) + 1
	if d.neg {
		b = append(b, 1)
	} else {
		b = append(b, 3)
	}
	b = binary.BigEndian.AppendUint32(b, uint32(int64(d.point)+1<<31))
	b = append(b, d.digits...)
	b = append(b, 0)
	if d.neg {
		for i := start; i < len(b); i++ {
			b[i] = ^b[i]
		}
	}
	return b
}
