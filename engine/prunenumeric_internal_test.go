package engine

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// scaledTerm keeps exactly the rows the comparison keeps: every operator,
// for every column value of a range at scales 0 to 3, against constants on
// the column's grid, between its points, beyond int64 and at its ends.
func TestScaledTermMatchesComparison(t *testing.T) {
	consts := []string{"0", "0.05", "-0.05", "0.055", "-0.055", "0.5", "1", "-1", "24", "0.0001", "-0.0001", "1.999",
		"2", "-2.0005", "3.14159", "100", "-100", "1/3", "-7/3",
		"99999999999999999999.5", "-99999999999999999999.5", "9223372036854775807", "-9223372036854775808",
		"9223372036854775808", "-9223372036854775809", "9223372036854775806.5", "-9223372036854775807.5"}
	ops := map[pruneOp]func(c int) bool{
		opEq: func(c int) bool { return c == 0 }, opNe: func(c int) bool { return c != 0 },
		opLt: func(c int) bool { return c < 0 }, opLe: func(c int) bool { return c <= 0 },
		opGt: func(c int) bool { return c > 0 }, opGe: func(c int) bool { return c >= 0 },
	}
	holds := func(op pruneOp, v int64, b any) bool {
		if b == nil {
			return false // = a value the column cannot hold
		}
		w := b.(int64)
		c := 0
		if v < w {
			c = -1
		} else if v > w {
			c = 1
		}
		return ops[op](c)
	}
	values := []int64{math.MinInt64, math.MinInt64 + 1, math.MaxInt64 - 1, math.MaxInt64}
	for v := int64(-2500); v <= 2500; v++ {
		values = append(values, v)
	}
	for scale := int32(0); scale <= 3; scale++ {
		unit := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil))
		for _, cs := range consts {
			r, ok := ratOf(cs)
			if !ok {
				t.Fatalf("constant %s", cs)
			}
			for op, want := range ops {
				op2, b, ok := scaledTerm(op, r, scale)
				for _, v := range values {
					val := new(big.Rat).Quo(new(big.Rat).SetInt64(v), unit)
					exp := want(val.Cmp(r))
					if !ok {
						// An unusable term must be one that keeps every
						// non-NULL row (it is simply not pushed).
						if !exp {
							t.Fatalf("scale %d: %d op%d %s unusable but false for %d", scale, v, op, cs, v)
						}
						continue
					}
					if got := holds(op2, v, b); got != exp {
						t.Fatalf("scale %d: value %s op%d %s: pushed as op%d %v gives %v, comparison %v", scale, val.FloatString(int(scale)), op, cs, op2, b, got, exp)
					}
				}
			}
		}
	}
}

// Numeric constants and their arithmetic are read exactly; integer-only
// arithmetic only when its result fits an integer (PostgreSQL raises
// 22003 otherwise), and casts with a type modifier (which round) are not
// constants.
func TestNumericArgs(t *testing.T) {
	for expr, want := range map[string]string{
		"0.05":                    "1/20",
		"0.06 - 0.01":             "1/20",
		"0.06 + 0.01":             "7/100",
		"2 * 0.025":               "1/20",
		"1e-2":                    "1/100",
		"(0.1 + 0.2) - 0.3":       "0",
		"99999999999999999999999": "99999999999999999999999",
		"1 + 2":                   "3",
		"1 + 10 - 20":             "-9",
		"2147483647 + 1":          "",
		"2147483647 + 1.0":        "2147483648",
		"'0.055'::numeric(15,2)":  "",
		"'abc'::varchar(2)":       "",
		"0.5 / 2":                 "",
	} {
		tree, err := pg_query.Parse("SELECT 1 WHERE x < " + expr)
		if err != nil {
			t.Fatal(err)
		}
		where := tree.Stmts[0].Stmt.GetSelectStmt().WhereClause.GetAExpr().Rexpr
		a, ok := argOf(where)
		got := ""
		if ok && a.kind == termNumeric {
			r, ok := ratOf(a.text)
			if !ok {
				t.Fatalf("%s: unreadable %q", expr, a.text)
			}
			got = r.RatString()
		}
		if ok && a.kind == termCast {
			got = fmt.Sprintf("cast %s %s", a.cast, a.text)
		}
		if got != want {
			t.Errorf("%s: got %q, want %q", expr, got, want)
		}
	}
	for _, bad := range []string{"", ".", "1.2.3", "1e", "e5", "NaN", "Infinity", "1_000", "--1", "0x10", "1e99999"} {
		if _, ok := numericText(bad); ok {
			t.Errorf("numericText(%q) accepted", bad)
		}
	}
}

// An OR's hull keeps every value some branch keeps: random ORs of random
// AND-ed terms (=, IN, <>, ranges, nested ORs, numeric constants between
// the column's values) on an integer column, checked at every value of a
// range around their constants.
func TestOrHullKeepsBranches(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	dt := arrow.PrimitiveTypes.Int64
	ops := []pruneOp{opEq, opLt, opLe, opGt, opGe, opNe}
	arg := func() pruneArg {
		if rng.IntN(4) == 0 {
			return pruneArg{kind: termNumeric, text: fmt.Sprintf("%d.5", rng.IntN(21)-10)}
		}
		return pruneArg{kind: termInt, text: fmt.Sprint(rng.IntN(21) - 10)}
	}
	var randTerm func(depth int) pruneTerm
	randAlts := func(depth int) [][]pruneTerm {
		alts := make([][]pruneTerm, 1+rng.IntN(3))
		for i := range alts {
			for range 1 + rng.IntN(2) {
				alts[i] = append(alts[i], randTerm(depth+1))
			}
		}
		return alts
	}
	randTerm = func(depth int) pruneTerm {
		if depth < 2 && rng.IntN(5) == 0 {
			return pruneTerm{col: "c", op: opAny, alts: randAlts(depth)}
		}
		tm := pruneTerm{col: "c", op: ops[rng.IntN(len(ops))], args: []pruneArg{arg()}}
		if tm.op == opEq && rng.IntN(2) == 0 {
			tm.args = append(tm.args, arg())
		}
		return tm
	}
	var holds func(tm pruneTerm, v int64) bool
	holds = func(tm pruneTerm, v int64) bool {
		if tm.op == opAny {
			for _, alt := range tm.alts {
				all := true
				for _, x := range alt {
					all = all && holds(x, v)
				}
				if all {
					return true
				}
			}
			return false
		}
		val := new(big.Rat).SetInt64(v)
		for _, a := range tm.args {
			r, _ := ratOf(a.text)
			c := val.Cmp(r)
			switch tm.op {
			case opEq:
				if c == 0 {
					return true
				}
				continue
			case opNe:
				return c != 0
			case opLt:
				return c < 0
			case opLe:
				return c <= 0
			case opGt:
				return c > 0
			case opGe:
				return c >= 0
			}
		}
		return false
	}
	for range 3000 {
		tm := pruneTerm{col: "c", op: opAny, alts: randAlts(0)}
		h, err := resolveAny(tm, dt, nil)
		if err != nil {
			t.Fatal(err)
		}
		c := &colConstraint{dt: dt}
		if h != nil {
			h.applyTo(c)
		}
		for v := int64(-15); v <= 15; v++ {
			if holds(tm, v) && !c.allows(v) {
				t.Fatalf("%+v: %d holds but the hull %+v drops it", tm, v, h)
			}
		}
	}
}
