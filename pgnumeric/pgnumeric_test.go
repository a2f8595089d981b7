package pgnumeric_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/internal/pgtest"
	"github.com/lakesoul-go/lakesoul/pgnumeric"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// operands span signs, zero, scales 0–6, magnitudes from 10⁻⁹ to 10¹⁵
// and first base-10000 digits below, equal to and above each other's
// (the cases select_div_scale distinguishes), and one of scale 600,
// whose square's scale is beyond the 1000 that caps a division's.
var operands = []string{
	"0", "0.00", "1", "-1", "2", "3", "7", "10", "-10", "1.5", "1.50", "2.50", "9999", "10000", "10001", "12345.678",
	"0.5", "0.05", "0.0001", "0.00005", "-0.000123", "0.000000001", "123456789012345", "99999999.99", "24.17",
	"1478493", "37734107.00", "3.333333", "-42.000100", "5000.5", "0.9999", "0." + strings.Repeat("0", 599) + "7",
}

// TestArithmeticMatchesPostgreSQL computes every operator over every pair
// of operands here and in PostgreSQL, and compares the text.
func TestArithmeticMatchesPostgreSQL(t *testing.T) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	ops := []struct {
		sym string
		fn  func(a, b pgnumeric.Value) (pgnumeric.Value, error)
	}{
		{"+", func(a, b pgnumeric.Value) (pgnumeric.Value, error) { return pgnumeric.Add(a, b), nil }},
		{"-", func(a, b pgnumeric.Value) (pgnumeric.Value, error) { return pgnumeric.Sub(a, b), nil }},
		{"*", func(a, b pgnumeric.Value) (pgnumeric.Value, error) { return pgnumeric.Mul(a, b), nil }},
		{"/", pgnumeric.Div},
	}
	for _, op := range ops {
		// One query per operator: every pair, PostgreSQL's text of each
		// result (NULL where it fails).
		var sel []string
		for _, a := range operands {
			for _, b := range operands {
				expr := fmt.Sprintf("(%s::numeric %s %s::numeric)::text", quote(a), op.sym, quote(b))
				if op.sym == "/" && isZero(b) {
					expr = "NULL"
				}
				sel = append(sel, expr)
			}
		}
		vals := make([]any, len(sel))
		ptrs := make([]*string, len(sel))
		for i := range vals {
			ptrs[i] = new(string)
			vals[i] = &ptrs[i]
		}
		rows, err := conn.Query(ctx, "SELECT "+strings.Join(sel, ", "), pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			t.Fatal(err)
		}
		var got [][]any
		for rows.Next() {
			v, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, v)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		i := 0
		for _, a := range operands {
			for _, b := range operands {
				want := got[0][i]
				i++
				av, _ := pgnumeric.Parse(a)
				bv, _ := pgnumeric.Parse(b)
				r, err := op.fn(av, bv)
				if want == nil {
					if err != pgnumeric.ErrDivisionByZero {
						t.Errorf("%s %s %s: want division by zero, got %v, %v", a, op.sym, b, r, err)
					}
					continue
				}
				if err != nil || r.String() != want.(string) {
					t.Errorf("%s %s %s: got %v (%v), PostgreSQL %s", a, op.sym, b, r, err, want)
				}
			}
		}
	}
}

func quote(s string) string { return "'" + s + "'" }

func isZero(s string) bool { return strings.Trim(s, "0.") == "" }

func TestStringHasNoNegativeZero(t *testing.T) {
	v, _ := pgnumeric.Parse("-0.000")
	if v.String() != "0.000" {
		t.Fatalf("got %s", v)
	}
	if q, err := pgnumeric.Div(v, mustParse("-7")); err != nil || q.String() != "0.00000000000000000000" {
		t.Fatalf("-0.000 / -7 = %s, %v", q, err)
	}
}

func mustParse(s string) pgnumeric.Value {
	v, err := pgnumeric.Parse(s)
	if err != nil {
		panic(err)
	}
	return v
}

// TestVarianceMatchesPostgreSQL computes the four variance aggregates of
// data sets of numeric values (one value, equal values, scales 0–3, large
// and small magnitudes) here and in PostgreSQL.
func TestVarianceMatchesPostgreSQL(t *testing.T) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	sets := [][]string{
		{"5"}, {"2.50", "2.50"}, {"1", "2", "3", "4"}, {"5200.50", "4800.00", "7000.00"}, {"0.001", "0.002", "0.0035"},
		{"-1.5", "2.25", "100", "0.125"}, {"123456789012", "123456789013", "99"}, {"1", "1", "1", "2"},
		{"0.000001", "0.000003"}, {"17", "23", "99", "3", "42", "8", "15"},
	}
	aggs := []struct {
		name         string
		sample, sqrt bool
	}{{"var_pop", false, false}, {"var_samp", true, false}, {"stddev_pop", false, true}, {"stddev_samp", true, true}}
	for _, set := range sets {
		var vals []string
		sumX := mustParse("0")
		sumX2 := mustParse("0")
		for _, v := range set {
			vals = append(vals, "("+v+"::numeric)")
			x := mustParse(v)
			sumX = pgnumeric.Add(sumX, x)
			sumX2 = pgnumeric.Add(sumX2, pgnumeric.Mul(x, x))
		}
		for _, a := range aggs {
			var want *string
			q := fmt.Sprintf("SELECT %s(x)::text FROM (VALUES %s) v(x)", a.name, strings.Join(vals, ", "))
			if err := conn.QueryRow(ctx, q).Scan(&want); err != nil {
				t.Fatal(err)
			}
			got, ok := pgnumeric.Variance(sumX, sumX2, int64(len(set)), a.sample, a.sqrt)
			switch {
			case want == nil && ok:
				t.Errorf("%s%v: got %s, PostgreSQL NULL", a.name, set, got)
			case want != nil && (!ok || got.String() != *want):
				t.Errorf("%s%v: got %v (%v), PostgreSQL %s", a.name, set, got, ok, *want)
			}
		}
	}
}
