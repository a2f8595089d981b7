package pgjson

import (
	"errors"
	"strings"
)

// TypeName is json_typeof's and jsonb_typeof's answer: object, array,
// string, number, boolean or null.
func (v *Value) TypeName() string {
	return [...]string{Null: "null", Bool: "boolean", Number: "number", String: "string", Array: "array", Object: "object"}[v.Kind]
}

// Errors of the set-returning functions (SQLSTATE 22023 in PostgreSQL).
var (
	ErrElementsOfObject = errors.New("cannot extract elements from an object")
	ErrElementsOfScalar = errors.New("cannot extract elements from a scalar")
)

// Elements are json(b)_array_elements' rows: an array's elements as ->
// renders them, or as ->> does when text (nil for a JSON null).
func (v *Value) Elements(jsonb, text bool) ([]*string, error) {
	switch v.Kind {
	case Object:
		return nil, ErrElementsOfObject
	case Array:
	default:
		return nil, ErrElementsOfScalar
	}
	out := make([]*string, len(v.Elems))
	for i, e := range v.Elems {
		if text {
			if s, ok := e.Unquoted(jsonb); ok {
				out[i] = &s
			}
			continue
		}
		s := e.Text(jsonb)
		out[i] = &s
	}
	return out, nil
}

// ObjectKeys are json(b)_object_keys' rows: jsonb's keys once each in
// jsonb's order, json's as written (duplicates included). fn names the
// function in the error for a non-object.
func (v *Value) ObjectKeys(jsonb bool, fn string) ([]string, error) {
	switch v.Kind {
	case Object:
	case Array:
		return nil, errors.New("cannot call " + fn + " on an array")
	default:
		return nil, errors.New("cannot call " + fn + " on a scalar")
	}
	if jsonb {
		keys, _ := v.members()
		return keys, nil
	}
	return append([]string(nil), v.Keys...), nil
}

// BuildObject is json_build_object's text of keys and values given as
// JSON text: `{"k" : v, …}`, the values as written.
func BuildObject(keys, vals []string) string {
	var sb strings.Builder
	sb.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			sb.WriteString(", ")
		}
		appendQuoted(&sb, k)
		sb.WriteString(" : ")
		sb.WriteString(vals[i])
	}
	sb.WriteByte('}')
	return sb.String()
}

// Agg is json_agg's text of elements given as JSON text: `[a, b]`, the
// elements as written.
func Agg(elems []string) string {
	return "[" + strings.Join(elems, ", ") + "]"
}
