package pgjson

import (
	"reflect"
	"testing"
)

// Known answers from PostgreSQL 15.

func TestFunctions(t *testing.T) {
	must := func(text string, jsonb bool) *Value {
		v, err := Parse(text, jsonb)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for text, want := range map[string]string{`{}`: "object", `[1]`: "array", `"s"`: "string", `1.5`: "number",
		`true`: "boolean", `null`: "null"} {
		if got := must(text, true).TypeName(); got != want {
			t.Errorf("typeof %s = %s, want %s", text, got, want)
		}
	}
	texts := func(p []*string) []string {
		out := make([]string, len(p))
		for i, s := range p {
			out[i] = "NULL"
			if s != nil {
				out[i] = *s
			}
		}
		return out
	}
	arr := `[1, "two", null, {"k":3, "a" : 1}, 2.50]`
	for _, tc := range []struct {
		jsonb, text bool
		want        []string
	}{
		{true, false, []string{"1", `"two"`, "null", `{"a": 1, "k": 3}`, "2.50"}},
		{true, true, []string{"1", "two", "NULL", `{"a": 1, "k": 3}`, "2.50"}},
		{false, false, []string{"1", `"two"`, "null", `{"k":3, "a" : 1}`, "2.50"}},
	} {
		got, err := must(arr, tc.jsonb).Elements(tc.jsonb, tc.text)
		if err != nil || !reflect.DeepEqual(texts(got), tc.want) {
			t.Errorf("elements(jsonb %v, text %v) = %q, %v", tc.jsonb, tc.text, texts(got), err)
		}
	}
	if _, err := must(`{"a":1}`, true).Elements(true, false); err != ErrElementsOfObject {
		t.Errorf("elements of an object: %v", err)
	}
	if _, err := must(`3`, true).Elements(true, false); err != ErrElementsOfScalar {
		t.Errorf("elements of a scalar: %v", err)
	}
	obj := `{"bb": 1, "a": 2, "bb": 3, "c": 4}`
	if got, err := must(obj, true).ObjectKeys(true, "jsonb_object_keys"); err != nil || !reflect.DeepEqual(got, []string{"a", "c", "bb"}) {
		t.Errorf("jsonb keys = %q, %v", got, err)
	}
	if got, err := must(obj, false).ObjectKeys(false, "json_object_keys"); err != nil || !reflect.DeepEqual(got, []string{"bb", "a", "bb", "c"}) {
		t.Errorf("json keys = %q, %v", got, err)
	}
	if _, err := must(`[1]`, true).ObjectKeys(true, "jsonb_object_keys"); err == nil || err.Error() != "cannot call jsonb_object_keys on an array" {
		t.Errorf("keys of an array: %v", err)
	}
	if got, want := BuildObject([]string{"a\"b", "n"}, []string{`[1,2]`, "null"}), `{"a\"b" : [1,2], "n" : null}`; got != want {
		t.Errorf("BuildObject = %s, want %s", got, want)
	}
	if got, want := Agg([]string{"1", `"x"`, "null"}), `[1, "x", null]`; got != want {
		t.Errorf("Agg = %s, want %s", got, want)
	}
}
