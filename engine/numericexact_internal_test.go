package engine

import (
	"testing"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// TestNumericExact: a numeric value reaches DuckDB inside a query only when
// DECIMAL(38, innerNumericScale) holds it exactly — zeros past the 20th
// fractional digit are dropped, any other digit there, or a 19th whole
// digit, is 0A000, never rounded.
func TestNumericExact(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"24.1666666666666667", "24.1666666666666667"},
		{"0.14285714285714285714", "0.14285714285714285714"},
		{"0.000010000000000000000000", "0.00001000000000000000"},
		{"-123456789012345678.5", "-123456789012345678.5"},
		{"7", "7"},
		{"0.000014285714285714285714", ""},
		{"1234567890123456789", ""},
		{"1234567890123456789.000", ""},
	} {
		got, err := numericExact(c.in)
		if err != nil {
			err = scanFailures.recover(err.Error()) // as the statement's error reads it back
		}
		if c.want == "" {
			if sqlerr.Code(err) != sqlerr.FeatureNotSupported {
				t.Errorf("%s: %v, %v; want 0A000", c.in, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %v, %v; want %s", c.in, got, err, c.want)
		}
	}
}
