package pgjson

import (
	"slices"
	"strings"
)

// members returns an object's members as jsonb keeps them: one per key (the
// last one written wins) in jsonb's order, shorter keys first, then by
// bytes.
func (v *Value) members() (keys []string, vals []*Value) {
	idx := make(map[string]int, len(v.Keys))
	for i, k := range v.Keys {
		if j, ok := idx[k]; ok {
			vals[j] = v.Vals[i]
			continue
		}
		idx[k] = len(keys)
		keys, vals = append(keys, k), append(vals, v.Vals[i])
	}
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return compareKeys(keys[a], keys[b]) })
	sk, sv := make([]string, len(keys)), make([]*Value, len(keys))
	for i, o := range order {
		sk[i], sv[i] = keys[o], vals[o]
	}
	return sk, sv
}

func compareKeys(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

// JSONB renders v as jsonb prints it: `{"a": 1, "b": [1, 2]}`.
func (v *Value) JSONB() string {
	var sb strings.Builder
	v.appendJSONB(&sb)
	return sb.String()
}

func (v *Value) appendJSONB(sb *strings.Builder) {
	switch v.Kind {
	case Object:
		keys, vals := v.members()
		sb.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				sb.WriteString(", ")
			}
			appendQuoted(sb, k)
			sb.WriteString(": ")
			vals[i].appendJSONB(sb)
		}
		sb.WriteByte('}')
	case Array:
		sb.WriteByte('[')
		for i, e := range v.Elems {
			if i > 0 {
				sb.WriteString(", ")
			}
			e.appendJSONB(sb)
		}
		sb.WriteByte(']')
	case String:
		appendQuoted(sb, v.Str)
	default:
		sb.WriteString(v.Str)
	}
}

// appendQuoted writes s as a JSON string the way PostgreSQL escapes it:
// quote, backslash and the named control characters by their short
// escapes, other control characters as \u00XX, everything else as is.
func appendQuoted(sb *strings.Builder, s string) {
	const hex = "0123456789abcdef"
	sb.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			sb.WriteString(`\"`)
		case '\\':
			sb.WriteString(`\\`)
		case '\b':
			sb.WriteString(`\b`)
		case '\f':
			sb.WriteString(`\f`)
		case '\n':
			sb.WriteString(`\n`)
		case '\r':
			sb.WriteString(`\r`)
		case '\t':
			sb.WriteString(`\t`)
		default:
			if c < 0x20 {
				sb.WriteString(`\u00`)
				sb.WriteByte(hex[c>>4])
				sb.WriteByte(hex[c&0xf])
				continue
			}
			sb.WriteByte(c)
		}
	}
	sb.WriteByte('"')
}

// Canonical returns jsonb's text of JSON text.
func Canonical(text string) (string, error) {
	v, err := Parse(text, true)
	if err != nil {
		return "", err
	}
	return v.JSONB(), nil
}
