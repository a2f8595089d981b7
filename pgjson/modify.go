package pgjson

import "errors"

// Concat is jsonb's ||: two objects merge (the right one's members win),
// anything else is concatenated as arrays, a non-array taken as an array of
// itself.
func Concat(a, b *Value) *Value {
	if a.Kind == Object && b.Kind == Object {
		keys, vals := a.members()
		out := &Value{Kind: Object, Keys: append([]string(nil), keys...), Vals: append([]*Value(nil), vals...)}
		bk, bv := b.members()
		out.Keys, out.Vals = append(out.Keys, bk...), append(out.Vals, bv...)
		return out
	}
	elems := func(v *Value) []*Value {
		if v.Kind == Array {
			return v.Elems
		}
		return []*Value{v}
	}
	return &Value{Kind: Array, Elems: append(append([]*Value(nil), elems(a)...), elems(b)...)}
}

// Errors of jsonb's - operator (SQLSTATE 22023 in PostgreSQL).
var (
	ErrDeleteFromScalar = errors.New("cannot delete from scalar")
	ErrDeleteByIndex    = errors.New("cannot delete from object using integer index")
)

// DeleteKey is jsonb - text: an object without member key, an array without
// its string elements equal to key.
func DeleteKey(v *Value, key string) (*Value, error) {
	switch v.Kind {
	case Object:
		out := &Value{Kind: Object}
		keys, vals := v.members()
		for i, k := range keys {
			if k != key {
				out.Keys, out.Vals = append(out.Keys, k), append(out.Vals, vals[i])
			}
		}
		return out, nil
	case Array:
		out := &Value{Kind: Array}
		for _, e := range v.Elems {
			if e.Kind != String || e.Str != key {
				out.Elems = append(out.Elems, e)
			}
		}
		return out, nil
	}
	return nil, ErrDeleteFromScalar
}

// DeleteIndex is jsonb - integer: an array without element i (counted from
// the end when negative; unchanged when out of range).
func DeleteIndex(v *Value, i int) (*Value, error) {
	switch v.Kind {
	case Object:
		return nil, ErrDeleteByIndex
	case Array:
		if i < 0 {
			i += len(v.Elems)
		}
		out := &Value{Kind: Array}
		for j, e := range v.Elems {
			if j != i {
				out.Elems = append(out.Elems, e)
			}
		}
		return out, nil
	}
	return nil, ErrDeleteFromScalar
}
