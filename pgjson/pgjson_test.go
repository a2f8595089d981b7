package pgjson

import (
	"bytes"
	"errors"
	"testing"
)

// Known answers from PostgreSQL 15.

func TestCanonical(t *testing.T) {
	for in, want := range map[string]string{
		`{"a": [1,  2.50e1, -0, 1e-2]}`:         `{"a": [1, 25.0, 0, 0.01]}`,
		`{"b":1,"aa":2,"a":3}`:                  `{"a": 3, "b": 1, "aa": 2}`,
		`{"a":1,"a":2}`:                         `{"a": 2}`,
		`"\u00e9\n\u0001/"`:                     `"é\n\u0001/"`,
		`{"x": 1e3}`:                            `{"x": 1000}`,
		`{"x": 1.0E+2}`:                         `{"x": 100}`,
		`{"x": 0.00}`:                           `{"x": 0.00}`,
		`{"x": -0.0}`:                           `{"x": 0.0}`,
		`{"x": 123456789012345678901234567890}`: `{"x": 123456789012345678901234567890}`,
		` [ ] `:                                 `[]`,
		`{}`:                                    `{}`,
		`[true,false,null,"a\"b\\"]`:            `[true, false, null, "a\"b\\"]`,
		`"\ud83d\ude00"`:                        `"😀"`,
		`0.5`:                                   `0.5`,
		`123.456e-1`:                            `12.3456`,
	} {
		got, err := Canonical(in)
		if err != nil || got != want {
			t.Errorf("Canonical(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	var se *SyntaxError
	for _, in := range []string{``, `{`, `[1,]`, `{"a" 1}`, `01`, `1.`, `.5`, `"a`, "\"\x01\"", `tru`, `1 2`, `"\u12"`, `"\x"`, `{"a":1,}`} {
		if _, err := Parse(in, false); !errors.As(err, &se) {
			t.Errorf("Parse(%q): %v, want a syntax error", in, err)
		}
	}
	var ue *UnicodeError
	if _, err := Parse(`"\u0000"`, true); !errors.As(err, &ue) {
		t.Errorf(`jsonb "\u0000": %v`, err)
	}
	if _, err := Parse(`"\u0000"`, false); err != nil {
		t.Errorf(`json "\u0000": %v`, err)
	}
	var re *RangeError
	if _, err := Parse(`1e999999`, true); !errors.As(err, &re) {
		t.Errorf("1e999999: %v", err)
	}
}

func mustParse(t *testing.T, s string) *Value {
	t.Helper()
	v, err := Parse(s, true)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestContainsExists(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{`{"a":[1,2],"b":1}`, `{"a":[1]}`, true},
		{`[[1,2]]`, `[1]`, false},
		{`{"a":1}`, `1`, false},
		{`[1,2]`, `1`, true},
		{`1`, `[1]`, false},
		{`[1]`, `1`, true},
		{`{"a":1.0}`, `{"a":1}`, true},
		{`[1,[2,3]]`, `[[3]]`, true},
		{`{"a":{"b":[1,2]}}`, `{"a":{"b":[2]}}`, true},
		{`{"a":1,"b":2}`, `{"a":1}`, true},
		{`["foo","bar"]`, `"foo"`, true},
		{`{"a":{"b":1}}`, `{"a":1}`, false},
		{`{"a":1}`, `{}`, true},
		{`"a"`, `"a"`, true},
	} {
		if got := Contains(mustParse(t, c.a), mustParse(t, c.b)); got != c.want {
			t.Errorf("%s @> %s = %v, want %v", c.a, c.b, got, c.want)
		}
	}
	for _, c := range []struct {
		v, key string
		want   bool
	}{{`[1,2]`, "1", false}, {`["a",1]`, "a", true}, {`"a"`, "a", true}, {`{"a":1}`, "a", true}, {`{"a":1}`, "b", false}} {
		if got := mustParse(t, c.v).Exists(c.key); got != c.want {
			t.Errorf("%s ? %s = %v", c.v, c.key, got)
		}
	}
}

func TestAccess(t *testing.T) {
	j, err := Parse(`{"a": [1,  2.50], "a2": {"b" : 1}, "n": null, "s": "x\"y"}`, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := j.Field("a").Text(false); got != `[1,  2.50]` {
		t.Errorf("json -> 'a' = %s", got)
	}
	if got := j.Field("a").Text(true); got != `[1, 2.50]` {
		t.Errorf("jsonb -> 'a' = %s", got)
	}
	if got, _ := j.Field("a2").Unquoted(false); got != `{"b" : 1}` {
		t.Errorf("json ->> 'a2' = %s", got)
	}
	if got, _ := j.Field("s").Unquoted(false); got != `x"y` {
		t.Errorf("->> 's' = %s", got)
	}
	if _, ok := j.Field("n").Unquoted(true); ok {
		t.Error("->> of null is not NULL")
	}
	if got := j.Path([]string{"a", "-1"}); got == nil || got.Raw != "2.50" {
		t.Errorf("#> {a,-1} = %v", got)
	}
	if j.Path([]string{"a", "x"}) != nil || j.Path([]string{"s", "0"}) != nil || j.Path([]string{"zz"}) != nil {
		t.Error("missing paths must be nil")
	}
	if j.Path(nil) != j {
		t.Error("empty path")
	}
	arr := mustParse(t, `[1,2,3]`)
	if arr.Index(-1, true).Raw != "3" || arr.Index(3, true) != nil || arr.Index(-4, false) != nil || arr.Field("0") != nil {
		t.Error("array index")
	}
	if s := mustParse(t, `"s"`); s.Index(0, true) != s || s.Index(-1, true) != s || s.Index(1, true) != nil || s.Index(0, false) != nil ||
		s.Path([]string{"0"}) != nil {
		t.Error("jsonb -> n of a scalar is the scalar for 0 and -1 only; json's and #>'s are NULL")
	}
	if mustParse(t, `{"0":5}`).Path([]string{"0"}).Raw != "5" {
		t.Error(`{"0":5} #> {0}`)
	}
	if mustParse(t, `{"a":1,"a":2}`).Field("a").Raw != "2" {
		t.Error("duplicate keys: the last wins")
	}
}

func TestModify(t *testing.T) {
	for _, c := range []struct{ a, b, want string }{
		{`{"a":1,"b":2}`, `{"b":3,"c":4}`, `{"a": 1, "b": 3, "c": 4}`},
		{`[1,2]`, `[3]`, `[1, 2, 3]`},
		{`[1]`, `2`, `[1, 2]`},
		{`1`, `[2]`, `[1, 2]`},
		{`{"a":1}`, `[2]`, `[{"a": 1}, 2]`},
		{`"x"`, `"y"`, `["x", "y"]`},
		{`{"a":1}`, `5`, `[{"a": 1}, 5]`},
	} {
		if got := Concat(mustParse(t, c.a), mustParse(t, c.b)).JSONB(); got != c.want {
			t.Errorf("%s || %s = %s, want %s", c.a, c.b, got, c.want)
		}
	}
	for _, c := range []struct{ v, key, want string }{
		{`{"a":1,"b":2}`, "a", `{"b": 2}`}, {`["a","b","a",1]`, "a", `["b", 1]`},
	} {
		if got, err := DeleteKey(mustParse(t, c.v), c.key); err != nil || got.JSONB() != c.want {
			t.Errorf("%s - %s = %v, %v", c.v, c.key, got, err)
		}
	}
	for _, c := range []struct {
		v    string
		i    int
		want string
	}{{`[1,2,3]`, 1, `[1, 3]`}, {`[1,2,3]`, -1, `[1, 2]`}, {`[1,2,3]`, 5, `[1, 2, 3]`}} {
		if got, err := DeleteIndex(mustParse(t, c.v), c.i); err != nil || got.JSONB() != c.want {
			t.Errorf("%s - %d = %v, %v", c.v, c.i, got, err)
		}
	}
	if _, err := DeleteKey(mustParse(t, `"a"`), "a"); err != ErrDeleteFromScalar {
		t.Errorf("scalar - text: %v", err)
	}
	if _, err := DeleteIndex(mustParse(t, `{"a":1}`), 0); err != ErrDeleteByIndex {
		t.Errorf("object - int: %v", err)
	}
}

// TestSortKeyOrder: SortKey orders jsonb values as PostgreSQL 15 does
// (the expected order and equalities are PostgreSQL's answers to
// ORDER BY and = over these values).
func TestSortKeyOrder(t *testing.T) {
	ordered := [][]string{ // ascending, as PostgreSQL 15 (C collation) orders them; one group: equal
		{`[]`},
		{`null`},
		{`""`},
		{`"a"`},
		{`"a\u0001"`},
		{`"ab"`},
		{`"b"`},
		{`-1000.00`, `-1e3`},
		{`-2.5`},
		{`-2`},
		{`-0.001`},
		{`-0`, `0`, `0.000`, `0e5`},
		{`0.001`},
		{`1`, `1.0`, `1.00`, `10e-1`},
		{`1.5`},
		{`2`},
		{`10`},
		{`1e3`},
		{`false`},
		{`true`},
		{`[null]`},
		{`[""]`},
		{`[1.0]`, `[1]`},
		{`[2]`},
		{`[[]]`},
		{`[[1]]`},
		{`[{}]`},
		{`[1, 2]`},
		{`[1, [1]]`},
		{`[2, 1]`},
		{`[1, 2, 3]`},
		{`{}`},
		{`{"a": null}`},
		{`{"a": "x"}`},
		{`{"a": 1}`, `{"a": 3, "a": 1}`, `{"a":1.0}`},
		{`{"a": 2}`},
		{`{"a": [1]}`},
		{`{"aa": 1}`},
		{`{"b": 1}`},
		{`{ "b" : 2 , "a" : 1 }`, `{"a": 1, "b": 2}`, `{"b": 2, "a": 1}`},
		{`{"a": 1, "c": 0}`},
		{`{"b": 1, "c": 2}`},
		{`{"a": 1, "b": 2, "c": 3}`},
	}
	type item struct {
		group int
		text  string
		key   []byte
	}
	var items []item
	for g, texts := range ordered {
		for _, text := range texts {
			v, err := Parse(text, true)
			if err != nil {
				t.Fatalf("%s: %v", text, err)
			}
			items = append(items, item{g, text, SortKey(v)})
		}
	}
	for _, a := range items {
		for _, b := range items {
			want := cmpInt(a.group, b.group)
			if got := bytes.Compare(a.key, b.key); got != want {
				t.Errorf("%s vs %s: %d, want %d", a.text, b.text, got, want)
			}
		}
	}
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
