package engine

import (
	"reflect"
	"testing"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

func TestParsePGArray(t *testing.T) {
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		in   string
		want []*string
	}{
		{`{}`, nil},
		{` { } `, nil},
		{`{1,2,3}`, []*string{str("1"), str("2"), str("3")}},
		{`{ a b , c }`, []*string{str("a b"), str("c")}},
		{`{"a b",NULL,null,"NULL",""}`, []*string{str("a b"), nil, nil, str("NULL"), str("")}},
		{`{"q\"x",back\\slash,\NULL}`, []*string{str(`q"x`), str(`back\slash`), str("NULL")}},
		{`{"  kept  "}`, []*string{str("  kept  ")}},
	} {
		got, err := parsePGArray(tc.in)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parsePGArray(%q) = %s, %v", tc.in, show(got), err)
		}
	}
	for _, bad := range []string{``, `1,2`, `{1,2`, `{1,,2}`, `{"a"b}`, `{a}x`, `{"a}`, `{a,}`, `{,}`} {
		if _, err := parsePGArray(bad); sqlerr.Code(err) != "22P02" {
			t.Errorf("parsePGArray(%q): %v, want 22P02", bad, err)
		}
	}
	if _, err := parsePGArray(`{{1},{2}}`); sqlerr.Code(err) != "0A000" {
		t.Errorf("nested: %v, want 0A000", err)
	}
}

func show(elems []*string) []string {
	out := make([]string, len(elems))
	for i, e := range elems {
		out[i] = "NULL"
		if e != nil {
			out[i] = `"` + *e + `"`
		}
	}
	return out
}
