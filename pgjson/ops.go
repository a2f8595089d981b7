package pgjson

import (
	"strconv"
	"strings"
)

// Text is the value as a json/jsonb operator renders it: a json value's
// text as written, a jsonb value canonically.
func (v *Value) Text(jsonb bool) string {
	if jsonb {
		return v.JSONB()
	}
	return v.Raw
}

// Unquoted is the value as ->> and #>> return it: a string's text, SQL NULL
// (false) for JSON null, any other value as Text.
func (v *Value) Unquoted(jsonb bool) (string, bool) {
	switch v.Kind {
	case Null:
		return "", false
	case String:
		return v.Str, true
	}
	return v.Text(jsonb), true
}

// Field is an object's member key (the last one written, for json as for
// jsonb); nil when v is not an object or has no such key.
func (v *Value) Field(key string) *Value {
	if v == nil || v.Kind != Object {
		return nil
	}
	for i := len(v.Keys) - 1; i >= 0; i-- {
		if v.Keys[i] == key {
			return v.Vals[i]
		}
	}
	return nil
}

// Index is an array's element i, counted from the end when negative; nil
// when v is not an array or i is out of range. jsonb (-> n) takes a scalar
// for an array of that one element.
func (v *Value) Index(i int, jsonb bool) *Value {
	if v != nil && jsonb && v.Kind != Array && v.Kind != Object && (i == 0 || i == -1) {
		return v
	}
	if v == nil || v.Kind != Array {
		return nil
	}
	if i < 0 {
		i += len(v.Elems)
	}
	if i < 0 || i >= len(v.Elems) {
		return nil
	}
	return v.Elems[i]
}

// Path follows #>'s path: each element is a key of an object or, in an
// array, an integer index (negative from the end); nil when a step does not
// exist. An empty path is v itself.
func (v *Value) Path(path []string) *Value {
	for _, p := range path {
		switch {
		case v == nil:
			return nil
		case v.Kind == Object:
			v = v.Field(p)
		case v.Kind == Array:
			i, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil {
				return nil
			}
			v = v.Index(i, false)
		default:
			return nil
		}
	}
	return v
}

// Exists is jsonb's ? operator: key is a member of an object, a string
// element of an array, or the string itself.
func (v *Value) Exists(key string) bool {
	switch v.Kind {
	case Object:
		return v.Field(key) != nil
	case Array:
		for _, e := range v.Elems {
			if e.Kind == String && e.Str == key {
				return true
			}
		}
	case String:
		return v.Str == key
	}
	return false
}

// Contains is jsonb's @> operator: every member of an object of b is in a
// (containers recursively), every element of an array of b is in some
// element of a, and scalars are equal. An array contains a scalar it holds;
// a scalar contains no array.
func Contains(a, b *Value) bool {
	switch {
	case a.Kind == Array && b.Kind != Array && b.Kind != Object:
		return containsElem(a, b)
	case a.Kind != b.Kind:
		return false
	case a.Kind == Object:
		keys, vals := b.members()
		for i, k := range keys {
			av := a.Field(k)
			if av == nil {
				return false
			}
			bv := vals[i]
			if isContainer(bv) {
				if av.Kind != bv.Kind || !Contains(av, bv) {
					return false
				}
			} else if !scalarsEqual(av, bv) {
				return false
			}
		}
		return true
	case a.Kind == Array:
		for _, be := range b.Elems {
			if !containsElem(a, be) {
				return false
			}
		}
		return true
	}
	return scalarsEqual(a, b)
}

// containsElem reports whether some element of array a holds e.
func containsElem(a, e *Value) bool {
	for _, ae := range a.Elems {
		if isContainer(e) {
			if ae.Kind == e.Kind && Contains(ae, e) {
				return true
			}
		} else if scalarsEqual(ae, e) {
			return true
		}
	}
	return false
}

func isContainer(v *Value) bool { return v.Kind == Array || v.Kind == Object }

func scalarsEqual(a, b *Value) bool {
	if a.Kind != b.Kind {
		return false
	}
	if a.Kind == Number {
		return numbersEqual(a, b)
	}
	return a.Str == b.Str
}
