package engine

import (
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

func TestParseDecimal(t *testing.T) {
	for _, tc := range []struct {
		in          string
		prec, scale int32
		want        string // unscaled integer, or "overflow" / "invalid"
	}{
		{"12.345", 10, 2, "1235"}, // half away from zero
		{"-12.345", 10, 2, "-1235"},
		{"12.344", 10, 2, "1234"},
		{"0.005", 10, 2, "1"},
		{"1e3", 10, 2, "100000"},
		{"1.5E-1", 10, 3, "150"},
		{".5", 5, 1, "5"},
		{"7.", 5, 0, "7"},
		{"+42", 5, 0, "42"},
		{"99999.995", 7, 2, "overflow"},
		{"123456", 5, 0, "overflow"},
		{"0.0000001", 5, 2, "0"},
		{"12345678901234567890.12", 38, 2, "1234567890123456789012"},
		{"abc", 5, 0, "invalid"},
		{"", 5, 0, "invalid"},
		{"1.2.3", 5, 0, "invalid"},
	} {
		n, err := parseDecimal(tc.in, tc.prec, tc.scale)
		got := ""
		switch {
		case err == errDecimalOverflow:
			got = "overflow"
		case err != nil:
			got = "invalid"
		default:
			got = n.BigInt().String()
		}
		if got != tc.want {
			t.Errorf("parseDecimal(%q, %d, %d) = %s, want %s", tc.in, tc.prec, tc.scale, got, tc.want)
		}
	}
	// Binary numeric: 1234.5678 is digits [1234, 5678], weight 0, dscale 4.
	n, err := decodeBinaryNumeric([]byte{0, 2, 0, 0, 0, 0, 0, 4, 0x04, 0xd2, 0x16, 0x2e}, 10, 2)
	if err != nil || n != decimal128.FromI64(123457) {
		t.Errorf("binary numeric: %v %v", n.BigInt(), err)
	}
}

func TestParseDateTime(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	for _, tc := range []struct {
		in    string
		zoned bool
		want  string
	}{
		{"2026-01-02", false, "2026-01-02T00:00:00Z"},
		{"2026-01-02 03:04:05", false, "2026-01-02T03:04:05Z"},
		{"2026-01-02T03:04:05.1234567", false, "2026-01-02T03:04:05.123457Z"},
		{"2026-01-02 03:04:05+02", false, "2026-01-02T03:04:05Z"}, // timestamp ignores the offset
		{"2026-01-02 03:04:05+02", true, "2026-01-02T01:04:05Z"},
		{"2026-01-02 03:04:05-05:30", true, "2026-01-02T08:34:05Z"},
		{"2026-01-02 03:04:05Z", true, "2026-01-02T03:04:05Z"},
		{"2026-07-01 12:00", true, "2026-07-01T10:00:00Z"}, // session zone Berlin, summer
		{"2026-02-30", false, ""},
		{"2026-13-01", false, ""},
		{"20260102", false, ""},
		{"2026-01-02 25:00:00", false, ""},
	} {
		got, ok := parseDateTime(tc.in, berlin, tc.zoned)
		s := ""
		if ok {
			s = got.UTC().Format(time.RFC3339Nano)
		}
		if s != tc.want {
			t.Errorf("parseDateTime(%q, zoned=%v) = %q, want %q", tc.in, tc.zoned, s, tc.want)
		}
	}
}

func TestParseBoolAndBytea(t *testing.T) {
	for in, want := range map[string]bool{"t": true, "TRUE": true, "yes": true, "on": true, "1": true, "tr": true,
		"f": false, "false": false, "no": false, "off": false, "0": false, "fal": false} {
		if got, ok := parseBool(in); !ok || got != want {
			t.Errorf("parseBool(%q) = %v %v", in, got, ok)
		}
	}
	for _, bad := range []string{"", "o", "of", "2", "maybe"} {
		if _, ok := parseBool(bad); ok {
			t.Errorf("parseBool(%q) accepted", bad)
		}
	}
	if b, err := parseByteaText([]byte(`\x00ff41`)); err != nil || string(b) != "\x00\xffA" {
		t.Errorf("hex bytea: %q %v", b, err)
	}
	if b, err := parseByteaText([]byte(`a\\b\001`)); err != nil || string(b) != "a\\b\x01" {
		t.Errorf("escape bytea: %q %v", b, err)
	}
}
