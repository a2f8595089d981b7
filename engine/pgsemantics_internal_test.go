package engine

import (
	"testing"

	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Known answers from PostgreSQL 15.

func TestQuoteIdentifierLiteral(t *testing.T) {
	for in, want := range map[string]string{"select": `"select"`, "abc": "abc", "Abc": `"Abc"`, "a b": `"a b"`,
		`a"b`: `"a""b"`, "user": `"user"`, "name": "name", "int": `"int"`, "_x1": "_x1", "1x": `"1x"`,
		"between": `"between"`, "abort": "abort", "": `""`} {
		if got := quoteIdentifier(in); got != want {
			t.Errorf("quote_ident(%q) = %s, want %s", in, got, want)
		}
	}
	for in, want := range map[string]string{"it's": `'it''s'`, `a\b`: `E'a\\b'`, "": "''"} {
		if got := quoteLiteralPG(in); got != want {
			t.Errorf("quote_literal(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestParseFormat(t *testing.T) {
	type spec = formatSpec
	for _, c := range []struct {
		f     string
		nargs int
		lits  []string
		specs []spec
		code  string
	}{
		{f: "%s=%s", nargs: 2, lits: []string{"", "=", ""}, specs: []spec{{arg: 0, widthArg: -1, kind: 's'}, {arg: 1, widthArg: -1, kind: 's'}}},
		{f: "%3$s %s", nargs: 4, lits: []string{"", " ", ""}, specs: []spec{{arg: 2, widthArg: -1, kind: 's'}, {arg: 3, widthArg: -1, kind: 's'}}},
		{f: "%3$s %s", nargs: 3, code: "22023"},
		{f: "%s %1$s %s", nargs: 2, lits: []string{"", " ", " ", ""},
			specs: []spec{{arg: 0, widthArg: -1, kind: 's'}, {arg: 0, widthArg: -1, kind: 's'}, {arg: 1, widthArg: -1, kind: 's'}}},
		{f: "|%-*s|%10I|%L%%", nargs: 4, lits: []string{"|", "|", "|", "%"},
			specs: []spec{{arg: 1, widthArg: 0, left: true, kind: 's'}, {arg: 2, widthArg: -1, width: 10, kind: 'I'}, {arg: 3, widthArg: -1, kind: 'L'}}},
		{f: "|%*2$s|", nargs: 2, code: "22023"},
		{f: "%0$s", nargs: 1, code: "22023"},
		{f: "%", nargs: 1, code: "22023"},
		{f: "%x", nargs: 1, code: "22023"},
		{f: "%s %s", nargs: 1, code: "22023"},
	} {
		lits, specs, err := parseFormat(c.f, c.nargs)
		if c.code != "" {
			if sqlerr.Code(err) != c.code {
				t.Errorf("%q: %v, want SQLSTATE %s", c.f, err, c.code)
			}
			continue
		}
		if err != nil || len(lits) != len(c.lits) || len(specs) != len(c.specs) {
			t.Errorf("%q: %q %+v %v", c.f, lits, specs, err)
			continue
		}
		for i := range lits {
			if lits[i] != c.lits[i] {
				t.Errorf("%q: literal %d %q, want %q", c.f, i, lits[i], c.lits[i])
			}
		}
		for i := range specs {
			if specs[i] != c.specs[i] {
				t.Errorf("%q: spec %d %+v, want %+v", c.f, i, specs[i], c.specs[i])
			}
		}
	}
}

func TestDateTimeLiteral(t *testing.T) {
	s := &Session{settings: settings{"timezone": {name: "TimeZone", value: "Europe/Berlin"}}}
	for _, c := range []struct {
		oid      uint32
		in, want string
	}{
		{schema.OIDTimestamptz, "2026-05-17 10:00+00", "2026-05-17 10:00:00+00"},
		{schema.OIDTimestamptz, "2026-05-17 10:00:00+05:30", "2026-05-17 04:30:00+00"},
		{schema.OIDTimestamptz, "2026-05-17 10:00:00 +0530", "2026-05-17 04:30:00+00"},
		{schema.OIDTimestamptz, "2026-05-17T10:00:00.25Z", "2026-05-17 10:00:00.25+00"},
		{schema.OIDTimestamptz, "2026-05-17 10:00", "2026-05-17 08:00:00+00"}, // the session's zone
		{schema.OIDTimestamptz, "epoch", "1970-01-01 00:00:00+00"},
		{schema.OIDTimestamp, "2026-05-17 10:00+02", "2026-05-17 10:00:00"},
		{schema.OIDDate, "2026-05-17 10:00", "2026-05-17"},
	} {
		got, ok := s.dateTimeLiteral(c.oid, c.in)
		if !ok || got != c.want {
			t.Errorf("%d %q: %q %v, want %q", c.oid, c.in, got, ok, c.want)
		}
	}
	for _, in := range []string{"infinity", "2026-05-17 10:00:00 Europe/Paris", "May 17 2026"} {
		if got, ok := s.dateTimeLiteral(schema.OIDTimestamptz, in); ok {
			t.Errorf("%q: respelled as %q; DuckDB reads it", in, got)
		}
	}
	if _, ok := s.dateTimeLiteral(schema.OIDTimestamptz, "now"); !ok {
		t.Error("now")
	}
}
